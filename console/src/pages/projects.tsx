import { useState, type FormEvent } from 'react'
import { Anchor, Badge, Button, MultiSelect, NumberInput, Select, Stack, Text, TextInput, Textarea, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useLocation } from 'wouter'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { Dialog } from '../components/dialog'
import { ErrorMessage } from '../components/error-message'
import { DeleteButton, ListPage, RowButton, RowTable } from '../components/list-page'
import { projectPath } from '../paths'
import { useCreateIntent } from '../create-intent'

type Project = Schemas['projectSchema']
type Mode = Project['mode']

const MODES: { value: Mode; label: string }[] = [
  { value: 'open', label: 'Open: anyone may submit change requests' },
  { value: 'protected', label: 'Protected: only members submit change requests' },
  { value: 'private', label: 'Private: visible only to members' },
]

export const PROJECTS_KEY = ['projects'] as const

export function useEnvironments() {
  return useQuery({ queryKey: ['environments'], queryFn: () => ok(api.GET('/api/admin/environments')), staleTime: 60_000 })
}

/** The projects the user may see, with creating and editing where they may. */
export default function ProjectsPage() {
  const allows = useAllows()
  const projects = useQuery({ queryKey: PROJECTS_KEY, queryFn: () => ok(api.GET('/api/admin/projects')) })
  // The command bar's "Create …" actions open this page with `?create=project`.
  const [creating, setCreating] = useCreateIntent('project')
  const [editing, setEditing] = useState<Project>()
  return (
    <ListPage
      title="Projects"
      load={projects}
      action={allows('CREATE_PROJECT') && <Button onClick={() => setCreating(true)}>Create project</Button>}
      dialogs={
        <>
          <Dialog opened={creating} onClose={() => setCreating(false)} title="Create project">
            {creating && <CreateProjectForm onDone={() => setCreating(false)} />}
          </Dialog>
          <Dialog opened={editing !== undefined} onClose={() => setEditing(undefined)} title="Edit project">
            {editing && <EditProjectForm project={editing} onDone={() => setEditing(undefined)} />}
          </Dialog>
        </>
      }
    >
      {(data) => (
        <>
          <RowTable
            rows={data.projects}
            rowKey={(p) => p.id}
            highlightOnHover
            empty="No projects you may see."
            columns={[
              {
                header: 'Name',
                cell: (p) => (
                  <>
                    <Anchor component={Link} href={projectPath(p.id)}>
                      {p.name}
                    </Anchor>
                    {p.description && (
                      <Text size="xs" c="dimmed">
                        {p.description}
                      </Text>
                    )}
                  </>
                ),
              },
              { header: 'Id', cell: (p) => p.id },
              { header: 'Mode', cell: (p) => <Badge variant="light">{p.mode}</Badge> },
              { header: 'Environments', cell: (p) => p.environments.join(', ') },
              { header: 'Flag limit', cell: (p) => p.featureLimit ?? 'none' },
            ]}
            actions={(p) =>
              allows('UPDATE_PROJECT', p.id) && (
                <RowButton label={`Edit project ${p.name}`} onClick={() => setEditing(p)}>
                  Edit
                </RowButton>
              )
            }
          />
          <ArchivedProjects />
        </>
      )}
    </ListPage>
  )
}

/** The archived projects (`GET /api/admin/projects?archived=true`): revive or delete for good, where allowed. */
function ArchivedProjects() {
  const allows = useAllows()
  const archived = useQuery({ queryKey: [...PROJECTS_KEY, 'archived'], queryFn: () => ok(api.GET('/api/admin/projects', { params: { query: { archived: 'true' } } })) })
  const revive = useChange((p: Project) => ok(api.POST('/api/admin/projects/revive/{projectId}', { params: { path: { projectId: p.id } } })), PROJECTS_KEY, (p) => `Project ${p.name} revived (its flags stay archived)`)
  const remove = useChange((p: Project) => ok(api.DELETE('/api/admin/projects/{projectId}', { params: { path: { projectId: p.id } } })), PROJECTS_KEY, (p) => `Project ${p.name} deleted`)
  if (archived.isPending) return null
  if (archived.isError) return <ErrorMessage error={archived.error} />
  const projects = archived.data.projects
  if (projects.length === 0 && !revive.isError && !remove.isError) return null
  return (
    <Stack gap="xs" component="section" aria-labelledby="archived-projects">
      <Title order={2} size="h3" id="archived-projects">
        Archived projects
      </Title>
      {revive.isError && <ErrorMessage error={revive.error} />}
      {remove.isError && <ErrorMessage error={remove.error} />}
      <RowTable
        rows={projects}
        rowKey={(p) => p.id}
        empty="No archived projects."
        columns={[
          {
            header: 'Name',
            cell: (p) => (
              <Anchor component={Link} href={projectPath(p.id)}>
                {p.name}
              </Anchor>
            ),
          },
          { header: 'Id', cell: (p) => p.id },
          { header: 'Archived', cell: (p) => (p.archivedAt ? new Date(p.archivedAt).toLocaleString() : '') },
        ]}
        actions={(p) => (
          <>
            {allows('UPDATE_PROJECT', p.id) && (
              <RowButton label={`Revive project ${p.name}`} onClick={() => revive.mutate(p)}>
                Revive
              </RowButton>
            )}
            {allows('DELETE_PROJECT', p.id) && <DeleteButton label={`Delete project ${p.name}`} confirm={`Delete the project ${p.name} and its archived flags for good?`} onDelete={() => remove.mutate(p)} />}
          </>
        )}
      />
    </Stack>
  )
}

const limitOf = (value: string | number) => (value === '' ? null : Number(value))

function CreateProjectForm({ onDone }: { onDone: () => void }) {
  const environments = useEnvironments()
  const queryClient = useQueryClient()
  const [, setLocation] = useLocation()
  const [id, setId] = useState('')
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [mode, setMode] = useState<Mode>('open')
  const [envs, setEnvs] = useState<string[]>([])
  const [crEnvs, setCrEnvs] = useState<string[]>([])
  const [featureLimit, setFeatureLimit] = useState<string | number>('')
  const create = useMutation({
    mutationFn: async () => {
      const created = await ok(
        api.POST('/api/admin/projects', {
          body: {
            name,
            mode,
            ...(id ? { id } : {}),
            ...(description ? { description } : {}),
            ...(envs.length > 0 ? { environments: envs } : {}),
            ...(crEnvs.length > 0 ? { changeRequestEnvironments: crEnvs.map((env) => ({ name: env, requiredApprovals: 1 })) } : {}),
          },
        }),
      )
      // Creating takes no limit: it is the project's setting, written right after (PUT /api/admin/projects/{projectId}).
      const limit = limitOf(featureLimit)
      if (limit !== null) {
        await ok(api.PUT('/api/admin/projects/{projectId}', { params: { path: { projectId: created.id } }, body: { name: created.name, featureLimit: limit } }))
      }
      return created
    },
    onSuccess: async (created) => {
      await queryClient.invalidateQueries({ queryKey: PROJECTS_KEY })
      notifications.show({ message: `Project ${created.name} created`, color: 'green' })
      onDone()
      setLocation(projectPath(created.id))
    },
  })
  const envNames = (environments.data?.environments ?? []).map((e) => e.name)
  const submit = (e: FormEvent) => {
    e.preventDefault()
    create.mutate()
  }
  return (
    <form onSubmit={submit}>
      <Stack>
        {create.isError && <ErrorMessage error={create.error} />}
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <TextInput label="Id" description="Made from the name when left empty" value={id} onChange={(e) => setId(e.currentTarget.value)} />
        <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <Select label="Mode" data={MODES} value={mode} onChange={(v) => v && setMode(v as Mode)} allowDeselect={false} />
        <MultiSelect label="Environments" description="Every environment when none is chosen" data={envNames} value={envs} onChange={setEnvs} />
        <MultiSelect
          label="Environments requiring change requests"
          description="Changes there go through a reviewed change request (one approval)"
          data={envNames}
          value={crEnvs}
          onChange={setCrEnvs}
        />
        <NumberInput label="Flag limit" description="Most flags the project may hold; empty for none" min={1} allowDecimal={false} value={featureLimit} onChange={setFeatureLimit} />
        <Button type="submit" loading={create.isPending}>
          Create
        </Button>
      </Stack>
    </form>
  )
}

function EditProjectForm({ project, onDone }: { project: Project; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState(project.name)
  const [description, setDescription] = useState(project.description ?? '')
  const [mode, setMode] = useState<Mode>(project.mode)
  const [featureLimit, setFeatureLimit] = useState<string | number>(project.featureLimit ?? '')
  const update = useMutation({
    mutationFn: () =>
      ok(
        api.PUT('/api/admin/projects/{projectId}', {
          params: { path: { projectId: project.id } },
          body: { name, description: description || null, mode, featureLimit: limitOf(featureLimit) },
        }),
      ),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: PROJECTS_KEY })
      await queryClient.invalidateQueries({ queryKey: ['project', project.id] })
      notifications.show({ message: `Project ${name} saved`, color: 'green' })
      onDone()
    },
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        update.mutate()
      }}
    >
      <Stack>
        {update.isError && <ErrorMessage error={update.error} />}
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <Select label="Mode" data={MODES} value={mode} onChange={(v) => v && setMode(v as Mode)} allowDeselect={false} />
        <NumberInput label="Flag limit" description="Empty for none" min={1} allowDecimal={false} value={featureLimit} onChange={setFeatureLimit} />
        <Button type="submit" loading={update.isPending}>
          Save
        </Button>
      </Stack>
    </form>
  )
}
