import { useState } from 'react'
import { ActionIcon, Autocomplete, Badge, Button, MultiSelect, NumberInput, Text, TextInput } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { Dialog } from '../components/dialog'
import { DeleteButton, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'

type Environment = Schemas['environmentSchema']
const ENVIRONMENTS_KEY = ['environments'] as const
const TYPES = ['development', 'test', 'preproduction', 'production']

/** The environments: type and sort order, reorder, enable or deprecate, create, clone and delete, each where allowed. */
export default function EnvironmentsPage() {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const environments = useQuery({ queryKey: ENVIRONMENTS_KEY, queryFn: () => ok(api.GET('/api/admin/environments')) })
  const [dialog, setDialog] = useState<{ kind: 'create' } | { kind: 'edit' | 'clone'; environment: Environment }>()
  const refresh = () => queryClient.invalidateQueries({ queryKey: ENVIRONMENTS_KEY })
  const reorder = useMutation({
    mutationFn: (order: Record<string, number>) => ok(api.PUT('/api/admin/environments/sort-order', { body: order })),
    onSuccess: refresh,
  })
  const setEnabled = useMutation({
    mutationFn: (e: Environment) =>
      ok(e.enabled ? api.POST('/api/admin/environments/{name}/off', { params: { path: { name: e.name } } }) : api.POST('/api/admin/environments/{name}/on', { params: { path: { name: e.name } } })),
    onSuccess: refresh,
  })
  const remove = useMutation({
    mutationFn: (e: Environment) => ok(api.DELETE('/api/admin/environments/{name}', { params: { path: { name: e.name } } })),
    onSuccess: async (_, e) => {
      await refresh()
      notifications.show({ message: `Environment ${e.name} deleted`, color: 'green' })
    },
  })
  const isAdmin = allows('ADMIN')
  return (
    <ListPage
      title="Environments"
      load={environments}
      action={allows('CREATE_ENVIRONMENT') && <Button onClick={() => setDialog({ kind: 'create' })}>Create environment</Button>}
      error={reorder.error ?? setEnabled.error ?? remove.error}
      dialogs={
        <Dialog
          opened={dialog !== undefined}
          onClose={() => setDialog(undefined)}
          title={dialog?.kind === 'create' ? 'Create environment' : dialog?.kind === 'edit' ? `Edit environment ${dialog.environment.name}` : `Clone environment ${dialog?.environment.name ?? ''}`}
        >
          {dialog?.kind === 'create' && <EnvironmentForm onDone={() => setDialog(undefined)} />}
          {dialog?.kind === 'edit' && <EnvironmentForm environment={dialog.environment} onDone={() => setDialog(undefined)} />}
          {dialog?.kind === 'clone' && <CloneForm source={dialog.environment} onDone={() => setDialog(undefined)} />}
        </Dialog>
      }
    >
      {({ environments: list }) => {
        // Moving swaps the two neighbours' sort orders; where they are equal, the whole list is numbered in its new order.
        const move = (from: number, to: number) => {
          const [a, b] = [list[from]!, list[to]!]
          if (a.sortOrder !== b.sortOrder) return reorder.mutate({ [a.name]: b.sortOrder, [b.name]: a.sortOrder })
          const names = list.map((e) => e.name)
          names.splice(from, 1)
          names.splice(to, 0, a.name)
          reorder.mutate(Object.fromEntries(names.map((n, i) => [n, i + 1])))
        }
        return (
          <RowTable
            rows={list}
            rowKey={(e) => e.name}
            empty="No environments."
            columns={[
              {
                header: 'Name',
                cell: (e) => (
                  <>
                    {e.name}
                    {e.protected && (
                      <Badge size="xs" variant="light" ml={6}>
                        protected
                      </Badge>
                    )}
                    {!e.enabled && (
                      <Badge size="xs" color="gray" ml={6}>
                        deprecated
                      </Badge>
                    )}
                  </>
                ),
              },
              { header: 'Type', cell: (e) => e.type },
              { header: 'Sort order', cell: (e) => e.sortOrder },
              { header: 'Projects', cell: (e) => e.projectCount ?? '' },
              { header: 'API tokens', cell: (e) => e.apiTokenCount ?? '' },
            ]}
            actions={(e) => {
              const i = list.indexOf(e)
              return (
                <>
                  {isAdmin && (
                    <>
                      <ActionIcon variant="default" disabled={i === 0 || reorder.isPending} onClick={() => move(i, i - 1)} aria-label={`Move ${e.name} up`}>
                        ↑
                      </ActionIcon>
                      <ActionIcon variant="default" disabled={i === list.length - 1 || reorder.isPending} onClick={() => move(i, i + 1)} aria-label={`Move ${e.name} down`}>
                        ↓
                      </ActionIcon>
                      <RowButton label={`${e.enabled ? 'Deprecate' : 'Enable'} environment ${e.name}`} onClick={() => setEnabled.mutate(e)}>
                        {e.enabled ? 'Deprecate' : 'Enable'}
                      </RowButton>
                    </>
                  )}
                  {allows('UPDATE_ENVIRONMENT') && !e.protected && (
                    <RowButton label={`Edit environment ${e.name}`} onClick={() => setDialog({ kind: 'edit', environment: e })}>
                      Edit
                    </RowButton>
                  )}
                  {allows('CREATE_ENVIRONMENT') && (
                    <RowButton label={`Clone environment ${e.name}`} onClick={() => setDialog({ kind: 'clone', environment: e })}>
                      Clone
                    </RowButton>
                  )}
                  {allows('DELETE_ENVIRONMENT') && !e.protected && (
                    <DeleteButton label={`Delete environment ${e.name}`} confirm={`Delete the environment ${e.name}, the flags' configuration in it and its API tokens?`} onDelete={() => remove.mutate(e)} />
                  )}
                </>
              )
            }}
          />
        )
      }}
    </ListPage>
  )
}

/** Creates an environment, or sets an existing one's type and sort order. */
function EnvironmentForm({ environment, onDone }: { environment?: Environment; onDone: () => void }) {
  const [name, setName] = useState('')
  const [type, setType] = useState(environment?.type ?? 'development')
  const [sortOrder, setSortOrder] = useState<string | number>(environment?.sortOrder ?? '')
  const save = useChange(
    () => {
      const order = sortOrder === '' ? {} : { sortOrder: Number(sortOrder) }
      return environment
        ? ok(api.PUT('/api/admin/environments/{name}', { params: { path: { name: environment.name } }, body: { type, ...order } }))
        : ok(api.POST('/api/admin/environments', { body: { name, type, ...order } }))
    },
    ENVIRONMENTS_KEY,
    () => `Environment ${environment?.name ?? name} saved`,
    onDone,
  )
  return (
    <MutationForm mutation={save} submit="Save environment">
      {!environment && <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />}
      <Autocomplete label="Type" description="development, test, preproduction, production or your own" required data={TYPES} value={type} onChange={setType} />
      <NumberInput label="Sort order" allowDecimal={false} value={sortOrder} onChange={setSortOrder} />
    </MutationForm>
  )
}

/** A new environment copying the source's settings and flag configuration in the projects chosen (all that have it when none). */
function CloneForm({ source, onDone }: { source: Environment; onDone: () => void }) {
  const queryClient = useQueryClient()
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => ok(api.GET('/api/admin/projects')) })
  const [name, setName] = useState(`${source.name}-copy`)
  const [type, setType] = useState(source.type)
  const [chosen, setChosen] = useState<string[]>([])
  const clone = useMutation({
    mutationFn: () =>
      ok(api.POST('/api/admin/environments/{name}/clone', { params: { path: { name: source.name } }, body: { name, type, ...(chosen.length > 0 ? { projects: chosen } : {}) } })),
    onSuccess: async () => {
      await Promise.all([queryClient.invalidateQueries({ queryKey: ENVIRONMENTS_KEY }), queryClient.invalidateQueries({ queryKey: ['projects'] })])
      notifications.show({ message: `Environment ${name} created as a copy of ${source.name}`, color: 'green' })
      onDone()
    },
  })
  const withSource = (projects.data?.projects ?? []).filter((p) => p.environments.includes(source.name))
  return (
    <MutationForm mutation={clone} submit="Clone environment">
      <Text size="sm">Copies, in each project chosen, the project's settings of {source.name} and every flag's switch, strategies and variants there.</Text>
      <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <Autocomplete label="Type" required data={TYPES} value={type} onChange={setType} />
      <MultiSelect
        label="Projects"
        description="Empty: every project having the environment"
        data={withSource.map((p) => ({ value: p.id, label: p.name }))}
        value={chosen}
        onChange={setChosen}
        searchable
      />
    </MutationForm>
  )
}
