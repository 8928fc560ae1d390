import { useState } from 'react'
import { Badge, Button, Checkbox, Group, NativeSelect, Stack, Switch, Table, Text, TextInput, Textarea, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { BANNERS_KEY, BannerView } from '../components/banners'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'

type Banner = Schemas['bannerSchema']
const VARIANTS: Banner['variant'][] = ['info', 'warning', 'error', 'success']

/** Banners: messages every signed-in user sees at the top of the console while enabled (admins manage them). */
export default function BannersPage() {
  const allows = useAllows()
  const banners = useQuery({ queryKey: BANNERS_KEY, queryFn: () => ok(api.GET('/api/admin/banners')) })
  const [editing, setEditing] = useState<Banner | 'new'>()
  const params = (b: Banner) => ({ params: { path: { id: String(b.id) } } })
  const toggle = useChange((b: Banner) => (b.enabled ? ok(api.POST('/api/admin/banners/{id}/off', params(b))) : ok(api.POST('/api/admin/banners/{id}/on', params(b)))), BANNERS_KEY, (b) => `Banner ${b.enabled ? 'disabled' : 'enabled'}`)
  const remove = useChange((b: Banner) => ok(api.DELETE('/api/admin/banners/{id}', params(b))), BANNERS_KEY, () => 'Banner deleted')
  if (banners.isPending) return <Loading />
  if (banners.isError) return <PageError title="Banners" error={banners.error} />
  const admin = allows('ADMIN')
  const error = toggle.error ?? remove.error
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Banners</Title>
        {admin && <Button onClick={() => setEditing('new')}>Create banner</Button>}
      </Group>
      <Text size="sm" c="dimmed">
        Enabled banners are shown at the top of every page to everyone signed in.
      </Text>
      {error && <ErrorMessage error={error} />}
      {banners.data.banners.length === 0 ? (
        <Text>No banners yet.</Text>
      ) : (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Message</Table.Th>
              <Table.Th>Variant</Table.Th>
              <Table.Th>Link</Table.Th>
              <Table.Th>Shown</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {banners.data.banners.map((b) => (
              <Table.Tr key={b.id}>
                <Table.Td style={{ overflowWrap: 'anywhere' }}>{b.message}</Table.Td>
                <Table.Td>
                  <Badge variant="outline" color="dark">
                    {b.variant}
                  </Badge>
                </Table.Td>
                <Table.Td style={{ overflowWrap: 'anywhere' }}>{b.link ?? ''}</Table.Td>
                <Table.Td>
                  <Switch checked={b.enabled} disabled={!admin || toggle.isPending} onChange={() => toggle.mutate(b)} aria-label={`Show the banner “${b.message}”`} />
                </Table.Td>
                <Table.Td>
                  {admin && (
                    <Group gap="xs" justify="end" wrap="nowrap">
                      <Button size="xs" variant="default" onClick={() => setEditing(b)} aria-label={`Edit the banner “${b.message}”`}>
                        Edit
                      </Button>
                      <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm('Delete this banner?') && remove.mutate(b)} aria-label={`Delete the banner “${b.message}”`}>
                        Delete
                      </Button>
                    </Group>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Dialog opened={editing !== undefined} onClose={() => setEditing(undefined)} title={editing === 'new' ? 'Create banner' : 'Edit banner'} size="lg">
        {editing && <BannerForm banner={editing === 'new' ? undefined : editing} onDone={() => setEditing(undefined)} />}
      </Dialog>
    </Stack>
  )
}

function BannerForm({ banner, onDone }: { banner?: Banner; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [draft, setDraft] = useState({
    message: banner?.message ?? '',
    variant: banner?.variant ?? 'info',
    sticky: banner?.sticky ?? false,
    link: banner?.link ?? '',
    linkText: banner?.linkText ?? '',
    dialogTitle: banner?.dialogTitle ?? '',
    dialog: banner?.dialog ?? '',
    enabled: banner?.enabled ?? true,
  })
  const set = <K extends keyof typeof draft>(key: K, value: (typeof draft)[K]) => setDraft((d) => ({ ...d, [key]: value }))
  const body = { ...draft, icon: banner?.icon ?? null, link: draft.link.trim() || null, linkText: draft.linkText || null, dialogTitle: draft.dialogTitle || null, dialog: draft.dialog || null }
  const save = useMutation({
    mutationFn: () => (banner ? ok(api.PUT('/api/admin/banners/{id}', { params: { path: { id: String(banner.id) } }, body })) : ok(api.POST('/api/admin/banners', { body }))),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: BANNERS_KEY })
      notifications.show({ message: 'Banner saved', color: 'green' })
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
        <Textarea label="Message" description="Shown as written (plain text)" required autosize minRows={2} value={draft.message} onChange={(e) => set('message', e.currentTarget.value)} />
        <NativeSelect label="Variant" data={VARIANTS} value={draft.variant} onChange={(e) => set('variant', e.currentTarget.value as Banner['variant'])} />
        <TextInput label="Link" description="An http(s) URL, a path of the console such as /projects, or dialog to open the text below; empty for none" value={draft.link} onChange={(e) => set('link', e.currentTarget.value)} />
        <TextInput label="Link text" description='Default "More info"' value={draft.linkText} onChange={(e) => set('linkText', e.currentTarget.value)} />
        {draft.link.trim() === 'dialog' && (
          <>
            <TextInput label="Dialog title" value={draft.dialogTitle} onChange={(e) => set('dialogTitle', e.currentTarget.value)} />
            <Textarea label="Dialog text" required autosize minRows={3} value={draft.dialog} onChange={(e) => set('dialog', e.currentTarget.value)} />
          </>
        )}
        <Checkbox label="Sticky: stays at the top while the page scrolls" checked={draft.sticky} onChange={(e) => set('sticky', e.currentTarget.checked)} />
        <Checkbox label="Enabled: shown to everyone signed in" checked={draft.enabled} onChange={(e) => set('enabled', e.currentTarget.checked)} />
        {draft.message.trim() && (
          <div>
            <Text size="sm" fw={500} mb={4}>
              Preview
            </Text>
            <BannerView banner={{ id: banner?.id ?? 0, createdAt: '', ...body, sticky: false }} />
          </div>
        )}
        <Button type="submit" loading={save.isPending}>
          Save banner
        </Button>
      </Stack>
    </form>
  )
}
