import { and, eq, inArray, max, sql } from 'drizzle-orm'
import { featureEnvironments, featureStrategies, featureStrategySegments, segments } from '../../schema/index.js'
import { together, untilUnchanged, type Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed, recordEvents } from '../events/store.js'
import type { EventTag, NewEvent } from '../events/types.js'
import type { Actor, Author, Caller } from '../core/principal.js'
import { normalizeVariants } from '../variants/weights.js'
import { loadStrategies, strategyView } from './read.js'
import { featureEnvironmentOf, requireFeature } from '../flags/lock.js'
import { switchedEvent } from '../flags/environment-switch.js'
import { readFeatureForChange } from '../flags/read.js'
import type { Feature } from '../flags/schemas.js'
import { eventTagsOf, guardSql, guardValues, nextState, writeOptimistically, type FlagState, type FlagStates } from '../flags/states.js'
import { exceedsLimit, normalizeConstraint, resourceLimits, type Constraint, type Strategy, type StrategyInput } from './schemas.js'
import { checkLegalValues, legalValuesSql } from '../context-fields/legal-values.js'
import { checkDefinition, definitionFitsSql, type StrategyUse } from '../strategy-definitions/fit.js'

export interface StrategyTarget {
  project: string
  featureName: string
  environment: string
  tags: EventTag[]
}

interface TargetParams {
  projectId: string
  featureName: string
  environment: string
}

/** The target of a read: the live flag of the project in one of its environments (404 otherwise). */
export async function readTarget(db: Db, p: TargetParams): Promise<StrategyTarget> {
  const row = await requireFeature(db, p.projectId, p.featureName)
  await featureEnvironmentOf(db, p.featureName, p.environment)
  return { project: row.project, featureName: row.name, environment: p.environment, tags: [] }
}

/**
 * Every segment named exists and may be used in the project: a global one, or one of that project (as in Unleash,
 * a strategy never names a segment of another project). 400 naming those that do not.
 */
async function checkSegmentsUsable(tx: Db, ids: number[], project: string) {
  if (ids.length === 0) return
  const found = await tx.select({ id: segments.id, project: segments.project }).from(segments).where(inArray(segments.id, ids))
  const missing = ids.filter((id) => !found.some((f) => f.id === id))
  if (missing.length > 0) throw unknownSegments(missing)
  const elsewhere = found.filter((f) => f.project !== null && f.project !== project).map((f) => f.id)
  if (elsewhere.length > 0) throw segmentsOfOtherProjects(elsewhere, project)
}

const unknownSegments = (ids: number[]) =>
  validationError(`Unknown segment(s): ${ids.join(', ')}`, ids.map((id) => ({ path: 'body.segments', message: `segment ${id} does not exist` })))
const segmentsOfOtherProjects = (ids: number[], project: string) =>
  validationError(
    `Segment(s) ${ids.join(', ')} belong to another project and cannot be used in project ${project}`,
    ids.map((id) => ({ path: 'body.segments', message: `segment ${id} is not available in project ${project}` })),
  )

/**
 * The stored form of a strategy: defaults filled in, constraints and variants normalized. Without a
 * flag (a project's default strategy) the rollout's groupId is left for the flag it is applied to.
 */
export function normalizeStrategy(input: StrategyInput, featureName?: string) {
  const parameters = { ...(input.parameters ?? {}) }
  if (input.name === 'flexibleRollout') {
    parameters.rollout ??= '100'
    parameters.stickiness ??= 'default'
    if (featureName) parameters.groupId ??= featureName
  }
  return {
    name: input.name,
    title: input.title ?? null,
    disabled: input.disabled ?? false,
    parameters,
    constraints: (input.constraints ?? []).map(normalizeConstraint),
    variants: normalizeVariants(input.variants ?? [], { sortByName: false, path: 'body.variants' }),
    segments: [...new Set(input.segments ?? [])],
  }
}

/** A project environment's default strategy, checked and normalized like a flag's strategy. */
export async function prepareDefaultStrategy(tx: Db, project: string, input: StrategyInput, previous?: { name: string; parameters: Record<string, string> } | null) {
  const strategy = normalizeStrategy(input)
  // Side by side: the statements are made at once, so they can go in one batch.
  await Promise.all([
    checkDefinition(tx, { name: strategy.name, parameters: strategy.parameters, previousName: previous?.name ?? null, previousParameters: previous?.parameters ?? null }),
    checkSegmentsUsable(tx, strategy.segments, project),
    checkLegalValues(tx, strategy.constraints, project),
  ])
  return { ...strategy, sortOrder: input.sortOrder ?? 0 }
}

const p = (name: string) => sql.placeholder(name)

/**
 * SQL adding a strategy in a statement of an optimistic write (after its version check: only where it passed), and
 * its segments (`unguarded`: there may be none). Placeholders: `strategyId`, `name` (the flag), `environment`,
 * `strategyName`, `strategyTitle`, `strategyDisabled`, `sortOrder`, `parameters`, `constraints`, `strategyVariants`
 * (JSON), `segments` (an array), `createdAt`; `strategyValues` makes them.
 */
export const strategyInsertSql = sql`insert into ${featureStrategies} (id, feature_name, environment, strategy_name, title, disabled, sort_order, parameters, constraints, variants, created_at)
  select ${p('strategyId')}::uuid, ${p('name')}, ${p('environment')}, ${p('strategyName')}, ${p('strategyTitle')}, ${p('strategyDisabled')}::boolean, ${p('sortOrder')}::integer,
    ${p('parameters')}::jsonb, ${p('constraints')}::jsonb, ${p('strategyVariants')}::jsonb, ${p('createdAt')}::timestamptz
  where ${guardPassed}
  returning id`
export const strategySegmentsSql = sql`insert into ${featureStrategySegments} (strategy_id, segment_id) select ${p('strategyId')}::uuid, unnest(${p('segments')}::int[]) where ${guardPassed}`

/** The strategy an optimistic write adds to the state's environment (last unless `input` has a sort order), its view and its values for `strategyInsertSql`. */
export function strategyToAdd(featureName: string, environment: { name: string; strategies: { sortOrder: number }[] }, strategy: ReturnType<typeof normalizeStrategy>, sortOrder: number | undefined, now: Date) {
  const order = sortOrder ?? (environment.strategies.length === 0 ? 0 : Math.max(...environment.strategies.map((s) => s.sortOrder)) + 1)
  const view = strategyView({ ...strategy, id: crypto.randomUUID(), featureName, environment: environment.name, createdAt: now, sortOrder: order, segments: [...strategy.segments].sort((a, b) => a - b) })
  return { view, values: strategyValues(view, strategy.segments) }
}

/** The stored form of a strategy as `strategyInsertSql` and the update take it; `segments` in the order named (as an unknown one is named). */
function strategyValues(view: Strategy, segments: number[]) {
  return {
    strategyId: view.id,
    strategyName: view.name,
    strategyTitle: view.title,
    strategyDisabled: view.disabled,
    sortOrder: view.sortOrder,
    parameters: JSON.stringify(view.parameters),
    constraints: JSON.stringify(view.constraints),
    strategyVariants: JSON.stringify(view.variants),
    segments,
  }
}

/** A flag's strategies in evaluation order with `added`: by sort order, the newest last among equals. */
export const withStrategy = <S extends { sortOrder: number }>(strategies: S[], added: S) => [...strategies, added].sort((a, b) => a.sortOrder - b.sortOrder)

/** A segment the flag's project may use (placeholders `project`, the flag's): a global one or one of that project. */
const usableSegment = sql`(s.project is null or s.project = ${p('project')}::text)`
/** A strategy's constraints (placeholder `constraints`) use only legal values of their context fields, and no other project's fields (src/context-fields/legal-values.ts). */
const legalConstraints = legalValuesSql(p('constraints'), p('project'))
/** The strategy fits the definition of its name (placeholders `strategyName`, `parameters`, `previousStrategyName`, `previousParameters`: src/strategy-definitions/fit.ts). */
const fitsDefinition = definitionFitsSql(p('strategyName'), p('parameters'), p('previousStrategyName'), p('previousParameters'))
/**
 * The version check of a strategy write that names segments and constraints (placeholders `segments`, `constraints`):
 * it also finds every segment usable in the flag's project, the constraints' values legal, and the strategy fitting its definition.
 */
const guardWithSegments = guardSql(
  undefined,
  sql`cardinality(${p('segments')}::int[]) = (select count(*) from ${segments} s where s.id = any(${p('segments')}::int[]) and ${usableSegment}) and ${legalConstraints} and ${fitsDefinition}`,
)
/**
 * The segments named that the flag may not use (in the order named), read in the statement: which to name when its
 * check failed. One that does not exist answers its id, one of another project its id negated (ids are positive).
 */
const unusableSegments = sql<number[]>`array(select case when exists (select from ${segments} s where s.id = u.id) then -u.id else u.id end
  from unnest(${p('segments')}::int[]) with ordinality as u (id, n) where not exists (select from ${segments} s where s.id = u.id and ${usableSegment}) order by u.n)`
/** What a strategy write's statement finds when its check failed: the segments it may not use, and whether the strategy fits its definition. */
interface Findings {
  segments: number[]
  fits: boolean
}
const findings = sql<Findings>`json_build_object('segments', ${unusableSegments}, 'fits', ${fitsDefinition})`
/** The 400 for the segments unusableSegments answered. */
function unusable(returned: number[], project: string) {
  const missing = returned.filter((id) => id > 0)
  return missing.length > 0 ? unknownSegments(missing) : segmentsOfOtherProjects(returned.map((id) => -id), project)
}
/** An enabled environment never serves an empty strategy list: switched off in the write that leaves it none (`switchOff`, decided from the state). */
const switchOffSql = sql`update ${featureEnvironments} set enabled = false
  where feature_name = ${p('name')} and environment = ${p('environment')} and enabled and ${p('switchOff')}::boolean and ${guardPassed}`

/** Adding a strategy optimistically (see src/flags/states.ts). */
const addStrategyStatement = eventsStatement('flagpost_add_strategy', {
  alongside: [guardWithSegments, strategyInsertSql],
  guarded: true,
  unguarded: [strategySegmentsSql, switchOffSql],
  returning: findings,
})

/** Replacing a strategy optimistically: its configuration, and its segments (those it keeps are left, so no row is touched twice). */
const updateStrategyStatement = eventsStatement('flagpost_update_strategy', {
  alongside: [
    guardWithSegments,
    sql`update ${featureStrategies} set strategy_name = ${p('strategyName')}, title = ${p('strategyTitle')}, disabled = ${p('strategyDisabled')}::boolean, sort_order = ${p('sortOrder')}::integer,
        parameters = ${p('parameters')}::jsonb, constraints = ${p('constraints')}::jsonb, variants = ${p('strategyVariants')}::jsonb
      where id = ${p('strategyId')}::uuid and feature_name = ${p('name')} and environment = ${p('environment')} and ${guardPassed}
      returning id`,
  ],
  guarded: true,
  unguarded: [
    sql`delete from ${featureStrategySegments} where strategy_id = ${p('strategyId')}::uuid and segment_id <> all(${p('segments')}::int[]) and ${guardPassed}`,
    sql`insert into ${featureStrategySegments} (strategy_id, segment_id) select ${p('strategyId')}::uuid, unnest(${p('segments')}::int[]) where ${guardPassed} on conflict do nothing`,
    switchOffSql,
  ],
  returning: findings,
})

/** Deleting a strategy optimistically (its segments go with it). */
const deleteStrategyStatement = eventsStatement('flagpost_delete_strategy', {
  alongside: [guardSql(), sql`delete from ${featureStrategies} where id = ${p('strategyId')}::uuid and feature_name = ${p('name')} and environment = ${p('environment')} and ${guardPassed} returning id`],
  guarded: true,
  unguarded: [switchOffSql],
})

/** Setting sort orders optimistically: `ids` and `sortOrders`, two arrays of one length. */
const sortOrderStatement = eventsStatement('flagpost_set_strategy_sort_order', {
  alongside: [guardSql()],
  guarded: true,
  unguarded: [
    sql`update ${featureStrategies} s set sort_order = v.sort_order from unnest(${p('ids')}::uuid[], ${p('sortOrders')}::int[]) as v (id, sort_order)
      where s.id = v.id and s.feature_name = ${p('name')} and s.environment = ${p('environment')} and ${guardPassed}`,
    switchOffSql,
  ],
})

type Environment = Feature['environments'][number]

/**
 * A strategy change computed from a flag's state: the environment's strategies after it (in evaluation order unless
 * `unordered`: a new sort order equal to another's, whose tie goes by creation), its event, its statement and
 * values, and the answer.
 */
interface StrategyChange<T> {
  after: Strategy[]
  unordered?: boolean
  event: NewEvent
  /** The constraints the change writes, whose values the statement checks: named when that check failed. */
  constraints?: Constraint[]
  /** The strategy it writes, whose fit to its definition the statement checks: named when that check failed. */
  use?: StrategyUse
  run: (db: Db, actor: Actor, now: Date, events: NewEvent[], values: Record<string, unknown>) => Promise<{ written: number; returned: Findings | null }>
  values: Record<string, unknown>
  answer: T
}

/**
 * Writes a change of the strategies of a flag's environment computed from `state` (see src/flags/states.ts) in
 * one statement, with the switch-off of an enabled environment it leaves without an enabled strategy (and its
 * event, after the change's). Undefined when the version check failed; 400 when a segment named does not exist or is another project's.
 * The state it leaves is remembered unless its order is not known (the next write then reads the flag again).
 */
async function writeChange<T>(db: Db, caller: Author, state: FlagState, env: Environment, change: StrategyChange<T>, next: (state: FlagState) => void): Promise<T | undefined> {
  const { actor, now } = caller
  const { feature } = state
  const switchOff = env.enabled && !change.after.some((s) => !s.disabled)
  const events = [change.event, ...(switchOff ? [switchedEvent(feature.project, feature.name, env.name, false, eventTagsOf(feature))] : [])]
  const { written, returned } = await change.run(db, actor, now, events, { ...guardValues(state), environment: env.name, switchOff, ...change.values })
  if (written === 0) {
    if (returned && returned.segments.length > 0) throw unusable(returned.segments, feature.project)
    // A strategy its definition refuses or a value a context field does not allow (read again to name them: the
    // error path only), or else a stale version.
    if (returned && !returned.fits && change.use) await checkDefinition(db, change.use)
    await checkLegalValues(db, change.constraints ?? [], feature.project)
    return undefined
  }
  if (!change.unordered) next(nextState(state, { environments: new Map([[env.name, { strategies: change.after, enabled: env.enabled && !switchOff }]]) }))
  return change.answer
}

/**
 * Runs a strategy write of a flag's environment optimistically (see writeOptimistically), and when the flag
 * keeps changing under it, from fresh reads again (409 after a few), never under a lock. `decide` computes the
 * change from the state (throwing its 4xx); 404 when the flag is not in the environment.
 */
function writeStrategies<T>(db: Db, caller: Caller, p: TargetParams, states: FlagStates | undefined, decide: (state: FlagState, env: Environment) => StrategyChange<T>): Promise<T> {
  const write = (state: FlagState, next: (state: FlagState) => void) => {
    const env = state.feature.environments.find((e) => e.name === p.environment)
    if (!env) throw notFound(`Could not find environment ${p.environment} for feature flag ${p.featureName}`)
    return writeChange(db, caller, state, env, decide(state, env), next)
  }
  const viewer = { principal: caller.key, now: caller.now }
  return writeOptimistically(db, states, p, viewer, {
    write,
    locked: () => untilUnchanged(`Feature flag ${p.featureName}`, async () => write(await readFeatureForChange(db, p.projectId, p.featureName, viewer), () => undefined)),
  })
}

const eventOf = (feature: Feature, env: Environment) => ({ project: feature.project, featureName: feature.name, environment: env.name, tags: eventTagsOf(feature) })

/**
 * POST …/features/{featureName}/environments/{environment}/strategies: adds a strategy (last in order unless
 * sortOrder is given) with `feature-strategy-add`, in one statement (see src/flags/states.ts) whose version check
 * also finds every segment it names.
 */
export async function addFlagStrategy(db: Db, caller: Caller, p: TargetParams, input: StrategyInput, states?: FlagStates): Promise<Strategy> {
  const strategy = normalizeStrategy(input, p.featureName)
  return writeStrategies(db, caller, p, states, (state, env) => {
    requireRoomForStrategy(env.strategies.length)
    const { view, values } = strategyToAdd(state.feature.name, env, strategy, input.sortOrder, caller.now)
    return {
      after: withStrategy(env.strategies, view),
      event: { type: 'feature-strategy-add', ...eventOf(state.feature, env), data: view, preData: null },
      constraints: view.constraints,
      use: { name: view.name, parameters: view.parameters, previousName: null },
      run: addStrategyStatement,
      values: { ...values, previousStrategyName: null, previousParameters: null },
      answer: view,
    }
  })
}

/** Unleash's limit of strategies in one flag environment (UNLEASH_FEATURE_ENVIRONMENT_STRATEGIES_LIMIT): a 400 with its message past it. */
function requireRoomForStrategy(held: number) {
  const limit = resourceLimits().featureEnvironmentStrategies
  if (held >= limit) throw validationError(exceedsLimit('strategy', limit))
}

/** Adds a strategy (last in order unless sortOrder is given) and records `feature-strategy-add`, under the flag's lock. */
export async function insertStrategy(tx: Db, caller: Author, target: StrategyTarget, input: StrategyInput): Promise<Strategy> {
  const { actor, now } = caller
  const strategy = normalizeStrategy(input, target.featureName)
  await checkSegmentsUsable(tx, strategy.segments, target.project)
  const [held] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(featureStrategies)
    .where(and(eq(featureStrategies.featureName, target.featureName), eq(featureStrategies.environment, target.environment)))
  requireRoomForStrategy(held?.n ?? 0)
  let sortOrder = input.sortOrder
  if (sortOrder === undefined) {
    const [last] = await tx
      .select({ n: max(featureStrategies.sortOrder) })
      .from(featureStrategies)
      .where(and(eq(featureStrategies.featureName, target.featureName), eq(featureStrategies.environment, target.environment)))
    sortOrder = last?.n === null || last?.n === undefined ? 0 : last.n + 1
  }
  const [row] = await tx
    .insert(featureStrategies)
    .values({ id: crypto.randomUUID(), featureName: target.featureName, environment: target.environment, sortOrder, createdAt: now, ...strategy })
    .returning()
  if (strategy.segments.length > 0) await tx.insert(featureStrategySegments).values(strategy.segments.map((segmentId) => ({ strategyId: row!.id, segmentId })))
  const view = strategyView({ ...row!, segments: [...strategy.segments].sort((a, b) => a - b) })
  await recordEvents(tx, actor, now, [{ type: 'feature-strategy-add', project: target.project, featureName: target.featureName, environment: target.environment, tags: target.tags, data: view, preData: null }])
  return view
}

const isUuid = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)

/** The strategy of the environment with that id (any case), or 404. */
function strategyIn(featureName: string, env: { name: string; strategies: Strategy[] }, strategyId: string): Strategy {
  const found = isUuid(strategyId) ? env.strategies.find((s) => s.id === strategyId.toLowerCase()) : undefined
  if (!found) throw notFound(`Could not find strategy ${strategyId} of ${featureName} in ${env.name}`)
  return found
}

export async function getStrategy(db: Db, target: StrategyTarget, strategyId: string) {
  return strategyIn(target.featureName, { name: target.environment, strategies: await listStrategies(db, target.featureName, target.environment) }, strategyId)
}

export async function listStrategies(db: Db, featureName: string, environment: string): Promise<Strategy[]> {
  return (await loadStrategies(db, [featureName], environment)).map(strategyView)
}

/** The environment's strategies with `changed` in place of the one of its id, by sort order (unordered: see StrategyChange). */
function replaced(strategies: Strategy[], changed: Strategy) {
  const unordered = strategies.some((s) => s.id !== changed.id && s.sortOrder === changed.sortOrder)
  return { after: strategies.map((s) => (s.id === changed.id ? changed : s)).sort((a, b) => a.sortOrder - b.sortOrder), unordered }
}

/**
 * PUT …/strategies/{strategyId}: replaces a strategy's configuration (sortOrder kept unless given) with
 * `feature-strategy-update` carrying the old one as preData, in one statement (see src/flags/states.ts).
 */
export async function updateFlagStrategy(db: Db, caller: Caller, p: TargetParams & { strategyId: string }, input: StrategyInput, states?: FlagStates): Promise<Strategy> {
  return writeStrategies(db, caller, p, states, (state, env) => {
    const before = strategyIn(state.feature.name, env, p.strategyId)
    const strategy = normalizeStrategy(input, state.feature.name)
    const view: Strategy = { id: before.id, ...strategy, featureName: state.feature.name, sortOrder: input.sortOrder ?? before.sortOrder, segments: [...strategy.segments].sort((a, b) => a - b) }
    return {
      ...replaced(env.strategies, view),
      event: { type: 'feature-strategy-update', ...eventOf(state.feature, env), data: view, preData: before },
      constraints: view.constraints,
      use: { name: view.name, parameters: view.parameters, previousName: before.name, previousParameters: before.parameters },
      run: updateStrategyStatement,
      values: { ...strategyValues(view, strategy.segments), previousStrategyName: before.name, previousParameters: JSON.stringify(before.parameters) },
      answer: view,
    }
  })
}

/** DELETE …/strategies/{strategyId}: deletes a strategy with `feature-strategy-remove`, in one statement (see src/flags/states.ts). */
export async function deleteFlagStrategy(db: Db, caller: Caller, p: TargetParams & { strategyId: string }, states?: FlagStates): Promise<void> {
  await writeStrategies(db, caller, p, states, (state, env) => {
    const before = strategyIn(state.feature.name, env, p.strategyId)
    return {
      after: env.strategies.filter((s) => s.id !== before.id),
      event: { type: 'feature-strategy-remove', ...eventOf(state.feature, env), data: null, preData: before },
      run: deleteStrategyStatement,
      values: { strategyId: before.id },
      answer: true,
    }
  })
}

/** Each strategy's rank by creation (then id): how strategies of one sort order are ordered. Immutable, so it may be read apart from the flag. */
const creationRanks = (db: Db, featureName: string, environment: string) =>
  db
    .select({ id: featureStrategies.id, rank: sql<number>`row_number() over (order by ${featureStrategies.createdAt}, ${featureStrategies.id})`.mapWith(Number) })
    .from(featureStrategies)
    .where(and(eq(featureStrategies.featureName, featureName), eq(featureStrategies.environment, environment)))

/**
 * POST …/strategies/set-sort-order: sets the given strategies' sortOrder (every id must be a strategy of the flag
 * in the environment, 404 otherwise) with `strategy-order-changed`. The flag and its strategies' ranks by creation
 * are read together (the new order's ties go by creation), then written in one statement (see src/flags/states.ts);
 * read again when the flag changed in between.
 */
export async function setSortOrder(db: Db, caller: Caller, p: TargetParams, order: { id: string; sortOrder: number }[], states?: FlagStates): Promise<Strategy[]> {
  const viewer = { principal: caller.key, now: caller.now }
  // Unleash's shape: the strategies' ids in their order (an event's data is an object, never a list).
  const inOrder = (list: Strategy[]) => ({ strategyIds: list.map((s) => s.id) })
  // The last sort order given for an id is the one it gets.
  const sortOrders = new Map(order.map((o) => [o.id.toLowerCase(), o.sortOrder]))
  const after = await untilUnchanged(`Feature flag ${p.featureName}`, async () => {
    const [state, ranks] = await together(db, [(q) => readFeatureForChange(q, p.projectId, p.featureName, viewer), (q) => creationRanks(q, p.featureName, p.environment)])
    const env = state.feature.environments.find((e) => e.name === p.environment)
    if (!env) throw notFound(`Could not find environment ${p.environment} for feature flag ${p.featureName}`)
    const unknown = order.filter((o) => !env.strategies.some((s) => s.id === o.id.toLowerCase()))
    if (unknown.length > 0) throw notFound(`Unknown strategy id(s) for ${p.featureName} in ${p.environment}: ${unknown.map((u) => u.id).join(', ')}`)
    const rank = new Map(ranks.map((r) => [r.id, r.rank]))
    // A strategy added after its ranks were read: the version check would fail.
    if (env.strategies.some((s) => !rank.has(s.id))) return undefined
    const sorted = env.strategies
      .map((s) => ({ ...s, sortOrder: sortOrders.get(s.id) ?? s.sortOrder }))
      .sort((a, b) => a.sortOrder - b.sortOrder || rank.get(a.id)! - rank.get(b.id)!)
    const change: StrategyChange<Strategy[]> = {
      after: sorted,
      event: { type: 'strategy-order-changed', ...eventOf(state.feature, env), data: inOrder(sorted), preData: inOrder(env.strategies) },
      run: sortOrderStatement,
      values: { ids: [...sortOrders.keys()], sortOrders: [...sortOrders.values()] },
      answer: sorted,
    }
    return writeChange(db, caller, state, env, change, () => undefined)
  })
  // What this app knew of the flag is a version behind.
  states?.delete(p.featureName)
  return after
}
