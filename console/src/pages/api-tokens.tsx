import { SdkSnippets } from '../components/sdk-snippets'
import { useState, type ReactNode } from 'react'
import { Button, MultiSelect, Select, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { Dialog } from '../components/dialog'
import { DeleteButton, ListPage, MutationForm, RowButton } from '../components/list-page'
import { SecretFormDialog } from '../components/secret-dialog'
import { TokenTable } from '../components/token-table'
import { PROJECTS_KEY, useEnvironments } from './projects'
import { useCreateIntent } from '../create-intent'

type Token = Schemas['apiTokenSchema']
type TokenType = Token['type']
const TOKENS_KEY = ['api-tokens'] as const

const TYPES: { value: TokenType; label: string; create: string; remove: string }[] = [
  { value: 'client', label: 'Backend SDK (client)', create: 'CREATE_CLIENT_API_TOKEN', remove: 'DELETE_CLIENT_API_TOKEN' },
  { value: 'frontend', label: 'Frontend SDK', create: 'CREATE_FRONTEND_API_TOKEN', remove: 'DELETE_FRONTEND_API_TOKEN' },
  { value: 'admin', label: 'Admin API', create: 'ADMIN', remove: 'ADMIN' },
]
const typeNamed = (type: TokenType) => TYPES.find((t) => t.value === type)!

/** API tokens: listed by their masked secrets, created with the secret shown once, deleted. */
export default function ApiTokensPage() {
  const allows = useAllows()
  const tokens = useQuery({ queryKey: TOKENS_KEY, queryFn: () => ok(api.GET('/api/admin/api-tokens')) })
  // The command bar's "Create …" actions open this page with `?create=token`.
  const [creating, setCreating] = useCreateIntent('token')
  const [expiring, setExpiring] = useState<Token>()
  const remove = useChange((token: Token) => ok(api.DELETE('/api/admin/api-tokens/{token}', { params: { path: { token: token.secret } } })), TOKENS_KEY, (token) => `Token ${token.tokenName} deleted`)
  const mayCreate = TYPES.some((t) => allows(t.create))
  return (
    <ListPage
      title="API tokens"
      load={tokens}
      action={mayCreate && <Button onClick={() => setCreating(true)}>Create API token</Button>}
      error={remove.error}
      dialogs={
        <>
          <SecretFormDialog opened={creating} onClose={() => setCreating(false)} title="Create API token" secretTitle="Your new API token">
            {(created) => <CreateTokenForm onCreated={created} />}
          </SecretFormDialog>
          <Dialog opened={expiring !== undefined} onClose={() => setExpiring(undefined)} title={`Expiry of ${expiring?.tokenName ?? 'the token'}`}>
            {expiring && <ExpiryForm token={expiring} onDone={() => setExpiring(undefined)} />}
          </Dialog>
        </>
      }
    >
      {(data) => (
        <TokenTable
          tokens={data.tokens}
          empty="No API tokens yet."
          actions={(t) => (
            <>
              {allows(typeNamed(t.type).create) && (
                <RowButton label={`Change the expiry of token ${t.tokenName}`} onClick={() => setExpiring(t)}>
                  Expiry
                </RowButton>
              )}
              {allows(typeNamed(t.type).remove, t.projects.length === 1 ? t.projects[0] : undefined) && (
                <DeleteButton label={`Delete token ${t.tokenName}`} confirm={`Delete the token ${t.tokenName}? SDKs using it stop working.`} onDelete={() => remove.mutate(t)} />
              )}
            </>
          )}
        />
      )}
    </ListPage>
  )
}

/** `yyyy-mm-dd` of a date, in the browser's time zone (what a date input shows). */
const dayOf = (date: Date) => `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`

/** Sets when a token expires (`PUT /api/admin/api-tokens/{token}`): the end of the day chosen; a day past expires it at once. */
function ExpiryForm({ token, onDone }: { token: Token; onDone: () => void }) {
  const [day, setDay] = useState(dayOf(token.expiresAt ? new Date(token.expiresAt) : new Date(Date.now() + 90 * 24 * 60 * 60 * 1000)))
  const save = useChange(
    () => ok(api.PUT('/api/admin/api-tokens/{token}', { params: { path: { token: token.secret } }, body: { expiresAt: new Date(`${day}T23:59:59`).toISOString() } })),
    TOKENS_KEY,
    () => `Token ${token.tokenName} now expires at the end of ${day}`,
    onDone,
  )
  return (
    <MutationForm mutation={save} submit="Set expiry">
      <TextInput label="Expires at the end of" type="date" required value={day} onChange={(e) => setDay(e.currentTarget.value)} description="A day already past expires the token at once: everything using it is refused." />
    </MutationForm>
  )
}

function CreateTokenForm({ onCreated }: { onCreated: (secret: string, more?: ReactNode) => void }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const environments = useEnvironments()
  const projects = useQuery({ queryKey: PROJECTS_KEY, queryFn: () => ok(api.GET('/api/admin/projects')) })
  const types = TYPES.filter((t) => allows(t.create) || (t.value !== 'admin' && (projects.data?.projects ?? []).some((p) => allows(t.create, p.id))))
  const [tokenName, setTokenName] = useState('')
  const [type, setType] = useState<TokenType>(types[0]?.value ?? 'client')
  const [environment, setEnvironment] = useState<string | null>('development')
  const [chosen, setChosen] = useState<string[]>([])
  const create = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/admin/api-tokens', {
          body: { tokenName, type, ...(type === 'admin' ? {} : { environment: environment ?? 'development', ...(chosen.length > 0 ? { projects: chosen } : {}) }) },
        }),
      ),
    onSuccess: async (token) => {
      await queryClient.invalidateQueries({ queryKey: TOKENS_KEY })
      onCreated(token.secret, <SdkSnippets type={token.type} secret={token.secret} />)
    },
  })
  return (
    <MutationForm mutation={create} submit="Create">
      <TextInput label="Name" required value={tokenName} onChange={(e) => setTokenName(e.currentTarget.value)} />
      <Select label="Type" data={types.map(({ value, label }) => ({ value, label }))} value={type} onChange={(v) => v && setType(v as TokenType)} allowDeselect={false} />
      {type !== 'admin' && (
        <>
          <Select label="Environment" data={(environments.data?.environments ?? []).map((e) => e.name)} value={environment} onChange={setEnvironment} allowDeselect={false} />
          <MultiSelect
            label="Projects"
            description="Every project when none is chosen"
            data={(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: p.name }))}
            value={chosen}
            onChange={setChosen}
          />
        </>
      )}
    </MutationForm>
  )
}
