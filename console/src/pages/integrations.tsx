import { useState } from 'react'
import { Button, Group, MultiSelect, Switch, TagsInput, Text, TextInput, Textarea } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { Dialog } from '../components/dialog'
import { ErrorMessage } from '../components/error-message'
import { DeleteButton, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'
import { Loading } from '../components/loading'
import { COMMON_EVENT_TYPES, type EventType } from '../event-types'
import { PROJECTS_KEY, useEnvironments } from './projects'

type Addon = Schemas['addonSchema']
type Provider = Schemas['addonTypeSchema']
type AddonInput = Schemas['addonCreateUpdateSchema']
const ADDONS_KEY = ['addons'] as const

const inputOf = (addon: Addon): AddonInput => ({
  provider: addon.provider,
  description: addon.description,
  enabled: addon.enabled,
  // Sensitive values come masked; sent back masked, the server keeps what it stored.
  parameters: addon.parameters,
  events: addon.events as EventType[],
  projects: addon.projects,
  environments: addon.environments,
})

/** Integrations (webhooks): the events they send, where, and their delivery log. Admins only. */
export default function IntegrationsPage() {
  const queryClient = useQueryClient()
  const addons = useQuery({ queryKey: ADDONS_KEY, queryFn: () => ok(api.GET('/api/admin/addons')) })
  const [editing, setEditing] = useState<{ addon?: Addon; provider: Provider }>()
  const [log, setLog] = useState<Addon>()
  const update = useMutation({
    mutationFn: (input: { id: number; body: AddonInput }) => ok(api.PUT('/api/admin/addons/{id}', { params: { path: { id: String(input.id) } }, body: input.body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ADDONS_KEY }),
  })
  const remove = useMutation({
    mutationFn: (addon: Addon) => ok(api.DELETE('/api/admin/addons/{id}', { params: { path: { id: String(addon.id) } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ADDONS_KEY })
      notifications.show({ message: 'Integration deleted', color: 'green' })
    },
  })
  const providerOf = (name: string) => addons.data?.providers.find((p) => p.name === name)
  const nameOf = (a: Addon) => a.description || `${providerOf(a.provider)?.displayName ?? a.provider} ${a.id}`
  return (
    <ListPage
      title="Integrations"
      load={addons}
      action={
        <Group>
          {addons.data?.providers.map((p) => (
            <Button key={p.name} onClick={() => setEditing({ provider: p })}>
              Create {p.displayName.toLowerCase()}
            </Button>
          ))}
        </Group>
      }
      error={update.error ?? remove.error}
      dialogs={
        <>
          <Dialog opened={editing !== undefined} onClose={() => setEditing(undefined)} title={editing?.addon ? `Edit ${editing.provider.displayName.toLowerCase()}` : `Create ${editing?.provider.displayName.toLowerCase() ?? 'integration'}`} size="lg">
            {editing && <AddonForm addon={editing.addon} provider={editing.provider} onDone={() => setEditing(undefined)} />}
          </Dialog>
          <Dialog opened={log !== undefined} onClose={() => setLog(undefined)} title={`Delivery log of ${log ? nameOf(log) : ''}`} size="xl">
            {log && <DeliveryLog addon={log} />}
          </Dialog>
        </>
      }
    >
      {(data) => (
        <RowTable
          rows={data.addons}
          rowKey={(a) => a.id}
          empty="No integrations yet."
          columns={[
            {
              header: 'Integration',
              cell: (a) => (
                <>
                  {nameOf(a)}
                  <Text size="xs" c="dimmed">
                    {providerOf(a.provider)?.displayName ?? a.provider} to {a.parameters.url ?? ''}
                  </Text>
                </>
              ),
            },
            { header: 'Events', cell: (a) => a.events.join(', ') },
            { header: 'Projects', cell: (a) => (a.projects.length > 0 ? a.projects.join(', ') : 'every project') },
            { header: 'Environments', cell: (a) => (a.environments.length > 0 ? a.environments.join(', ') : 'every environment') },
            {
              header: 'Enabled',
              cell: (a) => (
                <Switch checked={a.enabled} disabled={update.isPending} onChange={(e) => update.mutate({ id: a.id, body: { ...inputOf(a), enabled: e.currentTarget.checked } })} aria-label={`${nameOf(a)} enabled`} />
              ),
            },
          ]}
          actions={(a) => {
            const provider = providerOf(a.provider)
            return (
              <>
                <RowButton label={`Delivery log of ${nameOf(a)}`} onClick={() => setLog(a)}>
                  Delivery log
                </RowButton>
                {provider && (
                  <RowButton label={`Edit ${nameOf(a)}`} onClick={() => setEditing({ addon: a, provider })}>
                    Edit
                  </RowButton>
                )}
                <DeleteButton label={`Delete ${nameOf(a)}`} confirm={`Delete the integration ${nameOf(a)}?`} onDelete={() => remove.mutate(a)} />
              </>
            )
          }}
        />
      )}
    </ListPage>
  )
}

function AddonForm({ addon, provider, onDone }: { addon?: Addon; provider: Provider; onDone: () => void }) {
  const environments = useEnvironments()
  const projects = useQuery({ queryKey: PROJECTS_KEY, queryFn: () => ok(api.GET('/api/admin/projects')) })
  const [description, setDescription] = useState(addon?.description ?? '')
  const [parameters, setParameters] = useState<Record<string, string>>(addon?.parameters ?? {})
  const [events, setEvents] = useState<string[]>(addon?.events ?? [])
  const [chosenProjects, setProjects] = useState<string[]>(addon?.projects ?? [])
  const [chosenEnvironments, setEnvironments] = useState<string[]>(addon?.environments ?? [])
  const [enabled, setEnabled] = useState(addon?.enabled ?? true)
  const save = useChange(
    () => {
      const body: AddonInput = {
        provider: provider.name,
        description: description || null,
        enabled,
        parameters: Object.fromEntries(Object.entries(parameters).filter(([, v]) => v !== '')),
        events: events as EventType[],
        projects: chosenProjects,
        environments: chosenEnvironments,
      }
      return addon ? ok(api.PUT('/api/admin/addons/{id}', { params: { path: { id: String(addon.id) } }, body })) : ok(api.POST('/api/admin/addons', { body }))
    },
    ADDONS_KEY,
    () => 'Integration saved',
    onDone,
  )
  const eventChoices = [...new Set([...(provider.events.length > 0 ? provider.events : COMMON_EVENT_TYPES), ...events])]
  return (
    <MutationForm mutation={save} submit="Save integration">
      <Text size="sm" c="dimmed">
        {provider.description}
      </Text>
      <TextInput label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
      {provider.parameters.map((p) => {
        const props = {
          key: p.name,
          label: p.displayName,
          description: addon && p.sensitive ? `${p.description}. Leave the mask to keep the stored value.` : p.description,
          placeholder: p.placeholder,
          required: p.required,
          value: parameters[p.name] ?? '',
          onChange: (e: { currentTarget: { value: string } }) => setParameters({ ...parameters, [p.name]: e.currentTarget.value }),
        }
        return p.type === 'textfield' ? <Textarea {...props} autosize minRows={2} /> : <TextInput {...props} type={p.type === 'url' ? 'url' : 'text'} />
      })}
      <TagsInput label="Events" description="The event types to send; choose or type one, Enter after each" data={eventChoices} value={events} onChange={setEvents} required />
      <MultiSelect label="Projects" description="Every project when none is chosen" data={(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: p.name }))} value={chosenProjects} onChange={setProjects} />
      <MultiSelect label="Environments" description="Every environment when none is chosen" data={(environments.data?.environments ?? []).map((e) => e.name)} value={chosenEnvironments} onChange={setEnvironments} />
      <Switch label="Enabled" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
    </MutationForm>
  )
}


function DeliveryLog({ addon }: { addon: Addon }) {
  const events = useQuery({
    queryKey: ['addon-events', addon.id],
    queryFn: () => ok(api.GET('/api/admin/addons/{id}/events', { params: { path: { id: String(addon.id) } } })),
  })
  if (events.isPending) return <Loading />
  if (events.isError) return <ErrorMessage error={events.error} />
  return (
    <RowTable
      rows={events.data.integrationEvents}
      rowKey={(d) => d.id}
      label="Deliveries"
      empty="Nothing delivered yet."
      columns={[
        { header: 'When', cell: (d) => new Date(d.createdAt).toLocaleString() },
        {
          header: 'Event',
          cell: (d) => (
            <>
              {d.event.type}
              {d.event.featureName && (
                <Text size="xs" c="dimmed">
                  {d.event.featureName}
                </Text>
              )}
            </>
          ),
        },
        {
          header: 'State',
          cell: (d) => (
            <Text size="sm" fw={700} c={d.state === 'success' ? undefined : 'red.9'}>
              {d.state}
            </Text>
          ),
        },
        { header: 'Details', cell: (d) => d.stateDetails },
      ]}
    />
  )
}
