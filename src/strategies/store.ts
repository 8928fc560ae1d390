import { and, eq, inArray, max, sql } from 'drizzle-orm'
import { featureStrategies, featureStrategySegments, segments } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed, recordEvents } from '../events/store.js'
import type { EventTag, NewEvent } from '../events/types.js'
import type { Actor, Author, Caller } from '../core/principal.js'
import { normalizeVariants } from '../variants/weights.js'
import { loadStrategies, strategyView } from './read.js'
import { featureEnvironmentOf, lockForChange, requireFeature } from '../flags/lock.js'
import { switchOffWithoutEnabledStrategy } from '../flags/environment-switch.js'
import { eventTagsOf, guardSql, guardValues, nextState, writeOptimistically, type FlagStates } from '../flags/states.js'
import { normalizeConstraint, type Strategy, type StrategyInput } from './schemas.js'

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

/**
 * Runs a strategy change in one transaction, with the flag locked and its environment checked (404
 * otherwise). Every change of a flag's strategies goes through here, so here an enabled environment the
 * change leaves without an enabled strategy is switched off.
 */
export async function withLockedTarget<T>(db: Db, by: { actor: Actor; now: Date }, p: TargetParams, change: (tx: Db, target: StrategyTarget) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    const { row, tags, fe } = await lockForChange(tx, p.projectId, p.featureName, p.environment)
    const target = { project: row.project, featureName: row.name, environment: p.environment, tags }
    const result = await change(tx, target)
    if (fe.enabled) await switchOffWithoutEnabledStrategy(tx, by.actor, by.now, target)
    return result
  })
}

/** The target of a read: the live flag of the project in one of its environments (404 otherwise). */
export async function readTarget(db: Db, p: TargetParams): Promise<StrategyTarget> {
  const row = await requireFeature(db, p.projectId, p.featureName)
  await featureEnvironmentOf(db, p.featureName, p.environment)
  return { project: row.project, featureName: row.name, environment: p.environment, tags: [] }
}

async function checkSegmentsExist(tx: Db, ids: number[]) {
  if (ids.length === 0) return
  const found = await tx.select({ id: segments.id }).from(segments).where(inArray(segments.id, ids))
  const missing = ids.filter((id) => !found.some((f) => f.id === id))
  if (missing.length > 0) throw validationError(`Unknown segment(s): ${missing.join(', ')}`, missing.map((id) => ({ path: 'body.segments', message: `segment ${id} does not exist` })))
}

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
export async function prepareDefaultStrategy(tx: Db, input: StrategyInput) {
  const strategy = normalizeStrategy(input)
  await checkSegmentsExist(tx, strategy.segments)
  return { ...strategy, sortOrder: input.sortOrder ?? 0 }
}

const eventFor = (target: StrategyTarget) => ({ project: target.project, featureName: target.featureName, environment: target.environment, tags: target.tags })

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
  const values = {
    strategyId: view.id,
    strategyName: view.name,
    strategyTitle: view.title,
    strategyDisabled: view.disabled,
    sortOrder: order,
    parameters: JSON.stringify(view.parameters),
    constraints: JSON.stringify(view.constraints),
    strategyVariants: JSON.stringify(view.variants),
    segments: view.segments,
  }
  return { view, values }
}

/** A flag's strategies in evaluation order with `added`: by sort order, the newest last among equals. */
export const withStrategy = <S extends { sortOrder: number }>(strategies: S[], added: S) => [...strategies, added].sort((a, b) => a.sortOrder - b.sortOrder)

/** Adding a strategy optimistically (see src/flags/states.ts): the version check also finds every segment it names. */
const addStrategyStatement = eventsStatement('flagpost_add_strategy', {
  alongside: [guardSql(undefined, sql`cardinality(${p('segments')}::int[]) = (select count(*) from ${segments} where id = any(${p('segments')}::int[]))`), strategyInsertSql],
  guarded: true,
  unguarded: [strategySegmentsSql],
})

/**
 * POST …/features/{featureName}/environments/{environment}/strategies: adds a strategy (last in order unless
 * sortOrder is given) with `feature-strategy-add`. Written optimistically, in one statement (see
 * src/flags/states.ts); under the flag's lock when a segment it names is unknown (to say which) or the
 * environment is on with no enabled strategy (to switch it off).
 */
export async function addFlagStrategy(db: Db, caller: Caller, p: TargetParams, input: StrategyInput, states?: FlagStates): Promise<Strategy> {
  const { actor, now, key: principal } = caller
  const strategy = normalizeStrategy(input, p.featureName)
  const missing = () => notFound(`Could not find environment ${p.environment} for feature flag ${p.featureName}`)
  return writeOptimistically(db, states, p, { principal, now }, {
    fromRead(feature) {
      if (!feature.environments.some((e) => e.name === p.environment)) throw missing()
      return undefined
    },
    async write(state, next) {
      const env = state.feature.environments.find((e) => e.name === p.environment)
      if (!env || (env.enabled && !env.hasEnabledStrategies && strategy.disabled)) return undefined
      const { view, values } = strategyToAdd(state.feature.name, env, strategy, input.sortOrder, now)
      const event: NewEvent = { type: 'feature-strategy-add', project: state.feature.project, featureName: state.feature.name, environment: env.name, tags: eventTagsOf(state.feature), data: view, preData: null }
      const { written } = await addStrategyStatement(db, actor, now, [event], { ...guardValues(state), environment: env.name, ...values })
      if (written === 0) return undefined
      next(nextState(state, { environments: new Map([[env.name, { strategies: withStrategy(env.strategies, view) }]]) }))
      return view
    },
    locked: () => withLockedTarget(db, caller, p, (tx, target) => insertStrategy(tx, caller, target, input)),
  })
}

/** Adds a strategy (last in order unless sortOrder is given) and records `feature-strategy-add`. */
export async function insertStrategy(tx: Db, caller: Author, target: StrategyTarget, input: StrategyInput): Promise<Strategy> {
  const { actor, now } = caller
  const strategy = normalizeStrategy(input, target.featureName)
  await checkSegmentsExist(tx, strategy.segments)
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
  await recordEvents(tx, actor, now, [{ type: 'feature-strategy-add', ...eventFor(target), data: view, preData: null }])
  return view
}

async function strategyOf(tx: Db, target: StrategyTarget, strategyId: string): Promise<Strategy> {
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(strategyId)
  const rows = isUuid ? await loadStrategies(tx, [target.featureName], target.environment) : []
  const row = rows.find((r) => r.id === strategyId.toLowerCase())
  if (!row) throw notFound(`Could not find strategy ${strategyId} of ${target.featureName} in ${target.environment}`)
  return strategyView(row)
}

export async function getStrategy(db: Db, target: StrategyTarget, strategyId: string) {
  return strategyOf(db, target, strategyId)
}

export async function listStrategies(db: Db, featureName: string, environment: string): Promise<Strategy[]> {
  return (await loadStrategies(db, [featureName], environment)).map(strategyView)
}

/** Replaces a strategy's configuration and records `feature-strategy-update` with the old one as preData. */
export async function updateStrategy(tx: Db, caller: Author, target: StrategyTarget, strategyId: string, input: StrategyInput): Promise<Strategy> {
  const { actor, now } = caller
  const before = await strategyOf(tx, target, strategyId)
  const strategy = normalizeStrategy(input, target.featureName)
  await checkSegmentsExist(tx, strategy.segments)
  const [row] = await tx
    .update(featureStrategies)
    .set({ ...strategy, sortOrder: input.sortOrder ?? before.sortOrder })
    .where(eq(featureStrategies.id, before.id))
    .returning()
  await tx.delete(featureStrategySegments).where(eq(featureStrategySegments.strategyId, before.id))
  if (strategy.segments.length > 0) await tx.insert(featureStrategySegments).values(strategy.segments.map((segmentId) => ({ strategyId: before.id, segmentId })))
  const view = strategyView({ ...row!, segments: [...strategy.segments].sort((a, b) => a - b) })
  await recordEvents(tx, actor, now, [{ type: 'feature-strategy-update', ...eventFor(target), data: view, preData: before }])
  return view
}

export async function deleteStrategy(tx: Db, caller: Author, target: StrategyTarget, strategyId: string) {
  const { actor, now } = caller
  const before = await strategyOf(tx, target, strategyId)
  await tx.delete(featureStrategies).where(eq(featureStrategies.id, before.id))
  await recordEvents(tx, actor, now, [{ type: 'feature-strategy-remove', ...eventFor(target), data: null, preData: before }])
}

/** Sets the given strategies' sortOrder; every id must be a strategy of this flag and environment. */
export async function setSortOrder(tx: Db, caller: Author, target: StrategyTarget, order: { id: string; sortOrder: number }[]) {
  const { actor, now } = caller
  const before = (await loadStrategies(tx, [target.featureName], target.environment)).map(strategyView)
  const unknown = order.filter((o) => !before.some((s) => s.id === o.id.toLowerCase()))
  if (unknown.length > 0) throw notFound(`Unknown strategy id(s) for ${target.featureName} in ${target.environment}: ${unknown.map((u) => u.id).join(', ')}`)
  for (const { id, sortOrder } of order) await tx.update(featureStrategies).set({ sortOrder }).where(eq(featureStrategies.id, id.toLowerCase()))
  const after = (await loadStrategies(tx, [target.featureName], target.environment)).map(strategyView)
  const summary = (list: Strategy[]) => list.map((s) => ({ id: s.id, name: s.name, title: s.title, sortOrder: s.sortOrder }))
  await recordEvents(tx, actor, now, [{ type: 'strategy-order-changed', ...eventFor(target), data: summary(after), preData: summary(before) }])
  return after
}
