import { useState } from 'react'
import { Button, ColorSwatch, Group, Stack, Table, Text, TextInput, Textarea, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'

type TagType = Schemas['tagTypeSchema']
const TAG_TYPES_KEY = ['tag-types'] as const

/** Tag types: the kinds of tags flags may carry. */
export default function TagTypesPage() {
  const allows = useAllows()
  const tagTypes = useQuery({ queryKey: TAG_TYPES_KEY, queryFn: () => ok(api.GET('/api/admin/tag-types')) })
  const [editing, setEditing] = useState<TagType | 'new'>()
  const remove = useChange((t: TagType) => ok(api.DELETE('/api/admin/tag-types/{name}', { params: { path: { name: t.name } } })), TAG_TYPES_KEY, (t) => `Tag type ${t.name} deleted`)
  if (tagTypes.isPending) return <Loading />
  if (tagTypes.isError) return <PageError title="Tag types" error={tagTypes.error} />
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Tag types</Title>
        {allows('CREATE_TAG_TYPE') && <Button onClick={() => setEditing('new')}>Create tag type</Button>}
      </Group>
      {remove.isError && <ErrorMessage error={remove.error} />}
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Description</Table.Th>
            <Table.Th>Color</Table.Th>
            <Table.Th>
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {tagTypes.data.tagTypes.map((t) => (
            <Table.Tr key={t.name}>
              <Table.Td>{t.name}</Table.Td>
              <Table.Td>{t.description}</Table.Td>
              <Table.Td>
                {t.color && (
                  <Group gap={6}>
                    <ColorSwatch color={t.color} size={16} aria-hidden />
                    <Text size="sm">{t.color}</Text>
                  </Group>
                )}
              </Table.Td>
              <Table.Td>
                <Group gap="xs" justify="end" wrap="nowrap">
                  {allows('UPDATE_TAG_TYPE') && (
                    <Button size="xs" variant="default" onClick={() => setEditing(t)} aria-label={`Edit tag type ${t.name}`}>
                      Edit
                    </Button>
                  )}
                  {allows('DELETE_TAG_TYPE') && (
                    <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(`Delete the tag type ${t.name} and its tags?`) && remove.mutate(t)} aria-label={`Delete tag type ${t.name}`}>
                      Delete
                    </Button>
                  )}
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Dialog opened={editing !== undefined} onClose={() => setEditing(undefined)} title={editing === 'new' ? 'Create tag type' : `Edit tag type ${editing?.name ?? ''}`}>
        {editing && <TagTypeForm tagType={editing === 'new' ? undefined : editing} onDone={() => setEditing(undefined)} />}
      </Dialog>
    </Stack>
  )
}

function TagTypeForm({ tagType, onDone }: { tagType?: TagType; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState(tagType?.name ?? '')
  const [description, setDescription] = useState(tagType?.description ?? '')
  const [color, setColor] = useState(tagType?.color ?? '')
  const save = useMutation({
    mutationFn: () => {
      const body = { description, color: color || null }
      return tagType ? ok(api.PUT('/api/admin/tag-types/{name}', { params: { path: { name: tagType.name } }, body })) : ok(api.POST('/api/admin/tag-types', { body: { name, ...body } }))
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: TAG_TYPES_KEY })
      notifications.show({ message: `Tag type ${name} saved`, color: 'green' })
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
        <TextInput label="Name" description="2 to 50 letters, digits, . _ ~ -" required disabled={tagType !== undefined} value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <TextInput label="Color" description="A hexadecimal color such as #1A7F37; empty for none" value={color} onChange={(e) => setColor(e.currentTarget.value)} />
        <Button type="submit" loading={save.isPending}>
          Save tag type
        </Button>
      </Stack>
    </form>
  )
}
