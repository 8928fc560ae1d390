import { ActionIcon, Autocomplete, Checkbox, Group, Paper, Select, Stack, TagsInput, Text, TextInput, Button } from '@mantine/core'
import { useUsableContextFields } from '../api/context-fields'
import { constraintProblem, constraintWarning, isMultiValue, newConstraint, OPERATOR_LABELS, OPERATORS, takesCaseInsensitive, type ConstraintDraft, type Operator } from '../constraints'

const BUILT_IN_FIELDS = ['userId', 'sessionId', 'remoteAddress', 'environment', 'appName', 'currentTime']

const VALUE_HINTS: Partial<Record<string, string>> = {
  NUM: 'A number, e.g. 42 or 3.5',
  DATE: 'An ISO 8601 date, e.g. 2026-12-31T23:59:00Z',
  SEMVER: 'A semantic version, e.g. 1.2.3',
  REGEX: 'An RE2 pattern, e.g. ^beta-',
}
const hintOf = (op: Operator) => VALUE_HINTS[op.split('_')[0]!] ?? VALUE_HINTS[op]

/**
 * Edits a list of constraints, telling for each what the server would refuse. It offers the context fields usable where
 * the constraints are: those of `project` (the flag's, default strategy's or segment's) and the global ones.
 */
export function ConstraintEditor({
  constraints,
  onChange,
  project,
  emptyText = 'No constraints: the strategy applies to every context.',
}: {
  constraints: ConstraintDraft[]
  onChange: (next: ConstraintDraft[]) => void
  project?: string | null
  emptyText?: string
}) {
  const fields = useUsableContextFields(project).data ?? []
  const fieldNames = [...new Set([...BUILT_IN_FIELDS, ...fields.map((f) => f.name)])]
  const legalValuesOf = (name: string) => fields.find((f) => f.name === name)?.legalValues.map((v) => v.value) ?? []
  const set = (i: number, patch: Partial<ConstraintDraft>) => onChange(constraints.map((c, j) => (j === i ? { ...c, ...patch } : c)))
  return (
    <Stack gap="xs">
      <Text fw={600} size="sm">
        Constraints
      </Text>
      {constraints.length === 0 && (
        <Text size="sm" c="dimmed">
          {emptyText}
        </Text>
      )}
      {constraints.map((c, i) => {
        const problem = constraintProblem(c)
        const warning = problem === undefined ? constraintWarning(c) : undefined
        const n = i + 1
        return (
          <Paper key={i} withBorder p="xs" aria-label={`Constraint ${n}`} component="fieldset">
            <Group align="end" gap="xs" wrap="wrap">
              <Autocomplete label={`Context field ${n}`} data={fieldNames} value={c.contextName} onChange={(v) => set(i, { contextName: v })} w={160} />
              <Select
                label={`Operator ${n}`}
                data={OPERATORS.map((op) => ({ value: op, label: `${OPERATOR_LABELS[op]} (${op})` }))}
                value={c.operator}
                onChange={(v) => v && set(i, { operator: v as Operator })}
                allowDeselect={false}
                w={240}
              />
              {isMultiValue(c.operator) ? (
                <TagsInput label={`Values ${n}`} description="Enter after each value" data={legalValuesOf(c.contextName)} value={c.values} onChange={(values) => set(i, { values })} w={260} />
              ) : (
                <TextInput label={`Value ${n}`} description={hintOf(c.operator)} value={c.value} onChange={(e) => set(i, { value: e.currentTarget.value })} w={260} />
              )}
              <ActionIcon variant="subtle" color="red" onClick={() => onChange(constraints.filter((_, j) => j !== i))} aria-label={`Remove constraint ${n}`}>
                ×
              </ActionIcon>
            </Group>
            <Group gap="md" mt="xs">
              <Checkbox label="Negate (not)" checked={c.inverted} onChange={(e) => set(i, { inverted: e.currentTarget.checked })} />
              {takesCaseInsensitive(c.operator) && (
                <Checkbox label="Ignore case" checked={c.caseInsensitive} onChange={(e) => set(i, { caseInsensitive: e.currentTarget.checked })} />
              )}
            </Group>
            {problem && (
              <Text size="sm" c="red.8" mt={4} role="status">
                {problem}
              </Text>
            )}
            {warning && (
              <Text size="sm" c="yellow.9" mt={4} role="status">
                {warning}
              </Text>
            )}
          </Paper>
        )
      })}
      <Button variant="default" size="xs" onClick={() => onChange([...constraints, newConstraint()])} w="fit-content">
        Add constraint
      </Button>
    </Stack>
  )
}
