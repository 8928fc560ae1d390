import { Anchor, Badge, Button, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ok } from '../api/client'
import { useAllows } from '../api/session'
import { ErrorMessage } from '../components/error-message'
import { FavoriteStar } from '../components/favorite-star'
import { Loading } from '../components/loading'
import { plural } from '../plural'
import { flagPath, projectPath } from '../paths'

type Flag = { name: string; project: string; type: string; favorite: boolean }

/**
 * The personal dashboard (`GET /api/admin/personal-dashboard`): the projects the user is in or starred, with their flags,
 * members and health; the flags they starred, and those they created. With no project, the way into one.
 */
export default function HomePage() {
  const allows = useAllows()
  const dashboard = useQuery({ queryKey: ['personal-dashboard'], queryFn: () => ok(api.GET('/api/admin/personal-dashboard')) })
  if (dashboard.isPending) return <Loading />
  if (dashboard.isError) return <ErrorMessage error={dashboard.error} />
  const { projects, flags, admins } = dashboard.data
  const favorites = flags.filter((f) => f.favorite)
  const created = flags.filter((f) => !f.favorite)
  return (
    <Stack>
      <Title order={1}>Your dashboard</Title>
      <Title order={2} size="h3">
        Your projects
      </Title>
      {projects.length === 0 ? (
        <Card withBorder component="section" aria-label="Get started">
          <Text fw={600}>You are not in any project yet.</Text>
          <Text size="sm" c="dimmed" mt={4}>
            Every instance has the default project: start there, or create a project of your own. Projects you are added to or star show here.
          </Text>
          <Group mt="sm">
            <Button component={Link} href={projectPath('default')}>
              Open the default project
            </Button>
            {allows('CREATE_PROJECT') && (
              <Button component={Link} href="/projects?create=project" variant="default">
                Create project
              </Button>
            )}
          </Group>
        </Card>
      ) : (
        <SimpleGrid cols={{ base: 1, sm: 2, xl: 3 }}>
          {projects.map((p) => (
            <Card key={p.id} withBorder component="article" aria-label={`Project ${p.name}`}>
              <Group justify="space-between" wrap="nowrap">
                <Anchor component={Link} href={projectPath(p.id)} fw={600}>
                  {p.name}
                </Anchor>
                <FavoriteStar projectId={p.id} favorite={p.favorite} />
              </Group>
              <Group gap="xs" mt="xs">
                <Badge variant="light">{plural(p.featureCount, 'flag')}</Badge>
                <Badge variant="light" color="gray">
                  {plural(p.memberCount, 'member')}
                </Badge>
                {/* Filled: white on the darkest shades passes AA; a light variant of them did not (1:1 once a shade was named). */}
                <Badge color={p.health >= 75 ? 'teal.9' : 'red.9'}>health {p.health}%</Badge>
              </Group>
            </Card>
          ))}
        </SimpleGrid>
      )}
      <Title order={2} size="h3">
        Your favourite flags
      </Title>
      {favorites.length === 0 ? <Text c="dimmed">No favourite flags. Star a flag on its page to find it here.</Text> : <FlagTable flags={favorites} label="Your favourite flags" />}
      {created.length > 0 && (
        <>
          <Title order={2} size="h3">
            Flags you created
          </Title>
          <FlagTable flags={created} label="Flags you created" />
        </>
      )}
      {admins.length > 0 && (
        <Text size="sm" c="dimmed">
          Admins of this instance: {admins.map((a) => a.name ?? a.username ?? a.email).join(', ')}
        </Text>
      )}
    </Stack>
  )
}

function FlagTable({ flags, label }: { flags: Flag[]; label: string }) {
  return (
    <Table aria-label={label}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Flag</Table.Th>
          <Table.Th>Project</Table.Th>
          <Table.Th>Type</Table.Th>
          <Table.Th>Favourite</Table.Th>
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
            <Table.Td>
              <Anchor component={Link} href={projectPath(f.project)}>
                {f.project}
              </Anchor>
            </Table.Td>
            <Table.Td>{f.type}</Table.Td>
            <Table.Td>
              <FavoriteStar projectId={f.project} flagName={f.name} favorite={f.favorite} />
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  )
}
