import { useState } from 'react'
import { Button, Select, TextInput, Textarea } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { ConstraintEditor } from '../components/constraint-editor'
import { DeleteButton, Described, EditDialog, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'
import { constraintProblem, fromApiConstraint, toApiConstraint, type ConstraintDraft } from '../constraints'
import { PROJECTS_KEY } from './projects'

type Segment = Schemas['adminSegmentSchema']
const SEGMENTS_KEY = ['segments'] as const

/** Segments: named lists of constraints that strategies share, with how many flags use each. */
export default function SegmentsPage() {
  const allows = useAllows()
  const segments = useQuery({ queryKey: SEGMENTS_KEY, queryFn: () => ok(api.GET('/api/admin/segments')) })
  const [editing, setEditing] = useState<Segment | 'new'>()
  const remove = useChange((segment: Segment) => ok(api.DELETE('/api/admin/segments/{id}', { params: { path: { id: String(segment.id) } } })), SEGMENTS_KEY, (segment) => `Segment ${segment.name} deleted`)
  return (
    <ListPage
      title="Segments"
      load={segments}
      action={allows('CREATE_SEGMENT') && <Button onClick={() => setEditing('new')}>Create segment</Button>}
      error={remove.error}
      dialogs={
        <EditDialog editing={editing} onClose={() => setEditing(undefined)} title={(s) => (s ? 'Edit segment' : 'Create segment')} size="xl">
          {(s) => <SegmentForm segment={s} onDone={() => setEditing(undefined)} />}
        </EditDialog>
      }
    >
      {(data) => (
        <RowTable
          rows={data.segments}
          rowKey={(s) => s.id}
          empty="No segments yet."
          columns={[
            { header: 'Name', cell: (s) => <Described name={s.name} description={s.description} /> },
            { header: 'Project', cell: (s) => s.project ?? 'every project' },
            { header: 'Constraints', cell: (s) => s.constraints.length },
            {
              header: 'Used by',
              cell: (s) => `${s.usedInFeatures} ${s.usedInFeatures === 1 ? 'flag' : 'flags'} in ${s.usedInProjects} ${s.usedInProjects === 1 ? 'project' : 'projects'}`,
            },
          ]}
          actions={(s) => (
            <>
              {allows('UPDATE_SEGMENT', s.project ?? undefined) && (
                <RowButton label={`Edit segment ${s.name}`} onClick={() => setEditing(s)}>
                  Edit
                </RowButton>
              )}
              {allows('DELETE_SEGMENT', s.project ?? undefined) && <DeleteButton label={`Delete segment ${s.name}`} confirm={`Delete the segment ${s.name}?`} onDelete={() => remove.mutate(s)} />}
            </>
          )}
        />
      )}
    </ListPage>
  )
}

function SegmentForm({ segment, onDone }: { segment?: Segment; onDone: () => void }) {
  const projects = useQuery({ queryKey: PROJECTS_KEY, queryFn: () => ok(api.GET('/api/admin/projects')) })
  const [name, setName] = useState(segment?.name ?? '')
  const [description, setDescription] = useState(segment?.description ?? '')
  const [project, setProject] = useState<string | null>(segment?.project ?? null)
  const [constraints, setConstraints] = useState<ConstraintDraft[]>((segment?.constraints ?? []).map(fromApiConstraint))
  const save = useChange(
    () => {
      const body = { name, description: description || null, project, constraints: constraints.map(toApiConstraint) }
      return segment
        ? ok(api.PUT('/api/admin/segments/{id}', { params: { path: { id: String(segment.id) } }, body }))
        : ok(api.POST('/api/admin/segments', { body }))
    },
    SEGMENTS_KEY,
    () => `Segment ${name} saved`,
    onDone,
  )
  const invalid = constraints.some((c) => constraintProblem(c) !== undefined)
  return (
    <MutationForm mutation={save} submit="Save segment" disabled={invalid}>
      <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
      <Select
        label="Project"
        description="Empty: a global segment, usable in every project"
        placeholder="Every project"
        data={(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: p.name }))}
        value={project}
        onChange={setProject}
        clearable
      />
      <ConstraintEditor constraints={constraints} onChange={setConstraints} project={project} emptyText="No constraints: the segment matches every context." />
    </MutationForm>
  )
}
