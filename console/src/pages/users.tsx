import { useState } from 'react'
import { Button, Group, PasswordInput, Select, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../api/client'
import { useMe, userName } from '../api/session'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'
import { SecretDialog } from '../components/secret-dialog'

type User = Schemas['userSchema']
type Role = Schemas['roleSchema']
const USERS_KEY = ['users'] as const

const roleId = (user: User, roles: Role[]) => (typeof user.rootRole === 'number' ? user.rootRole : roles.find((r) => r.name === user.rootRole)?.id)

/** Users: created with a root role, built in or custom (and an invite link), their root role changed, a password set, deleted. Admins only. */
export default function UsersPage() {
  const me = useMe()
  const queryClient = useQueryClient()
  const users = useQuery({ queryKey: USERS_KEY, queryFn: () => ok(api.GET('/api/admin/user-admin')) })
  const [creating, setCreating] = useState(false)
  const [invite, setInvite] = useState<string>()
  const [resetting, setResetting] = useState<User>()
  const update = useMutation({
    mutationFn: ({ user, rootRole }: { user: User; rootRole: number }) => ok(api.PUT('/api/admin/user-admin/{id}', { params: { path: { id: String(user.id) } }, body: { rootRole } })),
    onSuccess: async (user) => {
      await queryClient.invalidateQueries({ queryKey: USERS_KEY })
      notifications.show({ message: `Root role of ${userName(user)} changed`, color: 'green' })
    },
  })
  const remove = useMutation({
    mutationFn: (user: User) => ok(api.DELETE('/api/admin/user-admin/{id}', { params: { path: { id: String(user.id) } } })),
    onSuccess: async (_, user) => {
      await queryClient.invalidateQueries({ queryKey: USERS_KEY })
      notifications.show({ message: `User ${userName(user)} deleted`, color: 'green' })
    },
  })
  if (users.isPending) return <Loading />
  if (users.isError) return <PageError title="Users" error={users.error} />
  const { rootRoles } = users.data
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Users</Title>
        <Button onClick={() => setCreating(true)}>Create user</Button>
      </Group>
      {update.isError && <ErrorMessage error={update.error} />}
      {remove.isError && <ErrorMessage error={remove.error} />}
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Username</Table.Th>
            <Table.Th>E-mail</Table.Th>
            <Table.Th>Root role</Table.Th>
            <Table.Th>Last seen</Table.Th>
            <Table.Th>
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {users.data.users.map((u) => {
            const self = u.id === me.data?.user.id
            return (
              <Table.Tr key={u.id}>
                <Table.Td>{userName(u)}</Table.Td>
                <Table.Td>{u.username ?? ''}</Table.Td>
                <Table.Td>{u.email ?? ''}</Table.Td>
                <Table.Td>
                  <Select
                    aria-label={`Root role of ${userName(u)}`}
                    data={rootRoles.map((r) => ({ value: String(r.id), label: r.name }))}
                    value={String(roleId(u, rootRoles) ?? '')}
                    onChange={(v) => v && update.mutate({ user: u, rootRole: Number(v) })}
                    allowDeselect={false}
                    disabled={self}
                    w={140}
                  />
                </Table.Td>
                <Table.Td>{u.seenAt ? new Date(u.seenAt).toLocaleString() : 'never'}</Table.Td>
                <Table.Td>
                  <Group gap="xs" justify="end" wrap="nowrap">
                    <Button size="xs" variant="default" onClick={() => setResetting(u)} aria-label={`Set password of ${userName(u)}`}>
                      Set password
                    </Button>
                    {!self && (
                      <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(`Delete the user ${userName(u)}?`) && remove.mutate(u)} aria-label={`Delete user ${userName(u)}`}>
                        Delete
                      </Button>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            )
          })}
        </Table.Tbody>
      </Table>
      <Dialog opened={creating} onClose={() => setCreating(false)} title="Create user">
        {creating && (
          <CreateUserForm
            rootRoles={rootRoles}
            onCreated={(link) => {
              setCreating(false)
              setInvite(link)
            }}
          />
        )}
      </Dialog>
      <SecretDialog
        title="Invite link"
        label="invite link"
        secret={invite}
        onClose={() => setInvite(undefined)}
        warning="Send this link to the user: it lets them set their password once, within 7 days. You will not see it again."
      />
      <Dialog opened={resetting !== undefined} onClose={() => setResetting(undefined)} title={`Set the password of ${resetting ? userName(resetting) : ''}`}>
        {resetting && <PasswordForm user={resetting} onDone={() => setResetting(undefined)} />}
      </Dialog>
    </Stack>
  )
}

// The built-in root roles a new user is usually given, and every custom root role.
const CREATABLE_ROLES = ['Admin', 'Editor', 'Viewer']

function CreateUserForm({ rootRoles, onCreated }: { rootRoles: Role[]; onCreated: (inviteLink: string) => void }) {
  const queryClient = useQueryClient()
  const [username, setUsername] = useState('')
  const [email, setEmail] = useState('')
  const [name, setName] = useState('')
  const roles = rootRoles.filter((r) => CREATABLE_ROLES.includes(r.name) || r.type === 'root-custom')
  const [rootRole, setRootRole] = useState<string | null>(String(roles.find((r) => r.name === 'Viewer')?.id ?? roles[0]?.id ?? ''))
  const create = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/user-admin', { body: { username, email, name, rootRole: Number(rootRole), sendEmail: false } })),
    onSuccess: async (user) => {
      await queryClient.invalidateQueries({ queryKey: USERS_KEY })
      onCreated(user.inviteLink)
    },
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        create.mutate()
      }}
    >
      <Stack>
        {create.isError && <ErrorMessage error={create.error} />}
        <Text size="sm" c="dimmed">
          A username or an e-mail address is needed. The user sets their password through the invite link.
        </Text>
        <TextInput label="Username" value={username} onChange={(e) => setUsername(e.currentTarget.value)} />
        <TextInput label="E-mail" type="email" value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
        <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Select label="Root role" data={roles.map((r) => ({ value: String(r.id), label: r.name }))} value={rootRole} onChange={setRootRole} allowDeselect={false} />
        <Button type="submit" loading={create.isPending}>
          Create
        </Button>
      </Stack>
    </form>
  )
}

function PasswordForm({ user, onDone }: { user: User; onDone: () => void }) {
  const [password, setPassword] = useState('')
  const change = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/user-admin/{id}/change-password', { params: { path: { id: String(user.id) } }, body: { password } })),
    onSuccess: () => {
      notifications.show({ message: `Password of ${userName(user)} set`, color: 'green' })
      onDone()
    },
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        change.mutate()
      }}
    >
      <Stack>
        {change.isError && <ErrorMessage error={change.error} />}
        <PasswordInput label="New password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} autoComplete="new-password" />
        <Button type="submit" loading={change.isPending}>
          Set password
        </Button>
      </Stack>
    </form>
  )
}
