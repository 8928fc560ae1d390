import { useState } from 'react'
import { Badge, Button, Checkbox, NativeSelect, Switch, Text, TextInput, Textarea } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { BANNERS_KEY, BannerView } from '../components/banners'
import { DeleteButton, EditDialog, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'

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
  const admin = allows('ADMIN')
  return (
    <ListPage
      title="Banners"
      load={banners}
      action={admin && <Button onClick={() => setEditing('new')}>Create banner</Button>}
      intro="Enabled banners are shown at the top of every page to everyone signed in."
      error={toggle.error ?? remove.error}
      dialogs={
        <EditDialog editing={editing} onClose={() => setEditing(undefined)} title={(b) => (b ? 'Edit banner' : 'Create banner')} size="lg">
          {(b) => <BannerForm banner={b} onDone={() => setEditing(undefined)} />}
        </EditDialog>
      }
    >
      {(data) => (
        <RowTable
          rows={data.banners}
          rowKey={(b) => b.id}
          empty="No banners yet."
          columns={[
            { header: 'Message', cell: (b) => b.message, style: { overflowWrap: 'anywhere' } },
            {
              header: 'Variant',
              cell: (b) => (
                <Badge variant="outline" color="dark">
                  {b.variant}
                </Badge>
              ),
            },
            { header: 'Link', cell: (b) => b.link ?? '', style: { overflowWrap: 'anywhere' } },
            { header: 'Shown', cell: (b) => <Switch checked={b.enabled} disabled={!admin || toggle.isPending} onChange={() => toggle.mutate(b)} aria-label={`Show the banner “${b.message}”`} /> },
          ]}
          actions={(b) =>
            admin && (
              <>
                <RowButton label={`Edit the banner “${b.message}”`} onClick={() => setEditing(b)}>
                  Edit
                </RowButton>
                <DeleteButton label={`Delete the banner “${b.message}”`} confirm="Delete this banner?" onDelete={() => remove.mutate(b)} />
              </>
            )
          }
        />
      )}
    </ListPage>
  )
}

function BannerForm({ banner, onDone }: { banner?: Banner; onDone: () => void }) {
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
  const save = useChange(
    () => (banner ? ok(api.PUT('/api/admin/banners/{id}', { params: { path: { id: String(banner.id) } }, body })) : ok(api.POST('/api/admin/banners', { body }))),
    BANNERS_KEY,
    () => 'Banner saved',
    onDone,
  )
  return (
    <MutationForm mutation={save} submit="Save banner">
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
    </MutationForm>
  )
}
