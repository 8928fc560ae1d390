import { Fragment, useState } from 'react'
import { Badge, Button, Code, Group, Select, Stack, Table, Text, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useLocation } from 'wouter'
import { api, ok, type Schemas } from '../api/client'
import { allowsSomewhere, useAllows, useMe } from '../api/session'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'
import { FLAG_TYPES, type FlagType } from '../flag-types'
import { flagPath } from '../paths'

type Application = Schemas['applicationSchema']
type Series = Schemas['impactMetricSeriesSchema']

/** The applications SDKs reported (registrations and metrics), and each one's impact metrics on demand. */
export default function ApplicationsPage() {
  const apps = useQuery({ queryKey: ['applications'], queryFn: () => ok(api.GET('/api/admin/metrics/applications', { params: { query: { sortBy: 'seenAt', sortOrder: 'desc' } } })) })
  if (apps.isPending) return <Loading />
  if (apps.isError) return <PageError title="Applications" error={apps.error} />
  return (
    <Stack>
      <Title order={1}>Applications</Title>
      <Text size="sm" c="dimmed">
        The SDKs (by their appName) that registered or sent metrics, directly or through Unleash Edge or the Unleash Proxy, most recently seen first.
      </Text>
      {apps.data.applications.length === 0 ? (
        <Text>No application has reported yet.</Text>
      ) : (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Application</Table.Th>
              <Table.Th>SDK</Table.Th>
              <Table.Th>Flags reported in</Table.Th>
              <Table.Th>Last seen</Table.Th>
              <Table.Th>Impact metrics</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {apps.data.applications.map((app) => (
              <ApplicationRow key={app.appName} app={app} />
            ))}
          </Table.Tbody>
        </Table>
      )}
      <UnknownFlags />
    </Stack>
  )
}

const UNKNOWN_FLAGS_KEY = ['unknown-flags']

/** Flag names SDKs reported over the last day that no flag has: a typo in code, or a flag still to create. */
function UnknownFlags() {
  const unknown = useQuery({ queryKey: UNKNOWN_FLAGS_KEY, queryFn: () => ok(api.GET('/api/admin/metrics/unknown-flags')) })
  const me = useMe()
  const [creating, setCreating] = useState<string | null>(null)
  const canCreate = allowsSomewhere(me.data?.permissions, 'CREATE_FEATURE')
  return (
    <Stack gap="xs">
      <Title order={2}>Unknown flags</Title>
      <Text size="sm" c="dimmed">
        Flag names SDKs checked over the last 24 hours that no flag has (at most 100 names per application and environment), most recently seen first.
      </Text>
      {unknown.isPending ? (
        <Loading />
      ) : unknown.isError ? (
        <ErrorMessage error={unknown.error} />
      ) : unknown.data.unknownFlags.length === 0 ? (
        <Text>No SDK reported an unknown flag.</Text>
      ) : (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Reported by</Table.Th>
              <Table.Th>Last seen</Table.Th>
              <Table.Th>Last event</Table.Th>
              {canCreate && <Table.Th>Create</Table.Th>}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {unknown.data.unknownFlags.map((flag) => (
              <Table.Tr key={flag.name}>
                <Table.Td>
                  <Code>{flag.name}</Code>
                </Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    {(flag.reports ?? []).map((r) => (
                      <Badge key={r.appName} variant="light" tt="none">
                        {r.appName}: {r.environments.map((e) => e.environment).join(', ')}
                      </Badge>
                    ))}
                  </Group>
                </Table.Td>
                <Table.Td>{new Date(flag.lastSeenAt).toLocaleString()}</Table.Td>
                <Table.Td>{flag.lastEventAt ? new Date(flag.lastEventAt).toLocaleString() : 'none'}</Table.Td>
                {canCreate && (
                  <Table.Td>
                    <Button size="xs" variant="default" onClick={() => setCreating(flag.name)} aria-label={`Create this flag: ${flag.name}`}>
                      Create this flag
                    </Button>
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Dialog opened={creating !== null} onClose={() => setCreating(null)} title={`Create the flag ${creating ?? ''}`}>
        {creating !== null && <CreateUnknownFlag name={creating} onDone={() => setCreating(null)} />}
      </Dialog>
    </Stack>
  )
}

/** Creates a flag under the name SDKs already check, in a project the user may create flags in. */
function CreateUnknownFlag({ name, onDone }: { name: string; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [, setLocation] = useLocation()
  const allows = useAllows()
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => ok(api.GET('/api/admin/projects')) })
  const choices = (projects.data?.projects ?? []).filter((p) => allows('CREATE_FEATURE', p.id)).map((p) => ({ value: p.id, label: p.name }))
  const [project, setProject] = useState<string | null>(null)
  const [type, setType] = useState<FlagType>('release')
  const chosen = project ?? choices[0]?.value ?? null
  const create = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/projects/{projectId}/features', { params: { path: { projectId: chosen! } }, body: { name, type } })),
    onSuccess: async (flag) => {
      await queryClient.invalidateQueries({ queryKey: UNKNOWN_FLAGS_KEY })
      notifications.show({ message: `Flag ${flag.name} created`, color: 'green' })
      onDone()
      setLocation(flagPath(chosen!, flag.name))
    },
  })
  if (projects.isPending) return <Loading />
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        create.mutate()
      }}
    >
      <Stack>
        {projects.isError && <ErrorMessage error={projects.error} />}
        {create.isError && <ErrorMessage error={create.error} />}
        <Select label="Project" data={choices} value={chosen} onChange={setProject} allowDeselect={false} required />
        <Select label="Type" data={[...FLAG_TYPES]} value={type} onChange={(v) => v && setType(v as FlagType)} allowDeselect={false} />
        <Button type="submit" disabled={!chosen} loading={create.isPending}>
          Create
        </Button>
      </Stack>
    </form>
  )
}

function ApplicationRow({ app }: { app: Application }) {
  const [open, setOpen] = useState(false)
  return (
    <Fragment>
      <Table.Tr>
        <Table.Td>
          <Text size="sm" fw={600}>
            {app.appName}
          </Text>
        </Table.Td>
        <Table.Td>{app.sdkVersion ?? 'unknown'}</Table.Td>
        <Table.Td>
          <Group gap={4}>
            {app.usage.length === 0
              ? 'none yet'
              : app.usage.map((u) => (
                  <Badge key={u.project} variant="light" tt="none">
                    {u.project}: {u.environments.join(', ')}
                  </Badge>
                ))}
          </Group>
        </Table.Td>
        <Table.Td>{new Date(app.seenAt).toLocaleString()}</Table.Td>
        <Table.Td>
          <Button size="xs" variant="default" onClick={() => setOpen((o) => !o)} aria-expanded={open} aria-label={`${open ? 'Hide' : 'Show'} impact metrics of ${app.appName}`}>
            {open ? 'Hide' : 'Show'}
          </Button>
        </Table.Td>
      </Table.Tr>
      {open && (
        <Table.Tr>
          <Table.Td colSpan={5}>
            <ImpactMetrics appName={app.appName} />
          </Table.Td>
        </Table.Tr>
      )}
    </Fragment>
  )
}

const labelsOf = (labels: Series['labels']) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')

function valueOf(series: Series): string {
  if (series.type !== 'histogram') return String(series.value ?? 0)
  const buckets = (series.buckets ?? []).map((b) => `≤${b.le}: ${b.count}`).join(', ')
  return `count ${series.count ?? 0}, sum ${series.sum ?? 0}${buckets ? ` (${buckets})` : ''}`
}

function ImpactMetrics({ appName }: { appName: string }) {
  const metrics = useQuery({
    queryKey: ['applications', appName, 'impact-metrics'],
    queryFn: () => ok(api.GET('/api/admin/metrics/applications/{appName}/impact-metrics', { params: { path: { appName } } })),
  })
  if (metrics.isPending) return <Loading />
  if (metrics.isError) return <ErrorMessage error={metrics.error} />
  if (metrics.data.impactMetrics.length === 0) return <Text size="sm">{appName} has reported no impact metrics.</Text>
  return (
    <Table aria-label={`Impact metrics of ${appName}`}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Metric</Table.Th>
          <Table.Th>Type</Table.Th>
          <Table.Th>Environment</Table.Th>
          <Table.Th>Labels</Table.Th>
          <Table.Th>Value</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {metrics.data.impactMetrics.map((m) => (
          <Table.Tr key={`${m.environment}\u0000${m.name}\u0000${labelsOf(m.labels)}`}>
            <Table.Td>
              <Text size="sm" fw={600}>
                {m.name}
              </Text>
              <Text size="xs" c="dimmed">
                {m.help}
              </Text>
            </Table.Td>
            <Table.Td>{m.type}</Table.Td>
            <Table.Td>{m.environment}</Table.Td>
            <Table.Td>{Object.keys(m.labels).length === 0 ? 'none' : <Code>{labelsOf(m.labels)}</Code>}</Table.Td>
            <Table.Td>{valueOf(m)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  )
}
