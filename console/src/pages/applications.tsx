import { Fragment, useState } from 'react'
import { Badge, Button, Code, Group, Stack, Table, Text, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../api/client'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'

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
    </Stack>
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
