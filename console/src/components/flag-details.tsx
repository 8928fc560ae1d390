import { useState } from 'react'
import { Autocomplete, Badge, Button, Card, Group, Select, Stack, Switch, TagsInput, Text, TextInput, Timeline, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ok, type Schemas } from '../api/client'
import { addToDraft, changeRequestPath, changeRequestsKey, useChangeRequestEnvironments } from '../api/change-requests'
import { useAllows } from '../api/session'
import { ServerSelect, PICKER_PAGE } from './server-select'
import { flagPath } from '../paths'
import { ErrorMessage } from './error-message'
import { EventCard } from './event-card'
import { Loading } from './loading'
import { BesideInput } from './beside-input'

type Flag = Schemas['featureSchema']

export const flagKey = (projectId: string, flagName: string) => ['flag', projectId, flagName] as const
const notifyRefused = (error: Error) => notifications.show({ title: 'The change was refused', message: error.message, color: 'red' })

/** The flag's tags: remove one, or add one of a registered type (a new value is created by tagging). */
export function FlagTags({ flag }: { flag: Flag }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const editable = allows('UPDATE_FEATURE', flag.project)
  const tagTypes = useQuery({ queryKey: ['tag-types'], queryFn: () => ok(api.GET('/api/admin/tag-types')), enabled: editable, staleTime: 60_000 })
  const tags = useQuery({ queryKey: ['tags'], queryFn: () => ok(api.GET('/api/admin/tags')), enabled: editable, staleTime: 10_000 })
  const [type, setType] = useState<string | null>('simple')
  const [value, setValue] = useState('')
  const refresh = () => Promise.all([queryClient.invalidateQueries({ queryKey: flagKey(flag.project, flag.name) }), queryClient.invalidateQueries({ queryKey: ['tags'] })])
  const add = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/features/{featureName}/tags', { params: { path: { featureName: flag.name } }, body: { type: type ?? '', value: value.trim() } })),
    onSuccess: async () => {
      setValue('')
      await refresh()
    },
  })
  const remove = useMutation({
    mutationFn: (tag: { type: string; value: string }) => ok(api.DELETE('/api/admin/features/{featureName}/tags/{type}/{value}', { params: { path: { featureName: flag.name, ...tag } } })),
    onSuccess: refresh,
    onError: notifyRefused,
  })
  const existing = (tags.data?.tags ?? []).filter((t) => t.type === type).map((t) => t.value)
  return (
    <Card withBorder component="section" aria-label="Tags">
      <Title order={2} size="h4">
        Tags
      </Title>
      <Group gap="xs" mt="xs">
        {flag.tags.length === 0 && (
          <Text size="sm" c="dimmed">
            No tags.
          </Text>
        )}
        {flag.tags.map((t) => (
          <Badge key={`${t.type}:${t.value}`} variant="light" tt="none" rightSection={editable ? (
            <Button variant="transparent" size="compact-xs" p={0} aria-label={`Remove tag ${t.type}:${t.value}`} onClick={() => remove.mutate(t)}>
              ×
            </Button>
          ) : undefined}>
            {t.type}:{t.value}
          </Badge>
        ))}
      </Group>
      {editable && (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            if (type && value.trim()) add.mutate()
          }}
        >
          <Group align="end" mt="sm">
            <Select label="Tag type" data={(tagTypes.data?.tagTypes ?? []).map((t) => t.name)} value={type} onChange={setType} allowDeselect={false} w={160} />
            <Autocomplete label="Tag value" description="An existing value, or a new one" data={existing} value={value} onChange={setValue} w={220} />
            <Button type="submit" disabled={!type || !value.trim()} loading={add.isPending}>
              Add tag
            </Button>
          </Group>
          {add.isError && <ErrorMessage error={add.error} />}
        </form>
      )}
    </Card>
  )
}

/**
 * The parent flags this one depends on: add (enabled or disabled, with variants) and remove. Where an
 * environment needs change requests from the caller the change goes into their draft there.
 */
export function FlagDependencies({ flag }: { flag: Flag }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const editable = allows('UPDATE_FEATURE', flag.project)
  const changeRequests = useChangeRequestEnvironments(flag.project)
  const draftEnv = changeRequests.protectedEnvs[0]
  const [parent, setParent] = useState<string | null>(null)
  const [enabled, setEnabled] = useState(true)
  const [variants, setVariants] = useState<string[]>([])
  const path = { projectId: flag.project, child: flag.name }
  const done = async (what: string, cr?: Schemas['changeRequestSchema']) => {
    if (cr) {
      notifications.show({ message: `${what} added to change request ${cr.id} (${cr.environment})`, color: 'blue' })
      await queryClient.invalidateQueries({ queryKey: changeRequestsKey(flag.project) })
    }
    await queryClient.invalidateQueries({ queryKey: flagKey(flag.project, flag.name) })
  }
  const add = useMutation({
    mutationFn: async () => {
      const body = { feature: parent ?? '', enabled, ...(enabled && variants.length > 0 ? { variants } : {}) }
      if (draftEnv) return addToDraft(flag.project, draftEnv, [{ feature: flag.name, action: 'addDependency', payload: body }])
      await ok(api.POST('/api/admin/projects/{projectId}/features/{child}/dependencies', { params: { path }, body }))
      return undefined
    },
    onSuccess: async (cr) => {
      setParent(null)
      setVariants([])
      await done('The dependency', cr)
    },
  })
  const remove = useMutation({
    mutationFn: async (parentName: string) => {
      if (draftEnv) return addToDraft(flag.project, draftEnv, [{ feature: flag.name, action: 'deleteDependency', payload: { feature: parentName } }])
      await ok(api.DELETE('/api/admin/projects/{projectId}/features/{child}/dependencies/{parent}', { params: { path: { ...path, parent: parentName } } }))
      return undefined
    },
    onSuccess: (cr) => done('Removing the dependency', cr),
    onError: notifyRefused,
  })
  // Parents are flags of the same project: the flag search finds them by name, description or tag as the user types.
  const searchParents = async (text: string) => {
    const query = { project: `IS:${flag.project}`, sortBy: 'name', limit: String(PICKER_PAGE + 1 + flag.dependencies.length), ...(text.trim() ? { query: text.trim() } : {}) }
    const found = await ok(api.GET('/api/admin/search/features', { params: { query } }))
    return found.features.map((f) => f.name).filter((n) => n !== flag.name && !flag.dependencies.some((d) => d.feature === n)).slice(0, PICKER_PAGE)
  }
  return (
    <Card withBorder component="section" aria-label="Dependencies">
      <Title order={2} size="h4">
        Dependencies
      </Title>
      <Stack gap={4} mt="xs">
        {flag.dependencies.length === 0 && (
          <Text size="sm" c="dimmed">
            No parent flag: this flag is evaluated on its own.
          </Text>
        )}
        {flag.dependencies.map((d) => (
          <Group key={d.feature} gap="xs">
            <Text size="sm">
              Needs <Link href={flagPath(flag.project, d.feature)}>{d.feature}</Link> {d.enabled ? 'enabled' : 'disabled'}
              {d.variants.length > 0 ? ` with variant ${d.variants.join(' or ')}` : ''}
            </Text>
            {editable && (
              <Button size="compact-xs" variant="light" color="red" onClick={() => remove.mutate(d.feature)}>
                Remove dependency on {d.feature}
              </Button>
            )}
          </Group>
        ))}
        {flag.children.length > 0 && <Text size="sm">Flags depending on this one: {flag.children.join(', ')}</Text>}
      </Stack>
      {editable && (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            if (parent) add.mutate()
          }}
        >
          <Group align="end" mt="sm">
            <ServerSelect label="Parent flag" placeholder="Type to search" queryKey={['project', flag.project, 'parent-candidates', flag.name]} search={searchParents} value={parent} onChange={setParent} w={220} />
            <BesideInput>
              <Switch label="Parent enabled" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
            </BesideInput>
            {enabled && <TagsInput label="Parent variants" description="Any variant when empty" value={variants} onChange={setVariants} w={220} />}
            <Button type="submit" disabled={!parent} loading={add.isPending}>
              {draftEnv ? 'Propose dependency' : 'Add dependency'}
            </Button>
          </Group>
          {draftEnv && (
            <Text size="sm" c="dimmed" mt={4}>
              {draftEnv} requires change requests: dependency changes go into your draft there.
            </Text>
          )}
          {add.isError && <ErrorMessage error={add.error} />}
        </form>
      )}
    </Card>
  )
}

/** The lifecycle: the stages the flag went through, and marking it completed (kept or discarded) or not. */
export function FlagLifecycle({ flag }: { flag: Flag }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const editable = allows('UPDATE_FEATURE', flag.project)
  const params = { path: { projectId: flag.project, featureName: flag.name } }
  const stages = useQuery({ queryKey: ['lifecycle', flag.project, flag.name, flag.lifecycle.stage], queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}/lifecycle', { params })) })
  const [status, setStatus] = useState<'kept' | 'discarded'>('kept')
  const [statusValue, setStatusValue] = useState('')
  const refresh = () => queryClient.invalidateQueries({ queryKey: flagKey(flag.project, flag.name) })
  const complete = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete', { params, body: { status, ...(statusValue ? { statusValue } : {}) } })),
    onSuccess: refresh,
  })
  const uncomplete = useMutation({ mutationFn: () => ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete', { params })), onSuccess: refresh })
  const error = complete.error ?? uncomplete.error
  return (
    <Card withBorder component="section" aria-label="Lifecycle">
      <Title order={2} size="h4">
        Lifecycle: {flag.lifecycle.stage}
      </Title>
      {stages.isError ? (
        <ErrorMessage error={stages.error} />
      ) : (
        <LifecycleTimeline current={flag.lifecycle.stage} stages={stages.data ?? []} />
      )}
      {error && <ErrorMessage error={error} />}
      {editable && flag.lifecycle.stage !== 'archived' && (
        <Group align="end" mt="sm">
          {flag.lifecycle.stage === 'completed' ? (
            <Button variant="default" onClick={() => uncomplete.mutate()} loading={uncomplete.isPending}>
              Mark not completed
            </Button>
          ) : (
            <>
              <Select
                label="Outcome"
                data={[
                  { value: 'kept', label: 'Kept in the code' },
                  { value: 'discarded', label: 'Discarded from the code' },
                ]}
                value={status}
                onChange={(v) => v && setStatus(v as 'kept' | 'discarded')}
                allowDeselect={false}
                w={200}
              />
              <TextInput label="What was kept" description="Optional, e.g. the winning variant" value={statusValue} onChange={(e) => setStatusValue(e.currentTarget.value)} />
              <Button variant="default" onClick={() => complete.mutate()} loading={complete.isPending}>
                Mark completed
              </Button>
            </>
          )}
        </Group>
      )}
    </Card>
  )
}

const STAGES = [
  { stage: 'initial', label: 'Define', hint: 'created, no metrics yet' },
  { stage: 'pre-live', label: 'Develop', hint: 'seen in a non-production environment' },
  { stage: 'live', label: 'Production', hint: 'seen in production' },
  { stage: 'completed', label: 'Cleanup', hint: 'marked completed' },
  { stage: 'archived', label: 'Archived', hint: 'archived' },
] as const

/** The five stages as a timeline: those the flag went through with the date it entered each, the current one marked. */
function LifecycleTimeline({ current, stages }: { current: string; stages: readonly { stage: string; enteredStageAt: string; status?: string }[] }) {
  const active = STAGES.findIndex((s) => s.stage === current)
  return (
    <Timeline active={active} bulletSize={16} lineWidth={2} mt="sm" aria-label="Lifecycle stages">
      {STAGES.map((s, i) => {
        const entered = stages.find((x) => x.stage === s.stage)
        return (
          <Timeline.Item
            key={s.stage}
            data-stage={s.stage}
            aria-current={i === active ? 'step' : undefined}
            title={
              <Text size="sm" fw={i === active ? 700 : 500} c={i > active ? 'dimmed' : undefined}>
                {s.stage} <Text span size="xs" c="dimmed">({s.label})</Text>
              </Text>
            }
          >
            <Text size="xs" c="dimmed">
              {entered ? `${new Date(entered.enteredStageAt).toLocaleString()}${entered.status ? ` · ${entered.status}` : ''}` : i > active ? s.hint : 'skipped'}
            </Text>
          </Timeline.Item>
        )
      })}
    </Timeline>
  )
}

/** The open change requests of the project that touch this flag, with a link to each. */
export function PendingChangeRequests({ flag }: { flag: Flag }) {
  const list = useQuery({
    queryKey: changeRequestsKey(flag.project),
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/change-requests', { params: { path: { projectId: flag.project } } })),
  })
  const open = (list.data ?? []).filter((cr) => ['Draft', 'In review', 'Approved'].includes(cr.state) && cr.features.some((f) => f.name === flag.name))
  if (open.length === 0) return null
  return (
    <Card withBorder component="section" aria-label="Open change requests" bg="blue.0">
      <Title order={2} size="h4">
        Open change requests
      </Title>
      {open.map((cr) => (
        <Text size="sm" key={cr.id}>
          <Link href={changeRequestPath(cr.project, cr.id)}>
            #{cr.id} {cr.title}
          </Link>{' '}
          · {cr.environment} · {cr.state} · by {cr.createdBy.username}
        </Text>
      ))}
    </Card>
  )
}

const HISTORY_PAGE = 20

/** The flag's events, newest first, each with its change. */
export function FlagHistory({ flag }: { flag: Flag }) {
  const [limit, setLimit] = useState(HISTORY_PAGE)
  const events = useQuery({
    queryKey: ['flag-events', flag.name, limit, flag],
    queryFn: () => ok(api.GET('/api/admin/events/{featureName}', { params: { path: { featureName: flag.name }, query: { limit: String(limit) } } })),
  })
  return (
    <Stack component="section" aria-label="History">
      <Title order={2} size="h3">
        History
      </Title>
      {events.isPending ? (
        <Loading />
      ) : events.isError ? (
        <ErrorMessage error={events.error} />
      ) : (
        <>
          {events.data.events.map((e) => (
            <EventCard key={e.id} event={e} />
          ))}
          {events.data.totalEvents > events.data.events.length && (
            <Button variant="default" w="fit-content" onClick={() => setLimit(limit + HISTORY_PAGE)}>
              Older events
            </Button>
          )}
        </>
      )}
    </Stack>
  )
}
