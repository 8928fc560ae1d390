import { Anchor, Stack, Table, Text, Title } from '@mantine/core'
import { Link } from 'wouter'
import { changeRequestPath, usePendingApprovals } from '../api/change-requests'
import { useMe } from '../api/session'
import { ErrorMessage } from '../components/error-message'
import { Loading } from '../components/loading'
import { projectPath } from '../paths'

/** The change requests waiting for the signed-in user's approval, across the projects they may read, newest first. */
export default function ApprovalsPage() {
  const me = useMe()
  const waiting = usePendingApprovals(me.data?.user.id, 100)
  const list = waiting.data?.changeRequests ?? []
  return (
    <Stack>
      <Title order={1}>Approvals</Title>
      <Text c="dimmed">Change requests in review that you may approve: not your own, not approved by you yet.</Text>
      {waiting.isPending ? (
        <Loading />
      ) : waiting.isError ? (
        <ErrorMessage error={waiting.error} />
      ) : list.length === 0 ? (
        <Text>Nothing is waiting for your approval.</Text>
      ) : (
        <>
          {waiting.data.total > list.length && <Text size="sm">The newest {list.length} of {waiting.data.total}.</Text>}
          <Table aria-label="Waiting for your approval">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Change request</Table.Th>
                <Table.Th>Project</Table.Th>
                <Table.Th>Environment</Table.Th>
                <Table.Th>Flags</Table.Th>
                <Table.Th>Author</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((cr) => (
                <Table.Tr key={cr.id}>
                  <Table.Td>
                    <Anchor component={Link} href={changeRequestPath(cr.project, cr.id)}>
                      #{cr.id} {cr.title}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Anchor component={Link} href={projectPath(cr.project)}>
                      {cr.project}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{cr.environment}</Table.Td>
                  <Table.Td>{cr.features.join(', ')}</Table.Td>
                  <Table.Td>{cr.createdBy.username}</Table.Td>
                  <Table.Td>{new Date(cr.createdAt).toLocaleString()}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </>
      )}
    </Stack>
  )
}
