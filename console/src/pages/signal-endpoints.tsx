import { useState } from 'react'
import { Button, Checkbox, Code, Stack, Switch, Text, TextInput, Textarea } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { Dialog } from '../components/dialog'
import { ErrorMessage } from '../components/error-message'
import { DeleteButton, Described, EditDialog, InlineForm, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'
import { Loading } from '../components/loading'
import { SecretFormDialog } from '../components/secret-dialog'

type Endpoint = Schemas['signalEndpointSchema']
type Token = Endpoint['tokens'][number]
export const SIGNAL_ENDPOINTS_KEY = ['signal-endpoints'] as const
const signalsKey = (id: number) => ['signal-endpoints', id, 'signals'] as const

/** Where an endpoint takes signals (the API answers it with a write; here it is made from the console's own origin). */
const urlOf = (endpoint: Endpoint) => `${window.location.origin}/api/signal-endpoint/${endpoint.name}`

/** Signal endpoints: where other systems send signals (with a token of the endpoint), which action sets may act on. */
export default function SignalEndpointsPage() {
  const endpoints = useQuery({ queryKey: SIGNAL_ENDPOINTS_KEY, queryFn: () => ok(api.GET('/api/admin/signal-endpoints')) })
  const [editing, setEditing] = useState<Endpoint | 'new'>()
  const [tokensOf, setTokensOf] = useState<number>()
  const [signalsOf, setSignalsOf] = useState<Endpoint>()
  const params = (e: Endpoint) => ({ params: { path: { id: String(e.id) } } })
  const toggle = useChange(
    (e: Endpoint) => (e.enabled ? ok(api.POST('/api/admin/signal-endpoints/{id}/off', params(e))) : ok(api.POST('/api/admin/signal-endpoints/{id}/on', params(e)))),
    SIGNAL_ENDPOINTS_KEY,
    (e) => `Signal endpoint ${e.name} ${e.enabled ? 'disabled' : 'enabled'}`,
  )
  const remove = useChange((e: Endpoint) => ok(api.DELETE('/api/admin/signal-endpoints/{id}', params(e))), SIGNAL_ENDPOINTS_KEY, (e) => `Signal endpoint ${e.name} deleted`)
  const shown = endpoints.data?.signalEndpoints.find((e) => e.id === tokensOf)
  return (
    <ListPage
      title="Signal endpoints"
      load={endpoints}
      action={<Button onClick={() => setEditing('new')}>Create signal endpoint</Button>}
      intro="Other systems (alerting, monitoring) report what happened by sending JSON to an endpoint's address with one of its tokens. The action sets of a project can act on those signals."
      error={toggle.error ?? remove.error}
      dialogs={
        <SecretFormDialog
          opened={shown !== undefined}
          onClose={() => setTokensOf(undefined)}
          title={shown ? `Tokens of ${shown.name}` : 'Tokens'}
          size="lg"
          secretTitle={`New token of ${shown?.name ?? ''}`}
          label="token"
          warning="You will not see this token again: Flagpost stores only a hash of it. Copy it now, and send it as `Authorization: Bearer <token>`."
        >
          {(created) => shown && <EndpointTokens endpoint={shown} onCreated={created} />}
        </SecretFormDialog>
      }
    >
      {({ signalEndpoints: list }) => {
        return (
          <>
            <RowTable
              rows={list}
              rowKey={(e) => e.id}
              empty="No signal endpoints yet."
              columns={[
                { header: 'Name', cell: (e) => <Described name={e.name} description={e.description} /> },
                { header: 'Address', cell: (e) => <Code style={{ overflowWrap: 'anywhere' }}>{urlOf(e)}</Code> },
                { header: 'Tokens', cell: (e) => e.tokens.length },
                {
                  header: 'Enabled',
                  cell: (e) => <Switch checked={e.enabled} disabled={toggle.isPending} onChange={() => toggle.mutate(e)} aria-label={`Signal endpoint ${e.name} takes signals`} />,
                },
              ]}
              actions={(e) => (
                <>
                  <RowButton label={`Signals of ${e.name}`} onClick={() => setSignalsOf(e)}>
                    Signals
                  </RowButton>
                  <RowButton label={`Tokens of ${e.name}`} onClick={() => setTokensOf(e.id)}>
                    Tokens
                  </RowButton>
                  <RowButton label={`Edit ${e.name}`} onClick={() => setEditing(e)}>
                    Edit
                  </RowButton>
                  <DeleteButton label={`Delete ${e.name}`} confirm={`Delete the signal endpoint ${e.name}, its tokens and its signals?`} onDelete={() => remove.mutate(e)} />
                </>
              )}
            />
            <EditDialog editing={editing} onClose={() => setEditing(undefined)} title={(e) => (e ? 'Edit signal endpoint' : 'Create signal endpoint')}>
              {(e) => <EndpointForm endpoint={e} onDone={() => setEditing(undefined)} />}
            </EditDialog>
            <Dialog opened={signalsOf !== undefined} onClose={() => setSignalsOf(undefined)} title={signalsOf ? `Signals of ${signalsOf.name}` : 'Signals'} size="xl">
              {signalsOf && <EndpointSignals endpoint={signalsOf} />}
            </Dialog>
          </>
        )
      }}
    </ListPage>
  )
}

function EndpointForm({ endpoint, onDone }: { endpoint?: Endpoint; onDone: () => void }) {
  const [name, setName] = useState(endpoint?.name ?? '')
  const [description, setDescription] = useState(endpoint?.description ?? '')
  const [enabled, setEnabled] = useState(endpoint?.enabled ?? true)
  const save = useChange(
    () => {
      const body = { name, description: description || null, enabled }
      return endpoint ? ok(api.PUT('/api/admin/signal-endpoints/{id}', { params: { path: { id: String(endpoint.id) } }, body })) : ok(api.POST('/api/admin/signal-endpoints', { body }))
    },
    SIGNAL_ENDPOINTS_KEY,
    () => `Signal endpoint ${name} saved`,
    onDone,
  )
  return (
    <MutationForm mutation={save} submit="Save signal endpoint">
      <TextInput label="Name" description="The end of its address: letters, digits and - _ . ! ~ * ' ( ) only" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <Textarea label="Description" autosize minRows={2} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
      <Checkbox label="Enabled: takes signals" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
    </MutationForm>
  )
}

/** An endpoint's tokens: created with the token shown once, renamed, deleted. */
function EndpointTokens({ endpoint, onCreated }: { endpoint: Endpoint; onCreated: (token: string) => void }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState('')
  const path = { params: { path: { id: String(endpoint.id) } } }
  const create = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/signal-endpoints/{id}/tokens', { ...path, body: { name } })),
    onSuccess: async (token) => {
      await queryClient.invalidateQueries({ queryKey: SIGNAL_ENDPOINTS_KEY })
      onCreated(token.token ?? '')
    },
  })
  const tokenPath = (t: Token) => ({ params: { path: { id: String(endpoint.id), tokenId: String(t.id) } } })
  const remove = useChange((t: Token) => ok(api.DELETE('/api/admin/signal-endpoints/{id}/tokens/{tokenId}', tokenPath(t))), SIGNAL_ENDPOINTS_KEY, (t) => `Token ${t.name} deleted`)
  const rename = useChange(
    (t: Token) => {
      const next = window.prompt('New name of the token', t.name)
      return next ? ok(api.PUT('/api/admin/signal-endpoints/{id}/tokens/{tokenId}', { ...tokenPath(t), body: { name: next } })) : Promise.resolve()
    },
    SIGNAL_ENDPOINTS_KEY,
    (t) => `Token ${t.name} saved`,
  )
  return (
    <Stack>
      {(create.error ?? remove.error ?? rename.error) && <ErrorMessage error={create.error ?? remove.error ?? rename.error} />}
      <RowTable
        rows={endpoint.tokens}
        rowKey={(t) => t.id}
        striped={false}
        empty="No tokens yet: the endpoint takes no signal until it has one."
        columns={[
          { header: 'Name', cell: (t) => t.name },
          { header: 'Created', cell: (t) => new Date(t.createdAt).toLocaleString() },
        ]}
        actions={(t) => (
          <>
            <RowButton label={`Rename token ${t.name}`} onClick={() => rename.mutate(t)}>
              Rename
            </RowButton>
            <DeleteButton label={`Delete token ${t.name}`} confirm={`Delete the token ${t.name}? Signals sent with it are refused.`} onDelete={() => remove.mutate(t)} />
          </>
        )}
      />
      <InlineForm mutation={create} submit="Create token">
        <TextInput label="Token name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      </InlineForm>
    </Stack>
  )
}

/** The endpoint's latest signals, newest first, with their payloads. */
function EndpointSignals({ endpoint }: { endpoint: Endpoint }) {
  const signals = useQuery({
    queryKey: signalsKey(endpoint.id),
    queryFn: () => ok(api.GET('/api/admin/signal-endpoints/{id}/signals', { params: { path: { id: String(endpoint.id) }, query: { limit: '20' } } })),
  })
  if (signals.isPending) return <Loading />
  if (signals.isError) return <ErrorMessage error={signals.error} />
  const list = signals.data.signalEndpointSignals
  return (
    <Stack>
      <Text size="sm">
        Send one: <Code>{`curl -X POST ${urlOf(endpoint)} -H 'Authorization: Bearer <token>' -H 'Content-Type: application/json' -d '{"alert":"…"}'`}</Code>
      </Text>
      {list.length === 0 ? (
        <Text c="dimmed">No signals yet.</Text>
      ) : (
        list.map((s) => (
          <Stack key={s.id} gap={4}>
            <Text size="sm" fw={500}>
              {new Date(s.createdAt).toLocaleString()} · token {s.tokenName ?? '(deleted)'}
            </Text>
            <Code block>{JSON.stringify(s.payload, null, 2)}</Code>
          </Stack>
        ))
      )}
    </Stack>
  )
}
