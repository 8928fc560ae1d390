import { useState } from 'react'
import { Anchor, Button, Card, Group, Stack, Text, TextInput, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { flagKey } from './flag-details'
import { ErrorMessage } from './error-message'

type Flag = Schemas['featureSchema']
type FlagLink = NonNullable<Flag['links']>[number]

/** Only http(s) becomes a link (the server accepts nothing else; this holds even for data written before it checked). */
const isWebUrl = (url: string) => /^https?:\/\//i.test(url)

/** The flag's links (issue trackers, code search, runbooks): add, edit and remove for those who may update the flag. */
export function FlagLinks({ flag }: { flag: Flag }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const editable = allows('UPDATE_FEATURE', flag.project)
  const [editing, setEditing] = useState<FlagLink | null>(null)
  const refresh = () => queryClient.invalidateQueries({ queryKey: flagKey(flag.project, flag.name) })
  const path = { projectId: flag.project, featureName: flag.name }
  const remove = useMutation({
    mutationFn: (link: FlagLink) => ok(api.DELETE('/api/admin/projects/{projectId}/features/{featureName}/link/{linkId}', { params: { path: { ...path, linkId: link.id } } })),
    onSuccess: refresh,
    onError: (error: Error) => notifications.show({ title: 'The change was refused', message: error.message, color: 'red' }),
  })
  const links = flag.links ?? []
  return (
    <Card withBorder component="section" aria-label="Links">
      <Title order={2} size="h4">
        Links
      </Title>
      <Stack gap={4} mt="xs">
        {links.length === 0 && (
          <Text size="sm" c="dimmed">
            No links.
          </Text>
        )}
        {links.map((link) =>
          editing?.id === link.id ? (
            <LinkForm key={link.id} flag={flag} link={link} onDone={() => setEditing(null)} />
          ) : (
            <Group key={link.id} gap="xs">
              {isWebUrl(link.url) ? (
                <Anchor href={link.url} target="_blank" rel="noopener noreferrer nofollow" size="sm">
                  {link.title || link.url}
                </Anchor>
              ) : (
                <Text size="sm">{link.title || link.url}</Text>
              )}
              {link.title && (
                <Text size="xs" c="dimmed">
                  {link.url}
                </Text>
              )}
              {editable && (
                <>
                  <Button variant="subtle" size="compact-xs" aria-label={`Edit link ${link.title || link.url}`} onClick={() => setEditing(link)}>
                    Edit
                  </Button>
                  <Button variant="subtle" color="red" size="compact-xs" aria-label={`Remove link ${link.title || link.url}`} loading={remove.isPending && remove.variables?.id === link.id} onClick={() => remove.mutate(link)}>
                    Remove
                  </Button>
                </>
              )}
            </Group>
          ),
        )}
      </Stack>
      {editable && links.length < 10 && !editing && <LinkForm flag={flag} />}
    </Card>
  )
}

/** A new link, or (with `link`) a change of one. */
function LinkForm({ flag, link, onDone }: { flag: Flag; link?: FlagLink; onDone?: () => void }) {
  const queryClient = useQueryClient()
  const [url, setUrl] = useState(link?.url ?? '')
  const [title, setTitle] = useState(link?.title ?? '')
  const path = { projectId: flag.project, featureName: flag.name }
  const save = useMutation({
    mutationFn: () => {
      const body = { url: url.trim(), title: title.trim() || null }
      return link
        ? ok(api.PUT('/api/admin/projects/{projectId}/features/{featureName}/link/{linkId}', { params: { path: { ...path, linkId: link.id } }, body }))
        : ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/link', { params: { path }, body }))
    },
    onSuccess: async () => {
      setUrl('')
      setTitle('')
      await queryClient.invalidateQueries({ queryKey: flagKey(flag.project, flag.name) })
      onDone?.()
    },
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (url.trim()) save.mutate()
      }}
    >
      <Group align="end" mt="sm">
        <TextInput label="URL" placeholder="https://…" value={url} onChange={(e) => setUrl(e.currentTarget.value)} maxLength={2048} w={320} />
        <TextInput label="Title" description="Optional" value={title} onChange={(e) => setTitle(e.currentTarget.value)} maxLength={250} w={200} />
        <Button type="submit" disabled={!url.trim()} loading={save.isPending}>
          {link ? 'Save link' : 'Add link'}
        </Button>
        {onDone && (
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
        )}
      </Group>
      {save.isError && <ErrorMessage error={save.error} />}
    </form>
  )
}
