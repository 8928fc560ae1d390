import { useState } from 'react'
import { Badge, Button, Group, MultiSelect, Select, Stack, Table, Text, Title, VisuallyHidden, type ComboboxItem } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../api/client'
import { userName as nameOf } from '../api/session'
import { ErrorMessage } from './error-message'
import { Loading } from './loading'

/** Who holds roles in the project: a user or a group, with its id. */
type Holder = { kind: 'user' | 'group'; id: number; name: string; roles: number[]; members?: string }

const holderKey = (h: { kind: string; id: number }) => `${h.kind}:${h.id}`

/**
 * The users and groups holding roles in a project, each with any number of project roles (built in or custom): add,
 * change, remove. Shown to those who may update the project; the server refuses a role they may not give. Whom to add
 * is found as one types (see HolderPicker).
 */
export function ProjectAccess({ projectId }: { projectId: string }) {
  const queryClient = useQueryClient()
  const key = ['project-access', projectId]
  const access = useQuery({ queryKey: key, queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/access', { params: { path: { projectId } } })) })
  // The groups and service accounts to choose from (its users are not listed: they are searched for, see HolderPicker).
  const people = useQuery({ queryKey: ['users-and-groups'], queryFn: () => ok(api.GET('/api/admin/user-admin/access')) })
  const [newHolder, setNewHolder] = useState<string | null>(null)
  const [picker, setPicker] = useState(0)
  const [newRoles, setNewRoles] = useState<string[]>([])
  const done = (message: string) => async () => {
    await queryClient.invalidateQueries({ queryKey: key })
    notifications.show({ message, color: 'green' })
  }
  const add = useMutation({
    mutationFn: () => {
      const [kind, id] = (newHolder ?? '').split(':') as ['user' | 'group', string]
      const body = { roles: newRoles.map(Number), users: kind === 'user' ? [Number(id)] : [], groups: kind === 'group' ? [Number(id)] : [] }
      return ok(api.POST('/api/admin/projects/{projectId}/access', { params: { path: { projectId } }, body }))
    },
    onSuccess: async () => {
      setNewHolder(null)
      setNewRoles([])
      setPicker((n) => n + 1)
      await done('Access given')()
    },
  })
  const change = useMutation({
    mutationFn: ({ holder, roles }: { holder: Holder; roles: number[] }) =>
      holder.kind === 'user'
        ? ok(api.PUT('/api/admin/projects/{projectId}/users/{userId}/roles', { params: { path: { projectId, userId: String(holder.id) } }, body: { roles } }))
        : ok(api.PUT('/api/admin/projects/{projectId}/groups/{groupId}/roles', { params: { path: { projectId, groupId: String(holder.id) } }, body: { roles } })),
    onSuccess: done('Roles changed'),
  })
  const remove = useMutation({
    mutationFn: (holder: Holder) =>
      holder.kind === 'user'
        ? ok(api.DELETE('/api/admin/projects/{projectId}/users/{userId}/roles', { params: { path: { projectId, userId: String(holder.id) } } }))
        : ok(api.DELETE('/api/admin/projects/{projectId}/groups/{groupId}/roles', { params: { path: { projectId, groupId: String(holder.id) } } })),
    onSuccess: done('Access removed'),
  })
  if (access.isPending) return <Loading />
  if (access.isError) return <ErrorMessage error={access.error} />
  // A role the caller may not give there (a permission of it they lack) is shown, but cannot be picked.
  const roles = access.data.roles.map((r) => ({ value: String(r.id), label: r.givable ? r.name : `${r.name} (you cannot give it)`, disabled: !r.givable }))
  const error = add.error ?? change.error ?? remove.error ?? people.error
  const holders: Holder[] = [
    ...access.data.users.map((u): Holder => ({ kind: 'user', id: u.id, name: nameOf(u), roles: u.roles })),
    ...access.data.groups.map((g): Holder => ({ kind: 'group', id: g.id, name: g.name, roles: g.roles, members: g.users.map((m) => nameOf(m.user)).join(', ') })),
  ]
  const present = new Set(holders.map(holderKey))
  return (
    <Stack gap="xs" component="section" aria-labelledby="project-access-title">
      <Title order={2} size="h3" id="project-access-title">
        Members and roles
      </Title>
      {error && <ErrorMessage error={error} />}
      {holders.length === 0 ? (
        <Text c="dimmed" size="sm">
          No user or group has a role in this project yet.
        </Text>
      ) : (
        <Table striped aria-labelledby="project-access-title">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>User or group</Table.Th>
              <Table.Th>Roles</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {holders.map((h) => (
              <Table.Tr key={holderKey(h)}>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Text size="sm">{h.name}</Text>
                    {h.kind === 'group' && (
                      <Badge variant="light" size="sm">
                        Group
                      </Badge>
                    )}
                  </Group>
                  {h.members !== undefined && (
                    <Text size="xs" c="dimmed">
                      {h.members || 'no members'}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <MultiSelect
                    aria-label={`Roles of ${h.name}`}
                    data={roles}
                    value={h.roles.map(String)}
                    // Taking the last role away is the Remove button's.
                    onChange={(v) => v.length > 0 && change.mutate({ holder: h, roles: v.map(Number) })}
                    w={260}
                  />
                </Table.Td>
                <Table.Td>
                  <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(`Remove ${h.name} from the project?`) && remove.mutate(h)} aria-label={`Remove ${h.name}`}>
                    Remove
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {people.isSuccess && (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            add.mutate()
          }}
        >
          <Group align="end">
            {/* A fresh picker (empty search) after each one added. */}
            <HolderPicker
              key={picker}
              present={present}
              groups={people.data.groups}
              serviceAccounts={people.data.users.filter((u) => u.accountType === 'Service Account')}
              value={newHolder}
              onChange={setNewHolder}
            />
            <MultiSelect label="Project roles" data={roles} value={newRoles} onChange={setNewRoles} required w={260} />
            <Button type="submit" loading={add.isPending} disabled={!newHolder || newRoles.length === 0}>
              Add
            </Button>
          </Group>
        </form>
      )}
    </Stack>
  )
}

type FoundUser = { id: number; name: string | null; username: string | null; email: string | null }

/**
 * Picks a user, a service account or a group without a role in the project yet. Users are searched for as one types
 * (`GET /api/admin/user-admin/search`, from 2 characters), which project Owners may do without being admins, who alone
 * may list every user; groups and service accounts, few, are filtered here.
 */
function HolderPicker({
  present,
  groups,
  serviceAccounts,
  value,
  onChange,
}: {
  present: ReadonlySet<string>
  groups: { id: number; name: string }[]
  serviceAccounts: FoundUser[]
  value: string | null
  onChange: (value: string | null) => void
}) {
  const [search, setSearch] = useState('')
  const [q] = useDebouncedValue(search.trim(), 200)
  const [chosen, setChosen] = useState<ComboboxItem>()
  const found = useQuery({
    queryKey: ['user-search', q],
    queryFn: () => ok(api.GET('/api/admin/user-admin/search', { params: { query: { q } } })),
    enabled: q.length >= 2,
    staleTime: 30_000,
    placeholderData: keepPreviousData,
  })
  const users = new Map<string, FoundUser>(
    (q.length >= 2 ? (found.data ?? []) : []).map((u) => [holderKey({ kind: 'user', id: u.id }), u] as const).filter(([key]) => !present.has(key)),
  )
  const needle = search.trim().toLowerCase()
  const groupItems = groups
    .map((g) => ({ value: holderKey({ kind: 'group', id: g.id }), label: g.name }))
    .filter((g) => !present.has(g.value) && (needle === '' || g.label.toLowerCase().includes(needle)))
  const accountItems = serviceAccounts
    .map((u) => ({ value: holderKey({ kind: 'user', id: u.id }), label: `${nameOf(u)} (service account)` }))
    .filter((a) => !present.has(a.value) && (needle === '' || a.label.toLowerCase().includes(needle)))
  const userItems: ComboboxItem[] = [...users].map(([key, u]) => ({ value: key, label: nameOf(u) }))
  // The one chosen stays an option while the search shows their name.
  if (chosen && value === chosen.value && ![...userItems, ...accountItems, ...groupItems].some((o) => o.value === chosen.value)) (chosen.value.startsWith('user:') ? userItems : groupItems).unshift(chosen)
  const data = [
    { group: 'Users', items: userItems },
    { group: 'Service accounts', items: accountItems },
    { group: 'Groups', items: groupItems },
  ].filter((section) => section.items.length > 0)
  return (
    <Select
      label="User or group to add"
      placeholder="Type a name, username or e-mail"
      searchable
      required
      data={data}
      value={value}
      onChange={(v, option) => {
        setChosen(option ?? undefined)
        onChange(v)
      }}
      searchValue={search}
      onSearchChange={setSearch}
      // The server already searched the users; the groups are filtered above.
      filter={({ options }) => options}
      nothingFoundMessage={q.length < 2 ? 'Type at least 2 characters of a user' : found.isFetching ? 'Searching…' : 'No user or group found without a role here'}
      renderOption={({ option }) => {
        const email = users.get(option.value)?.email
        return (
          <div>
            <Text size="sm">{option.label}</Text>
            {email && email !== option.label && (
              <Text size="xs" c="dimmed">
                {email}
              </Text>
            )}
          </div>
        )
      }}
      // In the page's landmarks, not a portal at the end of the document: the results belong to the form.
      comboboxProps={{ withinPortal: false }}
      w={260}
    />
  )
}
