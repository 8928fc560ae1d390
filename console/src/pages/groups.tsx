import { useState } from 'react'
import { Button, MultiSelect, Select, TagsInput, Text, TextInput, Textarea } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { userName } from '../api/session'
import { ErrorMessage } from '../components/error-message'
import { allOf, DeleteButton, Described, EditDialog, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'
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
  return (
    <ListPage
      title="Groups"
      load={allOf(groups, roles)}
      action={<Button onClick={() => setEditing('new')}>Create group</Button>}
      intro="A group’s members hold its root role and its roles in projects, besides their own."
      error={remove.error}
    >
      {([{ groups: list }, { roles: allRoles }]) => {
        const roleName = (id: number | null) => (id === null ? 'None' : (allRoles.find((r) => r.id === id)?.name ?? String(id)))
        return (
          <>
            <RowTable
              rows={list}
              rowKey={(g) => g.id}
              empty="No groups yet."
              columns={[
                {
                  header: 'Name',
                  cell: (g) => (
                    <>
                      <Described name={g.name} description={g.description} />
                      {g.mappingsSSO.length > 0 && (
                        <Text size="xs" c="dimmed">
                          SSO groups: {g.mappingsSSO.join(', ')}
                        </Text>
                      )}
                    </>
                  ),
                },
                { header: 'Members', cell: (g) => g.users.map((u) => userName(u.user)).join(', ') || '—' },
                { header: 'Root role', cell: (g) => roleName(g.rootRole) },
                { header: 'Projects', cell: (g) => g.projects.join(', ') || '—' },
              ]}
              actions={(g) => (
                <>
                  <RowButton label={`Edit group ${g.name}`} onClick={() => setEditing(g)}>
                    Edit
                  </RowButton>
                  <DeleteButton label={`Delete group ${g.name}`} confirm={`Delete the group ${g.name}? Its members lose what they hold through it.`} onDelete={() => remove.mutate(g)} />
                </>
              )}
            />
            <EditDialog editing={editing} onClose={() => setEditing(undefined)} title={(g) => (g ? `Edit group ${g.name}` : 'Create group')}>
              {(g) => <GroupForm group={g} rootRoles={allRoles.filter((r) => r.type === 'root' || r.type === 'root-custom')} onDone={() => setEditing(undefined)} />}
            </EditDialog>
          </>
        )
      }}
    </ListPage>
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
    <MutationForm mutation={save} submit="Save group">
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
    </MutationForm>
  )
}
