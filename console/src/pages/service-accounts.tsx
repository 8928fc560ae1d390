import { useState } from 'react'
import { Button, NativeSelect, Stack, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { ErrorMessage } from '../components/error-message'
import { DeleteButton, EditDialog, InlineForm, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'
import { SecretFormDialog } from '../components/secret-dialog'

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
  const remove = useChange(
    (a: Account) => ok(api.DELETE('/api/admin/service-account/{id}', { params: { path: { id: String(a.id) } } })),
    SERVICE_ACCOUNTS_KEY,
    (a) => `Service account ${accountName(a)} deleted`,
  )
  const shown = accounts.data?.serviceAccounts.find((a) => a.id === tokensOf)
  return (
    <ListPage
      title="Service accounts"
      load={accounts}
      action={<Button onClick={() => setEditing('new')}>Create service account</Button>}
      intro="A service account is for a system, not a person: it cannot sign in, and acts through its tokens with its root role's permissions (and the project roles it is given)."
      error={remove.error}
      dialogs={
        <SecretFormDialog
          opened={shown !== undefined}
          onClose={() => setTokensOf(undefined)}
          title={shown ? `Tokens of ${accountName(shown)}` : 'Tokens'}
          size="lg"
          secretTitle={`New token of ${shown ? accountName(shown) : ''}`}
        >
          {(created) => shown && <AccountTokens account={shown} onCreated={created} />}
        </SecretFormDialog>
      }
    >
      {({ serviceAccounts, rootRoles }) => {
        const roleName = (id: number) => rootRoles.find((r) => r.id === id)?.name ?? `role ${id}`
        return (
          <>
            <RowTable
              rows={serviceAccounts}
              rowKey={(a) => a.id}
              empty="No service accounts yet."
              columns={[
                { header: 'Name', cell: (a) => a.name },
                { header: 'Username', cell: (a) => a.username },
                { header: 'Root role', cell: (a) => roleName(a.rootRole) },
                { header: 'Tokens', cell: (a) => (a.tokens.length === 0 ? 'none' : `${a.tokens.length} (last seen ${lastSeen(a)})`) },
              ]}
              actions={(a) => (
                <>
                  <RowButton label={`Tokens of ${accountName(a)}`} onClick={() => setTokensOf(a.id)}>
                    Tokens
                  </RowButton>
                  <RowButton label={`Edit ${accountName(a)}`} onClick={() => setEditing(a)}>
                    Edit
                  </RowButton>
                  <DeleteButton label={`Delete ${accountName(a)}`} confirm={`Delete the service account ${accountName(a)}? Its tokens stop working.`} onDelete={() => remove.mutate(a)} />
                </>
              )}
            />
            <EditDialog editing={editing} onClose={() => setEditing(undefined)} title={(a) => (a ? 'Edit service account' : 'Create service account')}>
              {(a) => <AccountForm account={a} roles={rootRoles} onDone={() => setEditing(undefined)} />}
            </EditDialog>
          </>
        )
      }}
    </ListPage>
  )
}

function lastSeen(a: Account): string {
  const seen = a.tokens.map((t) => t.seenAt).filter((s): s is string => s !== null).sort()
  return seen.length === 0 ? 'never' : new Date(seen[seen.length - 1]!).toLocaleString()
}

function AccountForm({ account, roles, onDone }: { account?: Account; roles: Role[]; onDone: () => void }) {
  const [name, setName] = useState(account?.name ?? '')
  const [username, setUsername] = useState(account?.username ?? '')
  const [rootRole, setRootRole] = useState(String(account?.rootRole ?? roles.find((r) => r.name === 'Viewer')?.id ?? roles[0]?.id ?? ''))
  const save = useChange(
    () =>
      account
        ? ok(api.PUT('/api/admin/service-account/{id}', { params: { path: { id: String(account.id) } }, body: { name, rootRole: Number(rootRole) } }))
        : ok(api.POST('/api/admin/service-account', { body: { name, username, rootRole: Number(rootRole) } })),
    SERVICE_ACCOUNTS_KEY,
    () => `Service account ${name} saved`,
    onDone,
  )
  return (
    <MutationForm mutation={save} submit="Save service account">
      <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <TextInput label="Username" description={account ? 'A service account keeps its username' : 'Unique among users and service accounts'} required disabled={account !== undefined} value={username} onChange={(e) => setUsername(e.currentTarget.value)} />
      <NativeSelect label="Root role" data={roles.map((r) => ({ value: String(r.id), label: r.name }))} value={rootRole} onChange={(e) => setRootRole(e.currentTarget.value)} />
    </MutationForm>
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
      <RowTable
        rows={account.tokens}
        rowKey={(t) => t.id}
        striped={false}
        empty="No tokens yet."
        columns={[
          { header: 'Description', cell: (t) => t.description },
          { header: 'Expires', cell: (t) => new Date(t.expiresAt).toLocaleDateString() },
          { header: 'Last seen', cell: (t) => (t.seenAt ? new Date(t.seenAt).toLocaleString() : 'never') },
        ]}
        actions={(t) => <DeleteButton label={`Delete token ${t.description}`} confirm={`Delete the token ${t.description}?`} onDelete={() => remove.mutate(t)} />}
      />
      <InlineForm mutation={create} submit="Create token">
        <TextInput label="Token description" required value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <TextInput label="Expires in (days)" type="number" min={1} required value={days} onChange={(e) => setDays(e.currentTarget.value)} w={140} />
      </InlineForm>
    </Stack>
  )
}
