import { useState } from 'react'
import { Anchor, Badge, Button, Card, Code, Group, Stack, Text, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ok, type Schemas } from '../api/client'
import { changeRequestsKey, changeRequestsPath, type ChangeRequest } from '../api/change-requests'
import { useAllows, useMe } from '../api/session'
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

const OPEN = ['Draft', 'In review', 'Approved']

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
    for (const f of next.features) void queryClient.invalidateQueries({ queryKey: ['flag', projectId, f.name] })
    notifications.show({ message: `Change request ${next.id} is ${next.state}`, color: 'green' })
  }
  const move = useMutation({
    mutationFn: (state: Schemas['changeRequestStateSchema']['state']) => ok(api.PUT('/api/admin/projects/{projectId}/change-requests/{id}/state', { params, body: { state } })),
    onSuccess,
  })
  const approve = useMutation({ mutationFn: () => ok(api.POST('/api/admin/projects/{projectId}/change-requests/{id}/approve', { params })), onSuccess })
  if (cr.isPending) return <Loading />
  if (cr.isError) return <ErrorMessage error={cr.error} />
  const c = cr.data
  const isAuthor = me.data?.user.id === c.createdBy.id
  const mayReview = !isAuthor && allows('UPDATE_FEATURE_ENVIRONMENT', projectId, c.environment)
  const approvedByMe = c.approvals.some((a) => a.createdBy.id === me.data?.user.id)
  const error = move.error ?? approve.error
  const busy = move.isPending || approve.isPending
  return (
    <Stack>
      <div>
        <Anchor component={Link} href={changeRequestsPath(projectId)} size="sm">
          ← Change requests of {projectId}
        </Anchor>
        <Title order={1}>
          Change request #{c.id}: {c.title}
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
          {c.state === 'Approved' && allows('UPDATE_FEATURE_ENVIRONMENT', projectId, c.environment) && (
            <Button loading={busy} onClick={() => move.mutate('Applied')}>
              Apply changes
            </Button>
          )}
          {(c.state === 'In review' || c.state === 'Approved') && mayReview && (
            <Button loading={busy} color="red" variant="light" onClick={() => window.confirm(`Reject change request ${c.id}?`) && move.mutate('Rejected')}>
              Reject
            </Button>
          )}
          {OPEN.includes(c.state) && (isAuthor || allows('ADMIN')) && (
            <Button loading={busy} variant="default" onClick={() => window.confirm(`Cancel change request ${c.id}?`) && move.mutate('Cancelled')}>
              Cancel change request
            </Button>
          )}
        </Group>
      </Card>
      <Title order={2} size="h3">
        Changes
      </Title>
      {c.features.map((f) => (
        <FeatureChanges key={f.name} projectId={projectId} environment={c.environment} feature={f} applied={!OPEN.includes(c.state)} />
      ))}
      {OPEN.includes(c.state) && <Preview id={c.id} />}
    </Stack>
  )
}

function FeatureChanges({ projectId, environment, feature, applied }: { projectId: string; environment: string; feature: ChangeRequest['features'][number]; applied: boolean }) {
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
          <ChangeItem key={ch.id} change={ch} flag={applied ? undefined : flag.data} environment={environment} />
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

/** The flags as SDKs of the environment would see them were the change request applied, for a context. */
function Preview({ id }: { id: number }) {
  const [context, setContext] = useState<ContextDraft>(EMPTY_CONTEXT)
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
          <ContextBuilder value={context} onChange={setContext} />
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
