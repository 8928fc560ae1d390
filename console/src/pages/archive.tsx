import { useState } from 'react'
import { Anchor, Badge, Button, Checkbox, Group, Stack, Text, Title } from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { ErrorMessage, PageError } from '../components/error-message'
import { DeleteButton, RowButton, RowTable } from '../components/list-page'
import { Loading } from '../components/loading'
import { projectPath } from '../paths'
import { projectKey } from '../api/projects'

type Flag = Schemas['searchFeaturesSchema']['features'][number]
export const archivedFlagsKey = (projectId: string) => ['archived-flags', projectId] as const

/** A project's archived flags (the flag search with `archived=IS:true`): revive or delete for good, one or a selection. */
export default function ArchivePage({ projectId }: { projectId: string }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const [selected, setSelected] = useState<string[]>([])
  const archived = useQuery({
    queryKey: archivedFlagsKey(projectId),
    queryFn: () => ok(api.GET('/api/admin/search/features', { params: { query: { project: `IS:${projectId}`, archived: 'IS:true', sortBy: 'name', limit: '1000' } } })),
  })
  const canRevive = allows('UPDATE_FEATURE', projectId)
  const canDelete = allows('DELETE_FEATURE', projectId)
  const refresh = async () => {
    setSelected([])
    await Promise.all([queryClient.invalidateQueries({ queryKey: archivedFlagsKey(projectId) }), queryClient.invalidateQueries({ queryKey: projectKey(projectId) })])
  }
  const names = (features: string[]) => (features.length === 1 ? `Flag ${features[0]}` : `${features.length} flags`)
  const revive = useChange((features: string[]) => ok(api.POST('/api/admin/projects/{projectId}/revive', { params: { path: { projectId } }, body: { features } })), refresh, (features) => `${names(features)} revived, every environment off`)
  const remove = useChange((features: string[]) => ok(api.POST('/api/admin/projects/{projectId}/delete', { params: { path: { projectId } }, body: { features } })), refresh, (features) => `${names(features)} deleted for good`)
  const confirmation = (features: string[]) => `Delete ${features.length === 1 ? `the flag ${features[0]}` : `${features.length} flags`} for good? Their events stay in the log.`

  if (archived.isPending) return <Loading />
  if (archived.isError) return <PageError title="Archived flags" error={archived.error} />
  const flags = archived.data.features
  const allSelected = flags.length > 0 && selected.length === flags.length
  const toggle = (name: string, on: boolean) => setSelected((s) => (on ? [...s, name] : s.filter((n) => n !== name)))
  const selectable = canRevive || canDelete
  return (
    <Stack>
      <div>
        <Anchor component={Link} href={projectPath(projectId)} size="sm">
          ← {projectId}
        </Anchor>
        <Title order={1}>Archived flags</Title>
      </div>
      {revive.isError && <ErrorMessage error={revive.error} />}
      {remove.isError && <ErrorMessage error={remove.error} />}
      {selectable && (
        <Group>
          <Text size="sm" aria-live="polite">
            {selected.length} selected
          </Text>
          {canRevive && (
            <Button size="xs" disabled={selected.length === 0} loading={revive.isPending} onClick={() => revive.mutate(selected)}>
              Revive selected
            </Button>
          )}
          {canDelete && (
            <Button size="xs" color="red.9" variant="outline" disabled={selected.length === 0} loading={remove.isPending} onClick={() => window.confirm(confirmation(selected)) && remove.mutate(selected)}>
              Delete selected
            </Button>
          )}
        </Group>
      )}
      <RowTable
        rows={flags}
        rowKey={(f) => f.name}
        empty="No archived flags in this project."
        columns={[
          ...(selectable
            ? [
                {
                  header: (
                    <Checkbox aria-label="Select all archived flags" checked={allSelected} indeterminate={selected.length > 0 && !allSelected} onChange={(e) => setSelected(e.currentTarget.checked ? flags.map((f) => f.name) : [])} />
                  ),
                  cell: (f: Flag) => <Checkbox aria-label={`Select ${f.name}`} checked={selected.includes(f.name)} onChange={(e) => toggle(f.name, e.currentTarget.checked)} />,
                },
              ]
            : []),
          {
            header: 'Name',
            cell: (f) => (
              <>
                {f.name}
                {f.dependencyType && (
                  <Badge size="xs" variant="outline" ml={6}>
                    {f.dependencyType}
                  </Badge>
                )}
                {f.description && (
                  <Text size="xs" c="dimmed">
                    {f.description}
                  </Text>
                )}
              </>
            ),
          },
          { header: 'Type', cell: (f) => f.type },
          { header: 'Archived', cell: (f) => (f.archivedAt ? new Date(f.archivedAt).toLocaleString() : '') },
        ]}
        actions={(f) => (
          <>
            {canRevive && (
              <RowButton label={`Revive ${f.name}`} onClick={() => revive.mutate([f.name])}>
                Revive
              </RowButton>
            )}
            {canDelete && <DeleteButton label={`Delete ${f.name} for good`} confirm={confirmation([f.name])} onDelete={() => remove.mutate([f.name])} />}
          </>
        )}
      />
    </Stack>
  )
}
