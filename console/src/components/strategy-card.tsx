import { Badge, ColorSwatch, Group, Progress, Stack, Text, Tooltip } from '@mantine/core'
import type { Schemas } from '../api/client'
import { percent } from '../variants'

type Strategy = Schemas['featureStrategySchema']
type Constraint = Schemas['featureStrategySchema']['constraints'][number]
type Segment = Schemas['adminSegmentSchema']
type Variant = { name: string; weight: number; weightType?: string; stickiness?: string }

/** Constraint operators in words, as Unleash's admin UI names them. */
export const OPERATOR_NAMES: Record<string, string> = {
  IN: 'is one of',
  NOT_IN: 'is not one of',
  STR_CONTAINS: 'contains',
  STR_STARTS_WITH: 'starts with',
  STR_ENDS_WITH: 'ends with',
  NUM_EQ: 'equals',
  NUM_GT: 'is greater than',
  NUM_GTE: 'is at least',
  NUM_LT: 'is less than',
  NUM_LTE: 'is at most',
  DATE_AFTER: 'after',
  DATE_BEFORE: 'before',
  SEMVER_EQ: 'version =',
  SEMVER_GT: 'version >',
  SEMVER_GTE: 'version ≥',
  SEMVER_LT: 'version <',
  SEMVER_LTE: 'version ≤',
  REGEX: 'matches the regular expression',
  IN_CIDR: 'in range (CIDR)',
}

const STRATEGY_NAMES: Record<string, string> = { flexibleRollout: 'Gradual rollout', default: 'Standard', userWithId: 'User IDs', remoteAddress: 'IPs', applicationHostname: 'Hosts' }
/** Values shown before the rest is counted ("+12 more", the whole list in its title). */
const SHOWN_VALUES = 4
const VARIANT_COLORS = ['violet.9', 'teal.9', 'orange.9', 'cyan.9', 'pink.9', 'grape.9', 'indigo.9', 'red.9']

/** A constraint as chips: context field, "not" when inverted, the operator in words, its values (a long list collapsed). */
export function ConstraintChips({ constraint: c }: { constraint: Constraint }) {
  const values = c.values && c.values.length > 0 ? c.values : c.value !== undefined && c.value !== '' ? [c.value] : []
  const shown = values.slice(0, SHOWN_VALUES)
  const label = `${c.contextName} ${c.inverted ? 'not ' : ''}${OPERATOR_NAMES[c.operator] ?? c.operator} ${values.join(', ')}${c.caseInsensitive ? ' (case-insensitive)' : ''}`
  return (
    <Group gap={4} wrap="wrap" role="group" aria-label={`Constraint: ${label}`} data-constraint>
      <Badge variant="outline" color="gray" tt="none" radius="sm">
        {c.contextName}
      </Badge>
      {c.inverted && (
        <Badge color="red.9" tt="none" radius="sm">
          not
        </Badge>
      )}
      <Text size="sm" fw={500}>
        {OPERATOR_NAMES[c.operator] ?? c.operator}
      </Text>
      {shown.map((v, i) => (
        <Badge key={i} variant="light" tt="none" radius="sm" maw={220}>
          {v}
        </Badge>
      ))}
      {values.length > SHOWN_VALUES && (
        <Tooltip label={values.slice(SHOWN_VALUES).join(', ')} multiline maw={400}>
          <Badge variant="default" tt="none" radius="sm" title={values.slice(SHOWN_VALUES).join(', ')}>
            +{values.length - SHOWN_VALUES} more
          </Badge>
        </Tooltip>
      )}
      {c.caseInsensitive && (
        <Text size="xs" c="dimmed">
          case-insensitive
        </Text>
      )}
    </Group>
  )
}

/** Variants' weights as one bar, each variant a section, with a line per variant below (weight, fixed or not, stickiness). */
export function VariantBar<V extends Variant>({ variants, label, details }: { variants: readonly V[]; label: string; details?: (v: V) => string }) {
  return (
    <Stack gap={4}>
      <Progress.Root size={18} aria-label={label} role="group">
        {variants.map((v, i) => (
          <Tooltip key={v.name} label={`${v.name}: ${percent(v.weight)}`}>
            <Progress.Section value={v.weight / 10} color={VARIANT_COLORS[i % VARIANT_COLORS.length]} aria-label={`${v.name} ${percent(v.weight)}`} />
          </Tooltip>
        ))}
      </Progress.Root>
      {variants.map((v, i) => (
        <Group key={v.name} gap={6} wrap="nowrap">
          <ColorSwatch color={`var(--mantine-color-${VARIANT_COLORS[i % VARIANT_COLORS.length]!.replace('.', '-')})`} size={10} withShadow={false} aria-hidden />
          <Text size="xs">{details ? details(v) : `${v.name} ${percent(v.weight)}`}</Text>
        </Group>
      ))}
    </Stack>
  )
}

/** A strategy at a glance: its title or type's name, rollout bar, constraints as chips, segments to expand, variants' distribution. */
export function StrategySummary({ strategy: s, segments, displayName }: { strategy: Strategy; segments: readonly Segment[]; displayName?: string }) {
  const segmentOf = (id: number) => segments.find((x) => x.id === id)
  const typeName = displayName || STRATEGY_NAMES[s.name] || s.name
  const rollout = Number(s.parameters.rollout ?? 100)
  return (
    <Stack gap={6} style={{ flex: 1, minWidth: 0 }}>
      <Group gap="xs">
        <Text fw={600}>{s.title || typeName}</Text>
        {s.title && (
          <Text size="xs" c="dimmed">
            {typeName}
          </Text>
        )}
        {s.disabled && <Badge color="gray">disabled</Badge>}
      </Group>
      {s.name === 'flexibleRollout' ? (
        <Group gap="sm" wrap="nowrap">
          <Text size="sm" fw={500} w={110} style={{ flexShrink: 0 }}>
            Rollout {Number.isFinite(rollout) ? rollout : s.parameters.rollout}%
          </Text>
          <Progress value={Number.isFinite(rollout) ? rollout : 0} size="lg" color="green" style={{ flex: 1, maxWidth: 320 }} aria-label={`Rollout of ${s.title || typeName}`} />
          <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
            stickiness {s.parameters.stickiness ?? 'default'}
            {s.parameters.groupId ? ` · group ${s.parameters.groupId}` : ''}
          </Text>
        </Group>
      ) : (
        Object.keys(s.parameters).length > 0 && (
          <Text size="sm">
            {Object.entries(s.parameters)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, v]) => `${k}: ${v}`)
              .join(' · ')}
          </Text>
        )
      )}
      {s.constraints.map((c, i) => (
        <ConstraintChips key={i} constraint={c} />
      ))}
      {s.segments.map((id) => {
        const segment = segmentOf(id)
        return (
          <details key={id}>
            <summary style={{ cursor: 'pointer', fontSize: 'var(--mantine-font-size-sm)' }}>
              Segment <b>{segment?.name ?? `#${id}`}</b> ({segment ? `${segment.constraints.length} constraint${segment.constraints.length === 1 ? '' : 's'}` : 'not readable'})
            </summary>
            <Stack gap={4} pl="md" pt={4}>
              {segment?.constraints.map((c, i) => <ConstraintChips key={i} constraint={c} />)}
            </Stack>
          </details>
        )
      })}
      {(s.variants ?? []).length > 0 && <VariantBar variants={s.variants ?? []} label={`Variants of ${s.title || typeName}`} />}
    </Stack>
  )
}
