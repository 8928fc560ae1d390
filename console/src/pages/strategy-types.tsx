import { useState } from 'react'
import { ActionIcon, Badge, Button, Checkbox, Group, Paper, Select, Stack, Table, Text, TextInput, Textarea, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'
import { STRATEGY_TYPES_KEY, useStrategyTypes, type StrategyType } from '../components/strategy-parameters'

type ParameterDraft = Schemas['strategyParameterInputSchema']
type ParameterType = ParameterDraft['type']
const PARAMETER_TYPES: ParameterType[] = ['string', 'percentage', 'list', 'number', 'boolean']

/** Strategy types: the built-in ones and the custom ones flag strategies may use, with their typed parameters. */
export default function StrategyTypesPage() {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const types = useStrategyTypes()
  const [editing, setEditing] = useState<StrategyType | 'new'>()
  const refresh = () => queryClient.invalidateQueries({ queryKey: STRATEGY_TYPES_KEY })
  const setDeprecated = useMutation({
    mutationFn: (t: StrategyType) =>
      ok(
        t.deprecated
          ? api.POST('/api/admin/strategies/{strategyName}/reactivate', { params: { path: { strategyName: t.name } } })
          : api.POST('/api/admin/strategies/{strategyName}/deprecate', { params: { path: { strategyName: t.name } } }),
      ),
    onSuccess: async (_, t) => {
      await refresh()
      notifications.show({ message: `Strategy type ${t.name} ${t.deprecated ? 'reactivated' : 'deprecated'}`, color: 'green' })
    },
  })
  const remove = useChange((t: StrategyType) => ok(api.DELETE('/api/admin/strategies/{name}', { params: { path: { name: t.name } } })), refresh, (t) => `Strategy type ${t.name} deleted`)
  if (types.isPending) return <Loading />
  if (types.isError) return <PageError title="Strategy types" error={types.error} />
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Strategy types</Title>
        {allows('CREATE_STRATEGY') && <Button onClick={() => setEditing('new')}>Create strategy type</Button>}
      </Group>
      {setDeprecated.isError && <ErrorMessage error={setDeprecated.error} />}
      {remove.isError && <ErrorMessage error={remove.error} />}
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Description</Table.Th>
            <Table.Th>Parameters</Table.Th>
            <Table.Th>
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {types.data.strategies.map((t) => (
            <Table.Tr key={t.name}>
              <Table.Td>
                <Text size="sm" fw={600}>
                  {t.displayName || t.title || t.name}
                </Text>
                <Group gap={4}>
                  <Text size="xs" c="dimmed">
                    {t.name}
                  </Text>
                  {!t.editable && (
                    <Badge size="xs" variant="light">
                      built-in
                    </Badge>
                  )}
                  {t.deprecated && (
                    <Badge size="xs" color="gray">
                      deprecated
                    </Badge>
                  )}
                </Group>
              </Table.Td>
              <Table.Td>{t.description}</Table.Td>
              <Table.Td>
                {t.parameters.map((p) => (
                  <Text size="sm" key={p.name}>
                    {p.name}: {p.type}
                    {p.required ? ' (required)' : ''}
                  </Text>
                ))}
              </Table.Td>
              <Table.Td>
                <Group gap="xs" justify="end" wrap="nowrap">
                  {t.editable && allows('UPDATE_STRATEGY') && (
                    <Button size="xs" variant="default" onClick={() => setEditing(t)} aria-label={`Edit strategy type ${t.name}`}>
                      Edit
                    </Button>
                  )}
                  {allows('UPDATE_STRATEGY') && (
                    <Button size="xs" variant="default" onClick={() => setDeprecated.mutate(t)} aria-label={`${t.deprecated ? 'Reactivate' : 'Deprecate'} strategy type ${t.name}`}>
                      {t.deprecated ? 'Reactivate' : 'Deprecate'}
                    </Button>
                  )}
                  {t.editable && allows('DELETE_STRATEGY') && (
                    <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(`Delete the strategy type ${t.name}?`) && remove.mutate(t)} aria-label={`Delete strategy type ${t.name}`}>
                      Delete
                    </Button>
                  )}
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Dialog opened={editing !== undefined} onClose={() => setEditing(undefined)} title={editing === 'new' ? 'Create strategy type' : `Edit strategy type ${editing?.name ?? ''}`} size="lg">
        {editing && <StrategyTypeForm strategyType={editing === 'new' ? undefined : editing} onDone={() => setEditing(undefined)} />}
      </Dialog>
    </Stack>
  )
}

function StrategyTypeForm({ strategyType, onDone }: { strategyType?: StrategyType; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState(strategyType?.name ?? '')
  const [title, setTitle] = useState(strategyType?.title ?? '')
  const [description, setDescription] = useState(strategyType?.description ?? '')
  const [parameters, setParameters] = useState<ParameterDraft[]>((strategyType?.parameters ?? []).map((p) => ({ ...p, type: p.type as ParameterType })))
  const set = (i: number, change: Partial<ParameterDraft>) => setParameters((ps) => ps.map((p, j) => (j === i ? { ...p, ...change } : p)))
  const save = useMutation({
    mutationFn: () => {
      const body = { title: title || null, description: description || null, parameters }
      return strategyType
        ? ok(api.PUT('/api/admin/strategies/{name}', { params: { path: { name: strategyType.name } }, body }))
        : ok(api.POST('/api/admin/strategies', { body: { name, ...body } }))
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: STRATEGY_TYPES_KEY })
      notifications.show({ message: `Strategy type ${name} saved`, color: 'green' })
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
        <TextInput label="Name" description="1 to 100 letters, digits, _ . -" required disabled={strategyType !== undefined} value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <TextInput label="Title" value={title} onChange={(e) => setTitle(e.currentTarget.value)} />
        <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <Stack gap="xs" component="fieldset" aria-label="Parameters" style={{ border: 0, padding: 0, margin: 0 }}>
          <Text fw={600} size="sm">
            Parameters
          </Text>
          {parameters.length === 0 && (
            <Text size="sm" c="dimmed">
              No parameters.
            </Text>
          )}
          {parameters.map((p, i) => (
            <Paper key={i} withBorder p="xs">
              <Group align="end">
                <TextInput label={`Parameter ${i + 1} name`} required value={p.name} onChange={(e) => set(i, { name: e.currentTarget.value })} />
                <Select label={`Parameter ${i + 1} type`} data={PARAMETER_TYPES} value={p.type} onChange={(v) => v && set(i, { type: v as ParameterType })} allowDeselect={false} w={140} />
                <Checkbox label="Required" checked={p.required ?? false} onChange={(e) => set(i, { required: e.currentTarget.checked })} mb={8} />
                <ActionIcon variant="default" onClick={() => setParameters((ps) => ps.filter((_, j) => j !== i))} aria-label={`Remove parameter ${i + 1}`} mb={4}>
                  ×
                </ActionIcon>
              </Group>
              <TextInput label={`Parameter ${i + 1} description`} value={p.description ?? ''} onChange={(e) => set(i, { description: e.currentTarget.value })} mt="xs" />
            </Paper>
          ))}
          <Button variant="default" size="xs" w="fit-content" onClick={() => setParameters((ps) => [...ps, { name: '', type: 'string', description: '', required: false }])}>
            Add parameter
          </Button>
        </Stack>
        <Button type="submit" loading={save.isPending}>
          Save strategy type
        </Button>
      </Stack>
    </form>
  )
}
