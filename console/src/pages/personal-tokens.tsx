import { useState } from 'react'
import { Button, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { DeleteButton, ListPage, MutationForm, RowTable } from '../components/list-page'
import { SecretFormDialog } from '../components/secret-dialog'

type Pat = Schemas['patSchema']
const PATS_KEY = ['personal-tokens'] as const
const DAY = 24 * 60 * 60 * 1000

/** The signed-in user's personal access tokens: they act as the user, with the user's permissions. */
export default function PersonalTokensPage() {
  const pats = useQuery({ queryKey: PATS_KEY, queryFn: () => ok(api.GET('/api/admin/user/tokens')) })
  const [creating, setCreating] = useState(false)
  const remove = useChange((pat: Pat) => ok(api.DELETE('/api/admin/user/tokens/{id}', { params: { path: { id: String(pat.id) } } })), PATS_KEY, (pat) => `Token ${pat.description} deleted`)
  return (
    <ListPage
      title="Personal access tokens"
      load={pats}
      action={<Button onClick={() => setCreating(true)}>Create personal access token</Button>}
      intro="A personal access token acts as you, with your permissions, until it expires."
      error={remove.error}
      dialogs={
        <SecretFormDialog opened={creating} onClose={() => setCreating(false)} title="Create personal access token" secretTitle="Your new personal access token">
          {(created) => <CreatePatForm onCreated={created} />}
        </SecretFormDialog>
      }
    >
      {(data) => (
        <RowTable
          rows={data.pats}
          rowKey={(p) => p.id}
          empty="You have no personal access tokens."
          columns={[
            { header: 'Description', cell: (p) => p.description },
            { header: 'Created', cell: (p) => new Date(p.createdAt).toLocaleDateString() },
            { header: 'Expires', cell: (p) => new Date(p.expiresAt).toLocaleDateString() },
            { header: 'Last seen', cell: (p) => (p.seenAt ? new Date(p.seenAt).toLocaleString() : 'never') },
          ]}
          actions={(p) => <DeleteButton label={`Delete token ${p.description}`} confirm={`Delete the token ${p.description}?`} onDelete={() => remove.mutate(p)} />}
        />
      )}
    </ListPage>
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
    <MutationForm mutation={create} submit="Create">
      <TextInput label="Description" required value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
      <TextInput label="Expires in (days)" type="number" min={1} required value={days} onChange={(e) => setDays(e.currentTarget.value)} />
    </MutationForm>
  )
}
