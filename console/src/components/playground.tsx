import { ActionIcon, Autocomplete, Badge, Button, Card, Group, Stack, Table, Text, TextInput } from '@mantine/core'
import type { Schemas } from '../api/client'

export type Context = Schemas['sdkContextSchema']
type Result = Schemas['advancedPlaygroundEnvironmentFeatureSchema']
type StrategyResult = Schemas['playgroundStrategySchema']

export interface ContextDraft {
  appName: string
  userId: string
  sessionId: string
  remoteAddress: string
  currentTime: string
  properties: { name: string; value: string }[]
}
export const EMPTY_CONTEXT: ContextDraft = { appName: 'playground', userId: '', sessionId: '', remoteAddress: '', currentTime: '', properties: [] }

/** The context as the API takes it: empty fields left out, values as typed (commas make combinations). */
export function toContext(d: ContextDraft): Context {
  const properties = Object.fromEntries(d.properties.filter((p) => p.name.trim()).map((p) => [p.name.trim(), p.value]))
  return {
    appName: d.appName,
    ...(d.userId ? { userId: d.userId } : {}),
    ...(d.sessionId ? { sessionId: d.sessionId } : {}),
    ...(d.remoteAddress ? { remoteAddress: d.remoteAddress } : {}),
    ...(d.currentTime ? { currentTime: d.currentTime } : {}),
    ...(Object.keys(properties).length > 0 ? { properties } : {}),
  }
}

const COMMAS = 'Comma-separated values are evaluated one by one'

/** The context fields a custom property may name: every defined field but those the builder has inputs of. */
const OWN_INPUTS = new Set(['appName', 'userId', 'sessionId', 'remoteAddress', 'currentTime', 'environment'])

/**
 * The fields of an Unleash context, and custom properties; `fields` are the context fields the evaluated flags may use
 * (global ones and their projects' own), offered as property names with their legal values.
 */
export function ContextBuilder({ value, onChange, fields = [] }: { value: ContextDraft; onChange: (next: ContextDraft) => void; fields?: { name: string; legalValues: { value: string }[] }[] }) {
  const offered = [...new Set(fields.map((f) => f.name).filter((n) => !OWN_INPUTS.has(n)))]
  const legalValuesOf = (name: string) => fields.find((f) => f.name === name)?.legalValues.map((v) => v.value) ?? []
  const set = (patch: Partial<ContextDraft>) => onChange({ ...value, ...patch })
  const setProperty = (i: number, patch: Partial<ContextDraft['properties'][number]>) => set({ properties: value.properties.map((p, j) => (j === i ? { ...p, ...patch } : p)) })
  return (
    <Stack gap="xs" component="fieldset" aria-label="Context" style={{ border: 0, padding: 0, margin: 0 }}>
      <Group align="start" wrap="wrap">
        <TextInput label="App name" required description={COMMAS} value={value.appName} onChange={(e) => set({ appName: e.currentTarget.value })} />
        <TextInput label="User id" description={COMMAS} value={value.userId} onChange={(e) => set({ userId: e.currentTarget.value })} />
        <TextInput label="Session id" value={value.sessionId} onChange={(e) => set({ sessionId: e.currentTarget.value })} />
        <TextInput label="Remote address" value={value.remoteAddress} onChange={(e) => set({ remoteAddress: e.currentTarget.value })} />
        <TextInput label="Current time" description="RFC 3339; now when empty" placeholder="2026-12-31T23:59:00Z" value={value.currentTime} onChange={(e) => set({ currentTime: e.currentTarget.value })} />
      </Group>
      {value.properties.map((p, i) => (
        <Group key={i} align="end">
          <Autocomplete label={`Property name ${i + 1}`} data={offered} value={p.name} onChange={(name) => setProperty(i, { name })} />
          <Autocomplete label={`Property value ${i + 1}`} data={legalValuesOf(p.name.trim())} value={p.value} onChange={(v) => setProperty(i, { value: v })} />
          <ActionIcon variant="subtle" color="red" onClick={() => set({ properties: value.properties.filter((_, j) => j !== i) })} aria-label={`Remove property ${i + 1}`} mb={4}>
            ×
          </ActionIcon>
        </Group>
      ))}
      <Button variant="default" size="xs" w="fit-content" onClick={() => set({ properties: [...value.properties, { name: '', value: '' }] })}>
        Add custom property
      </Button>
    </Stack>
  )
}

const resultText = (r: StrategyResult['result']) => (typeof r === 'boolean' ? (r ? 'on' : 'off') : r.evaluationStatus === 'unevaluated' ? 'not evaluated (disabled)' : `unknown (${r.evaluationStatus})`)

/** Why the flag came out as it did in one combination: the environment switch, then each strategy with its constraints and segments. */
export function reasonOf(r: Result): string {
  if (!r.isEnabledInCurrentEnvironment) return `switched off in ${r.environment}`
  const strategies = r.strategies.data
  if (strategies.length === 0) return 'on in the environment, with no strategy'
  const deciding = strategies.find((s) => s.result === true)
  if (deciding && !r.isEnabled) return `strategy ${deciding.title || deciding.name} is on, but a parent flag is not satisfied`
  if (deciding) {
    const constraints = deciding.constraints.map((c) => `${c.contextName} ${c.inverted ? 'NOT ' : ''}${c.operator} ${c.values.length ? c.values.join(',') : (c.value ?? '')}`)
    return `strategy ${deciding.title || deciding.name} is on${constraints.length ? ` (matched ${constraints.join(' and ')})` : ''}${deciding.segments.length ? ` in segment ${deciding.segments.map((s) => s.name).join(', ')}` : ''}`
  }
  return strategies
    .map((s) => {
      const failed = [...s.constraints.filter((c) => !c.result).map((c) => `${c.contextName} ${c.inverted ? 'NOT ' : ''}${c.operator} ${c.values.length ? c.values.join(',') : (c.value ?? '')}`), ...s.segments.filter((g) => !g.result).map((g) => `segment ${g.name}`)]
      return `strategy ${s.title || s.name} is ${resultText(s.result)}${failed.length ? ` (failed ${failed.join(' and ')})` : ''}`
    })
    .join('; ')
}

const contextText = (c: Record<string, string>) =>
  Object.entries(c)
    .filter(([k]) => k !== 'environment')
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')

/** Per flag and environment, every combination of the context: on or off, the variant, and the reason. */
export function PlaygroundResults({ response }: { response: Schemas['advancedPlaygroundResponseSchema'] }) {
  if (response.features.length === 0) return <Text c="dimmed">No flags in the chosen projects.</Text>
  return (
    <Stack>
      {(response.warnings?.invalidContextProperties ?? []).length > 0 && <Text c="orange.9">Left out of the evaluation: {response.warnings!.invalidContextProperties!.join(', ')}</Text>}
      {response.features.map((f) => (
        <Card key={f.name} withBorder padding="sm" component="section" aria-label={`Result of ${f.name}`}>
          <Text fw={600}>
            {f.name}{' '}
            <Text span size="sm" c="dimmed">
              {f.projectId}
            </Text>
          </Text>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Environment</Table.Th>
                <Table.Th>Context</Table.Th>
                <Table.Th>Result</Table.Th>
                <Table.Th>Variant</Table.Th>
                <Table.Th>Reason</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {Object.entries(f.environments).flatMap(([env, results]) =>
                results.map((r, i) => (
                  <Table.Tr key={`${env}-${i}`}>
                    <Table.Td>{env}</Table.Td>
                    <Table.Td>{contextText(r.context)}</Table.Td>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>
                      <Badge color={r.isEnabled ? 'teal.9' : 'gray.8'} style={{ flexShrink: 0, overflow: 'visible' }} styles={{ label: { overflow: 'visible' } }}>{r.isEnabled ? 'on' : r.strategies.result === 'unknown' ? 'unknown' : 'off'}</Badge>
                    </Table.Td>
                    <Table.Td>{r.variant && r.variant.name !== 'disabled' ? `${r.variant.name}${r.variant.payload ? ` (${r.variant.payload.value})` : ''}` : '—'}</Table.Td>
                    <Table.Td>{reasonOf(r)}</Table.Td>
                  </Table.Tr>
                )),
              )}
            </Table.Tbody>
          </Table>
        </Card>
      ))}
    </Stack>
  )
}
