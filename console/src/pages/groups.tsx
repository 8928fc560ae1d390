import { useState } from 'react'
import { Button, Group, MultiSelect, Select, Stack, Table, TagsInput, Text, TextInput, Textarea, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { userName } from '../api/session'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'

type GroupItem = Schemas['groupSchema']
const GROUPS_KEY = ['groups'] as const
const NO_ROOT_ROLE = 'none'

/** Groups of users: their members hold the group's root role and its roles in projects besides their own. Admins only. */
export default function GroupsPage() {
  const groups = useQuery({ queryKey: GROUPS_KEY, queryFn: () => ok(api.GET('/api/admin/groups')) })
  const roles = useQuery({ queryKey: ['roles'], queryFn: () => ok(api.GET('/api/admin/roles')) })
  const [editing, setEditing] = useState<GroupItem | 'new'>()
  const remove = useChange((g: GroupItem) => ok(api.DELETE('/api/admin/groups/{groupId}', { params: { path: { groupId: String(g.id) } } })), GROUPS_KEY, (g) => `Group ${g.name} deleted`)
  if (groups.isPending || roles.isPending) return <Loading />
  if (groups.isError) return <PageError title="Groups" error={groups.error} />
  if (roles.isError) return <PageError title="Groups" error={roles.error} />
  const roleName = (id: number | null) => (id === null ? 'None' : (roles.data.roles.find((r) => r.id === id)?.name ?? String(id)))
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Groups</Title>
        <Button onClick={() => setEditing('new')}>Create group</Button>
      </Group>
      <Text size="sm" c="dimmed">
        A group’s members hold its root role and its roles in projects, besides their own.
      </Text>
      {remove.isError && <ErrorMessage error={remove.error} />}
      {groups.data.groups.length === 0 ? (
        <Text c="dimmed" size="sm">
          No groups yet.
        </Text>
      ) : (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Members</Table.Th>
              <Table.Th>Root role</Table.Th>
              <Table.Th>Projects</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {groups.data.groups.map((g) => (
              <Table.Tr key={g.id}>
                <Table.Td>
                  <Text size="sm">{g.name}</Text>
                  {g.description && (
                    <Text size="xs" c="dimmed">
                      {g.description}
                    </Text>
                  )}
                  {g.mappingsSSO.length > 0 && (
                    <Text size="xs" c="dimmed">
                      SSO groups: {g.mappingsSSO.join(', ')}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{g.users.map((u) => userName(u.user)).join(', ') || '—'}</Table.Td>
                <Table.Td>{roleName(g.rootRole)}</Table.Td>
                <Table.Td>{g.projects.join(', ') || '—'}</Table.Td>
                <Table.Td>
                  <Group gap="xs" justify="end" wrap="nowrap">
                    <Button size="xs" variant="default" onClick={() => setEditing(g)} aria-label={`Edit group ${g.name}`}>
                      Edit
                    </Button>
                    <Button
                      size="xs"
                      color="red.9"
                      variant="outline"
                      onClick={() => window.confirm(`Delete the group ${g.name}? Its members lose what they hold through it.`) && remove.mutate(g)}
                      aria-label={`Delete group ${g.name}`}
                    >
                      Delete
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Dialog opened={editing !== undefined} onClose={() => setEditing(undefined)} title={editing === 'new' ? 'Create group' : `Edit group ${editing?.name ?? ''}`}>
        {editing && <GroupForm group={editing === 'new' ? undefined : editing} rootRoles={roles.data.roles.filter((r) => r.type === 'root' || r.type === 'root-custom')} onDone={() => setEditing(undefined)} />}
      </Dialog>
    </Stack>
  )
}

function GroupForm({ group, rootRoles, onDone }: { group?: GroupItem; rootRoles: Schemas['roleSchema'][]; onDone: () => void }) {
  const queryClient = useQueryClient()
  const people = useQuery({ queryKey: ['users-and-groups'], queryFn: () => ok(api.GET('/api/admin/user-admin/access')) })
  const [name, setName] = useState(group?.name ?? '')
  const [description, setDescription] = useState(group?.description ?? '')
  const [rootRole, setRootRole] = useState<string>(group?.rootRole ? String(group.rootRole) : NO_ROOT_ROLE)
  const [members, setMembers] = useState<string[]>((group?.users ?? []).map((u) => String(u.user.id)))
  const [mappings, setMappings] = useState<string[]>(group?.mappingsSSO ?? [])
  const save = useMutation({
    mutationFn: () => {
      const body = {
        name,
        description: description || null,
        mappingsSSO: mappings,
        rootRole: rootRole === NO_ROOT_ROLE ? null : Number(rootRole),
        users: members.map((id) => ({ user: { id: Number(id) } })),
      }
      return group ? ok(api.PUT('/api/admin/groups/{groupId}', { params: { path: { groupId: String(group.id) } }, body })) : ok(api.POST('/api/admin/groups', { body }))
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: GROUPS_KEY })
      await queryClient.invalidateQueries({ queryKey: ['users-and-groups'] })
      notifications.show({ message: `Group ${name} saved`, color: 'green' })
      onDone()
    },
  })
  if (people.isPending) return <Loading />
  if (people.isError) return <ErrorMessage error={people.error} />
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <Stack>
        {save.isError && <ErrorMessage error={save.error} />}
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <Select
          label="Root role"
          description="Held by every member, besides their own"
          data={[{ value: NO_ROOT_ROLE, label: 'None' }, ...rootRoles.map((r) => ({ value: String(r.id), label: r.name }))]}
          value={rootRole}
          onChange={(v) => setRootRole(v ?? NO_ROOT_ROLE)}
          allowDeselect={false}
        />
        <TagsInput
          label="SSO group IDs"
          description="The provider's group names or ids whose members join this group when they sign in with single sign-on (with group syncing on); Enter after each"
          value={mappings}
          onChange={setMappings}
          maxTags={100}
          clearable
        />
        <MultiSelect label="Members" data={people.data.users.filter((u) => u.accountType === 'User').map((u) => ({ value: String(u.id), label: userName(u) }))} value={members} onChange={setMembers} searchable />
        <Button type="submit" loading={save.isPending}>
          Save group
        </Button>
      </Stack>
    </form>
  )
}
