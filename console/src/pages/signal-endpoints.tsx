import { useState } from 'react'
import { Button, Checkbox, Code, Group, Stack, Switch, Table, Text, TextInput, Textarea, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'
import { SecretDialog } from '../components/secret-dialog'

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
  const [secret, setSecret] = useState<{ of: string; token: string }>()
  const params = (e: Endpoint) => ({ params: { path: { id: String(e.id) } } })
  const toggle = useChange(
    (e: Endpoint) => (e.enabled ? ok(api.POST('/api/admin/signal-endpoints/{id}/off', params(e))) : ok(api.POST('/api/admin/signal-endpoints/{id}/on', params(e)))),
    SIGNAL_ENDPOINTS_KEY,
    (e) => `Signal endpoint ${e.name} ${e.enabled ? 'disabled' : 'enabled'}`,
  )
  const remove = useChange((e: Endpoint) => ok(api.DELETE('/api/admin/signal-endpoints/{id}', params(e))), SIGNAL_ENDPOINTS_KEY, (e) => `Signal endpoint ${e.name} deleted`)
  if (endpoints.isPending) return <Loading />
  if (endpoints.isError) return <PageError title="Signal endpoints" error={endpoints.error} />
  const list = endpoints.data.signalEndpoints
  const shown = list.find((e) => e.id === tokensOf)
  const error = toggle.error ?? remove.error
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Signal endpoints</Title>
        <Button onClick={() => setEditing('new')}>Create signal endpoint</Button>
      </Group>
      <Text size="sm" c="dimmed">
        Other systems (alerting, monitoring) report what happened by sending JSON to an endpoint&apos;s address with one of its tokens. The action sets of a project can act on those signals.
      </Text>
      {error && <ErrorMessage error={error} />}
      {list.length === 0 ? (
        <Text>No signal endpoints yet.</Text>
      ) : (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Address</Table.Th>
              <Table.Th>Tokens</Table.Th>
              <Table.Th>Enabled</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((e) => (
              <Table.Tr key={e.id}>
                <Table.Td>
                  <Text size="sm">{e.name}</Text>
                  {e.description && (
                    <Text size="xs" c="dimmed">
                      {e.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Code style={{ overflowWrap: 'anywhere' }}>{urlOf(e)}</Code>
                </Table.Td>
                <Table.Td>{e.tokens.length}</Table.Td>
                <Table.Td>
                  <Switch checked={e.enabled} disabled={toggle.isPending} onChange={() => toggle.mutate(e)} aria-label={`Signal endpoint ${e.name} takes signals`} />
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" justify="end" wrap="nowrap">
                    <Button size="xs" variant="default" onClick={() => setSignalsOf(e)} aria-label={`Signals of ${e.name}`}>
                      Signals
                    </Button>
                    <Button size="xs" variant="default" onClick={() => setTokensOf(e.id)} aria-label={`Tokens of ${e.name}`}>
                      Tokens
                    </Button>
                    <Button size="xs" variant="default" onClick={() => setEditing(e)} aria-label={`Edit ${e.name}`}>
                      Edit
                    </Button>
                    <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(`Delete the signal endpoint ${e.name}, its tokens and its signals?`) && remove.mutate(e)} aria-label={`Delete ${e.name}`}>
                      Delete
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Dialog opened={editing !== undefined} onClose={() => setEditing(undefined)} title={editing === 'new' ? 'Create signal endpoint' : 'Edit signal endpoint'}>
        {editing && <EndpointForm endpoint={editing === 'new' ? undefined : editing} onDone={() => setEditing(undefined)} />}
      </Dialog>
      <Dialog opened={shown !== undefined} onClose={() => setTokensOf(undefined)} title={shown ? `Tokens of ${shown.name}` : 'Tokens'} size="lg">
        {shown && (
          <EndpointTokens
            endpoint={shown}
            onCreated={(token) => {
              setTokensOf(undefined)
              setSecret({ of: shown.name, token })
            }}
          />
        )}
      </Dialog>
      <SecretDialog
        title={`New token of ${secret?.of ?? ''}`}
        label="token"
        warning="You will not see this token again: Flagpost stores only a hash of it. Copy it now, and send it as `Authorization: Bearer <token>`."
        secret={secret?.token}
        onClose={() => setSecret(undefined)}
      />
      <Dialog opened={signalsOf !== undefined} onClose={() => setSignalsOf(undefined)} title={signalsOf ? `Signals of ${signalsOf.name}` : 'Signals'} size="xl">
        {signalsOf && <EndpointSignals endpoint={signalsOf} />}
      </Dialog>
    </Stack>
  )
}

function EndpointForm({ endpoint, onDone }: { endpoint?: Endpoint; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState(endpoint?.name ?? '')
  const [description, setDescription] = useState(endpoint?.description ?? '')
  const [enabled, setEnabled] = useState(endpoint?.enabled ?? true)
  const save = useMutation({
    mutationFn: () => {
      const body = { name, description: description || null, enabled }
      return endpoint ? ok(api.PUT('/api/admin/signal-endpoints/{id}', { params: { path: { id: String(endpoint.id) } }, body })) : ok(api.POST('/api/admin/signal-endpoints', { body }))
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: SIGNAL_ENDPOINTS_KEY })
      notifications.show({ message: `Signal endpoint ${name} saved`, color: 'green' })
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
        <TextInput label="Name" description="The end of its address: letters, digits and ~ _ . - only" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Textarea label="Description" autosize minRows={2} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <Checkbox label="Enabled: takes signals" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
        <Button type="submit" loading={save.isPending}>
          Save signal endpoint
        </Button>
      </Stack>
    </form>
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
      {endpoint.tokens.length === 0 ? (
        <Text c="dimmed">No tokens yet: the endpoint takes no signal until it has one.</Text>
      ) : (
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {endpoint.tokens.map((t) => (
              <Table.Tr key={t.id}>
                <Table.Td>{t.name}</Table.Td>
                <Table.Td>{new Date(t.createdAt).toLocaleString()}</Table.Td>
                <Table.Td>
                  <Group gap="xs" justify="end" wrap="nowrap">
                    <Button size="xs" variant="default" onClick={() => rename.mutate(t)} aria-label={`Rename token ${t.name}`}>
                      Rename
                    </Button>
                    <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(`Delete the token ${t.name}? Signals sent with it are refused.`) && remove.mutate(t)} aria-label={`Delete token ${t.name}`}>
                      Delete
                    </Button>
                  </Group>
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
          <TextInput label="Token name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
          <Button type="submit" loading={create.isPending}>
            Create token
          </Button>
        </Group>
      </form>
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
