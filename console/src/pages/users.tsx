import { useState } from 'react'
import { Button, PasswordInput, Select, Text, TextInput } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../api/client'
import { useMe, userName } from '../api/session'
import { Dialog } from '../components/dialog'
import { DeleteButton, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'
import { SecretFormDialog } from '../components/secret-dialog'

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
  // The next single sign-on with the user's address binds whichever identity signs in first (their sessions end now).
  const unbind = useMutation({
    mutationFn: (user: User) => ok(api.DELETE('/api/admin/user-admin/{id}/sso', { params: { path: { id: String(user.id) } } })),
    onSuccess: async (_, user) => {
      await queryClient.invalidateQueries({ queryKey: USERS_KEY })
      notifications.show({ message: `${userName(user)} is bound to no single sign-on identity: the next sign-in with the provider binds one`, color: 'green' })
    },
    onError: (error) => notifications.show({ message: error.message, color: 'red' }),
  })
  const rootRoles = users.data?.rootRoles ?? []
  return (
    <ListPage
      title="Users"
      load={users}
      action={<Button onClick={() => setCreating(true)}>Create user</Button>}
      error={update.error ?? remove.error}
      dialogs={
        <>
          <SecretFormDialog
            opened={creating}
            onClose={() => setCreating(false)}
            title="Create user"
            secretTitle="Invite link"
            label="invite link"
            warning="Send this link to the user: it lets them set their password once, within 7 days. You will not see it again."
          >
            {(created) => (
              <CreateUserForm
                rootRoles={rootRoles}
                onCreated={created}
                onCreatedWithoutLink={(user) => {
                  // Password sign-in is switched off: no invite link was made, the user signs in through single sign-on.
                  setCreating(false)
                  notifications.show({ message: `User ${userName(user)} created: password sign-in is switched off, so they sign in with single sign-on (no invite link)`, color: 'green' })
                }}
              />
            )}
          </SecretFormDialog>
          <Dialog opened={resetting !== undefined} onClose={() => setResetting(undefined)} title={`Set the password of ${resetting ? userName(resetting) : ''}`}>
            {resetting && <PasswordForm user={resetting} onDone={() => setResetting(undefined)} />}
          </Dialog>
        </>
      }
    >
      {(data) => (
        <RowTable
          rows={data.users}
          rowKey={(u) => u.id}
          empty="No users."
          columns={[
            { header: 'Name', cell: (u) => userName(u) },
            { header: 'Username', cell: (u) => u.username ?? '' },
            { header: 'E-mail', cell: (u) => u.email ?? '' },
            {
              header: 'Root role',
              cell: (u) =>
                // One's own root role is another admin's to change: shown as text (a disabled Select read as an empty placeholder).
                u.id === me.data?.user.id ? (
                  <Text size="sm">
                    {rootRoles.find((r) => r.id === roleId(u, rootRoles))?.name ?? ''}{' '}
                    <Text span size="xs" c="dimmed">
                      (you)
                    </Text>
                  </Text>
                ) : (
                  <Select
                    aria-label={`Root role of ${userName(u)}`}
                    data={rootRoles.map((r) => ({ value: String(r.id), label: r.name }))}
                    value={String(roleId(u, rootRoles) ?? '')}
                    onChange={(v) => v && update.mutate({ user: u, rootRole: Number(v) })}
                    allowDeselect={false}
                    w={140}
                  />
                ),
            },
            { header: 'Last seen', cell: (u) => (u.seenAt ? new Date(u.seenAt).toLocaleString() : 'never') },
          ]}
          actions={(u) => (
            <>
              <RowButton label={`Set password of ${userName(u)}`} onClick={() => setResetting(u)}>
                Set password
              </RowButton>
              {/* Only for an account bound to a single sign-on identity: forgetting it ends their sessions, so the browser asks first. */}
              {u.ssoBound && (
                <Button
                  size="xs"
                  variant="default"
                  aria-label={`Forget SSO identity of ${userName(u)}`}
                  onClick={() => window.confirm(`Forget the single sign-on identity of ${userName(u)}? Their sessions end, and their next sign-in with the provider binds a new one.`) && unbind.mutate(u)}
                >
                  Forget SSO identity
                </Button>
              )}
              {u.id !== me.data?.user.id && <DeleteButton label={`Delete user ${userName(u)}`} confirm={`Delete the user ${userName(u)}?`} onDelete={() => remove.mutate(u)} />}
            </>
          )}
        />
      )}
    </ListPage>
  )
}

// The built-in root roles a new user is usually given, and every custom root role.
const CREATABLE_ROLES = ['Admin', 'Editor', 'Viewer']

function CreateUserForm({ rootRoles, onCreated, onCreatedWithoutLink }: { rootRoles: Role[]; onCreated: (inviteLink: string) => void; onCreatedWithoutLink: (user: User) => void }) {
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
      if (user.inviteLink) onCreated(user.inviteLink)
      else onCreatedWithoutLink(user)
    },
  })
  return (
    <MutationForm mutation={create} submit="Create">
      <Text size="sm" c="dimmed">
        A username or an e-mail address is needed. The user sets their password through the invite link (while password sign-in is switched off there is none: they sign in with single sign-on).
      </Text>
      <TextInput label="Username" value={username} onChange={(e) => setUsername(e.currentTarget.value)} />
      <TextInput label="E-mail" type="email" value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
      <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <Select label="Root role" data={roles.map((r) => ({ value: String(r.id), label: r.name }))} value={rootRole} onChange={setRootRole} allowDeselect={false} />
    </MutationForm>
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
    <MutationForm mutation={change} submit="Set password">
      <PasswordInput label="New password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} autoComplete="new-password" />
    </MutationForm>
  )
}
