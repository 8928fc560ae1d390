import { useState } from 'react'
import { Button, ColorSwatch, Group, Text, TextInput, Textarea } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { DeleteButton, EditDialog, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'

type TagType = Schemas['tagTypeSchema']
const TAG_TYPES_KEY = ['tag-types'] as const

/** Tag types: the kinds of tags flags may carry. */
export default function TagTypesPage() {
  const allows = useAllows()
  const tagTypes = useQuery({ queryKey: TAG_TYPES_KEY, queryFn: () => ok(api.GET('/api/admin/tag-types')) })
  const [editing, setEditing] = useState<TagType | 'new'>()
  const remove = useChange((t: TagType) => ok(api.DELETE('/api/admin/tag-types/{name}', { params: { path: { name: t.name } } })), TAG_TYPES_KEY, (t) => `Tag type ${t.name} deleted`)
  return (
    <ListPage
      title="Tag types"
      load={tagTypes}
      action={allows('CREATE_TAG_TYPE') && <Button onClick={() => setEditing('new')}>Create tag type</Button>}
      error={remove.error}
      dialogs={
        <EditDialog editing={editing} onClose={() => setEditing(undefined)} title={(t) => (t ? `Edit tag type ${t.name}` : 'Create tag type')}>
          {(t) => <TagTypeForm tagType={t} onDone={() => setEditing(undefined)} />}
        </EditDialog>
      }
    >
      {(data) => (
        <RowTable
          rows={data.tagTypes}
          rowKey={(t) => t.name}
          empty="No tag types yet."
          columns={[
            { header: 'Name', cell: (t) => t.name },
            { header: 'Description', cell: (t) => t.description },
            {
              header: 'Color',
              cell: (t) =>
                t.color && (
                  <Group gap={6}>
                    <ColorSwatch color={t.color} size={16} aria-hidden />
                    <Text size="sm">{t.color}</Text>
                  </Group>
                ),
            },
          ]}
          actions={(t) => (
            <>
              {allows('UPDATE_TAG_TYPE') && (
                <RowButton label={`Edit tag type ${t.name}`} onClick={() => setEditing(t)}>
                  Edit
                </RowButton>
              )}
              {allows('DELETE_TAG_TYPE') && <DeleteButton label={`Delete tag type ${t.name}`} confirm={`Delete the tag type ${t.name} and its tags?`} onDelete={() => remove.mutate(t)} />}
            </>
          )}
        />
      )}
    </ListPage>
  )
}

function TagTypeForm({ tagType, onDone }: { tagType?: TagType; onDone: () => void }) {
  const [name, setName] = useState(tagType?.name ?? '')
  const [description, setDescription] = useState(tagType?.description ?? '')
  const [color, setColor] = useState(tagType?.color ?? '')
  const save = useChange(
    () => {
      const body = { description, color: color || null }
      return tagType ? ok(api.PUT('/api/admin/tag-types/{name}', { params: { path: { name: tagType.name } }, body })) : ok(api.POST('/api/admin/tag-types', { body: { name, ...body } }))
    },
    TAG_TYPES_KEY,
    () => `Tag type ${name} saved`,
    onDone,
  )
  return (
    <MutationForm mutation={save} submit="Save tag type">
      <TextInput label="Name" description="2 to 50 letters, digits, . _ ~ -" required disabled={tagType !== undefined} value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
      <TextInput label="Color" description="A hexadecimal color such as #1A7F37; empty for none" value={color} onChange={(e) => setColor(e.currentTarget.value)} />
    </MutationForm>
  )
}
