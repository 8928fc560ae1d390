import { useState } from 'react'
import { Anchor, Badge, Group, Select, Stack, Table, Text, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ok } from '../api/client'
import { changeRequestPath, changeRequestsKey, type ChangeRequest } from '../api/change-requests'
import { ErrorMessage } from '../components/error-message'
import { Loading } from '../components/loading'
import { projectPath } from '../paths'

const STATES = ['Draft', 'In review', 'Approved', 'Scheduled', 'Applied', 'Rejected', 'Cancelled'] as const
export const STATE_COLORS: Record<ChangeRequest['state'], string> = {
  Draft: 'gray.8',
  'In review': 'violet.9',
  Approved: 'blue.9',
  Scheduled: 'cyan.9',
  Applied: 'teal.9',
  Rejected: 'red.9',
  Cancelled: 'gray.8',
}

/** A project's change requests, newest first, optionally of one state. */
export default function ChangeRequestsPage({ projectId }: { projectId: string }) {
  const [state, setState] = useState<string | null>(null)
  const list = useQuery({
    queryKey: changeRequestsKey(projectId),
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/change-requests', { params: { path: { projectId } } })),
  })
  const shown = (list.data ?? []).filter((cr) => !state || cr.state === state)
  return (
    <Stack>
      <div>
        <Anchor component={Link} href={projectPath(projectId)} size="sm">
          ← {projectId}
        </Anchor>
        <Title order={1}>Change requests</Title>
      </div>
      <Select label="State" placeholder="Any state" data={[...STATES]} value={state} onChange={setState} clearable w={200} />
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorMessage error={list.error} />
      ) : shown.length === 0 ? (
        <Stack gap={4} maw={640}>
          <Text fw={600}>No change requests{state ? ` in state ${state}` : ''}.</Text>
          {!state && (
            <Text size="sm" c="dimmed">
              A change to an environment that requires change requests goes into a draft here, for others to approve before it applies. Turn them on per
              environment in the{' '}
              <Anchor component={Link} href={projectPath(projectId)} size="sm" underline="always">
                project’s change request settings
              </Anchor>
              .
            </Text>
          )}
        </Stack>
      ) : (
        <Table aria-label="Change requests">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Change request</Table.Th>
              <Table.Th>Environment</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Flags</Table.Th>
              <Table.Th>Author</Table.Th>
              <Table.Th>Updated</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {shown.map((cr) => (
              <Table.Tr key={cr.id}>
                <Table.Td>
                  <Anchor component={Link} href={changeRequestPath(projectId, cr.id)}>
                    #{cr.id} {cr.title}
                  </Anchor>
                </Table.Td>
                <Table.Td>{cr.environment}</Table.Td>
                <Table.Td>
                  <Badge color={STATE_COLORS[cr.state]}>{cr.state}</Badge>
                </Table.Td>
                <Table.Td>{cr.features.map((f) => f.name).join(', ')}</Table.Td>
                <Table.Td>{cr.createdBy.username}</Table.Td>
                <Table.Td>{new Date(cr.updatedAt).toLocaleString()}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Group />
    </Stack>
  )
}
