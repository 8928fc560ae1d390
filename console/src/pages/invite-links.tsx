import { useState } from 'react'
import { Badge, Button, Group, NativeSelect, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../api/client'
import { useChange } from '../api/use-change'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'
import { SecretDialog } from '../components/secret-dialog'

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
  const [created, setCreated] = useState<string>()
  const toggle = useChange(
    (l: InviteLink) => ok(api.PUT('/api/admin/invite-link/tokens/{token}', { params: { path: { token: l.secret } }, body: { enabled: !l.enabled } })),
    LINKS_KEY,
    (l) => `Invite link “${l.name}” ${l.enabled ? 'disabled' : 'enabled'}`,
  )
  if (links.isPending) return <Loading />
  if (links.isError) return <PageError title="Invite links" error={links.error} />
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Invite links</Title>
        <Button onClick={() => setCreating(true)}>Create invite link</Button>
      </Group>
      <Text size="sm" c="dimmed">
        Whoever opens an invite link can create an account with its root role until it expires (at most a month) or is disabled. The link is shown once, when it is created.
      </Text>
      {toggle.error && <ErrorMessage error={toggle.error} />}
      {links.data.tokens.length === 0 ? (
        <Text>No invite links yet.</Text>
      ) : (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Signed up</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {links.data.tokens.map((l) => (
              <Table.Tr key={l.secret + l.createdAt}>
                <Table.Td style={{ overflowWrap: 'anywhere' }}>{l.name}</Table.Td>
                <Table.Td>{l.role.name}</Table.Td>
                <Table.Td>{new Date(l.expiresAt).toLocaleString()}</Table.Td>
                <Table.Td>
                  <Badge variant="outline" color={l.enabled ? 'teal.9' : 'dark'}>
                    {l.enabled ? 'Works' : new Date(l.expiresAt) <= new Date() ? 'Expired' : 'Disabled'}
                  </Badge>
                </Table.Td>
                <Table.Td>{(l.users ?? []).map((u) => u.email ?? u.username ?? `user ${u.id}`).join(', ') || 'Nobody yet'}</Table.Td>
                <Table.Td>
                  <Group gap="xs" justify="end" wrap="nowrap">
                    <Button size="xs" variant="default" onClick={() => setExtending(l)} aria-label={`Change expiry of “${l.name}”`}>
                      Change expiry
                    </Button>
                    {(l.enabled || new Date(l.expiresAt) > new Date()) && (
                      <Button size="xs" variant="default" disabled={toggle.isPending} onClick={() => toggle.mutate(l)} aria-label={`${l.enabled ? 'Disable' : 'Enable'} “${l.name}”`}>
                        {l.enabled ? 'Disable' : 'Enable'}
                      </Button>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Dialog opened={creating} onClose={() => setCreating(false)} title="Create invite link">
        {creating && (
          <CreateForm
            onDone={(url) => {
              setCreating(false)
              setCreated(url)
            }}
          />
        )}
      </Dialog>
      <Dialog opened={extending !== undefined} onClose={() => setExtending(undefined)} title="Change expiry">
        {extending && <ExpiryForm link={extending} onDone={() => setExtending(undefined)} />}
      </Dialog>
      <SecretDialog
        title="Invite link created"
        label="invite link"
        secret={created}
        warning="Share this link with the people to invite. You will not see it again: Flagpost stores only a hash of it."
        onClose={() => setCreated(undefined)}
      />
    </Stack>
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
    <form
      onSubmit={(e) => {
        e.preventDefault()
        create.mutate()
      }}
    >
      <Stack>
        {create.isError && <ErrorMessage error={create.error} />}
        <TextInput label="Name" description="For you: whom the link is for" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <NativeSelect label="Root role of those who sign up" data={[...ROOT_ROLES]} value={role} onChange={(e) => setRole(e.currentTarget.value)} />
        <TextInput label="Expires at the end of" type="date" required min={dateIn(0)} max={dateIn(31)} value={expires} onChange={(e) => setExpires(e.currentTarget.value)} />
        <Group>
          <Button type="submit" loading={create.isPending}>
            Create link
          </Button>
        </Group>
      </Stack>
    </form>
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
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <Stack>
        {save.isError && <ErrorMessage error={save.error} />}
        <Text size="sm">“{link.name}” expires {new Date(link.expiresAt).toLocaleString()}.</Text>
        <TextInput label="Expires at the end of" type="date" required min={dateIn(0)} max={dateIn(31)} value={expires} onChange={(e) => setExpires(e.currentTarget.value)} />
        <Group>
          <Button type="submit" loading={save.isPending}>
            Save expiry
          </Button>
        </Group>
      </Stack>
    </form>
  )
}
