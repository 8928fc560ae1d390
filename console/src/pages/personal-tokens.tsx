import { useState } from 'react'
import { Button, Group, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'
import { SecretDialog } from '../components/secret-dialog'

type Pat = Schemas['patSchema']
const PATS_KEY = ['personal-tokens'] as const
const DAY = 24 * 60 * 60 * 1000

/** The signed-in user's personal access tokens: they act as the user, with the user's permissions. */
export default function PersonalTokensPage() {
  const pats = useQuery({ queryKey: PATS_KEY, queryFn: () => ok(api.GET('/api/admin/user/tokens')) })
  const [creating, setCreating] = useState(false)
  const [secret, setSecret] = useState<string>()
  const remove = useChange((pat: Pat) => ok(api.DELETE('/api/admin/user/tokens/{id}', { params: { path: { id: String(pat.id) } } })), PATS_KEY, (pat) => `Token ${pat.description} deleted`)
  if (pats.isPending) return <Loading />
  if (pats.isError) return <PageError title="Personal access tokens" error={pats.error} />
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Personal access tokens</Title>
        <Button onClick={() => setCreating(true)}>Create personal access token</Button>
      </Group>
      <Text c="dimmed">A personal access token acts as you, with your permissions, until it expires.</Text>
      {remove.isError && <ErrorMessage error={remove.error} />}
      {pats.data.pats.length === 0 ? (
        <Text c="dimmed">You have no personal access tokens.</Text>
      ) : (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Description</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th>Last seen</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {pats.data.pats.map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td>{p.description}</Table.Td>
                <Table.Td>{new Date(p.createdAt).toLocaleDateString()}</Table.Td>
                <Table.Td>{new Date(p.expiresAt).toLocaleDateString()}</Table.Td>
                <Table.Td>{p.seenAt ? new Date(p.seenAt).toLocaleString() : 'never'}</Table.Td>
                <Table.Td>
                  <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(`Delete the token ${p.description}?`) && remove.mutate(p)} aria-label={`Delete token ${p.description}`}>
                    Delete
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Dialog opened={creating} onClose={() => setCreating(false)} title="Create personal access token">
        {creating && (
          <CreatePatForm
            onCreated={(created) => {
              setCreating(false)
              setSecret(created)
            }}
          />
        )}
      </Dialog>
      <SecretDialog title="Your new personal access token" secret={secret} onClose={() => setSecret(undefined)} />
    </Stack>
  )
}

function CreatePatForm({ onCreated }: { onCreated: (secret: string) => void }) {
  const queryClient = useQueryClient()
  const [description, setDescription] = useState('')
  const [days, setDays] = useState('30')
  const create = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/user/tokens', { body: { description, expiresAt: new Date(Date.now() + Number(days) * DAY).toISOString() } })),
    onSuccess: async (pat) => {
      await queryClient.invalidateQueries({ queryKey: PATS_KEY })
      onCreated(pat.secret ?? '')
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
        <TextInput label="Description" required value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <TextInput label="Expires in (days)" type="number" min={1} required value={days} onChange={(e) => setDays(e.currentTarget.value)} />
        <Button type="submit" loading={create.isPending}>
          Create
        </Button>
      </Stack>
    </form>
  )
}
