import { FavoriteStar } from '../components/favorite-star'
import { lazy, Suspense, useEffect, useMemo, useRef, useState } from 'react'
import { Alert, Anchor, Badge, Button, Card, Checkbox, Group, List, Pagination, Select, SimpleGrid, Stack, Switch, Text, TextInput, Textarea, Title } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useVirtualizer } from '@tanstack/react-virtual'
import { Link, useLocation, useSearch } from 'wouter'
import { api, ok, type Schemas } from '../api/client'
import { flagListQuery, projectFlagsQuery, projectKey, projectOverviewQuery, type ProjectFlag } from '../api/projects'
import { useAllows } from '../api/session'
import { Dialog } from '../components/dialog'
import { EnvironmentSwitch } from '../components/environment-switch'
import { ErrorMessage } from '../components/error-message'
import { Loading } from '../components/loading'
import { FLAG_LIST_PAGE, flagListAddress, flagListSearch, flagListView, flagPath, projectPath, projectSettingsPath, type FlagListView } from '../paths'
import { FLAG_TYPES, type FlagType } from '../flag-types'
import type { ExportChoice } from '../components/export-flags'
import classes from './project.module.css'
import { plural } from '../plural'
import { useCreateIntent } from '../create-intent'

// Export and import are chunks of their own, loaded when their dialog opens.
const ExportFlagsForm = lazy(() => import('../components/export-flags'))
const ImportFlagsForm = lazy(() => import('../components/import-flags'))

type SortKey = 'name' | 'created' | 'lastSeen'

type Overview = Schemas['projectSummarySchema']

/**
 * A project: its statistics and health (`GET …/overview`), and its flags (the flag search) in a virtualized table with
 * a switch per environment; export and import of flags; links to its other pages (its members, environments and change
 * request settings are on its settings page, pages/project-settings.tsx). An archived project's page is read-only: its
 * archived flags, and reviving or deleting it.
 */
export default function ProjectPage({ projectId }: { projectId: string }) {
  const overview = useQuery(projectOverviewQuery(projectId))
  if (overview.isPending) return <Loading />
  if (overview.isError) return <ErrorMessage error={overview.error} />
  return overview.data.archivedAt ? <ArchivedProject projectId={projectId} project={overview.data} archivedAt={overview.data.archivedAt} /> : <LiveProject projectId={projectId} project={overview.data} />
}

function LiveProject({ projectId, project }: { projectId: string; project: Overview }) {
  const allows = useAllows()
  // The command bar's "Create …" actions open this page with `?create=flag`.
  const [creating, setCreating] = useCreateIntent('flag')
  const [importing, setImporting] = useState(false)
  const lifecycle = useProjectLifecycle(projectId)
  const environments = project.environments.map((e) => e.environment)
  return (
    <Stack>
      <Group justify="space-between">
        <div>
          <Group gap={4} wrap="nowrap">
            <Title order={1}>{project.name}</Title>
            <FavoriteStar projectId={projectId} favorite={project.favorite} />
          </Group>
          <Text c="dimmed" data-testid="project-summary">
            {[project.description, `${project.mode[0]!.toUpperCase()}${project.mode.slice(1)} project`, plural(project.members, 'member')].filter(Boolean).join(' · ')}
          </Text>
          <Group gap="md">
            <Anchor component={Link} href={`${projectPath(projectId)}/change-requests`} size="sm">
              Change requests
            </Anchor>
            <Anchor component={Link} href={`${projectPath(projectId)}/archive`} size="sm">
              Archived flags
            </Anchor>
            <Anchor component={Link} href={`${projectPath(projectId)}/context-fields`} size="sm">
              Context fields
            </Anchor>
            {allows('READ_PROJECT_API_TOKEN', projectId) && (
              <Anchor component={Link} href={`${projectPath(projectId)}/api-tokens`} size="sm">
                API tokens
              </Anchor>
            )}
            {allows('ADMIN') && (
              <Anchor component={Link} href={`${projectPath(projectId)}/actions`} size="sm">
                Action sets
              </Anchor>
            )}
            {allows('UPDATE_PROJECT', projectId) && (
              <Anchor component={Link} href={projectSettingsPath(projectId)} size="sm">
                Settings
              </Anchor>
            )}
          </Group>
        </div>
        <Group gap="xs">
          {allows('CREATE_FEATURE', projectId) && <Button onClick={() => setCreating(true)}>Create flag</Button>}
          {allows('UPDATE_FEATURE', projectId) && (
            <Button variant="default" onClick={() => setImporting(true)}>
              Import
            </Button>
          )}
          {allows('DELETE_PROJECT', projectId) && (
            <>
              <Button variant="default" loading={lifecycle.archive.isPending} onClick={() => window.confirm(`Archive the project ${project.name}?`) && lifecycle.archive.mutate()}>
                Archive project
              </Button>
              <DeleteProjectButton project={project} remove={lifecycle.remove} />
            </>
          )}
        </Group>
      </Group>
      {lifecycle.archive.isError && <ErrorMessage error={lifecycle.archive.error} />}
      {lifecycle.remove.isError && <ErrorMessage error={lifecycle.remove.error} />}
      <ProjectStats project={project} />
      <FlagList projectId={projectId} flagCount={project.featureTypeCounts.reduce((n, t) => n + t.count, 0)} environments={environments} canSwitch={allows('UPDATE_FEATURE_ENVIRONMENT', projectId)} canArchive={allows('DELETE_FEATURE', projectId)} />
      <Dialog opened={creating} onClose={() => setCreating(false)} title="Create flag">
        {creating && <CreateFlagForm projectId={projectId} onDone={() => setCreating(false)} />}
      </Dialog>
      <Dialog opened={importing} onClose={() => setImporting(false)} title="Import flags" size="lg">
        {importing && (
          <Suspense fallback={<Loading />}>
            <ImportFlagsForm projectId={projectId} environments={environments.filter((env) => allows('UPDATE_FEATURE', projectId, env))} onDone={() => setImporting(false)} />
          </Suspense>
        )}
      </Dialog>
    </Stack>
  )
}

/** An archived project, read-only as in Unleash: its statistics and archived flags; reviving and deleting it for those who may. */
function ArchivedProject({ projectId, project, archivedAt }: { projectId: string; project: Overview; archivedAt: string }) {
  const allows = useAllows()
  const flags = useQuery(projectFlagsQuery(projectId, true))
  const lifecycle = useProjectLifecycle(projectId)
  return (
    <Stack>
      <Group justify="space-between">
        <div>
          <Group gap="xs">
            <Title order={1}>{project.name}</Title>
            <Badge color="gray.7">archived</Badge>
          </Group>
          <Text c="dimmed" data-testid="project-summary">
            {[project.description, `${project.mode[0]!.toUpperCase()}${project.mode.slice(1)} project`, plural(project.members, 'member')].filter(Boolean).join(' · ')}
          </Text>
        </div>
        <Group gap="xs">
          {allows('UPDATE_PROJECT', projectId) && (
            <Button loading={lifecycle.revive.isPending} onClick={() => lifecycle.revive.mutate()}>
              Revive project
            </Button>
          )}
          {allows('DELETE_PROJECT', projectId) && <DeleteProjectButton project={project} remove={lifecycle.remove} />}
        </Group>
      </Group>
      <Alert color="gray" title="This project is archived" role="status">
        Archived on {new Date(archivedAt).toLocaleString()}. It and its flags can only be read: SDKs receive none of them. Revive it to change it (its flags stay archived until
        revived one by one).
      </Alert>
      {lifecycle.revive.isError && <ErrorMessage error={lifecycle.revive.error} />}
      {lifecycle.remove.isError && <ErrorMessage error={lifecycle.remove.error} />}
      <ProjectStats project={project} />
      <Title order={2} size="h3">
        Archived flags
      </Title>
      {flags.isPending ? <Loading /> : flags.isError ? <ErrorMessage error={flags.error} /> : <FlagsTable projectId={projectId} flags={flags.data} environments={[]} canSwitch={false} canArchive={false} archived />}
    </Stack>
  )
}

function DeleteProjectButton({ project, remove }: { project: Overview; remove: ReturnType<typeof useProjectLifecycle>['remove'] }) {
  return (
    <Button color="red.9" variant="outline" loading={remove.isPending} onClick={() => window.confirm(`Delete the project ${project.name} and its archived flags for good?`) && remove.mutate()}>
      Delete project
    </Button>
  )
}

function ProjectStats({ project }: { project: Overview }) {
  const { stats } = project
  return (
    <SimpleGrid cols={{ base: 2, md: 5 }} aria-label="Project statistics">
      <Stat label="Health" value={`${project.health}%`} hint="flags that are not stale or potentially stale" />
      <Stat label="Flags" value={project.featureTypeCounts.reduce((n, t) => n + t.count, 0)} />
      <Stat label="Created (30 days)" value={stats.createdCurrentWindow} hint={`${stats.createdPastWindow} the 30 days before`} />
      <Stat label="Archived (30 days)" value={stats.archivedCurrentWindow} hint={`${stats.archivedPastWindow} the 30 days before`} />
      <Stat label="Changes (30 days)" value={stats.projectActivityCurrentWindow} hint={`${stats.projectActivityPastWindow} the 30 days before`} />
    </SimpleGrid>
  )
}

function Stat({ label, value, hint }: { label: string; value: string | number; hint?: string }) {
  return (
    <Card withBorder padding="sm">
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="xl">
        {value}
      </Text>
      {hint && (
        <Text size="xs" c="dimmed">
          {hint}
        </Text>
      )}
    </Card>
  )
}

const time = (value: string | null) => (value ? Date.parse(value) : 0)
/** A flag as the table shows it: when SDKs last saw it in any environment, and whether it is on in each. */
interface Row {
  flag: ProjectFlag
  created: number
  lastSeen: number
  enabled: Set<string>
}
const rowOf = (flag: ProjectFlag): Row => ({
  flag,
  created: time(flag.createdAt),
  lastSeen: Math.max(0, ...flag.environments.map((e) => time(e.lastSeenAt))),
  enabled: new Set(flag.environments.filter((e) => e.enabled).map((e) => e.name)),
})
const byName = new Intl.Collator().compare
const SORTS: Record<SortKey, (a: Row, b: Row) => number> = {
  name: (a, b) => byName(a.flag.name, b.flag.name),
  created: (a, b) => b.created - a.created,
  lastSeen: (a, b) => b.lastSeen - a.lastSeen,
}
const tagText = (t: { type: string; value: string }) => `${t.type}:${t.value}`
// One formatter for every cell: toLocaleDateString makes one per call.
const dayFormat = new Intl.DateTimeFormat()
const day = (ms: number) => dayFormat.format(ms)

const ROW_HEIGHT = 52

/**
 * The project's live flags, a page at a time: search (name, description, tags), filters, order and page are the flag
 * search's on the server and live in the page's address (back, forward and reload keep them). Typing is debounced and
 * replaces the address; a filter, an order or a page pushes one. Everyone may select on the page (a selection is
 * exported, and archived by those who may).
 */
function FlagList({ projectId, flagCount, environments, canSwitch, canArchive }: { projectId: string; flagCount: number; environments: string[]; canSwitch: boolean; canArchive: boolean }) {
  const view = flagListView(useSearch())
  const [, navigate] = useLocation()
  const show = (change: Partial<FlagListView>, replace = false) => navigate(`${projectPath(projectId)}${flagListAddress({ ...view, page: 1, ...change })}`, { replace })
  const flags = useQuery({ ...flagListQuery(projectId, view), placeholderData: keepPreviousData })
  const [q, setQ] = useState(view.q)
  // Back and forward bring the address's words back into the fields.
  useEffect(() => setQ(view.q), [view.q])
  const [typedQ] = useDebouncedValue(q, 250)
  const latest = useRef(view)
  latest.current = view
  useEffect(() => {
    const now = latest.current
    if (typedQ !== now.q) show({ ...now, q: typedQ, page: 1 }, true)
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [typedQ])
  // The instance's tags (a short list: tags are few where flags are many), for the tag filter.
  const tags = useQuery({ queryKey: ['tags'], queryFn: () => ok(api.GET('/api/admin/tags')), staleTime: 10_000 })
  const tagOptions = [...new Set((tags.data?.tags ?? []).map(tagText))].sort()
  const [selected, setSelected] = useState<string[]>([])
  const [dialog, setDialog] = useState<'archive' | 'export'>()
  const [exportChoice, setExportChoice] = useState<ExportChoice>()
  const page = flags.data?.features ?? []
  const total = flags.data?.total ?? 0
  const pages = Math.max(1, Math.ceil(total / FLAG_LIST_PAGE))
  const shown = page.map(rowOf)
  const isChosen = new Set(selected)
  const allShown = shown.length > 0 && shown.every((r) => isChosen.has(r.flag.name))
  const columns = `32px minmax(200px, 2fr) 110px 110px 110px ${environments.map(() => '120px').join(' ')}`
  const first = (view.page - 1) * FLAG_LIST_PAGE
  return (
    <Stack gap="xs">
      {/* One line of five from 992 px (the "Sort by" no longer wraps alone onto a second line at 1024 px). */}
      <SimpleGrid cols={{ base: 2, sm: 3, md: 5 }} spacing="sm" verticalSpacing="xs">
        <TextInput label="Search" placeholder="Name, description or tag" value={q} onChange={(e) => setQ(e.currentTarget.value)} />
        <Select label="Tag" placeholder="Any tag" data={view.tag && !tagOptions.includes(view.tag) ? [view.tag, ...tagOptions] : tagOptions} value={view.tag || null} onChange={(v) => show({ tag: v ?? '' })} clearable searchable />
        <Select label="Type" placeholder="Any type" data={FLAG_TYPES.map((t) => t.value)} value={view.type || null} onChange={(v) => show({ type: v ?? '' })} clearable />
        <Select
          label="Stale"
          placeholder="Any"
          data={[{ value: 'stale', label: 'Stale or potentially stale' }, { value: 'fresh', label: 'Not stale' }]}
          value={view.stale || null}
          onChange={(v) => show({ stale: (v ?? '') as FlagListView['stale'] })}
          clearable
        />
        <Select
          label="Sort by"
          data={[{ value: 'name', label: 'Name' }, { value: 'created', label: 'Newest first' }, { value: 'lastSeen', label: 'Last seen' }]}
          value={view.sort}
          onChange={(v) => v && show({ sort: v as FlagListView['sort'] })}
          allowDeselect={false}
        />
      </SimpleGrid>
      <Group>
        <Text size="sm" c="dimmed" aria-live="polite">
          {flags.data ? `${total} of ${flagCount} flags` : 'Loading flags…'} · {selected.length} selected
        </Text>
        <Text size="sm" c="dimmed">
          {page.length > 0 ? `showing ${first + 1}–${first + page.length}` : ''}
        </Text>
        <Button
          size="xs"
          variant="default"
          disabled={flagCount === 0}
          onClick={() => {
            // The filters' flags are every page of them: the export asks the server for their names.
            const { limit: _limit, offset: _offset, sortBy: _sortBy, sortOrder: _sortOrder, ...query } = flagListSearch(projectId, view)
            setExportChoice({ selected, shown: [], total: flagCount, filter: { query: { ...query, sortBy: 'name' }, matching: total } })
            setDialog('export')
          }}
        >
          Export
        </Button>
        {canArchive && (
          <Button size="xs" variant="default" disabled={selected.length === 0} onClick={() => setDialog('archive')}>
            Archive selected
          </Button>
        )}
      </Group>
      {flags.isError && <ErrorMessage error={flags.error} />}
      <Dialog opened={dialog === 'archive'} onClose={() => setDialog(undefined)} title="Archive flags">
        {dialog === 'archive' && (
          <ArchiveFlagsForm
            projectId={projectId}
            features={selected}
            onDone={() => {
              setDialog(undefined)
              setSelected([])
            }}
          />
        )}
      </Dialog>
      <Dialog opened={dialog === 'export'} onClose={() => setDialog(undefined)} title="Export flags">
        {dialog === 'export' && exportChoice && (
          <Suspense fallback={<Loading />}>
            <ExportFlagsForm projectId={projectId} environments={environments} choice={exportChoice} onDone={() => setDialog(undefined)} />
          </Suspense>
        )}
      </Dialog>
      <div className={classes.scroller} role="table" aria-label="Flags" aria-rowcount={total + 1} aria-busy={flags.isFetching}>
        <div role="rowgroup" className={classes.head}>
          <div role="row" className={classes.row} style={{ gridTemplateColumns: columns }} aria-rowindex={1}>
            <div role="columnheader">
              <Checkbox
                aria-label="Select every flag shown"
                checked={allShown}
                onChange={(e) => {
                  const names = page.map((f) => f.name)
                  const on = e.currentTarget.checked
                  setSelected((s) => (on ? [...new Set([...s, ...names])] : s.filter((n) => !names.includes(n))))
                }}
              />
            </div>
            <div role="columnheader">Name</div>
            <div role="columnheader">Type</div>
            <div role="columnheader">Created</div>
            <div role="columnheader">Last seen</div>
            {environments.map((env) => (
              <div role="columnheader" key={env}>
                {env}
              </div>
            ))}
          </div>
        </div>
        <div role="rowgroup">
          {shown.map(({ flag, created, lastSeen, enabled }, i) => (
            <div role="row" key={flag.name} aria-rowindex={first + i + 2} className={classes.row} style={{ gridTemplateColumns: columns }}>
              <div role="cell">
                <Checkbox
                  aria-label={`Select ${flag.name}`}
                  checked={isChosen.has(flag.name)}
                  onChange={(e) => {
                    const on = e.currentTarget.checked
                    setSelected((s) => (on ? [...s, flag.name] : s.filter((n) => n !== flag.name)))
                  }}
                />
              </div>
              <div role="cell" className={classes.name}>
                <Anchor component={Link} href={flagPath(projectId, flag.name)}>
                  {flag.name}
                </Anchor>
                {flag.stale && (
                  <Badge size="xs" color="red.9" ml={6}>
                    stale
                  </Badge>
                )}
                {flag.tags.map((t) => (
                  <Badge key={tagText(t)} size="xs" variant="outline" ml={6}>
                    {tagText(t)}
                  </Badge>
                ))}
                {flag.description && (
                  <Text size="xs" c="dimmed" className={classes.name}>
                    {flag.description}
                  </Text>
                )}
              </div>
              <div role="cell">{flag.type}</div>
              <div role="cell">{created ? day(created) : ''}</div>
              <div role="cell">{lastSeen ? day(lastSeen) : 'never'}</div>
              {environments.map((env) => (
                <div role="cell" key={env}>
                  {canSwitch ? <EnvironmentSwitch projectId={projectId} flagName={flag.name} environment={env} enabled={enabled.has(env)} /> : <Text size="sm">{enabled.has(env) ? 'on' : 'off'}</Text>}
                </div>
              ))}
            </div>
          ))}
        </div>
      </div>
      {pages > 1 && (
        <Pagination
          total={pages}
          value={Math.min(view.page, pages)}
          onChange={(p) => show({ ...view, page: p })}
          aria-label="Pages of flags"
          getItemProps={(p) => ({ 'aria-label': `Page ${p}` })}
          getControlProps={(control) => ({ 'aria-label': { first: 'First page', previous: 'Previous page', next: 'Next page', last: 'Last page' }[control] })}
        />
      )}
    </Stack>
  )
}

/**
 * The project's flags; everyone may select (a selection is exported, and archived by those who may). `archived`: an
 * archived project's, read-only (no selection; not linked: their pages offer changes), with when each was archived.
 */
function FlagsTable({
  projectId,
  flags,
  environments,
  canSwitch,
  canArchive,
  archived = false,
}: {
  projectId: string
  flags: ProjectFlag[]
  environments: string[]
  canSwitch: boolean
  canArchive: boolean
  archived?: boolean
}) {
  const [selected, setSelected] = useState<string[]>([])
  const [dialog, setDialog] = useState<'archive' | 'export'>()
  const [exportChoice, setExportChoice] = useState<ExportChoice>()
  const all = useMemo(() => flags.map(rowOf), [flags])
  const live = useMemo(() => new Set(flags.map((f) => f.name)), [flags])
  const chosen = selected.filter((name) => live.has(name))
  const isChosen = new Set(chosen)
  const [search, setSearch] = useState('')
  const [tag, setTag] = useState<string | null>(null)
  const [type, setType] = useState<string | null>(null)
  const [stale, setStale] = useState<string | null>(null)
  const [sort, setSort] = useState<SortKey>('name')
  const tags = useMemo(() => [...new Set(flags.flatMap((f) => f.tags.map(tagText)))].sort(), [flags])
  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase()
    return all
      .filter(({ flag: f }) => !needle || f.name.toLowerCase().includes(needle))
      .filter(({ flag: f }) => !tag || f.tags.some((t) => tagText(t) === tag))
      .filter(({ flag: f }) => !type || f.type === type)
      .filter(({ flag: f }) => !stale || (stale === 'stale' ? f.stale || f.potentiallyStale : !f.stale && !f.potentiallyStale))
      .sort(SORTS[sort])
  }, [all, search, tag, type, stale, sort])

  const scroller = useRef<HTMLDivElement>(null)
  const rows = useVirtualizer({ count: shown.length, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 10 })
  const selectable = !archived
  const columns = `${selectable ? '32px ' : ''}minmax(200px, 2fr) 110px 110px 110px ${environments.map(() => '120px').join(' ')}`
  const allShown = shown.length > 0 && shown.every((r) => isChosen.has(r.flag.name))

  return (
    <Stack gap="xs">
      {/* One line of five from 992 px (the "Sort by" no longer wraps alone onto a second line at 1024 px). */}
      <SimpleGrid cols={{ base: 2, sm: 3, md: 5 }} spacing="sm" verticalSpacing="xs">
        <TextInput label="Search" placeholder="Flag name" value={search} onChange={(e) => setSearch(e.currentTarget.value)} />
        <Select label="Tag" placeholder="Any tag" data={tags} value={tag} onChange={setTag} clearable searchable />
        <Select label="Type" placeholder="Any type" data={FLAG_TYPES.map((t) => t.value)} value={type} onChange={setType} clearable />
        <Select label="Stale" placeholder="Any" data={[{ value: 'stale', label: 'Stale or potentially stale' }, { value: 'fresh', label: 'Not stale' }]} value={stale} onChange={setStale} clearable />
        <Select
          label="Sort by"
          data={[{ value: 'name', label: 'Name' }, { value: 'created', label: 'Newest first' }, { value: 'lastSeen', label: 'Last seen' }]}
          value={sort}
          onChange={(v) => v && setSort(v as SortKey)}
          allowDeselect={false}
        />
      </SimpleGrid>
      <Group>
        <Text size="sm" c="dimmed" aria-live="polite">
          {shown.length} of {flags.length} flags{selectable && ` · ${chosen.length} selected`}
        </Text>
        {selectable && (
          <Button
            size="xs"
            variant="default"
            disabled={flags.length === 0}
            onClick={() => {
              // What the dialog offers is what the table held when it opened.
              setExportChoice({ selected: chosen, shown: shown.map((r) => r.flag.name), total: flags.length })
              setDialog('export')
            }}
          >
            Export
          </Button>
        )}
        {canArchive && (
          <Button size="xs" variant="default" disabled={chosen.length === 0} onClick={() => setDialog('archive')}>
            Archive selected
          </Button>
        )}
      </Group>
      <Dialog opened={dialog === 'archive'} onClose={() => setDialog(undefined)} title="Archive flags">
        {dialog === 'archive' && (
          <ArchiveFlagsForm
            projectId={projectId}
            features={chosen}
            onDone={() => {
              setDialog(undefined)
              setSelected([])
            }}
          />
        )}
      </Dialog>
      <Dialog opened={dialog === 'export'} onClose={() => setDialog(undefined)} title="Export flags">
        {dialog === 'export' && exportChoice && (
          <Suspense fallback={<Loading />}>
            <ExportFlagsForm projectId={projectId} environments={environments} choice={exportChoice} onDone={() => setDialog(undefined)} />
          </Suspense>
        )}
      </Dialog>
      <div ref={scroller} className={classes.scroller} role="table" aria-label="Flags" aria-rowcount={shown.length + 1}>
        <div role="rowgroup" className={classes.head}>
          <div role="row" className={classes.row} style={{ gridTemplateColumns: columns }} aria-rowindex={1}>
            {selectable && (
              <div role="columnheader">
                <Checkbox aria-label="Select every flag shown" checked={allShown} onChange={(e) => setSelected(e.currentTarget.checked ? shown.map((r) => r.flag.name) : [])} />
              </div>
            )}
            <div role="columnheader">Name</div>
            <div role="columnheader">Type</div>
            <div role="columnheader">Created</div>
            <div role="columnheader">{archived ? 'Archived' : 'Last seen'}</div>
            {environments.map((env) => (
              <div role="columnheader" key={env}>
                {env}
              </div>
            ))}
          </div>
        </div>
        <div role="rowgroup" style={{ height: rows.getTotalSize(), position: 'relative' }}>
          {rows.getVirtualItems().map((item) => {
            const { flag, created, lastSeen, enabled } = shown[item.index]!
            return (
              <div
                role="row"
                key={flag.name}
                aria-rowindex={item.index + 2}
                className={classes.row}
                style={{ gridTemplateColumns: columns, position: 'absolute', top: 0, left: 0, right: 0, height: ROW_HEIGHT, transform: `translateY(${item.start}px)` }}
              >
                {selectable && (
                  <div role="cell">
                    <Checkbox
                      aria-label={`Select ${flag.name}`}
                      checked={isChosen.has(flag.name)}
                      onChange={(e) => {
                        const on = e.currentTarget.checked
                        setSelected((s) => (on ? [...s, flag.name] : s.filter((n) => n !== flag.name)))
                      }}
                    />
                  </div>
                )}
                <div role="cell" className={classes.name}>
                  {archived ? (
                    flag.name
                  ) : (
                    <Anchor component={Link} href={flagPath(projectId, flag.name)}>
                      {flag.name}
                    </Anchor>
                  )}
                  {flag.stale && (
                    <Badge size="xs" color="red.9" ml={6}>
                      stale
                    </Badge>
                  )}
                  {flag.tags.map((t) => (
                    <Badge key={tagText(t)} size="xs" variant="outline" ml={6}>
                      {tagText(t)}
                    </Badge>
                  ))}
                </div>
                <div role="cell">{flag.type}</div>
                <div role="cell">{created ? day(created) : ''}</div>
                <div role="cell">{archived ? (flag.archivedAt ? day(Date.parse(flag.archivedAt)) : '') : lastSeen ? day(lastSeen) : 'never'}</div>
                {environments.map((env) => (
                  <div role="cell" key={env}>
                    {canSwitch ? <EnvironmentSwitch projectId={projectId} flagName={flag.name} environment={env} enabled={enabled.has(env)} /> : <Text size="sm">{enabled.has(env) ? 'on' : 'off'}</Text>}
                  </div>
                ))}
              </div>
            )
          })}
        </div>
      </div>
    </Stack>
  )
}

/** Switches a flag on or off in one environment (`POST …/environments/{environment}/on` or `/off`). */
function CreateFlagForm({ projectId, onDone }: { projectId: string; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [, setLocation] = useLocation()
  const [name, setName] = useState('')
  const [type, setType] = useState<FlagType>('release')
  const [description, setDescription] = useState('')
  const [impressionData, setImpressionData] = useState(false)
  const create = useMutation({
    mutationFn: () =>
      ok(api.POST('/api/admin/projects/{projectId}/features', { params: { path: { projectId } }, body: { name, type, impressionData, ...(description ? { description } : {}) } })),
    onSuccess: async (flag) => {
      await queryClient.invalidateQueries({ queryKey: projectKey(projectId) })
      notifications.show({ message: `Flag ${flag.name} created`, color: 'green' })
      onDone()
      setLocation(flagPath(projectId, flag.name))
    },
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        create.mutate()
      }}
    >
      <Stack>
        {create.isError && <ErrorMessage error={create.error} />}
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Select label="Type" data={[...FLAG_TYPES]} value={type} onChange={(v) => v && setType(v as FlagType)} allowDeselect={false} />
        <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <Switch label="Impression data" checked={impressionData} onChange={(e) => setImpressionData(e.currentTarget.checked)} />
        <Button type="submit" loading={create.isPending}>
          Create
        </Button>
      </Stack>
    </form>
  )
}

/** Archives the flags chosen (`POST …/archive`) after asking the server which are parents of live flags left behind (`…/archive/validate`). */
function ArchiveFlagsForm({ projectId, features, onDone }: { projectId: string; features: string[]; onDone: () => void }) {
  const queryClient = useQueryClient()
  const validation = useQuery({
    queryKey: ['archive-validate', projectId, features],
    queryFn: () => ok(api.POST('/api/admin/projects/{projectId}/archive/validate', { params: { path: { projectId } }, body: { features } })),
    gcTime: 0,
  })
  const archive = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/projects/{projectId}/archive', { params: { path: { projectId } }, body: { features } })),
    onSuccess: async () => {
      await Promise.all([queryClient.invalidateQueries({ queryKey: projectKey(projectId) }), queryClient.invalidateQueries({ queryKey: ['archived-flags', projectId] })])
      notifications.show({ message: `${features.length === 1 ? `Flag ${features[0]}` : `${features.length} flags`} archived`, color: 'green' })
      onDone()
    },
  })
  const parents = validation.data?.parentsWithChildFeatures ?? []
  return (
    <Stack>
      {validation.isError && <ErrorMessage error={validation.error} />}
      {archive.isError && <ErrorMessage error={archive.error} />}
      <Text>Archive {features.length === 1 ? 'this flag' : `these ${features.length} flags`}? SDKs stop receiving them; they can be revived from the archived flags.</Text>
      <List size="sm">
        {features.map((name) => (
          <List.Item key={name}>{name}</List.Item>
        ))}
      </List>
      {parents.length > 0 && (
        <Alert color="orange.9" title="Flags with live children" role="alert">
          {parents.join(', ')} {parents.length === 1 ? 'has' : 'have'} live child flags not archived with {parents.length === 1 ? 'it' : 'them'}: the server refuses to archive {parents.length === 1 ? 'it' : 'them'}. Select the children too, or remove their dependencies.
        </Alert>
      )}
      <Button color="red.9" disabled={validation.isPending || parents.length > 0} loading={archive.isPending} onClick={() => archive.mutate()}>
        Archive
      </Button>
    </Stack>
  )
}

/** Archiving and deleting the project (`POST /api/admin/projects/archive/{id}`, `DELETE /api/admin/projects/{id}`), then back to the projects; reviving it (`POST …/revive/{id}`). */
function useProjectLifecycle(projectId: string) {
  const queryClient = useQueryClient()
  const [, setLocation] = useLocation()
  const done = (message: string) => async () => {
    await queryClient.invalidateQueries({ queryKey: ['projects'] })
    queryClient.removeQueries({ queryKey: projectKey(projectId) })
    notifications.show({ message, color: 'green' })
    setLocation('/projects')
  }
  const archive = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/projects/archive/{projectId}', { params: { path: { projectId } } })),
    onSuccess: done(`Project ${projectId} archived`),
  })
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/api/admin/projects/{projectId}', { params: { path: { projectId } } })),
    onSuccess: done(`Project ${projectId} deleted`),
  })
  // Revived, the project's page shows it live (its flags stay archived).
  const revive = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/projects/revive/{projectId}', { params: { path: { projectId } } })),
    onSuccess: async () => {
      await Promise.all([queryClient.invalidateQueries({ queryKey: ['projects'] }), queryClient.invalidateQueries({ queryKey: projectKey(projectId) })])
      notifications.show({ message: `Project ${projectId} revived (its flags stay archived)`, color: 'green' })
    },
  })
  return { archive, remove, revive }
}
