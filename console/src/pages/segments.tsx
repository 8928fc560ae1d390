import { useState } from 'react'
import { Button, Group, Select, Stack, Table, Text, TextInput, Textarea, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { ConstraintEditor } from '../components/constraint-editor'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'
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
  if (segments.isPending) return <Loading />
  if (segments.isError) return <PageError title="Segments" error={segments.error} />
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Segments</Title>
        {allows('CREATE_SEGMENT') && <Button onClick={() => setEditing('new')}>Create segment</Button>}
      </Group>
      {remove.isError && <ErrorMessage error={remove.error} />}
      {segments.data.segments.length === 0 ? (
        <Text c="dimmed">No segments yet.</Text>
      ) : (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Project</Table.Th>
              <Table.Th>Constraints</Table.Th>
              <Table.Th>Used by</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {segments.data.segments.map((s) => (
              <Table.Tr key={s.id}>
                <Table.Td>
                  {s.name}
                  {s.description && (
                    <Text size="xs" c="dimmed">
                      {s.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{s.project ?? 'every project'}</Table.Td>
                <Table.Td>{s.constraints.length}</Table.Td>
                <Table.Td>
                  {s.usedInFeatures} {s.usedInFeatures === 1 ? 'flag' : 'flags'} in {s.usedInProjects} {s.usedInProjects === 1 ? 'project' : 'projects'}
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" justify="end">
                    {allows('UPDATE_SEGMENT', s.project ?? undefined) && (
                      <Button size="xs" variant="default" onClick={() => setEditing(s)} aria-label={`Edit segment ${s.name}`}>
                        Edit
                      </Button>
                    )}
                    {allows('DELETE_SEGMENT', s.project ?? undefined) && (
                      <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(`Delete the segment ${s.name}?`) && remove.mutate(s)} aria-label={`Delete segment ${s.name}`}>
                        Delete
                      </Button>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Dialog opened={editing !== undefined} onClose={() => setEditing(undefined)} title={editing === 'new' ? 'Create segment' : 'Edit segment'} size="xl">
        {editing && <SegmentForm segment={editing === 'new' ? undefined : editing} onDone={() => setEditing(undefined)} />}
      </Dialog>
    </Stack>
  )
}

function SegmentForm({ segment, onDone }: { segment?: Segment; onDone: () => void }) {
  const queryClient = useQueryClient()
  const projects = useQuery({ queryKey: PROJECTS_KEY, queryFn: () => ok(api.GET('/api/admin/projects')) })
  const [name, setName] = useState(segment?.name ?? '')
  const [description, setDescription] = useState(segment?.description ?? '')
  const [project, setProject] = useState<string | null>(segment?.project ?? null)
  const [constraints, setConstraints] = useState<ConstraintDraft[]>((segment?.constraints ?? []).map(fromApiConstraint))
  const save = useMutation({
    mutationFn: () => {
      const body = { name, description: description || null, project, constraints: constraints.map(toApiConstraint) }
      return segment
        ? ok(api.PUT('/api/admin/segments/{id}', { params: { path: { id: String(segment.id) } }, body }))
        : ok(api.POST('/api/admin/segments', { body }))
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: SEGMENTS_KEY })
      notifications.show({ message: `Segment ${name} saved`, color: 'green' })
      onDone()
    },
  })
  const invalid = constraints.some((c) => constraintProblem(c) !== undefined)
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <Stack>
        {save.isError && <ErrorMessage error={save.error} />}
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
        <Button type="submit" loading={save.isPending} disabled={invalid}>
          Save segment
        </Button>
      </Stack>
    </form>
  )
}
