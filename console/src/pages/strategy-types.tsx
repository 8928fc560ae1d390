import { useState } from 'react'
import { ActionIcon, Badge, Button, Checkbox, Group, Paper, Select, Stack, Text, TextInput, Textarea } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { DeleteButton, EditDialog, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'
import { STRATEGY_TYPES_KEY, useStrategyTypes, type StrategyType } from '../components/strategy-parameters'
import { BesideInput } from '../components/beside-input'

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
  return (
    <ListPage
      title="Strategy types"
      load={types}
      action={allows('CREATE_STRATEGY') && <Button onClick={() => setEditing('new')}>Create strategy type</Button>}
      error={setDeprecated.error ?? remove.error}
      dialogs={
        <EditDialog editing={editing} onClose={() => setEditing(undefined)} title={(t) => (t ? `Edit strategy type ${t.name}` : 'Create strategy type')} size="lg">
          {(t) => <StrategyTypeForm strategyType={t} onDone={() => setEditing(undefined)} />}
        </EditDialog>
      }
    >
      {(data) => (
        <RowTable
          rows={data.strategies}
          rowKey={(t) => t.name}
          empty="No strategy types."
          columns={[
            {
              header: 'Name',
              cell: (t) => (
                <>
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
                </>
              ),
            },
            { header: 'Description', cell: (t) => t.description },
            {
              header: 'Parameters',
              cell: (t) =>
                t.parameters.map((p) => (
                  <Text size="sm" key={p.name}>
                    {p.name}: {p.type}
                    {p.required ? ' (required)' : ''}
                  </Text>
                )),
            },
          ]}
          actions={(t) => (
            <>
              {t.editable && allows('UPDATE_STRATEGY') && (
                <RowButton label={`Edit strategy type ${t.name}`} onClick={() => setEditing(t)}>
                  Edit
                </RowButton>
              )}
              {allows('UPDATE_STRATEGY') && (
                <RowButton label={`${t.deprecated ? 'Reactivate' : 'Deprecate'} strategy type ${t.name}`} onClick={() => setDeprecated.mutate(t)}>
                  {t.deprecated ? 'Reactivate' : 'Deprecate'}
                </RowButton>
              )}
              {t.editable && allows('DELETE_STRATEGY') && <DeleteButton label={`Delete strategy type ${t.name}`} confirm={`Delete the strategy type ${t.name}?`} onDelete={() => remove.mutate(t)} />}
            </>
          )}
        />
      )}
    </ListPage>
  )
}

function StrategyTypeForm({ strategyType, onDone }: { strategyType?: StrategyType; onDone: () => void }) {
  const [name, setName] = useState(strategyType?.name ?? '')
  const [title, setTitle] = useState(strategyType?.title ?? '')
  const [description, setDescription] = useState(strategyType?.description ?? '')
  const [parameters, setParameters] = useState<ParameterDraft[]>((strategyType?.parameters ?? []).map((p) => ({ ...p, type: p.type as ParameterType })))
  const set = (i: number, change: Partial<ParameterDraft>) => setParameters((ps) => ps.map((p, j) => (j === i ? { ...p, ...change } : p)))
  const save = useChange(
    () => {
      const body = { title: title || null, description: description || null, parameters }
      return strategyType
        ? ok(api.PUT('/api/admin/strategies/{name}', { params: { path: { name: strategyType.name } }, body }))
        : ok(api.POST('/api/admin/strategies', { body: { name, ...body } }))
    },
    STRATEGY_TYPES_KEY,
    () => `Strategy type ${name} saved`,
    onDone,
  )
  return (
    <MutationForm mutation={save} submit="Save strategy type">
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
              <BesideInput>
                <Checkbox label="Required" checked={p.required ?? false} onChange={(e) => set(i, { required: e.currentTarget.checked })} />
              </BesideInput>
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
    </MutationForm>
  )
}
