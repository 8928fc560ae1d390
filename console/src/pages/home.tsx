import { Anchor, Badge, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ok } from '../api/client'
import { ErrorMessage } from '../components/error-message'
import { Loading } from '../components/loading'
import { flagPath, projectPath } from '../paths'

/** The personal dashboard (`GET /api/admin/personal-dashboard`): the user's favourite flags and projects. */
export default function HomePage() {
  const dashboard = useQuery({ queryKey: ['personal-dashboard'], queryFn: () => ok(api.GET('/api/admin/personal-dashboard')) })
  if (dashboard.isPending) return <Loading />
  if (dashboard.isError) return <ErrorMessage error={dashboard.error} />
  const { projects, flags, admins } = dashboard.data
  return (
    <Stack>
      <Title order={1}>Your dashboard</Title>
      <Title order={2} size="h3">
        Your projects
      </Title>
      {projects.length === 0 ? (
        <Text c="dimmed">You are not a member of any project yet. Projects you create or are added to show here.</Text>
      ) : (
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
          {projects.map((p) => (
            <Card key={p.id} withBorder>
              <Anchor component={Link} href={projectPath(p.id)} fw={600}>
                {p.name}
              </Anchor>
              <Group gap="xs" mt="xs">
                <Badge variant="light">{p.featureCount} flags</Badge>
                <Badge variant="light" color="gray">
                  {p.memberCount} members
                </Badge>
                <Badge variant="light" color={p.health >= 75 ? 'green.9' : 'red.9'}>
                  health {p.health}%
                </Badge>
              </Group>
            </Card>
          ))}
        </SimpleGrid>
      )}
      <Title order={2} size="h3">
        Your favourite flags
      </Title>
      {flags.length === 0 ? (
        <Text c="dimmed">No favourite flags. Mark a flag as favourite on its page to find it here.</Text>
      ) : (
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Flag</Table.Th>
              <Table.Th>Project</Table.Th>
              <Table.Th>Type</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {flags.map((f) => (
              <Table.Tr key={`${f.project}/${f.name}`}>
                <Table.Td>
                  <Anchor component={Link} href={flagPath(f.project, f.name)}>
                    {f.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{f.project}</Table.Td>
                <Table.Td>{f.type}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {admins.length > 0 && (
        <Text size="sm" c="dimmed">
          Admins of this instance: {admins.map((a) => a.name ?? a.username ?? a.email).join(', ')}
        </Text>
      )}
    </Stack>
  )
}
