import { useState } from 'react'
import { Button, Group, NumberInput, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'

type FlagType = Schemas['featureTypeSchema']
const FLAG_TYPES_KEY = ['flag-types'] as const

/** Flag types with their expected lifetimes, after which a flag is marked potentially stale; admins change a lifetime. */
export default function FlagTypesPage() {
  const allows = useAllows()
  const types = useQuery({ queryKey: FLAG_TYPES_KEY, queryFn: () => ok(api.GET('/api/admin/feature-types')) })
  if (types.isPending) return <Loading />
  if (types.isError) return <PageError title="Flag types" error={types.error} />
  const editable = allows('ADMIN')
  return (
    <Stack>
      <Title order={1}>Flag types</Title>
      <Text size="sm" c="dimmed">
        A flag that outlives its type's lifetime is marked potentially stale (checked hourly); none marks flags of a type that lives forever.
      </Text>
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Type</Table.Th>
            <Table.Th>Description</Table.Th>
            <Table.Th>Lifetime</Table.Th>
            {editable && (
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            )}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {types.data.types.map((t) => (
            <FlagTypeRow key={t.id} flagType={t} editable={editable} />
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  )
}

const lifetime = (days: number | null) => (days ? `${days} days` : 'never stale')

function FlagTypeRow({ flagType: t, editable }: { flagType: FlagType; editable: boolean }) {
  const queryClient = useQueryClient()
  const [editing, setEditing] = useState(false)
  const [days, setDays] = useState<string | number>(t.lifetimeDays ?? '')
  const save = useMutation({
    mutationFn: () => ok(api.PUT('/api/admin/feature-types/{id}/lifetime', { params: { path: { id: t.id } }, body: { lifetimeDays: days === '' ? null : Number(days) } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: FLAG_TYPES_KEY })
      notifications.show({ message: `Lifetime of ${t.name} saved`, color: 'green' })
      setEditing(false)
    },
  })
  return (
    <Table.Tr>
      <Table.Td>
        <Text size="sm" fw={600}>
          {t.name}
        </Text>
        <Text size="xs" c="dimmed">
          {t.id}
        </Text>
      </Table.Td>
      <Table.Td>{t.description}</Table.Td>
      <Table.Td>
        {editing ? (
          <form
            onSubmit={(e) => {
              e.preventDefault()
              save.mutate()
            }}
          >
            <Group gap="xs" align="end">
              <NumberInput label={`Lifetime of ${t.name} in days`} description="Empty or 0: never stale" min={0} allowDecimal={false} value={days} onChange={setDays} w={200} />
              <Button type="submit" size="xs" loading={save.isPending}>
                Save
              </Button>
            </Group>
            {save.isError && <ErrorMessage error={save.error} />}
          </form>
        ) : (
          lifetime(t.lifetimeDays)
        )}
      </Table.Td>
      {editable && (
        <Table.Td>
          <Button size="xs" variant="default" onClick={() => setEditing((e) => !e)} aria-label={editing ? `Cancel editing ${t.name}` : `Edit lifetime of ${t.name}`}>
            {editing ? 'Cancel' : 'Edit'}
          </Button>
        </Table.Td>
      )}
    </Table.Tr>
  )
}
