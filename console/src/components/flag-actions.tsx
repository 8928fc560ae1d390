import { useState } from 'react'
import { Button, Group, Select, Stack, Switch, Text, TextInput } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useLocation } from 'wouter'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { flagPath, projectPath } from '../paths'
import { projectKey } from '../api/projects'
import { Dialog } from './dialog'
import { ErrorMessage } from './error-message'

type Flag = Schemas['featureSchema']

/** What may be done to the flag as a whole: archive it, clone it, move it to another project; each only where allowed. */
export function FlagActions({ flag }: { flag: Flag }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const [, setLocation] = useLocation()
  const [dialog, setDialog] = useState<'clone' | 'move'>()
  const archive = useMutation({
    // The bulk route, not DELETE …/features/{featureName}: it refuses to archive a parent of live flags, which the single one lets through.
    mutationFn: () => ok(api.POST('/api/admin/projects/{projectId}/archive', { params: { path: { projectId: flag.project } }, body: { features: [flag.name] } })),
    onSuccess: async () => {
      await Promise.all([queryClient.invalidateQueries({ queryKey: projectKey(flag.project) }), queryClient.invalidateQueries({ queryKey: ['archived-flags', flag.project] })])
      queryClient.removeQueries({ queryKey: ['flag', flag.project, flag.name] })
      notifications.show({ message: `Flag ${flag.name} archived`, color: 'green' })
      setLocation(projectPath(flag.project))
    },
  })
  const canClone = allows('CREATE_FEATURE', flag.project)
  const canMove = allows('UPDATE_FEATURE', flag.project)
  const canArchive = allows('DELETE_FEATURE', flag.project)
  if (!canClone && !canMove && !canArchive) return null
  return (
    <Stack gap="xs">
      <Group gap="xs">
        {canClone && (
          <Button size="xs" variant="default" onClick={() => setDialog('clone')}>
            Clone
          </Button>
        )}
        {canMove && (
          <Button size="xs" variant="default" onClick={() => setDialog('move')}>
            Move to project
          </Button>
        )}
        {canArchive && (
          <Button
            size="xs"
            color="red.9"
            variant="outline"
            loading={archive.isPending}
            onClick={() => window.confirm(`Archive the flag ${flag.name}? SDKs stop receiving it; it can be revived from the project's archived flags.`) && archive.mutate()}
          >
            Archive
          </Button>
        )}
      </Group>
      {archive.isError && <ErrorMessage error={archive.error} />}
      <Dialog opened={dialog === 'clone'} onClose={() => setDialog(undefined)} title={`Clone ${flag.name}`}>
        {dialog === 'clone' && <CloneForm flag={flag} />}
      </Dialog>
      <Dialog opened={dialog === 'move'} onClose={() => setDialog(undefined)} title={`Move ${flag.name}`}>
        {dialog === 'move' && <MoveForm flag={flag} />}
      </Dialog>
    </Stack>
  )
}

/** `POST …/features/{featureName}/clone`: a copy under a new name, off everywhere; then its page. */
function CloneForm({ flag }: { flag: Flag }) {
  const queryClient = useQueryClient()
  const [, setLocation] = useLocation()
  const [name, setName] = useState(`${flag.name}-copy`)
  const [replaceGroupId, setReplaceGroupId] = useState(true)
  const clone = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/clone', { params: { path: { projectId: flag.project, featureName: flag.name } }, body: { name, replaceGroupId } })),
    onSuccess: async (copy) => {
      await queryClient.invalidateQueries({ queryKey: projectKey(flag.project) })
      notifications.show({ message: `Flag ${copy.name} created as a copy of ${flag.name}`, color: 'green' })
      setLocation(flagPath(copy.project, copy.name))
    },
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        clone.mutate()
      }}
    >
      <Stack>
        {clone.isError && <ErrorMessage error={clone.error} />}
        <Text size="sm">The copy has the flag's type, description, strategies, variants and dependencies, and is off in every environment. Tags are not copied.</Text>
        <TextInput label="Name of the copy" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Switch label="Group gradual rollouts by the copy's name" checked={replaceGroupId} onChange={(e) => setReplaceGroupId(e.currentTarget.checked)} />
        <Button type="submit" loading={clone.isPending}>
          Clone flag
        </Button>
      </Stack>
    </form>
  )
}

/** `POST …/features/{featureName}/changeProject`: to a project where the user may create flags; then its page there. */
function MoveForm({ flag }: { flag: Flag }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const [, setLocation] = useLocation()
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => ok(api.GET('/api/admin/projects')) })
  const [target, setTarget] = useState<string | null>(null)
  const move = useMutation({
    mutationFn: (newProjectId: string) =>
      ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/changeProject', { params: { path: { projectId: flag.project, featureName: flag.name } }, body: { newProjectId } })),
    onSuccess: async (_, newProjectId) => {
      await Promise.all([queryClient.invalidateQueries({ queryKey: projectKey(flag.project) }), queryClient.invalidateQueries({ queryKey: projectKey(newProjectId) })])
      queryClient.removeQueries({ queryKey: ['flag', flag.project, flag.name] })
      notifications.show({ message: `Flag ${flag.name} moved to ${newProjectId}`, color: 'green' })
      setLocation(flagPath(newProjectId, flag.name))
    },
  })
  const targets = (projects.data?.projects ?? []).filter((p) => p.id !== flag.project && allows('CREATE_FEATURE', p.id)).map((p) => ({ value: p.id, label: `${p.name} (${p.id})` }))
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (target) move.mutate(target)
      }}
    >
      <Stack>
        {projects.isError && <ErrorMessage error={projects.error} />}
        {move.isError && <ErrorMessage error={move.error} />}
        <Text size="sm">The flag takes the target project's environments: those it lacks are added, off. Flags with dependencies stay in their project.</Text>
        <Select
          label="Target project"
          placeholder={projects.isPending ? 'Loading…' : targets.length === 0 ? 'No other project you may create flags in' : 'Choose a project'}
          data={targets}
          value={target}
          onChange={setTarget}
          searchable
          required
        />
        <Button type="submit" disabled={!target} loading={move.isPending}>
          Move flag
        </Button>
      </Stack>
    </form>
  )
}
