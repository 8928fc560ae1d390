import { useState } from 'react'
import { Alert, Anchor, Badge, Button, Card, Code, Group, Stack, Text, TextInput, Textarea, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useLocation } from 'wouter'
import { api, ok, type Schemas } from '../api/client'
import { changeRequestsKey, changeRequestsPath, pendingApprovalsKey, type Change, type ChangeRequest } from '../api/change-requests'
import { useUsableContextFields } from '../api/context-fields'
import { useAllows, useMe } from '../api/session'
import { Dialog } from '../components/dialog'
import { ErrorMessage } from '../components/error-message'
import { Loading } from '../components/loading'
import { ContextBuilder, EMPTY_CONTEXT, PlaygroundResults, toContext, type ContextDraft } from '../components/playground'
import { diff } from '../diff'
import { flagPath } from '../paths'
import { percent } from '../variants'
import { STATE_COLORS } from './change-requests'

type ChangeView = ChangeRequest['features'][number]['changes'][number]
type Flag = Schemas['featureSchema']
type Payload = Record<string, any>

const OPEN = ['Draft', 'In review', 'Approved', 'Scheduled']
/** Where the author may still edit or discard single changes (not once Scheduled, as the server decides). */
const EDITABLE = ['Draft', 'In review', 'Approved']
type Schedule = NonNullable<ChangeRequest['schedule']>

/** A date-time as the browser's datetime-local input shows it, in the browser's time zone. */
function localInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`
}

/** A change request: its changes and what each would do, its state and approvals, the moves the caller may make, and a playground preview. */
export default function ChangeRequestPage({ projectId, id }: { projectId: string; id: string }) {
  const queryClient = useQueryClient()
  const me = useMe()
  const allows = useAllows()
  const key = ['change-request', projectId, id]
  const cr = useQuery({ queryKey: key, queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/change-requests/{id}', { params: { path: { projectId, id } } })) })
  const params = { path: { projectId, id } }
  const onSuccess = (next: ChangeRequest) => {
    queryClient.setQueryData(key, next)
    void queryClient.invalidateQueries({ queryKey: changeRequestsKey(projectId) })
    void queryClient.invalidateQueries({ queryKey: pendingApprovalsKey })
    for (const f of next.features) void queryClient.invalidateQueries({ queryKey: ['flag', projectId, f.name] })
    notifications.show({ message: `Change request ${next.id} is ${next.state}`, color: 'green' })
  }
  const move = useMutation({
    mutationFn: (state: Schemas['changeRequestStateSchema']['state']) => ok(api.PUT('/api/admin/projects/{projectId}/change-requests/{id}/state', { params, body: { state } })),
    onSuccess,
  })
  const approve = useMutation({ mutationFn: () => ok(api.POST('/api/admin/projects/{projectId}/change-requests/{id}/approve', { params })), onSuccess })
  const scheduleAt = useMutation({
    mutationFn: (at: Date) => ok(api.PUT('/api/admin/projects/{projectId}/change-requests/{id}/state', { params, body: { state: 'Scheduled', scheduledAt: at.toISOString() } })),
    onSuccess,
  })
  const [, setLocation] = useLocation()
  const discard = useMutation({
    mutationFn: () => ok(api.DELETE('/api/admin/projects/{projectId}/change-requests/{id}', { params })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: changeRequestsKey(projectId) })
      notifications.show({ message: `Change request ${id} discarded`, color: 'green' })
      setLocation(changeRequestsPath(projectId))
    },
  })
  if (cr.isPending) return <Loading />
  if (cr.isError) return <ErrorMessage error={cr.error} />
  const c = cr.data
  const isAuthor = me.data?.user.id === c.createdBy.id
  const mayReview = !isAuthor && allows('UPDATE_FEATURE_ENVIRONMENT', projectId, c.environment)
  const approvedByMe = c.approvals.some((a) => a.createdBy.id === me.data?.user.id)
  const error = move.error ?? approve.error ?? scheduleAt.error ?? discard.error
  const busy = move.isPending || approve.isPending || scheduleAt.isPending || discard.isPending
  const mayApply = allows('UPDATE_FEATURE_ENVIRONMENT', projectId, c.environment)
  const mayChange = isAuthor || allows('ADMIN')
  const changeCount = c.features.reduce((n, f) => n + f.changes.length, 0)
  return (
    <Stack>
      <div>
        <Anchor component={Link} href={changeRequestsPath(projectId)} size="sm">
          ← Change requests of {projectId}
        </Anchor>
        <Title order={1}>
          {/* A title left as the server's default ("Change request #1") is not said twice. */}
          Change request #{c.id}
          {c.title && c.title !== `Change request #${c.id}` ? `: ${c.title}` : ''}
        </Title>
        <Group gap="xs">
          <Badge color={STATE_COLORS[c.state]}>{c.state}</Badge>
          <Text size="sm">in {c.environment}</Text>
          <Text size="sm">
            by {c.createdBy.username}, {new Date(c.createdAt).toLocaleString()}
          </Text>
        </Group>
      </div>
      <Card withBorder component="section" aria-label="Review">
        <Text size="sm">
          Approvals: {c.approvals.length} of {c.minApprovals} needed
          {c.approvals.length > 0 ? ` (${c.approvals.map((a) => a.createdBy.username).join(', ')})` : ''}
        </Text>
        {error && <ErrorMessage error={error} title={error instanceof Error && 'status' in error && error.status === 409 ? 'This change request cannot be applied as it is' : undefined} />}
        <Group mt="sm">
          {c.state === 'Draft' && isAuthor && (
            <Button loading={busy} onClick={() => move.mutate('In review')}>
              Send to review
            </Button>
          )}
          {c.state === 'In review' && mayReview && !approvedByMe && (
            <Button loading={busy} onClick={() => approve.mutate()}>
              Approve
            </Button>
          )}
          {(c.state === 'Approved' || c.state === 'Scheduled') && mayApply && (
            <Button loading={busy} onClick={() => (c.state === 'Approved' || window.confirm(`Apply change request ${c.id} now, ignoring its schedule?`)) && move.mutate('Applied')}>
              {c.state === 'Scheduled' ? 'Apply now' : 'Apply changes'}
            </Button>
          )}
          {(c.state === 'In review' || c.state === 'Approved' || c.state === 'Scheduled') && mayReview && (
            <Button loading={busy} color="red" variant="light" onClick={() => window.confirm(`Reject change request ${c.id}?`) && move.mutate('Rejected')}>
              Reject
            </Button>
          )}
          {OPEN.includes(c.state) && c.state !== 'Draft' && mayChange && (
            <Button loading={busy} variant="default" onClick={() => window.confirm(`Cancel change request ${c.id}?`) && move.mutate('Cancelled')}>
              Cancel change request
            </Button>
          )}
          {c.state === 'Draft' && mayChange && (
            <Button loading={busy} variant="outline" color="red.9" onClick={() => window.confirm(`Discard the draft ${c.id} and its changes?`) && discard.mutate()}>
              Discard draft
            </Button>
          )}
        </Group>
        {c.schedule && <ScheduleStatus schedule={c.schedule} />}
        {(c.state === 'Approved' || c.state === 'Scheduled') && mayApply && <ScheduleForm schedule={c.schedule} busy={busy} onSchedule={(at) => scheduleAt.mutate(at)} />}
      </Card>
      <Title order={2} size="h3">
        Changes
      </Title>
      {c.features.map((f) => (
        <FeatureChanges
          key={f.name}
          projectId={projectId}
          environment={c.environment}
          feature={f}
          applied={!OPEN.includes(c.state)}
          editable={EDITABLE.includes(c.state) && mayChange}
          discardable={EDITABLE.includes(c.state) && mayChange && changeCount > 1}
          changeRequestId={c.id}
          onChanged={onSuccess}
        />
      ))}
      {OPEN.includes(c.state) && <Preview id={c.id} projectId={projectId} />}
    </Stack>
  )
}

/** How the schedule stands: when, by whom, and why it failed or was suspended. */
function ScheduleStatus({ schedule }: { schedule: Schedule }) {
  const when = new Date(schedule.scheduledAt).toLocaleString()
  if (schedule.status === 'pending') {
    return (
      <Text size="sm" mt="sm">
        Scheduled to be applied at {when} (by {schedule.scheduledBy.username}, with their access).
      </Text>
    )
  }
  return (
    <Alert mt="sm" color="red" variant="light" title={schedule.status === 'failed' ? `Applying it at ${when} failed` : 'Its schedule is suspended'}>
      <Text size="sm" c="dark.9">
        {schedule.reason} Reschedule it, apply it now, or reject or cancel it.
      </Text>
    </Alert>
  )
}

/** A time to apply the change request at (the browser's time zone): a native date-time input. */
function ScheduleForm({ schedule, busy, onSchedule }: { schedule?: Schedule; busy: boolean; onSchedule: (at: Date) => void }) {
  const [value, setValue] = useState(() => localInput(schedule ? new Date(schedule.scheduledAt) : new Date(Date.now() + 60 * 60_000)))
  const at = new Date(value)
  const past = Number.isNaN(at.getTime()) || at.getTime() <= Date.now()
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (!past) onSchedule(at)
      }}
    >
      <Group mt="sm" align="end">
        <TextInput
          type="datetime-local"
          label={schedule ? 'Reschedule for' : 'Schedule for'}
          description={`Your browser's time zone (${Intl.DateTimeFormat().resolvedOptions().timeZone})`}
          value={value}
          onChange={(e) => setValue(e.currentTarget.value)}
          error={value && past ? 'Choose a time in the future' : undefined}
          required
        />
        <Button type="submit" variant="light" loading={busy} disabled={past}>
          {schedule ? 'Reschedule' : 'Schedule'}
        </Button>
      </Group>
    </form>
  )
}

function FeatureChanges({
  projectId,
  environment,
  feature,
  applied,
  editable,
  discardable,
  changeRequestId,
  onChanged,
}: {
  projectId: string
  environment: string
  feature: ChangeRequest['features'][number]
  applied: boolean
  editable: boolean
  discardable: boolean
  changeRequestId: number
  onChanged: (next: ChangeRequest) => void
}) {
  const flag = useQuery({
    queryKey: ['flag', projectId, feature.name],
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}', { params: { path: { projectId, featureName: feature.name } } })),
    enabled: !applied,
    retry: false,
  })
  return (
    <Card withBorder component="section" aria-label={`Changes to ${feature.name}`}>
      <Anchor component={Link} href={flagPath(projectId, feature.name)} fw={600}>
        {feature.name}
      </Anchor>
      <Stack gap="xs" mt="xs">
        {feature.changes.map((ch) => (
          <div key={ch.id}>
            <ChangeItem change={ch} flag={applied ? undefined : flag.data} environment={environment} />
            {(editable || discardable) && (
              <ChangeActions projectId={projectId} changeRequestId={changeRequestId} feature={feature.name} change={ch} editable={editable} discardable={discardable} onChanged={onChanged} />
            )}
          </div>
        ))}
      </Stack>
    </Card>
  )
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))
const variantsText = (vs: Payload[]) => (vs.length === 0 ? 'no variants' : vs.map((v) => `${v.name}${v.weightType === 'fix' ? ` ${percent(v.weight)}` : ''}`).join(', '))

/** In words, what the change would do. */
export function describeChange(ch: ChangeView): string {
  const p = ch.payload as Payload
  switch (ch.action) {
    case 'updateEnabled':
      return `Turn the flag ${p.enabled ? 'on' : 'off'}`
    case 'addStrategy':
      return `Add the strategy ${p.title || p.name}${p.parameters?.rollout ? ` (rollout ${p.parameters.rollout}%)` : ''}${p.constraints?.length ? ` with ${p.constraints.length} constraint(s)` : ''}`
    case 'updateStrategy':
      return `Change the strategy ${p.title || p.name}`
    case 'deleteStrategy':
      return `Delete the strategy ${p.id}`
    case 'patchVariant':
      return `Set the variants to ${variantsText(p.variants ?? [])}`
    case 'addDependency':
      return `Depend on ${p.feature} being ${p.enabled === false ? 'disabled' : 'enabled'}${p.variants?.length ? ` with variant ${p.variants.join(' or ')}` : ''}`
    case 'deleteDependency':
      return `Stop depending on ${p.feature}`
    case 'archiveFeature':
      return 'Archive the flag'
    default:
      return ch.action
  }
}

/** A change, in words, and where it replaces something, the difference it would make to what is there now. */
function ChangeItem({ change, flag, environment }: { change: ChangeView; flag?: Flag; environment: string }) {
  const p = change.payload as Payload
  const env = flag?.environments.find((e) => e.name === environment)
  const strategy = change.action === 'updateStrategy' || change.action === 'deleteStrategy' ? env?.strategies.find((s) => s.id === p.id) : undefined
  const current = change.action === 'patchVariant' ? { variants: env?.variants } : strategy
  const missing = flag && (change.action === 'updateStrategy' || change.action === 'deleteStrategy') && !strategy
  const { id: _id, ...after } = p
  const changes = change.action === 'updateStrategy' || change.action === 'patchVariant' ? diff(current ?? {}, change.action === 'patchVariant' ? p : after).filter((d) => !['featureName', 'id', 'sortOrder'].includes(d.path)) : []
  return (
    <div>
      <Text size="sm">
        {describeChange(change)}
        {change.action === 'deleteStrategy' && strategy ? ` (${strategy.title || strategy.name})` : ''}{' '}
        <Text span size="xs" c="dimmed">
          added by {change.createdBy.username}
        </Text>
      </Text>
      {missing && (
        <Text size="sm" c="red.8">
          The strategy no longer exists: applying would fail.
        </Text>
      )}
      {changes.length > 0 && (
        <Code block aria-label="Change" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
          {changes.map((d) => (d.kind === 'added' ? `+ ${d.path}: ${show(d.after)}` : d.kind === 'removed' ? `- ${d.path}: ${show(d.before)}` : `~ ${d.path}: ${show(d.before)} → ${show(d.after)}`)).join('\n')}
        </Code>
      )}
    </div>
  )
}

/** Edit a change's payload (as JSON, checked by the server as adding it is) or discard it: the author's, or an admin's. */
function ChangeActions({
  projectId,
  changeRequestId,
  feature,
  change,
  editable,
  discardable,
  onChanged,
}: {
  projectId: string
  changeRequestId: number
  feature: string
  change: ChangeView
  editable: boolean
  discardable: boolean
  onChanged: (next: ChangeRequest) => void
}) {
  const [editing, setEditing] = useState(false)
  const [text, setText] = useState('')
  const params = { path: { projectId, id: String(changeRequestId), changeId: String(change.id) } }
  const edit = useMutation({
    mutationFn: () => {
      let payload: unknown
      try {
        payload = JSON.parse(text)
      } catch {
        throw new Error('The payload is not valid JSON')
      }
      return ok(api.PUT('/api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}', { params, body: { feature, action: change.action, payload } as Change }))
    },
    onSuccess: (next) => {
      setEditing(false)
      onChanged(next)
    },
  })
  const discard = useMutation({ mutationFn: () => ok(api.DELETE('/api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}', { params })), onSuccess: onChanged })
  const label = describeChange(change)
  return (
    <>
      <Group gap="xs" mt={4}>
        {editable && (
          <Button
            size="compact-xs"
            variant="default"
            aria-label={`Edit the change: ${label}`}
            onClick={() => {
              setText(JSON.stringify(change.payload, null, 2))
              edit.reset()
              setEditing(true)
            }}
          >
            Edit
          </Button>
        )}
        {discardable && (
          <Button size="compact-xs" variant="outline" color="red.9" aria-label={`Discard the change: ${label}`} loading={discard.isPending} onClick={() => window.confirm(`Discard the change “${label}”?`) && discard.mutate()}>
            Discard
          </Button>
        )}
      </Group>
      {discard.isError && <ErrorMessage error={discard.error} />}
      <Dialog opened={editing} onClose={() => setEditing(false)} title={`Edit the change: ${label}`} size="lg">
        <form
          onSubmit={(e) => {
            e.preventDefault()
            edit.mutate()
          }}
        >
          <Stack>
            {edit.isError && <ErrorMessage error={edit.error} />}
            <Text size="sm">
              {change.action} on {feature}. Approvals given are withdrawn: the change request is reviewed again.
            </Text>
            <Textarea label="Payload (JSON)" autosize minRows={6} maxRows={20} value={text} onChange={(e) => setText(e.currentTarget.value)} styles={{ input: { fontFamily: 'monospace' } }} />
            <Button type="submit" loading={edit.isPending} w="fit-content">
              Save change
            </Button>
          </Stack>
        </form>
      </Dialog>
    </>
  )
}

/** The flags as SDKs of the environment would see them were the change request applied, for a context. */
function Preview({ id, projectId }: { id: number; projectId: string }) {
  const [context, setContext] = useState<ContextDraft>(EMPTY_CONTEXT)
  const fields = useUsableContextFields(projectId).data ?? []
  const run = useMutation({ mutationFn: () => ok(api.POST('/api/admin/playground/change-request/{id}', { params: { path: { id: String(id) } }, body: { context: toContext(context) } })) })
  return (
    <Card withBorder component="section" aria-label="Preview">
      <Title order={2} size="h3">
        Preview in the playground
      </Title>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          run.mutate()
        }}
      >
        <Stack mt="sm">
          <ContextBuilder value={context} onChange={setContext} fields={fields} />
          <Button type="submit" loading={run.isPending} disabled={!context.appName} w="fit-content">
            Preview
          </Button>
        </Stack>
      </form>
      {run.isError && <ErrorMessage error={run.error} />}
      {run.data && <PlaygroundResults response={run.data} />}
    </Card>
  )
}
