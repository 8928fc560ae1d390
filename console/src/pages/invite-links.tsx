import { useState } from 'react'
import { Badge, Button, NativeSelect, Text, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../api/client'
import { useChange } from '../api/use-change'
import { Dialog } from '../components/dialog'
import { ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'
import { SecretFormDialog } from '../components/secret-dialog'

type InviteLink = Schemas['publicSignupTokenSchema']
const LINKS_KEY = ['invite-links'] as const
const ROOT_ROLES = ['Viewer', 'Editor', 'Admin'] as const
const DAY = 24 * 60 * 60 * 1000

/** A date input's value (yyyy-mm-dd, local) for `days` from now, and the end of that local day as an instant. */
const dateIn = (days: number) => new Date(Date.now() + days * DAY).toLocaleDateString('en-CA')
const endOfDay = (date: string) => new Date(`${date}T23:59:59`).toISOString()

/** Invite links: admins make links anyone may sign up with (with the link's root role), and switch them off or extend them. */
export default function InviteLinksPage() {
  const links = useQuery({ queryKey: LINKS_KEY, queryFn: () => ok(api.GET('/api/admin/invite-link/tokens')) })
  const [creating, setCreating] = useState(false)
  const [extending, setExtending] = useState<InviteLink>()
  const toggle = useChange(
    (l: InviteLink) => ok(api.PUT('/api/admin/invite-link/tokens/{token}', { params: { path: { token: l.secret } }, body: { enabled: !l.enabled } })),
    LINKS_KEY,
    (l) => `Invite link “${l.name}” ${l.enabled ? 'disabled' : 'enabled'}`,
  )
  return (
    <ListPage
      title="Invite links"
      load={links}
      action={<Button onClick={() => setCreating(true)}>Create invite link</Button>}
      intro="Whoever opens an invite link can create an account with its root role until it expires (at most a month) or is disabled. The link is shown once, when it is created."
      error={toggle.error}
      dialogs={
        <>
          <SecretFormDialog
            opened={creating}
            onClose={() => setCreating(false)}
            title="Create invite link"
            secretTitle="Invite link created"
            label="invite link"
            warning="Share this link with the people to invite. You will not see it again: Flagpost stores only a hash of it."
          >
            {(created) => <CreateForm onDone={created} />}
          </SecretFormDialog>
          <Dialog opened={extending !== undefined} onClose={() => setExtending(undefined)} title="Change expiry">
            {extending && <ExpiryForm link={extending} onDone={() => setExtending(undefined)} />}
          </Dialog>
        </>
      }
    >
      {({ tokens }) => (
        <RowTable
          rows={tokens}
          rowKey={(l) => l.secret + l.createdAt}
          empty="No invite links yet."
          columns={[
            { header: 'Name', cell: (l) => l.name, style: { overflowWrap: 'anywhere' } },
            { header: 'Role', cell: (l) => l.role.name },
            { header: 'Expires', cell: (l) => new Date(l.expiresAt).toLocaleString() },
            {
              header: 'Status',
              cell: (l) => (
                <Badge variant="outline" color={l.enabled ? 'teal.9' : 'gray.7'}>
                  {l.enabled ? 'Works' : new Date(l.expiresAt) <= new Date() ? 'Expired' : 'Disabled'}
                </Badge>
              ),
            },
            { header: 'Signed up', cell: (l) => (l.users ?? []).map((u) => u.email ?? u.username ?? `user ${u.id}`).join(', ') || 'Nobody yet' },
          ]}
          actions={(l) => (
            <>
              <RowButton label={`Change expiry of “${l.name}”`} onClick={() => setExtending(l)}>
                Change expiry
              </RowButton>
              {(l.enabled || new Date(l.expiresAt) > new Date()) && (
                <RowButton label={`${l.enabled ? 'Disable' : 'Enable'} “${l.name}”`} disabled={toggle.isPending} onClick={() => toggle.mutate(l)}>
                  {l.enabled ? 'Disable' : 'Enable'}
                </RowButton>
              )}
            </>
          )}
        />
      )}
    </ListPage>
  )
}

function CreateForm({ onDone }: { onDone: (url: string) => void }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState('')
  const [role, setRole] = useState<string>('Viewer')
  const [expires, setExpires] = useState(dateIn(7))
  const create = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/invite-link/tokens', { body: { name, role, expiresAt: endOfDay(expires) } })),
    onSuccess: async (link) => {
      await queryClient.invalidateQueries({ queryKey: LINKS_KEY })
      onDone(link.url ?? '')
    },
  })
  return (
    <MutationForm mutation={create} submit="Create link">
      <TextInput label="Name" description="For you: whom the link is for" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <NativeSelect label="Root role of those who sign up" data={[...ROOT_ROLES]} value={role} onChange={(e) => setRole(e.currentTarget.value)} />
      <TextInput label="Expires at the end of" type="date" required min={dateIn(0)} max={dateIn(31)} value={expires} onChange={(e) => setExpires(e.currentTarget.value)} />
    </MutationForm>
  )
}

function ExpiryForm({ link, onDone }: { link: InviteLink; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [expires, setExpires] = useState(dateIn(7))
  const save = useMutation({
    mutationFn: () => ok(api.PUT('/api/admin/invite-link/tokens/{token}', { params: { path: { token: link.secret } }, body: { expiresAt: endOfDay(expires) } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: LINKS_KEY })
      onDone()
    },
  })
  return (
    <MutationForm mutation={save} submit="Save expiry">
      <Text size="sm">“{link.name}” expires {new Date(link.expiresAt).toLocaleString()}.</Text>
      <TextInput label="Expires at the end of" type="date" required min={dateIn(0)} max={dateIn(31)} value={expires} onChange={(e) => setExpires(e.currentTarget.value)} />
    </MutationForm>
  )
}
