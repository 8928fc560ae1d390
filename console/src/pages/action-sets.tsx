import { useState } from 'react'
import { Anchor, Badge, Button, Card, Checkbox, Code, Group, NativeSelect, Stack, Switch, Text, TextInput, Textarea, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'wouter'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { Dialog } from '../components/dialog'
import { ErrorMessage } from '../components/error-message'
import { allOf, DeleteButton, Described, EditDialog, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'
import { Loading } from '../components/loading'
import { projectPath } from '../paths'
import { SERVICE_ACCOUNTS_KEY } from './service-accounts'
import { SIGNAL_ENDPOINTS_KEY } from './signal-endpoints'
import { BesideInput } from '../components/beside-input'

type ActionSet = Schemas['actionsSchema']
type Body = Schemas['createActionsSchema']
type Filter = Schemas['actionSetFilterSchema']
type Run = Schemas['actionSetEventSchema']
type ActionName = ActionSet['actions'][number]['action']

const actionsKey = (projectId: string) => ['projects', projectId, 'actions'] as const
const ACTION_LABELS: Record<ActionName, string> = {
  TOGGLE_FEATURE_ON: 'Enable flag',
  TOGGLE_FEATURE_OFF: 'Disable flag',
  TOGGLE_FEATURES_ON_BY_TAG: 'Enable flags tagged',
  TOGGLE_FEATURES_OFF_BY_TAG: 'Disable flags tagged',
}
const byTag = (action: ActionName) => action === 'TOGGLE_FEATURES_ON_BY_TAG' || action === 'TOGGLE_FEATURES_OFF_BY_TAG'
/** What an action switches, as the lists show it: its flag, or the flags of its tag. */
const targetOf = (params: { featureName?: string; tag?: string }) => params.featureName ?? params.tag
const LIST_OPERATORS = ['IN', 'NOT_IN', 'STR_CONTAINS', 'STR_STARTS_WITH', 'STR_ENDS_WITH']
const OPERATORS = [...LIST_OPERATORS, 'NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE', 'SEMVER_EQ', 'SEMVER_GT', 'SEMVER_GTE', 'SEMVER_LT', 'SEMVER_LTE'] as Filter['operator'][]
const STATE_COLORS: Record<string, string> = { success: 'teal.9', failed: 'red.9', started: 'blue.9', 'not started': 'gray.8' }

/** A filter as one line of text: `data.severity IN critical, major`. */
const filterText = (parameter: string, f: Filter) => `${parameter} ${f.inverted ? 'NOT ' : ''}${f.operator} ${f.values?.join(', ') ?? f.value ?? ''}${f.caseInsensitive ? ' (any case)' : ''}`

/** A project's action sets: when a signal of an endpoint passes the filters, the actions switch flags as a service account. */
export default function ActionSetsPage({ projectId }: { projectId: string }) {
  const key = actionsKey(projectId)
  const path = { params: { path: { projectId } } }
  const sets = useQuery({ queryKey: key, queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/actions', path)) })
  const endpoints = useQuery({ queryKey: SIGNAL_ENDPOINTS_KEY, queryFn: () => ok(api.GET('/api/admin/signal-endpoints')) })
  const accounts = useQuery({ queryKey: SERVICE_ACCOUNTS_KEY, queryFn: () => ok(api.GET('/api/admin/service-account')) })
  const [editing, setEditing] = useState<ActionSet | 'new'>()
  const [runsOf, setRunsOf] = useState<ActionSet>()
  const setPath = (a: ActionSet) => ({ params: { path: { projectId, actionSetId: String(a.id) } } })
  const toggle = useChange(
    (a: ActionSet) => (a.enabled ? ok(api.POST('/api/admin/projects/{projectId}/actions/{actionSetId}/off', setPath(a))) : ok(api.POST('/api/admin/projects/{projectId}/actions/{actionSetId}/on', setPath(a)))),
    key,
    (a) => `Action set ${a.name} ${a.enabled ? 'disabled' : 'enabled'}`,
  )
  const remove = useChange((a: ActionSet) => ok(api.DELETE('/api/admin/projects/{projectId}/actions/{actionSetId}', setPath(a))), key, (a) => `Action set ${a.name} deleted`)
  return (
    <ListPage
      title="Action sets"
      load={allOf(sets, endpoints, accounts)}
      under={
        <Anchor component={Link} href={projectPath(projectId)} size="sm">
          Back to project {projectId}
        </Anchor>
      }
      action={<Button onClick={() => setEditing('new')}>Create action set</Button>}
      intro="When a signal of the endpoint passes every filter, the actions run right after it arrives, as the service account: with its permissions, and never past a change-request protection it may not skip. Each run is logged."
      error={toggle.error ?? remove.error}
      dialogs={
        <Dialog opened={runsOf !== undefined} onClose={() => setRunsOf(undefined)} title={runsOf ? `Runs of ${runsOf.name}` : 'Runs'} size="xl">
          {runsOf && <RunLog projectId={projectId} actionSet={runsOf} />}
        </Dialog>
      }
    >
      {([{ actions: list }, { signalEndpoints }, { serviceAccounts }]) => {
        const endpointName = (id: number) => signalEndpoints.find((e) => e.id === id)?.name ?? `endpoint ${id}`
        const accountName = (id: number) => serviceAccounts.find((a) => a.id === id)?.username ?? `service account ${id}`
        return (
          <>
            <RowTable
              rows={list}
              rowKey={(a) => a.id}
              empty="No action sets in this project yet."
              actionsLabel="Commands"
              columns={[
                { header: 'Name', cell: (a) => <Described name={a.name} description={a.description} /> },
                { header: 'When a signal of', cell: (a) => endpointName(a.match.sourceId) },
                {
                  header: 'Passes',
                  cell: (a) =>
                    Object.keys(a.match.payload).length === 0
                      ? 'every signal'
                      : Object.entries(a.match.payload).map(([parameter, f]) => (
                          <Text key={parameter} size="xs" ff="monospace">
                            {filterText(parameter, f)}
                          </Text>
                        )),
                },
                { header: 'Then, as', cell: (a) => accountName(a.actorId) },
                {
                  header: 'Actions',
                  cell: (a) =>
                    [...a.actions]
                      .sort((x, y) => x.sortOrder - y.sortOrder)
                      .map((x) => (
                        <Text key={x.id} size="xs">
                          {ACTION_LABELS[x.action]} {targetOf(x.executionParams)} in {x.executionParams.environment}
                        </Text>
                      )),
                },
                { header: 'Enabled', cell: (a) => <Switch checked={a.enabled} disabled={toggle.isPending} onChange={() => toggle.mutate(a)} aria-label={`Action set ${a.name} acts on signals`} /> },
              ]}
              actions={(a) => (
                <>
                  <RowButton label={`Runs of ${a.name}`} onClick={() => setRunsOf(a)}>
                    Runs
                  </RowButton>
                  <RowButton label={`Edit ${a.name}`} onClick={() => setEditing(a)}>
                    Edit
                  </RowButton>
                  <DeleteButton label={`Delete ${a.name}`} confirm={`Delete the action set ${a.name} and its run log?`} onDelete={() => remove.mutate(a)} />
                </>
              )}
            />
            <EditDialog editing={editing} onClose={() => setEditing(undefined)} title={(a) => (a ? 'Edit action set' : 'Create action set')} size="xl">
              {(a) => <ActionSetForm projectId={projectId} actionSet={a} endpoints={signalEndpoints} accounts={serviceAccounts} onDone={() => setEditing(undefined)} />}
            </EditDialog>
          </>
        )
      }}
    </ListPage>
  )
}

interface FilterDraft {
  parameter: string
  operator: Filter['operator']
  values: string
  inverted: boolean
  caseInsensitive: boolean
}
interface ActionDraft {
  action: ActionName
  environment: string
  /** The flag, or (for a by-tag action) the tag as TYPE:VALUE. */
  target: string
}

const filterOf = (d: FilterDraft): Filter => {
  const list = LIST_OPERATORS.includes(d.operator)
  const values = d.values
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean)
  return { operator: d.operator, ...(list ? { values } : { value: d.values.trim() }), ...(d.inverted ? { inverted: true } : {}), ...(d.caseInsensitive ? { caseInsensitive: true } : {}) }
}

function ActionSetForm({
  projectId,
  actionSet,
  endpoints,
  accounts,
  onDone,
}: {
  projectId: string
  actionSet?: ActionSet
  endpoints: Schemas['signalEndpointSchema'][]
  accounts: Schemas['serviceAccountSchema'][]
  onDone: () => void
}) {
  const config = useQuery({ queryKey: ['projects', projectId, 'actions', 'config'], queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/actions/config', { params: { path: { projectId } } })) })
  const options = (name: 'environment' | 'featureName' | 'tag') =>
    (name === 'tag' ? config.data?.TOGGLE_FEATURES_ON_BY_TAG : config.data?.TOGGLE_FEATURE_ON)?.parameters.find((p) => p.name === name)?.options ?? []
  const [name, setName] = useState(actionSet?.name ?? '')
  const [description, setDescription] = useState(actionSet?.description ?? '')
  const [enabled, setEnabled] = useState(actionSet?.enabled ?? true)
  const [sourceId, setSourceId] = useState(String(actionSet?.match.sourceId ?? endpoints[0]?.id ?? ''))
  const [actorId, setActorId] = useState(String(actionSet?.actorId ?? accounts[0]?.id ?? ''))
  const [filters, setFilters] = useState<FilterDraft[]>(
    Object.entries(actionSet?.match.payload ?? {}).map(([parameter, f]) => ({ parameter, operator: f.operator, values: f.values?.join(', ') ?? f.value ?? '', inverted: f.inverted ?? false, caseInsensitive: f.caseInsensitive ?? false })),
  )
  const [actions, setActions] = useState<ActionDraft[]>(
    [...(actionSet?.actions ?? [])].sort((a, b) => a.sortOrder - b.sortOrder).map((a) => ({ action: a.action, environment: a.executionParams.environment, target: targetOf(a.executionParams) ?? '' })),
  )
  const setFilter = (i: number, change: Partial<FilterDraft>) => setFilters((list) => list.map((f, j) => (j === i ? { ...f, ...change } : f)))
  const setAction = (i: number, change: Partial<ActionDraft>) => setActions((list) => list.map((a, j) => (j === i ? { ...a, ...change } : a)))
  const save = useChange(
    () => {
      const body: Body = {
        name,
        description: description || null,
        enabled,
        actorId: Number(actorId),
        match: { source: 'signal-endpoint', sourceId: Number(sourceId), payload: Object.fromEntries(filters.filter((f) => f.parameter.trim()).map((f) => [f.parameter.trim(), filterOf(f)])) },
        actions: actions.map((a, i) => ({ action: a.action, sortOrder: i + 1, executionParams: { environment: a.environment, ...(byTag(a.action) ? { tag: a.target } : { featureName: a.target }) } })),
      }
      return actionSet
        ? ok(api.PUT('/api/admin/projects/{projectId}/actions/{actionSetId}', { params: { path: { projectId, actionSetId: String(actionSet.id) } }, body }))
        : ok(api.POST('/api/admin/projects/{projectId}/actions', { params: { path: { projectId } }, body }))
    },
    actionsKey(projectId),
    () => `Action set ${name} saved`,
    onDone,
  )
  if (endpoints.length === 0 || accounts.length === 0) {
    return <Text>An action set needs a signal endpoint to listen to and a service account to act as: create them first (Admin pages Signal endpoints and Service accounts).</Text>
  }
  const environments = options('environment')
  const flags = options('featureName')
  const tags = options('tag')
  return (
    <MutationForm mutation={save} submit="Save action set">
      {config.isError && <ErrorMessage error={config.error} />}
      <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <Textarea label="Description" autosize minRows={1} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
      <Group grow>
        <NativeSelect label="Signal endpoint" description="Where the signals come from" data={endpoints.map((e) => ({ value: String(e.id), label: e.name }))} value={sourceId} onChange={(e) => setSourceId(e.currentTarget.value)} />
        <NativeSelect label="Service account" description="The actions run as it" data={accounts.map((a) => ({ value: String(a.id), label: a.username }))} value={actorId} onChange={(e) => setActorId(e.currentTarget.value)} />
      </Group>
      <Title order={3} size="h5">
        Filters
      </Title>
      <Text size="xs" c="dimmed">
        Each filter tests a parameter of the signal&apos;s JSON (nested keys joined with dots, like data.severity; array items as tags[0]). Every filter must pass; with none, every signal does. List values are separated by commas.
      </Text>
      {filters.map((f, i) => (
        <Card key={i} withBorder padding="xs">
          <Group align="end" wrap="wrap">
            <TextInput label={`Parameter of filter ${i + 1}`} required value={f.parameter} onChange={(e) => setFilter(i, { parameter: e.currentTarget.value })} />
            <NativeSelect label={`Operator of filter ${i + 1}`} data={OPERATORS} value={f.operator} onChange={(e) => setFilter(i, { operator: e.currentTarget.value as Filter['operator'] })} />
            <TextInput label={`Values of filter ${i + 1}`} required value={f.values} onChange={(e) => setFilter(i, { values: e.currentTarget.value })} />
            <BesideInput>
              <Checkbox label="Negate" checked={f.inverted} onChange={(e) => setFilter(i, { inverted: e.currentTarget.checked })} />
              <Checkbox label="Any case" checked={f.caseInsensitive} onChange={(e) => setFilter(i, { caseInsensitive: e.currentTarget.checked })} />
              <Button variant="outline" color="red.9" size="xs" onClick={() => setFilters((list) => list.filter((_, j) => j !== i))} aria-label={`Remove filter ${i + 1}`}>
                Remove
              </Button>
            </BesideInput>
          </Group>
        </Card>
      ))}
      <Button variant="default" onClick={() => setFilters((list) => [...list, { parameter: '', operator: 'IN', values: '', inverted: false, caseInsensitive: false }])}>
        Add filter
      </Button>
      <Title order={3} size="h5">
        Actions, in order
      </Title>
      {actions.map((a, i) => (
        <Card key={i} withBorder padding="xs">
          <Group align="end" wrap="wrap">
            <NativeSelect
              label={`Action ${i + 1}`}
              data={Object.entries(ACTION_LABELS).map(([value, label]) => ({ value, label }))}
              value={a.action}
              onChange={(e) => {
                const action = e.currentTarget.value as ActionName
                setAction(i, { action, ...(byTag(action) !== byTag(a.action) ? { target: (byTag(action) ? tags : flags)[0] ?? '' } : {}) })
              }}
            />
            <NativeSelect label={`Environment of action ${i + 1}`} data={environments} value={a.environment} onChange={(e) => setAction(i, { environment: e.currentTarget.value })} />
            {byTag(a.action) ? (
              <NativeSelect label={`Tag of action ${i + 1}`} data={tags} value={a.target} onChange={(e) => setAction(i, { target: e.currentTarget.value })} />
            ) : (
              <NativeSelect label={`Flag of action ${i + 1}`} data={flags} value={a.target} onChange={(e) => setAction(i, { target: e.currentTarget.value })} />
            )}
            <Button variant="outline" color="red.9" size="xs" onClick={() => setActions((list) => list.filter((_, j) => j !== i))} aria-label={`Remove action ${i + 1}`}>
              Remove
            </Button>
          </Group>
        </Card>
      ))}
      <Button
        variant="default"
        disabled={flags.length === 0 && tags.length === 0}
        onClick={() =>
          setActions((list) => [...list, flags.length > 0 ? { action: 'TOGGLE_FEATURE_OFF', environment: environments[0] ?? '', target: flags[0]! } : { action: 'TOGGLE_FEATURES_OFF_BY_TAG', environment: environments[0] ?? '', target: tags[0]! }])
        }
      >
        Add action
      </Button>
      <Checkbox label="Enabled: acts on signals" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
    </MutationForm>
  )
}

/** The action set's runs, newest first: the signal that started each, and how each action went. */
function RunLog({ projectId, actionSet }: { projectId: string; actionSet: ActionSet }) {
  const runs = useQuery({
    queryKey: [...actionsKey(projectId), actionSet.id, 'events'],
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/actions/{actionSetId}/events', { params: { path: { projectId, actionSetId: String(actionSet.id) }, query: { limit: '20' } } })),
  })
  if (runs.isPending) return <Loading />
  if (runs.isError) return <ErrorMessage error={runs.error} />
  const list: Run[] = runs.data.actionSetEvents
  if (list.length === 0) return <Text c="dimmed">No runs yet: no signal has passed its filters.</Text>
  return (
    <Stack>
      {list.map((run) => (
        <Card key={run.id} withBorder>
          <Stack gap="xs">
            <Group gap="xs">
              <Badge color={STATE_COLORS[run.state]}>{run.state}</Badge>
              <Text size="sm">{new Date(run.createdAt).toLocaleString()}</Text>
            </Group>
            <Code block>{JSON.stringify(run.signal.payload, null, 2)}</Code>
            {[...run.actionSet.actions]
              .sort((x, y) => x.sortOrder - y.sortOrder)
              .map((x) => (
                <Group key={x.id} gap="xs" wrap="nowrap" align="start">
                  <Badge color={STATE_COLORS[x.state]}>
                    {x.state}
                  </Badge>
                  <Text size="sm">
                    {ACTION_LABELS[x.action]} {targetOf(x.executionParams)} in {x.executionParams.environment}
                    {x.details ? `: ${x.details}` : ''}
                  </Text>
                </Group>
              ))}
          </Stack>
        </Card>
      ))}
    </Stack>
  )
}
