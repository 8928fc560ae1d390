import { useState } from 'react'
import { Button, Group, NativeSelect, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'
import { SecretDialog } from '../components/secret-dialog'

type Account = Schemas['serviceAccountSchema']
type Role = Schemas['roleSchema']
export const SERVICE_ACCOUNTS_KEY = ['service-accounts'] as const
const DAY = 24 * 60 * 60 * 1000
const accountName = (a: Account) => a.name || a.username

/** Service accounts: accounts for systems (no password, no sign-in) acting through their tokens, with a root role. */
export default function ServiceAccountsPage() {
  const accounts = useQuery({ queryKey: SERVICE_ACCOUNTS_KEY, queryFn: () => ok(api.GET('/api/admin/service-account')) })
  const [editing, setEditing] = useState<Account | 'new'>()
  const [tokensOf, setTokensOf] = useState<number>()
  const [secret, setSecret] = useState<{ of: string; secret: string }>()
  const remove = useChange(
    (a: Account) => ok(api.DELETE('/api/admin/service-account/{id}', { params: { path: { id: String(a.id) } } })),
    SERVICE_ACCOUNTS_KEY,
    (a) => `Service account ${accountName(a)} deleted`,
  )
  if (accounts.isPending) return <Loading />
  if (accounts.isError) return <PageError title="Service accounts" error={accounts.error} />
  const { serviceAccounts, rootRoles } = accounts.data
  const roleName = (id: number) => rootRoles.find((r) => r.id === id)?.name ?? `role ${id}`
  const shown = serviceAccounts.find((a) => a.id === tokensOf)
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Service accounts</Title>
        <Button onClick={() => setEditing('new')}>Create service account</Button>
      </Group>
      <Text size="sm" c="dimmed">
        A service account is for a system, not a person: it cannot sign in, and acts through its tokens with its root role&apos;s permissions (and the project roles it is given).
      </Text>
      {remove.isError && <ErrorMessage error={remove.error} />}
      {serviceAccounts.length === 0 ? (
        <Text>No service accounts yet.</Text>
      ) : (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Username</Table.Th>
              <Table.Th>Root role</Table.Th>
              <Table.Th>Tokens</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {serviceAccounts.map((a) => (
              <Table.Tr key={a.id}>
                <Table.Td>{a.name}</Table.Td>
                <Table.Td>{a.username}</Table.Td>
                <Table.Td>{roleName(a.rootRole)}</Table.Td>
                <Table.Td>{a.tokens.length === 0 ? 'none' : `${a.tokens.length} (last seen ${lastSeen(a)})`}</Table.Td>
                <Table.Td>
                  <Group gap="xs" justify="end" wrap="nowrap">
                    <Button size="xs" variant="default" onClick={() => setTokensOf(a.id)} aria-label={`Tokens of ${accountName(a)}`}>
                      Tokens
                    </Button>
                    <Button size="xs" variant="default" onClick={() => setEditing(a)} aria-label={`Edit ${accountName(a)}`}>
                      Edit
                    </Button>
                    <Button
                      size="xs"
                      color="red.9"
                      variant="outline"
                      onClick={() => window.confirm(`Delete the service account ${accountName(a)}? Its tokens stop working.`) && remove.mutate(a)}
                      aria-label={`Delete ${accountName(a)}`}
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
      <Dialog opened={editing !== undefined} onClose={() => setEditing(undefined)} title={editing === 'new' ? 'Create service account' : 'Edit service account'}>
        {editing && <AccountForm account={editing === 'new' ? undefined : editing} roles={rootRoles} onDone={() => setEditing(undefined)} />}
      </Dialog>
      <Dialog opened={shown !== undefined} onClose={() => setTokensOf(undefined)} title={shown ? `Tokens of ${accountName(shown)}` : 'Tokens'} size="lg">
        {shown && (
          <AccountTokens
            account={shown}
            onCreated={(created) => {
              setTokensOf(undefined)
              setSecret({ of: accountName(shown), secret: created })
            }}
          />
        )}
      </Dialog>
      <SecretDialog title={`New token of ${secret?.of ?? ''}`} secret={secret?.secret} onClose={() => setSecret(undefined)} />
    </Stack>
  )
}

function lastSeen(a: Account): string {
  const seen = a.tokens.map((t) => t.seenAt).filter((s): s is string => s !== null).sort()
  return seen.length === 0 ? 'never' : new Date(seen[seen.length - 1]!).toLocaleString()
}

function AccountForm({ account, roles, onDone }: { account?: Account; roles: Role[]; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState(account?.name ?? '')
  const [username, setUsername] = useState(account?.username ?? '')
  const [rootRole, setRootRole] = useState(String(account?.rootRole ?? roles.find((r) => r.name === 'Viewer')?.id ?? roles[0]?.id ?? ''))
  const save = useMutation({
    mutationFn: () =>
      account
        ? ok(api.PUT('/api/admin/service-account/{id}', { params: { path: { id: String(account.id) } }, body: { name, rootRole: Number(rootRole) } }))
        : ok(api.POST('/api/admin/service-account', { body: { name, username, rootRole: Number(rootRole) } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: SERVICE_ACCOUNTS_KEY })
      notifications.show({ message: `Service account ${name} saved`, color: 'green' })
      onDone()
    },
  })
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
        <TextInput label="Username" description={account ? 'A service account keeps its username' : 'Unique among users and service accounts'} required disabled={account !== undefined} value={username} onChange={(e) => setUsername(e.currentTarget.value)} />
        <NativeSelect label="Root role" data={roles.map((r) => ({ value: String(r.id), label: r.name }))} value={rootRole} onChange={(e) => setRootRole(e.currentTarget.value)} />
        <Button type="submit" loading={save.isPending}>
          Save service account
        </Button>
      </Stack>
    </form>
  )
}

/** A service account's tokens: listed without their secrets, created with the secret shown once, deleted. */
function AccountTokens({ account, onCreated }: { account: Account; onCreated: (secret: string) => void }) {
  const queryClient = useQueryClient()
  const path = { params: { path: { id: String(account.id) } } }
  const [description, setDescription] = useState('')
  const [days, setDays] = useState('90')
  const create = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/service-account/{id}/token', { ...path, body: { description, expiresAt: new Date(Date.now() + Number(days) * DAY).toISOString() } })),
    onSuccess: async (token) => {
      await queryClient.invalidateQueries({ queryKey: SERVICE_ACCOUNTS_KEY })
      onCreated(token.secret ?? '')
    },
  })
  const remove = useChange(
    (token: Account['tokens'][number]) => ok(api.DELETE('/api/admin/service-account/{id}/token/{tokenId}', { params: { path: { id: String(account.id), tokenId: String(token.id) } } })),
    SERVICE_ACCOUNTS_KEY,
    (token) => `Token ${token.description} deleted`,
  )
  return (
    <Stack>
      {(create.error ?? remove.error) && <ErrorMessage error={create.error ?? remove.error} />}
      {account.tokens.length === 0 ? (
        <Text c="dimmed">No tokens yet.</Text>
      ) : (
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Description</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th>Last seen</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {account.tokens.map((t) => (
              <Table.Tr key={t.id}>
                <Table.Td>{t.description}</Table.Td>
                <Table.Td>{new Date(t.expiresAt).toLocaleDateString()}</Table.Td>
                <Table.Td>{t.seenAt ? new Date(t.seenAt).toLocaleString() : 'never'}</Table.Td>
                <Table.Td>
                  <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(`Delete the token ${t.description}?`) && remove.mutate(t)} aria-label={`Delete token ${t.description}`}>
                    Delete
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault()
          create.mutate()
        }}
      >
        <Group align="end">
          <TextInput label="Token description" required value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
          <TextInput label="Expires in (days)" type="number" min={1} required value={days} onChange={(e) => setDays(e.currentTarget.value)} w={140} />
          <Button type="submit" loading={create.isPending}>
            Create token
          </Button>
        </Group>
      </form>
    </Stack>
  )
}
