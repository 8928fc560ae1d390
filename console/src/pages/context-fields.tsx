import { useState } from 'react'
import { ActionIcon, Anchor, Badge, Button, Group, NumberInput, Paper, Select, Stack, Switch, Text, TextInput, Textarea, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link, useLocation } from 'wouter'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { CONTEXT_FIELDS_KEY, useScopedContextFields } from '../api/context-fields'
import { useAllows } from '../api/session'
import { ErrorMessage, PageError } from '../components/error-message'
import { DeleteButton, Described, EditDialog, MutationForm, RowButton, RowTable } from '../components/list-page'
import { Loading } from '../components/loading'
import { projectPath } from '../paths'
import { PROJECTS_KEY } from './projects'

type ContextField = Schemas['contextFieldsSchema'][number]
type LegalValue = Schemas['legalValueSchema']

const GLOBAL = ''
export const contextFieldsPath = (projectId?: string) => (projectId ? `${projectPath(projectId)}/context-fields` : '/context-fields')

/**
 * Context fields: what constraints and custom stickiness may name, with their legal values. The global fields
 * (`/context-fields`), or a project's own (`/projects/:projectId/context-fields`), which only that project's
 * constraints may use; a select switches between them.
 */
export default function ContextFieldsPage({ projectId }: { projectId?: string }) {
  const allows = useAllows()
  const [, setLocation] = useLocation()
  const projects = useQuery({ queryKey: PROJECTS_KEY, queryFn: () => ok(api.GET('/api/admin/projects')) })
  const fields = useScopedContextFields(projectId)
  const [editing, setEditing] = useState<ContextField | 'new'>()
  const remove = useChange(
    (field: ContextField) =>
      projectId
        ? ok(api.DELETE('/api/admin/projects/{projectId}/context/{contextField}', { params: { path: { projectId, contextField: field.name } } }))
        : ok(api.DELETE('/api/admin/context/{contextField}', { params: { path: { contextField: field.name } } })),
    CONTEXT_FIELDS_KEY,
    (field) => `Context field ${field.name} deleted`,
  )
  const may = projectId
    ? { create: allows('UPDATE_PROJECT_CONTEXT', projectId), update: allows('UPDATE_PROJECT_CONTEXT', projectId), remove: allows('UPDATE_PROJECT_CONTEXT', projectId) }
    : { create: allows('CREATE_CONTEXT_FIELD'), update: allows('UPDATE_CONTEXT_FIELD'), remove: allows('DELETE_CONTEXT_FIELD') }
  const projectName = (projects.data?.projects ?? []).find((p) => p.id === projectId)?.name ?? projectId
  if (fields.isPending) return <Loading />
  if (fields.isError) return <PageError title="Context fields" error={fields.error} />
  return (
    <Stack>
      <Group justify="space-between" align="end">
        <div>
          <Title order={1}>{projectId ? `Context fields of ${projectName}` : 'Context fields'}</Title>
          <Text c="dimmed" size="sm">
            {projectId ? (
              <>
                Only the flags, default strategies and segments of this project may use these fields; they may also use the{' '}
                <Anchor component={Link} href={contextFieldsPath()} underline="always">
                  global fields
                </Anchor>
                .
              </>
            ) : (
              'Every project may use these fields; a project may also have fields of its own.'
            )}
          </Text>
        </div>
        <Group align="end">
          <Select
            label="Fields of"
            data={[{ value: GLOBAL, label: 'Every project (global)' }, ...(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: `Project ${p.name}` }))]}
            value={projectId ?? GLOBAL}
            onChange={(v) => setLocation(contextFieldsPath(v || undefined))}
            allowDeselect={false}
            searchable
            w={260}
          />
          {may.create && <Button onClick={() => setEditing('new')}>Create context field</Button>}
        </Group>
      </Group>
      {remove.isError && <ErrorMessage error={remove.error} />}
      <RowTable
        rows={fields.data}
        rowKey={(f) => f.name}
        empty={projectId ? 'This project has no context fields of its own.' : 'No context fields.'}
        columns={[
          { header: 'Name', cell: (f) => <Described name={f.name} description={f.description} /> },
          { header: 'Legal values', cell: (f) => (f.legalValues.length > 0 ? f.legalValues.map((v) => v.value).join(', ') : 'any value') },
          { header: 'Stickiness', cell: (f) => f.stickiness && <Badge variant="light">stickiness</Badge> },
          { header: 'Sort order', cell: (f) => f.sortOrder },
          { header: 'Used by', cell: (f) => f.usedInFeatures !== undefined && `${f.usedInFeatures} ${f.usedInFeatures === 1 ? 'flag' : 'flags'}` },
        ]}
        actions={(f) => (
          <>
            {may.update && (
              <RowButton label={`Edit context field ${f.name}`} onClick={() => setEditing(f)}>
                Edit
              </RowButton>
            )}
            {may.remove && <DeleteButton label={`Delete context field ${f.name}`} confirm={`Delete the context field ${f.name}?`} onDelete={() => remove.mutate(f)} />}
          </>
        )}
      />
      <EditDialog editing={editing} onClose={() => setEditing(undefined)} title={(f) => (f ? `Edit context field ${f.name}` : 'Create context field')} size="lg">
        {(f) => <ContextFieldForm field={f} projectId={projectId} onDone={() => setEditing(undefined)} />}
      </EditDialog>
    </Stack>
  )
}

function ContextFieldForm({ field, projectId, onDone }: { field?: ContextField; projectId?: string; onDone: () => void }) {
  const [name, setName] = useState(field?.name ?? '')
  const [description, setDescription] = useState(field?.description ?? '')
  const [stickiness, setStickiness] = useState(field?.stickiness ?? false)
  const [sortOrder, setSortOrder] = useState<string | number>(field?.sortOrder ?? 0)
  const [legalValues, setLegalValues] = useState<LegalValue[]>(field?.legalValues ?? [])
  const save = useChange(
    () => {
      const body = {
        description: description || null,
        stickiness,
        sortOrder: Number(sortOrder) || 0,
        legalValues: legalValues.map((v) => ({ value: v.value, ...(v.description ? { description: v.description } : {}) })),
      }
      if (projectId) {
        return field
          ? ok(api.PUT('/api/admin/projects/{projectId}/context/{contextField}', { params: { path: { projectId, contextField: field.name } }, body }))
          : ok(api.POST('/api/admin/projects/{projectId}/context', { params: { path: { projectId } }, body: { name, ...body } }))
      }
      return field
        ? ok(api.PUT('/api/admin/context/{contextField}', { params: { path: { contextField: field.name } }, body }))
        : ok(api.POST('/api/admin/context', { body: { name, ...body } }))
    },
    CONTEXT_FIELDS_KEY,
    () => `Context field ${name} saved`,
    onDone,
  )
  const setValue = (i: number, patch: Partial<LegalValue>) => setLegalValues(legalValues.map((v, j) => (j === i ? { ...v, ...patch } : v)))
  return (
    <MutationForm mutation={save} submit="Save context field">
      <TextInput
        label="Name"
        description={projectId ? 'URL-friendly, and unique among global and project fields' : 'URL-friendly'}
        required
        disabled={field !== undefined}
        value={name}
        onChange={(e) => setName(e.currentTarget.value)}
      />
      <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
      <Switch label="Custom stickiness" description="Offer this field as stickiness of rollouts and variants" checked={stickiness} onChange={(e) => setStickiness(e.currentTarget.checked)} />
      <NumberInput label="Sort order" allowDecimal={false} value={sortOrder} onChange={setSortOrder} />
      <Stack gap="xs">
        <Text fw={600} size="sm">
          Legal values
        </Text>
        {legalValues.length === 0 && (
          <Text size="sm" c="dimmed">
            None: constraints on this field may use any value.
          </Text>
        )}
        {legalValues.map((v, i) => (
          <Paper key={i} withBorder p="xs">
            <Group align="end" gap="xs">
              <TextInput label={`Value ${i + 1}`} required value={v.value} onChange={(e) => setValue(i, { value: e.currentTarget.value })} w={180} />
              <TextInput label={`Description of value ${i + 1}`} value={v.description ?? ''} onChange={(e) => setValue(i, { description: e.currentTarget.value })} style={{ flex: 1 }} />
              <ActionIcon variant="subtle" color="red" onClick={() => setLegalValues(legalValues.filter((_, j) => j !== i))} aria-label={`Remove value ${i + 1}`}>
                ×
              </ActionIcon>
            </Group>
          </Paper>
        ))}
        <Button variant="default" size="xs" w="fit-content" onClick={() => setLegalValues([...legalValues, { value: '', description: '' }])}>
          Add legal value
        </Button>
      </Stack>
    </MutationForm>
  )
}
