import { FavoriteStar } from '../components/favorite-star'
import { useState } from 'react'
import { ActionIcon, Anchor, Badge, Button, Card, Grid, Group, NumberInput, Select, Stack, Switch, Text, TextInput, Textarea, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { Dialog } from '../components/dialog'
import { ErrorMessage } from '../components/error-message'
import { Loading } from '../components/loading'
import { ConstraintEditor } from '../components/constraint-editor'
import { SegmentPicker } from '../components/segment-picker'
import { FlagDependencies, FlagHistory, FlagLifecycle, flagKey, FlagTags, PendingChangeRequests } from '../components/flag-details'
import { FlagActions } from '../components/flag-actions'
import { FlagLinks } from '../components/flag-links'
import { ParameterInput, parameterProblem, useStrategyTypes } from '../components/strategy-parameters'
import { VariantsEditor } from '../components/variants-editor'
import { StrategySummary, VariantBar } from '../components/strategy-card'
import { ProtectedBadge } from '../components/protected-badge'
import { BesideInput } from '../components/beside-input'
import { FlagMetrics } from '../components/flag-metrics'
import { addToDraft, changeRequestsKey, useChangeRequestEnvironments, type Change } from '../api/change-requests'
import { fromApiVariant, percent, toApiVariant, variantProblems, withWeights, type VariantDraft } from '../variants'
import { constraintProblem, fromApiConstraint, toApiConstraint, type ConstraintDraft } from '../constraints'
import { FLAG_TYPES, type FlagType } from '../flag-types'
import { projectPath } from '../paths'
import { EnvironmentSwitch } from '../components/environment-switch'
import { projectKey } from '../api/projects'

type Flag = Schemas['featureSchema']
type FlagEnvironment = Schemas['featureEnvironmentSchema']
type Strategy = Schemas['featureStrategySchema']

/**
 * A flag: its metadata, tags, links, lifecycle and dependencies; per environment its switch, strategies and variants;
 * its history. Where an environment requires change requests of the caller, its changes go into their draft.
 */
export default function FlagPage({ projectId, flagName }: { projectId: string; flagName: string }) {
  const flag = useQuery({
    queryKey: flagKey(projectId, flagName),
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}', { params: { path: { projectId, featureName: flagName } } })),
  })
  if (flag.isPending) return <Loading />
  if (flag.isError) return <ErrorMessage error={flag.error} />
  // Environments first (each card with its switch, strategies and variants, above the fold), metrics and history below
  // them; metadata, lifecycle, tags, links and dependencies in the side panel (below the environments on narrow screens).
  return (
    <Stack gap="sm">
      <Group justify="space-between" align="end" wrap="wrap" gap="xs">
        <div>
          <Anchor component={Link} href={projectPath(projectId)} size="sm">
            ← {projectId}
          </Anchor>
          <Group gap="xs" wrap="wrap">
            <Group gap={4} wrap="nowrap">
              <Title order={1} size="h2">
                {flag.data.name}
              </Title>
              <FavoriteStar projectId={projectId} flagName={flag.data.name} favorite={flag.data.favorite} />
            </Group>
            <Badge variant="light">{flag.data.type}</Badge>
            <Badge variant="light" color="gray">
              {flag.data.lifecycle.stage}
            </Badge>
            {flag.data.stale && <Badge color="red.9">stale</Badge>}
          </Group>
        </div>
        <FlagActions flag={flag.data} />
      </Group>
      <PendingChangeRequests flag={flag.data} />
      <Grid gap="md">
        <Grid.Col span={{ base: 12, lg: 8 }}>
          <Stack gap="sm" component="section" aria-label="Environments">
            <VisuallyHidden component="h2">Environments</VisuallyHidden>
            {flag.data.environments.map((env) => (
              <EnvironmentCard key={env.name} flag={flag.data} environment={env} />
            ))}
            <FlagMetrics flag={flag.data} />
          </Stack>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 4 }}>
          <Stack gap="sm" component="aside" aria-label="Flag details">
            <Metadata flag={flag.data} />
            <FlagLifecycle flag={flag.data} />
            <FlagTags flag={flag.data} />
            <FlagLinks flag={flag.data} />
            <FlagDependencies flag={flag.data} />
          </Stack>
        </Grid.Col>
      </Grid>
      <FlagHistory flag={flag.data} />
    </Stack>
  )
}

/** "5 minutes ago", "3 days ago": how long ago an SDK last reported the flag. */
function ago(iso: string, now = Date.now()) {
  const minutes = Math.max(0, Math.round((now - Date.parse(iso)) / 60_000))
  if (minutes < 1) return 'just now'
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'} ago`
  const hours = Math.round(minutes / 60)
  if (hours < 48) return `${hours} hour${hours === 1 ? '' : 's'} ago`
  return `${Math.round(hours / 24)} days ago`
}

/** Description, type, stale and impression data, saved as a JSON Patch of what changed (`PATCH …/features/{featureName}`). */
function Metadata({ flag }: { flag: Flag }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const editable = allows('UPDATE_FEATURE', flag.project)
  const [description, setDescription] = useState(flag.description ?? '')
  const [type, setType] = useState<FlagType>(flag.type)
  const [stale, setStale] = useState(flag.stale)
  const [impressionData, setImpressionData] = useState(flag.impressionData)
  const patch = [
    ...(description !== (flag.description ?? '') ? [{ op: 'replace' as const, path: '/description', value: description }] : []),
    ...(type !== flag.type ? [{ op: 'replace' as const, path: '/type', value: type }] : []),
    ...(stale !== flag.stale ? [{ op: 'replace' as const, path: '/stale', value: stale }] : []),
    ...(impressionData !== flag.impressionData ? [{ op: 'replace' as const, path: '/impressionData', value: impressionData }] : []),
  ]
  const save = useMutation({
    mutationFn: () =>
      ok(api.PATCH('/api/admin/projects/{projectId}/features/{featureName}', { params: { path: { projectId: flag.project, featureName: flag.name } }, body: patch })),
    onSuccess: (saved) => {
      queryClient.setQueryData(flagKey(flag.project, flag.name), saved)
      void queryClient.invalidateQueries({ queryKey: projectKey(flag.project) })
      notifications.show({ message: 'Flag saved', color: 'green' })
    },
  })
  if (!editable) {
    return (
      <Card withBorder>
        <Stack gap={4}>
          <Text>{flag.description || 'No description.'}</Text>
          <Text size="sm">
            Type {flag.type} · {flag.stale ? 'stale' : 'not stale'} · impression data {flag.impressionData ? 'on' : 'off'}
          </Text>
        </Stack>
      </Card>
    )
  }
  return (
    <Card withBorder>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          save.mutate()
        }}
      >
        <Stack gap="sm">
          {save.isError && <ErrorMessage error={save.error} />}
          <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
          <Group align="end" gap="md">
            <Select label="Type" data={[...FLAG_TYPES]} value={type} onChange={(v) => v && setType(v as FlagType)} allowDeselect={false} w={200} />
            <BesideInput>
              <Switch label="Stale" checked={stale} onChange={(e) => setStale(e.currentTarget.checked)} />
            </BesideInput>
            <BesideInput>
              <Switch label="Impression data" checked={impressionData} onChange={(e) => setImpressionData(e.currentTarget.checked)} />
            </BesideInput>
          </Group>
          <Button type="submit" disabled={patch.length === 0} loading={save.isPending} w="fit-content">
            Save
          </Button>
        </Stack>
      </form>
    </Card>
  )
}

/**
 * A write to the flag in an environment: direct, or where the environment requires change requests of the
 * caller, the same change added to their draft there (the API's rule: src/change-requests/guard.ts).
 */
function useEnvironmentWrite(flag: Flag, environment: string) {
  const queryClient = useQueryClient()
  const changeRequests = useChangeRequestEnvironments(flag.project)
  const viaChangeRequest = changeRequests.viaChangeRequest(environment)
  const refresh = () => Promise.all([queryClient.invalidateQueries({ queryKey: flagKey(flag.project, flag.name) }), queryClient.invalidateQueries({ queryKey: projectKey(flag.project) })])
  async function write(direct: () => Promise<unknown>, change: Change) {
    if (!viaChangeRequest) {
      await direct()
      await refresh()
      return
    }
    const cr = await addToDraft(flag.project, environment, [change])
    notifications.show({ message: `Added to your draft change request ${cr.id} in ${environment}`, color: 'blue' })
    await queryClient.invalidateQueries({ queryKey: changeRequestsKey(flag.project) })
  }
  return { viaChangeRequest, write, refresh }
}

const strategyBody = (s: Strategy) => ({
  name: s.name,
  title: s.title,
  disabled: s.disabled,
  parameters: s.parameters,
  constraints: s.constraints.map((c) => toApiConstraint(fromApiConstraint(c))),
  segments: s.segments,
  variants: s.variants,
})

function EnvironmentCard({ flag, environment }: { flag: Flag; environment: FlagEnvironment }) {
  const allows = useAllows()
  const [editing, setEditing] = useState<Strategy | 'new'>()
  const project = flag.project
  const { viaChangeRequest, write, refresh } = useEnvironmentWrite(flag, environment.name)
  const { requiresChangeRequests } = useChangeRequestEnvironments(project)
  const types = useStrategyTypes()
  const params = { path: { projectId: project, featureName: flag.name, environment: environment.name } }
  const strategies = [...environment.strategies].sort((a, b) => a.sortOrder - b.sortOrder)
  const segments = useSegmentsOf(strategies.flatMap((s) => s.segments))
  const onError = (error: Error) => notifications.show({ title: 'The change was refused', message: error.message, color: 'red' })

  const reorder = useMutation({
    mutationFn: (ids: string[]) =>
      ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order', { params, body: ids.map((id, sortOrder) => ({ id, sortOrder })) })),
    onSuccess: refresh,
    onError,
  })
  const remove = useMutation({
    mutationFn: (id: string) =>
      write(
        () => ok(api.DELETE('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}', { params: { path: { ...params.path, strategyId: id } } })),
        { feature: flag.name, action: 'deleteStrategy', payload: { id } },
      ),
    onError,
  })
  const setDisabled = useMutation({
    mutationFn: (s: Strategy) => {
      const body = { ...strategyBody(s), disabled: !s.disabled }
      return write(
        () => ok(api.PUT('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}', { params: { path: { ...params.path, strategyId: s.id } }, body })),
        { feature: flag.name, action: 'updateStrategy', payload: { id: s.id, ...body } },
      )
    },
    onError,
  })
  const requestSwitch = useMutation({
    mutationFn: (enabled: boolean) => write(() => Promise.resolve(), { feature: flag.name, action: 'updateEnabled', payload: { enabled } }),
    onError,
  })
  const move = (from: number, to: number) => {
    const ids = strategies.map((s) => s.id)
    const [id] = ids.splice(from, 1)
    ids.splice(to, 0, id!)
    reorder.mutate(ids)
  }
  const canSwitch = allows('UPDATE_FEATURE_ENVIRONMENT', project, environment.name)
  const canUpdate = allows('UPDATE_FEATURE_STRATEGY', project, environment.name)
  const canDelete = allows('DELETE_FEATURE_STRATEGY', project, environment.name)

  return (
    <Card withBorder component="section" aria-label={`Environment ${environment.name}`} padding="sm">
      <Group justify="space-between">
        <Group gap="xs">
          <Title order={3} size="h4">
            {environment.name}
          </Title>
          {requiresChangeRequests(environment.name) && <ProtectedBadge environment={environment.name} mustRequest={viaChangeRequest} />}
          <Text size="xs" c="dimmed" data-last-seen={environment.name}>
            {environment.lastSeenAt ? `last seen ${ago(environment.lastSeenAt)}` : 'never seen by an SDK'}
          </Text>
        </Group>
        {canSwitch && viaChangeRequest ? (
          <Group gap="xs">
            <Badge color={environment.enabled ? 'green' : 'gray'}>{environment.enabled ? 'on' : 'off'}</Badge>
            <Button size="xs" variant="default" loading={requestSwitch.isPending} onClick={() => requestSwitch.mutate(!environment.enabled)}>
              Request to turn {environment.enabled ? 'off' : 'on'}
            </Button>
          </Group>
        ) : canSwitch ? (
          <EnvironmentSwitch projectId={project} flagName={flag.name} environment={environment.name} enabled={environment.enabled} label={environment.enabled ? 'On' : 'Off'} />
        ) : (
          <Badge color={environment.enabled ? 'green' : 'gray'}>{environment.enabled ? 'on' : 'off'}</Badge>
        )}
      </Group>
      <Stack gap="xs" mt="sm">
        {strategies.length === 0 && (
          <Text size="sm" c="dimmed">
            No strategies: switching it on adds the project's default strategy.
          </Text>
        )}
        {strategies.map((s, i) => (
          <Card key={s.id} withBorder padding="xs" component="section" aria-label={`Strategy ${s.title || s.name}`}>
            <Group justify="space-between" align="start">
              <StrategySummary strategy={s} segments={segments.data?.segments ?? []} displayName={types.data?.strategies.find((t) => t.name === s.name)?.displayName ?? undefined} />
              <Group gap={4}>
                {canUpdate && (
                  <>
                    {!viaChangeRequest && (
                      <>
                        <ActionIcon variant="default" disabled={i === 0} onClick={() => move(i, i - 1)} aria-label={`Move ${s.title || s.name} up`}>
                          ↑
                        </ActionIcon>
                        <ActionIcon variant="default" disabled={i === strategies.length - 1} onClick={() => move(i, i + 1)} aria-label={`Move ${s.title || s.name} down`}>
                          ↓
                        </ActionIcon>
                      </>
                    )}
                    <Button size="xs" variant="default" onClick={() => setDisabled.mutate(s)}>
                      {s.disabled ? 'Enable' : 'Disable'}
                    </Button>
                    <Button size="xs" variant="default" onClick={() => setEditing(s)}>
                      Edit
                    </Button>
                  </>
                )}
                {canDelete && (
                  <Button size="xs" color="red" variant="light" onClick={() => window.confirm(`Delete the strategy ${s.title || s.name}?`) && remove.mutate(s.id)}>
                    Delete
                  </Button>
                )}
              </Group>
            </Group>
          </Card>
        ))}
        {allows('CREATE_FEATURE_STRATEGY', project, environment.name) && (
          <Button size="xs" w="fit-content" onClick={() => setEditing('new')}>
            Add strategy in {environment.name}
          </Button>
        )}
      </Stack>
      <EnvironmentVariants flag={flag} environment={environment} />
      <Dialog opened={editing !== undefined} onClose={() => setEditing(undefined)} title={editing === 'new' ? `Add a strategy in ${environment.name}` : 'Edit strategy'} size="xl">
        {editing !== undefined && (
          <StrategyForm
            flag={flag}
            environment={environment.name}
            strategy={editing === 'new' ? undefined : editing}
            onDone={() => setEditing(undefined)}
          />
        )}
      </Dialog>
    </Card>
  )
}

/** The flag's variants in the environment: shown with their weights as percentages, and edited as a whole list. */
function EnvironmentVariants({ flag, environment }: { flag: Flag; environment: FlagEnvironment }) {
  const allows = useAllows()
  const [editing, setEditing] = useState(false)
  const editable = allows('UPDATE_FEATURE_ENVIRONMENT_VARIANTS', flag.project, environment.name)
  return (
    <Stack gap={4} mt="md" component="section" aria-label={`Variants in ${environment.name}`}>
      <Group justify="space-between">
        <Title order={4} size="h5">
          Variants
        </Title>
        {editable && (
          <Button size="xs" variant="default" onClick={() => setEditing(true)}>
            Edit variants in {environment.name}
          </Button>
        )}
      </Group>
      {environment.variants.length === 0 ? (
        <Text size="sm" c="dimmed">
          No variants.
        </Text>
      ) : (
        <VariantBar
          variants={environment.variants}
          label={`Variants in ${environment.name}`}
          details={(v) =>
            `${v.name}: ${percent(v.weight)} (${v.weightType === 'fix' ? 'fixed' : 'variable'}) · stickiness ${v.stickiness}` +
            `${v.payload ? ` · ${v.payload.type} payload ${v.payload.value}` : ''}` +
            (v.overrides ?? []).map((o) => ` · ${o.contextName} in ${o.values.join(', ')}`).join('')
          }
        />
      )}
      <Dialog opened={editing} onClose={() => setEditing(false)} title={`Variants of ${flag.name} in ${environment.name}`} size="xl">
        {editing && <VariantsForm flag={flag} environment={environment} onDone={() => setEditing(false)} />}
      </Dialog>
    </Stack>
  )
}

function VariantsForm({ flag, environment, onDone }: { flag: Flag; environment: FlagEnvironment; onDone: () => void }) {
  const [variants, setVariants] = useState<VariantDraft[]>(environment.variants.map(fromApiVariant))
  const { viaChangeRequest, write } = useEnvironmentWrite(flag, environment.name)
  const problems = variantProblems(variants)
  const save = useMutation({
    mutationFn: () => {
      const body = withWeights(variants).map((v) => toApiVariant(v))
      return write(
        () =>
          ok(
            api.PUT('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants', {
              params: { path: { projectId: flag.project, featureName: flag.name, environment: environment.name } },
              body,
            }),
          ),
        { feature: flag.name, action: 'patchVariant', payload: { variants: body } },
      )
    },
    onSuccess: onDone,
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (problems.length === 0) save.mutate()
      }}
    >
      <Stack>
        {save.isError && <ErrorMessage error={save.error} />}
        <VariantsEditor variants={variants} onChange={setVariants} withOverrides />
        {problems.length > 0 && variants.length > 0 && (
          <Text size="sm" c="red.8" role="status">
            {problems.join('; ')}
          </Text>
        )}
        <Button type="submit" disabled={problems.length > 0} loading={save.isPending} w="fit-content">
          {viaChangeRequest ? 'Add to change request' : 'Save variants'}
        </Button>
      </Stack>
    </form>
  )
}

/** The segments `ids` (the strategy cards show their constraints): one bounded read by id, never the whole list. */
function useSegmentsOf(ids: readonly number[]) {
  const sorted = [...new Set(ids)].sort((a, b) => a - b).slice(0, 100)
  return useQuery({
    queryKey: ['segments', 'of', sorted.join(',')],
    queryFn: () => ok(api.GET('/api/admin/segments', { params: { query: { id: sorted.join(',') } } })),
    enabled: sorted.length > 0,
    staleTime: 30_000,
  })
}

const BUILT_IN_TYPES = [
  { value: 'flexibleRollout', label: 'Gradual rollout (flexibleRollout)' },
  { value: 'default', label: 'Standard: on for everyone (default)' },
]
const STICKINESS = ['default', 'userId', 'sessionId', 'random']

/** Adds or replaces a strategy: type, title, the flexible rollout's parameters, constraints and segments. */
function StrategyForm({ flag, environment, strategy, onDone }: { flag: Flag; environment: string; strategy?: Strategy; onDone: () => void }) {
  const { viaChangeRequest, write } = useEnvironmentWrite(flag, environment)
  const [variants, setVariants] = useState<VariantDraft[]>((strategy?.variants ?? []).map(fromApiVariant))
  const [name, setName] = useState(strategy?.name ?? 'flexibleRollout')
  const [title, setTitle] = useState(strategy?.title ?? '')
  const [rollout, setRollout] = useState<string | number>(Number(strategy?.parameters.rollout ?? 100))
  const [stickiness, setStickiness] = useState(strategy?.parameters.stickiness ?? 'default')
  const [groupId, setGroupId] = useState(strategy?.parameters.groupId ?? flag.name)
  const types = useStrategyTypes()
  const [custom, setCustom] = useState<Record<string, string>>(strategy?.parameters ?? {})
  // Deprecated types are not offered, except to a strategy that already has that type (the server accepts them: as in
  // Unleash, deprecation only hides a type from the choices). Types other than the two
  // with inputs of their own (custom ones, and built-ins such as userWithId) get an input per defined parameter.
  const definitions = types.data?.strategies ?? []
  const offered = (typeName: string) => !definitions.find((t) => t.name === typeName)?.deprecated || typeName === strategy?.name
  const customTypes = definitions.filter((t) => !BUILT_IN_TYPES.some((b) => b.value === t.name) && offered(t.name))
  const customType = customTypes.find((t) => t.name === name)
  // A boolean parameter left untouched is false, as its switch shows.
  const customValue = (p: { name: string; type: string }) => custom[p.name] ?? (p.type === 'boolean' ? 'false' : undefined)
  const strategyTypes = [
    ...BUILT_IN_TYPES.filter((b) => offered(b.value)),
    ...customTypes.map((t) => ({ value: t.name, label: t.displayName || t.title ? `${t.displayName || t.title} (${t.name})` : t.name })),
  ]
  const [constraints, setConstraints] = useState<ConstraintDraft[]>((strategy?.constraints ?? []).map(fromApiConstraint))
  const [segmentIds, setSegmentIds] = useState<string[]>((strategy?.segments ?? []).map(String))
  const path = { projectId: flag.project, featureName: flag.name, environment }
  // The strategy's own parameters are kept (those no input shows too), and a value left as stored is never a problem:
  // a strategy written back unchanged is never refused (the server's rule).
  const stored = strategy && strategy.name === name ? strategy.parameters : {}
  const parameters: Record<string, string> =
    name === 'flexibleRollout'
      ? { ...stored, rollout: String(rollout), stickiness, groupId }
      : customType
        ? { ...stored, ...Object.fromEntries(customType.parameters.flatMap((p) => (customValue(p) ? [[p.name, customValue(p)!]] : []))) }
        : stored
  const parameterProblems =
    customType?.parameters
      .filter((p) => strategy?.name !== name || (stored[p.name] ?? '') !== (customValue(p) ?? ''))
      .map((p) => parameterProblem(p, customValue(p)))
      .filter((p): p is string => p !== undefined) ?? []
  const problems = [...parameterProblems, ...constraints.map(constraintProblem).filter((p): p is string => p !== undefined), ...variantProblems(variants)]
  const save = useMutation({
    mutationFn: () => {
      const body = {
        name,
        title: title || null,
        disabled: strategy?.disabled ?? false,
        parameters,
        constraints: constraints.map(toApiConstraint),
        segments: segmentIds.map(Number),
        variants: withWeights(variants).map((v) => toApiVariant(v, false)),
      }
      return strategy
        ? write(
            () => ok(api.PUT('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}', { params: { path: { ...path, strategyId: strategy.id } }, body })),
            { feature: flag.name, action: 'updateStrategy', payload: { id: strategy.id, ...body } },
          )
        : write(() => ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies', { params: { path }, body })), {
            feature: flag.name,
            action: 'addStrategy',
            payload: body,
          })
    },
    onSuccess: () => onDone(),
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (problems.length === 0) save.mutate()
      }}
    >
      <Stack>
        {save.isError && <ErrorMessage error={save.error} />}
        <Group>
          <Select label="Strategy" data={strategyTypes} value={name} onChange={(v) => v && setName(v)} allowDeselect={false} w={300} />
          <TextInput label="Title" description="Optional" value={title} onChange={(e) => setTitle(e.currentTarget.value)} />
        </Group>
        {name === 'flexibleRollout' && (
          <Group>
            <NumberInput label="Rollout (%)" min={0} max={100} allowDecimal={false} clampBehavior="strict" value={rollout} onChange={setRollout} w={140} />
            <Select label="Stickiness" data={STICKINESS} value={stickiness} onChange={(v) => v && setStickiness(v)} allowDeselect={false} w={160} />
            <TextInput label="Group id" value={groupId} onChange={(e) => setGroupId(e.currentTarget.value)} />
          </Group>
        )}
        {customType && customType.parameters.length > 0 && (
          <Group align="start">
            {customType.parameters.map((p) => (
              <ParameterInput key={p.name} parameter={p} value={customValue(p)} onChange={(v) => setCustom((c) => ({ ...c, [p.name]: v }))} />
            ))}
          </Group>
        )}
        <ConstraintEditor constraints={constraints} onChange={setConstraints} project={flag.project} />
        <SegmentPicker project={flag.project} value={segmentIds} onChange={setSegmentIds} />
        <Stack gap={4} component="fieldset" aria-label="Strategy variants" style={{ border: 0, padding: 0, margin: 0 }}>
          <Text fw={600} size="sm">
            Strategy variants
          </Text>
          <Text size="sm" c="dimmed">
            When the strategy decides, these replace the flag's variants.
          </Text>
          <VariantsEditor variants={variants} onChange={setVariants} withOverrides={false} />
        </Stack>
        {variants.length > 0 && variantProblems(variants).length > 0 && (
          <Text size="sm" c="red.8" role="status">
            {variantProblems(variants).join('; ')}
          </Text>
        )}
        {customType && parameterProblems.length > 0 && (
          <Text size="sm" c="red.8" role="status">
            {parameterProblems.join('; ')}
          </Text>
        )}
        <Button type="submit" disabled={problems.length > 0 || types.isPending} loading={save.isPending} w="fit-content">
          {viaChangeRequest ? 'Add to change request' : 'Save strategy'}
        </Button>
      </Stack>
    </form>
  )
}
