import { ActionIcon, Autocomplete, Button, Group, NumberInput, Paper, Select, Stack, TagsInput, Text, Textarea, TextInput } from '@mantine/core'
import { newVariant, PAYLOAD_TYPES, payloadProblem, percent, TOTAL_WEIGHT, withWeights, type VariantDraft } from '../variants'

const STICKINESS = ['default', 'userId', 'sessionId', 'random']
const CONTEXT_FIELDS = ['userId', 'sessionId', 'remoteAddress', 'appName']

/**
 * Edits a list of variants (a flag's in an environment, or a strategy's): name, weight (variable, or fixed in
 * percent), stickiness, payload and, for flag variants, overrides. Weights are shown as the server computes them.
 */
export function VariantsEditor({ variants, onChange, withOverrides }: { variants: VariantDraft[]; onChange: (next: VariantDraft[]) => void; withOverrides: boolean }) {
  const weighted = withWeights(variants)
  const set = (i: number, patch: Partial<VariantDraft>) => onChange(variants.map((v, j) => (j === i ? { ...v, ...patch } : v)))
  return (
    <Stack gap="xs">
      {variants.length === 0 && (
        <Text size="sm" c="dimmed">
          No variants.
        </Text>
      )}
      {weighted.map((v, i) => {
        const n = i + 1
        const payload = payloadProblem(v)
        return (
          <Paper key={i} withBorder p="xs" component="fieldset" aria-label={`Variant ${n}`}>
            <Group align="end" gap="xs" wrap="wrap">
              <TextInput label={`Variant name ${n}`} value={v.name} onChange={(e) => set(i, { name: e.currentTarget.value })} w={160} />
              <Select
                label={`Weight type ${n}`}
                data={[
                  { value: 'variable', label: 'Variable' },
                  { value: 'fix', label: 'Fixed' },
                ]}
                value={v.weightType}
                onChange={(t) => t && set(i, { weightType: t as VariantDraft['weightType'], weight: t === 'fix' ? v.weight : 0 })}
                allowDeselect={false}
                w={120}
              />
              {v.weightType === 'fix' ? (
                <NumberInput
                  label={`Weight (%) ${n}`}
                  min={0}
                  max={100}
                  decimalScale={1}
                  clampBehavior="strict"
                  value={v.weight / 10}
                  onChange={(p) => set(i, { weight: Math.round(Number(p || 0) * 10) })}
                  w={120}
                />
              ) : (
                <Text size="sm" pb={8} aria-label={`Weight of ${v.name || `variant ${n}`}`}>
                  {percent(v.weight)}
                </Text>
              )}
              <Select label={`Stickiness ${n}`} data={STICKINESS} value={v.stickiness} onChange={(s) => s && set(i, { stickiness: s })} allowDeselect={false} w={130} />
              <Select
                label={`Payload type ${n}`}
                data={[{ value: '', label: 'No payload' }, ...PAYLOAD_TYPES.map((t) => ({ value: t, label: t }))]}
                value={v.payloadType}
                onChange={(t) => set(i, { payloadType: (t ?? '') as VariantDraft['payloadType'] })}
                allowDeselect={false}
                w={130}
              />
              <ActionIcon variant="subtle" color="red" onClick={() => onChange(variants.filter((_, j) => j !== i))} aria-label={`Remove variant ${n}`}>
                ×
              </ActionIcon>
            </Group>
            {v.payloadType && (
              <Textarea label={`Payload ${n}`} value={v.payloadValue} onChange={(e) => set(i, { payloadValue: e.currentTarget.value })} autosize minRows={1} mt="xs" error={payload} />
            )}
            {withOverrides &&
              v.overrides.map((o, k) => (
                <Group key={k} align="end" gap="xs" mt="xs">
                  <Autocomplete label={`Override field ${n}.${k + 1}`} data={CONTEXT_FIELDS} value={o.contextName} onChange={(c) => set(i, { overrides: v.overrides.map((x, j) => (j === k ? { ...x, contextName: c } : x)) })} w={160} />
                  <TagsInput label={`Override values ${n}.${k + 1}`} description="Enter after each value" value={o.values} onChange={(values) => set(i, { overrides: v.overrides.map((x, j) => (j === k ? { ...x, values } : x)) })} w={300} />
                  <ActionIcon variant="subtle" color="red" onClick={() => set(i, { overrides: v.overrides.filter((_, j) => j !== k) })} aria-label={`Remove override ${n}.${k + 1}`}>
                    ×
                  </ActionIcon>
                </Group>
              ))}
            {withOverrides && (
              <Button variant="subtle" size="xs" mt="xs" onClick={() => set(i, { overrides: [...v.overrides, { contextName: 'userId', values: [] }] })}>
                Add override to variant {n}
              </Button>
            )}
          </Paper>
        )
      })}
      <Group>
        <Button variant="default" size="xs" onClick={() => onChange([...variants, newVariant()])}>
          Add variant
        </Button>
        {variants.length > 0 && (
          <Text size="sm" c="dimmed">
            Variable variants share what the fixed ones leave of {percent(TOTAL_WEIGHT)}.
          </Text>
        )}
      </Group>
    </Stack>
  )
}
