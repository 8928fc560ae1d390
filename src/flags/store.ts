import { and, eq, isNull, sql } from 'drizzle-orm'
import { applyPatch } from './json-patch.js'
import * as z from '../http/zod.js'
import { environments, featureDependencies, featureEnvironments, featureLifecycles, features, featureTags, projectEnvironments, projects, tags as tagsTable } from '../../schema/index.js'
import { batch, together, untilUnchanged, type Db } from '../db.js'
import { noSuchTagType, registryOf, tagCreationLocks, tagsStillNew } from '../tags/registry.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import { zodValidationError } from '../http/openapi.js'
import { eventsStatement, guardPassed, recordEvents } from '../events/store.js'
import type { EventTag, NewEvent } from '../events/types.js'
import type { Author, Caller } from '../core/principal.js'
import { compileWholeTextRegex } from '../evaluation/index.js'
import { insertStrategy, normalizeStrategy, strategyInsertSql, strategySegmentsSql, strategyToAdd, withStrategy } from '../strategies/store.js'
import type { StrategyInput } from '../strategies/schemas.js'
import { enterStage, stageOnEnable } from './lifecycle.js'
import { lockForChange, type FeatureRow } from './lock.js'
import { refuseArchivedProject } from './archive.js'
import { asWrittenBy, loadFeature, unversionedPartsJson } from './read.js'
import { switchedEvent } from './environment-switch.js'
import { archivedEvent, eventTagsOf, flagVersionRead, guardSql, guardValues, metadataOf, nextState, writeOptimistically, type FlagState, type FlagStates, type Metadata } from './states.js'
import { FlagTypeSchema, type CreateFeature, type Feature, type PatchOperation } from './schemas.js'

const p = (name: string) => sql.placeholder(name)

async function reload(tx: Db, name: string, caller: Pick<Caller, 'key' | 'now'>): Promise<Feature> {
  const feature = await loadFeature(tx, name, { principal: caller.key, now: caller.now })
  if (!feature) throw notFound(`Could not find feature flag ${name}`)
  return feature
}

export function checkNamingPattern(name: string, project: Pick<typeof projects.$inferSelect, 'id' | 'featureNamingPattern' | 'featureNamingExample' | 'featureNamingDescription'>) {
  const pattern = project.featureNamingPattern
  if (!pattern) return
  let matches: boolean
  try {
    // The linear-time RE2 matcher: a name is user input, and a backtracking engine could stall on it.
    matches = compileWholeTextRegex(pattern).test(name)
  } catch {
    // A pattern saved before patterns were RE2 that RE2 refuses: not enforced rather than blocking every creation.
    return
  }
  if (!matches) {
    const example = project.featureNamingExample ? ` (for example ${project.featureNamingExample})` : ''
    const description = project.featureNamingDescription ? `: ${project.featureNamingDescription}` : ''
    throw validationError(`The flag name ${name} does not match the naming pattern ${pattern} of project ${project.id}${example}${description}`, [
      { path: 'body.name', message: `must match ${pattern}` },
    ])
  }
}

/**
 * Creating a flag in one statement: the flag, its environments (its project's), tags, lifecycle stage and event,
 * made only while the project is live, under its flag limit and with the rules the name was checked against,
 * and not when the name is taken (in any project, archived too); `returned` tells which held.
 */
const createFlagStatement = eventsStatement<{ taken: boolean; live: boolean; sameRules: boolean; tagsAsRead: boolean }>('flagpost_create_flag', {
  alongside: [
    sql`insert into ${features} (name, project, type, description, impression_data, created_at, created_by, created_by_user_id)
      select ${p('name')}, ${p('project')}, ${p('type')}, ${p('description')}, ${p('impressionData')}::boolean, ${p('createdAt')}::timestamptz, ${p('createdBy')}::text, ${p('createdByUserId')}::integer
      from ${projects} pr
      where pr.id = ${p('project')} and pr.archived_at is null
        and pr.feature_naming_pattern is not distinct from ${p('pattern')}::text and pr.feature_limit is not distinct from ${p('limit')}::integer
        and (pr.feature_limit is null or (select count(*) from ${features} f where f.project = pr.id and f.archived_at is null) < pr.feature_limit)
        and ${tagsStillNew(p('newTags'))}
      on conflict do nothing
      returning name`,
  ],
  guarded: true,
  unguarded: [
    sql`insert into ${tagsTable} (type, value, created_at) select n.type, n.value, ${p('createdAt')}::timestamptz from w0, jsonb_to_recordset(${p('newTags')}::jsonb) as n (type text, value text) on conflict do nothing`,
    sql`insert into ${featureEnvironments} (feature_name, environment) select w0.name, pe.environment_name from w0 join ${projectEnvironments} pe on pe.project_id = ${p('project')}`,
    sql`insert into ${featureTags} (feature_name, tag_type, tag_value, created_at) select w0.name, t.type, t.value, ${p('createdAt')}::timestamptz from w0, jsonb_to_recordset(${p('tags')}::jsonb) as t (type text, value text)`,
    sql`insert into ${featureLifecycles} (feature_name, stage, entered_stage_at) select w0.name, 'initial', ${p('createdAt')}::timestamptz from w0`,
  ],
  returning: sql`json_build_object(
    'taken', exists (select 1 from ${features} where name = ${p('name')}),
    'live', exists (select 1 from ${projects} where id = ${p('project')} and archived_at is null),
    'sameRules', exists (select 1 from ${projects} where id = ${p('project')} and feature_naming_pattern is not distinct from ${p('pattern')}::text and feature_limit is not distinct from ${p('limit')}::integer),
    'tagsAsRead', ${tagsStillNew(p('newTags'))})`,
})

/**
 * POST /api/admin/projects/{projectId}/features: a new flag, off in every environment of its project. Its name is
 * checked against the project's naming pattern as read, and written in one batch (one round trip over Neon's
 * HTTP) that first takes the project's lock, so concurrent creations queue and the flag limit holds, then
 * creates the flag only if the project's rules are still those it was checked against, and reads it back.
 */
export async function createFeature(db: Db, caller: Caller, projectId: string, input: CreateFeature): Promise<Feature> {
  const { actor, now } = caller
  const tags = dedupeTags(input.tags ?? [])
  const metadata: Metadata = { name: input.name, project: projectId, description: input.description ?? null, type: input.type ?? 'release', stale: false, impressionData: input.impressionData ?? false, archived: false }
  // The project's rules changing between the read and the write is rare: the name is checked again against the new ones.
  for (let attempt = 0; ; attempt++) {
    const [[project], registry] = await together(db, [(q) => q.select().from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt))), (q) => registryOf(q, tags)])
    if (!project) throw notFound(`Could not find project ${projectId}`)
    checkNamingPattern(input.name, project)
    const unknownType = registry.find((r) => !r.tagExists && !r.typeExists)
    if (unknownType) throw noSuchTagType(unknownType.type)
    // Tags new to the registry are created with the flag, each with its tag-created.
    const newTags = registry.filter((r) => !r.tagExists).map(({ type, value }) => ({ type, value }))
    const events: NewEvent[] = [...newTags.map((tag): NewEvent => ({ type: 'tag-created', data: tag })), { type: 'feature-created', project: projectId, featureName: input.name, data: metadata, tags }]
    const values = { name: input.name, project: projectId, type: metadata.type, description: metadata.description, impressionData: metadata.impressionData, pattern: project.featureNamingPattern, limit: project.featureLimit, tags: JSON.stringify(tags), newTags: JSON.stringify(newTags) }
    const [, , created, feature] = await batch(db, [
      (q) => q.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).for('update'),
      (q) => tagCreationLocks(q, newTags),
      (q) => createFlagStatement(q, actor, now, events, values),
      (q) => loadFeature(q, input.name, { principal: caller.key, now }),
    ])
    if (created.written > 0) return feature!
    const why = created.returned!
    if (why.taken) throw nameExists(`A feature flag named ${input.name} already exists (flag names are unique across projects and the archive)`)
    if (!why.live) throw notFound(`Could not find project ${projectId}`)
    if (!why.tagsAsRead && attempt < 4) continue
    if (why.sameRules || attempt >= 2) throw validationError(`Project ${projectId} has reached its limit of ${project.featureLimit} flags: archive one or raise the limit`)
  }
}

function dedupeTags(tags: { type?: string | undefined; value: string }[]) {
  const unique = new Map(tags.map((t) => [`${t.type ?? 'simple'}\u0000${t.value}`, { type: t.type ?? 'simple', value: t.value }]))
  return [...unique.values()]
}

/** The live flags that depend on the flag `name` (a placeholder): its children, which refuse its archiving. */
const liveChildrenSql = sql<string[]>`coalesce((select json_agg(d.child order by d.child) from ${featureDependencies} d join ${features} c on c.name = d.child
    where d.parent = ${p('name')} and c.archived_at is null), '[]')`

/** The 400 of archiving a parent of live flags, one at a time (the single archive and a patch setting `archived`), as Unleash and the bulk archive refuse it. */
function liveChildrenError(name: string, children: string[]) {
  return validationError(`You can not archive ${name}: other flags depend on it (${children.join(', ')}); archive them together or remove their dependency first`, [
    { path: 'featureName', message: `${name} has live children ${children.join(', ')}` },
  ])
}

/**
 * Archiving's optimistic write (see src/flags/states.ts): the flag's metadata as given (what a patch archiving it
 * changes too) and its archiving, the archived stage of its lifecycle, and the events, made only while no live flag
 * depends on it (its children are not versioned with it: a child revived meanwhile is seen); it answers the live
 * children and, with `parts`, what a patch's answer needs besides the state.
 */
function archiveStatement(name: string, parts?: typeof unversionedPartsJson) {
  return eventsStatement<{ liveChildren: string[]; parts: Parameters<typeof asWrittenBy>[1] | null }>(name, {
    alongside: [
      guardSql(
        sql`description = ${p('description')}, type = ${p('type')}, stale = ${p('stale')}, impression_data = ${p('impressionData')}, archived_at = ${p('createdAt')}::timestamptz`,
        sql`not exists (select from ${featureDependencies} d join ${features} c on c.name = d.child where d.parent = ${p('name')} and c.archived_at is null)`,
      ),
      sql`insert into ${featureLifecycles} (feature_name, stage, entered_stage_at, status, status_value)
        select ${p('name')}, 'archived', ${p('createdAt')}::timestamptz, null, null where ${guardPassed}
        on conflict (feature_name, stage) do update set entered_stage_at = excluded.entered_stage_at, status = null, status_value = null
        returning feature_name`,
    ],
    guarded: true,
    returning: sql`json_build_object('liveChildren', ${liveChildrenSql}, 'parts', ${parts ?? sql`null`})`,
  })
}

const archiveFlag = archiveStatement('flagpost_archive_flag')
const patchArchivingFlag = archiveStatement('flagpost_patch_archiving_flag', unversionedPartsJson)

const metadataValues = (m: Metadata) => ({ description: m.description, type: m.type, stale: m.stale, impressionData: m.impressionData })

/**
 * DELETE /api/admin/projects/{projectId}/features/{featureName}: moves a live flag of the project to the archive.
 * The flag is read, then archived in one statement checked against its version (read again when it moved).
 */
export async function archiveFeature(db: Db, caller: Author, projectId: string, name: string) {
  const { actor, now } = caller
  await untilUnchanged(`Feature flag ${name}`, async () => {
    const [flag] = await flagToArchiveRead(db, { name })
    if (!flag || flag.feature.project !== projectId || flag.feature.archived) throw notFound(`Could not find feature flag ${name} in project ${projectId}`)
    // As Unleash (and the bulk archive): a parent is not archived away from the live flags that depend on it.
    if (flag.liveChildren.length > 0) throw liveChildrenError(name, flag.liveChildren)
    const { written, returned } = await archiveFlag(db, actor, now, [archivedEvent(flag.feature, flag.tags)], { ...guardValues(flag), ...metadataValues(flag.feature) })
    if (written === 0 && returned && returned.liveChildren.length > 0) throw liveChildrenError(name, returned.liveChildren)
    return written > 0 || undefined
  })
}

/** A live flag as archiving reads it: with the live flags that depend on it (children), which refuse its archiving. */
const flagToArchiveRead = flagVersionRead<{ liveChildren: string[] }>('flagpost_flag_to_archive', {
  extra: sql`coalesce((select json_agg(d.child order by d.child) from ${featureDependencies} d join ${features} c on c.name = d.child
    where d.parent = f.name and c.archived_at is null), '[]') as "liveChildren"`,
})

/** Archives a flag under its lock (a patch's last resort: see writeOptimistically); refused (400) while live flags depend on it. */
async function archiveLocked(tx: Db, caller: Author, row: FeatureRow, tags: EventTag[]) {
  const { actor, now } = caller
  const children = await tx
    .select({ name: featureDependencies.child })
    .from(featureDependencies)
    .innerJoin(features, eq(features.name, featureDependencies.child))
    .where(and(eq(featureDependencies.parent, row.name), isNull(features.archivedAt)))
    .orderBy(featureDependencies.child)
  if (children.length > 0) throw liveChildrenError(row.name, children.map((c) => c.name))
  await tx.update(features).set({ archivedAt: now }).where(eq(features.name, row.name))
  await enterStage(tx, row.name, 'archived', now)
  await recordEvents(tx, actor, now, [archivedEvent(metadataOf(row), tags)])
}

/** An archived flag as reviving reads it: with the environments it is enabled in (by display order), which reviving switches off. */
const archivedFlagRead = flagVersionRead<{ enabledEnvironments: string[] }>('flagpost_flag_to_revive', {
  extra: sql`coalesce((select json_agg(fe.environment order by env.sort_order, env.name) from ${featureEnvironments} fe join ${environments} env on env.name = fe.environment
    where fe.feature_name = f.name and fe.enabled), '[]') as "enabledEnvironments"`,
})

/**
 * Reviving's write: the archived flag of the project back (its version check, as guardSql's but for an archived
 * flag), every environment off, the archived stage of its lifecycle dropped, and the events.
 */
const reviveFlag = eventsStatement('flagpost_revive_flag', {
  alongside: [
    sql`update ${features} set archived_at = null, version = version + 1
      where name = ${p('name')} and project = ${p('project')} and archived_at is not null and version = ${p('version')}
        and (extract(epoch from created_at) * 1000)::float8 = ${p('createdAtMs')}
        and exists (select from ${projects} where id = ${p('project')} and archived_at is null)
      returning name`,
  ],
  guarded: true,
  unguarded: [
    sql`update ${featureEnvironments} set enabled = false where feature_name = ${p('name')} and enabled and ${guardPassed}`,
    sql`delete from ${featureLifecycles} where feature_name = ${p('name')} and stage = 'archived' and ${guardPassed}`,
  ],
})

/**
 * POST /api/admin/archive/revive/{featureName}: brings an archived flag back with every environment off, so reviving
 * never switches anything on by surprise. The flag is read, `authorize` checks the caller may revive a flag of its
 * project, and one statement revives it if it is still in that project at the version read.
 */
export async function reviveFeature(db: Db, caller: Author, name: string, authorize: (db: Db, projectId: string) => Promise<void>) {
  const { actor, now } = caller
  await untilUnchanged(`Feature flag ${name}`, async () => {
    const [flag] = await archivedFlagRead(db, { name })
    if (!flag || !flag.feature.archived) throw notFound(`Could not find an archived feature flag named ${name}`)
    await authorize(db, flag.feature.project)
    const { project } = flag.feature
    const events: NewEvent[] = [
      { type: 'feature-revived', project, featureName: name, data: { ...flag.feature, archived: false }, preData: flag.feature, tags: flag.tags },
      ...flag.enabledEnvironments.map((environment): NewEvent => ({ type: 'feature-environment-disabled', project, featureName: name, environment, data: { enabled: false }, preData: { enabled: true }, tags: flag.tags })),
    ]
    const { written } = await reviveFlag(db, actor, now, events, guardValues(flag))
    // As reviving flags of a project: an archived project's flags stay archived until it is revived.
    if (written === 0) await refuseArchivedProject(db, project)
    return written > 0 || undefined
  })
}

/** The environment switch's optimistic write (see src/flags/states.ts): the switch and its event, and what the answer needs besides the state. */
const switchEnvironment = eventsStatement('flagpost_switch_environment', {
  alongside: [
    guardSql(),
    sql`update ${featureEnvironments} set enabled = ${sql.placeholder('enabled')}
      where feature_name = ${sql.placeholder('name')} and environment = ${sql.placeholder('environment')} and enabled = not ${sql.placeholder('enabled')} and ${guardPassed}
      returning feature_name`,
  ],
  guarded: true,
  returning: unversionedPartsJson,
})

/**
 * The environment switch's optimistic writes that switch on and do more (see switchDecision): move the flag's
 * lifecycle on (`stage`), add the project environment's default strategy (`strategy`; the version check also
 * checks the default is still the one the change was computed from, as it is not the flag's and moves no
 * version), or both, with their events, in one statement.
 */
function switchOnStatement(name: string, parts: { stage: boolean; strategy: boolean }) {
  const sameDefault = sql`(select pe.default_strategy from ${projectEnvironments} pe where pe.project_id = ${p('project')} and pe.environment_name = ${p('environment')}) is not distinct from ${p('defaultStrategy')}::jsonb`
  const alongside = [
    guardSql(undefined, parts.strategy ? sameDefault : undefined),
    sql`update ${featureEnvironments} set enabled = true where feature_name = ${p('name')} and environment = ${p('environment')} and not enabled and ${guardPassed} returning feature_name`,
  ]
  if (parts.stage) {
    alongside.push(sql`insert into ${featureLifecycles} (feature_name, stage, entered_stage_at, status, status_value)
      select ${p('name')}, ${p('stage')}, ${p('createdAt')}::timestamptz, null, null where ${guardPassed}
      on conflict (feature_name, stage) do update set entered_stage_at = excluded.entered_stage_at, status = null, status_value = null
      returning feature_name`)
  }
  if (parts.strategy) alongside.push(strategyInsertSql)
  return eventsStatement(name, { alongside, guarded: true, returning: unversionedPartsJson, unguarded: parts.strategy ? [strategySegmentsSql] : [] })
}

const switchOnStatements = {
  stage: switchOnStatement('flagpost_switch_on_stage', { stage: true, strategy: false }),
  strategy: switchOnStatement('flagpost_switch_on_default_strategy', { stage: false, strategy: true }),
  both: switchOnStatement('flagpost_switch_on_stage_default_strategy', { stage: true, strategy: true }),
}

/**
 * Switches an environment on and moves the lifecycle on and/or adds the default strategy, computed from `state`:
 * undefined when the version check (or the default strategy's) failed, or when the default strategy names
 * segments (checked under the lock, which tells which are unknown).
 */
async function switchOnOptimistically(db: Db, caller: Caller, state: FlagState, env: Feature['environments'][number], decision: { addDefaultStrategy: boolean; nextStage?: string | undefined }, next: (state: FlagState) => void) {
  const { actor, now, key: principal } = caller
  const { feature } = state
  const events: NewEvent[] = []
  const values: Record<string, unknown> = { ...guardValues(state), environment: env.name, principal, stage: decision.nextStage ?? null }
  let strategies = env.strategies
  if (decision.addDefaultStrategy) {
    const stored = state.defaultStrategies[env.name] ?? null
    const input = defaultStrategyFor(stored as StrategyInput | null, feature.name)
    const strategy = normalizeStrategy(input, feature.name)
    if (strategy.segments.length > 0) return undefined
    const added = strategyToAdd(feature.name, env, strategy, input.sortOrder, now)
    Object.assign(values, added.values, { defaultStrategy: stored === null ? null : JSON.stringify(stored) })
    events.push({ type: 'feature-strategy-add', project: feature.project, featureName: feature.name, environment: env.name, tags: eventTagsOf(feature), data: added.view, preData: null })
    strategies = withStrategy(env.strategies, added.view)
  }
  events.push(switchedEvent(feature.project, feature.name, env.name, true, eventTagsOf(feature)))
  const run = decision.addDefaultStrategy ? (decision.nextStage ? switchOnStatements.both : switchOnStatements.strategy) : switchOnStatements.stage
  const { written, returned } = await run(db, actor, now, events, values)
  if (written === 0) return undefined
  const lifecycle = decision.nextStage ? { stage: decision.nextStage as Feature['lifecycle']['stage'], enteredStageAt: now.toISOString() } : undefined
  const changed = nextState(state, { environments: new Map([[env.name, { enabled: true, strategies }]]), lifecycle })
  next(changed)
  return asWrittenBy(changed.feature, returned!, actor)
}

/** What is known of an environment of a flag when it is switched, from a read or under the flag's lock. */
interface SwitchedEnvironment {
  enabled: boolean
  hasEnabledStrategies: boolean
  /** The environment's type (production or another). */
  type: string
  /** The flag's lifecycle stage. */
  stage: string
}

/**
 * The one rule of the environment switch, which every way of writing it follows: nothing to do when the
 * environment is already so; enabling one with no enabled strategy also adds the default strategy, and
 * enabling may move the flag's lifecycle on (see stageOnEnable). `plain`: the switch alone, which can be
 * written optimistically; anything more is written under the flag's lock.
 */
function switchDecision(env: SwitchedEnvironment, enabled: boolean) {
  if (env.enabled === enabled) return { change: false } as const
  const addDefaultStrategy = enabled && !env.hasEnabledStrategies
  const nextStage = enabled ? stageOnEnable(env.type, env.stage) : undefined
  return { change: true, addDefaultStrategy, nextStage, plain: !addDefaultStrategy && nextStage === undefined } as const
}

/**
 * POST …/features/{featureName}/environments/{environment}/on and /off: switches the flag in one environment; an event only when the state changes.
 * Written optimistically (one statement; see src/flags/states.ts), except when enabling adds a default
 * strategy or moves the lifecycle on: then under the flag's lock.
 */
export async function setEnvironmentEnabled(
  db: Db,
  caller: Caller,
  { enabled, ...target }: { projectId: string; featureName: string; environment: string; enabled: boolean },
  states?: FlagStates,
): Promise<Feature> {
  const { actor, now, key: principal } = caller
  const missing = () => notFound(`Could not find environment ${target.environment} for feature flag ${target.featureName}`)
  return writeOptimistically(db, states, target, { principal, now }, {
    fromRead(feature) {
      const env = feature.environments.find((e) => e.name === target.environment)
      if (!env) throw missing()
      return switchDecision({ ...env, stage: feature.lifecycle.stage }, enabled).change ? undefined : feature
    },
    async write(state, next) {
      const { feature } = state
      const env = feature.environments.find((e) => e.name === target.environment)
      const decision = env && switchDecision({ ...env, stage: feature.lifecycle.stage }, enabled)
      if (!env || !decision?.change) return undefined
      if (!decision.plain) return switchOnOptimistically(db, caller, state, env, decision, next)
      const event = switchedEvent(feature.project, feature.name, env.name, enabled, eventTagsOf(feature))
      const { written, returned } = await switchEnvironment(db, actor, now, [event], { ...guardValues(state), enabled, environment: env.name, principal })
      if (written === 0) return undefined
      const changed = nextState(state, { environments: new Map([[env.name, { enabled }]]) })
      next(changed)
      return asWrittenBy(changed.feature, returned!, actor)
    },
    locked: () =>
      db.transaction(async (tx) => {
        const { row, tags, fe, type, enabledStrategies, stage } = await lockForChange(tx, target.projectId, target.featureName, target.environment)
        const decision = switchDecision({ enabled: fe.enabled, hasEnabledStrategies: enabledStrategies > 0, type, stage }, enabled)
        if (decision.change) {
          if (decision.addDefaultStrategy) {
            await insertStrategy(tx, { actor, now }, { project: row.project, featureName: row.name, environment: target.environment, tags }, await defaultStrategy(tx, row, target.environment))
          }
          if (decision.nextStage) await enterStage(tx, row.name, decision.nextStage, now)
          const update = tx
            .update(featureEnvironments)
            .set({ enabled })
            .where(and(eq(featureEnvironments.featureName, row.name), eq(featureEnvironments.environment, target.environment)))
          await recordEvents(tx, actor, now, [switchedEvent(row.project, row.name, target.environment, enabled, tags)], { alongside: [update] })
        }
        return reload(tx, row.name, caller)
      }),
  })
}

/** The project environment's default strategy, else a 100% gradual rollout grouped by the flag's name. */
async function defaultStrategy(tx: Db, row: FeatureRow, environment: string): Promise<StrategyInput> {
  const [pe] = await tx
    .select({ defaultStrategy: projectEnvironments.defaultStrategy })
    .from(projectEnvironments)
    .where(and(eq(projectEnvironments.projectId, row.project), eq(projectEnvironments.environment, environment)))
  return defaultStrategyFor(pe?.defaultStrategy as StrategyInput | null | undefined, row.name)
}

/** The strategy enabling a flag with none adds: the configured default (a rollout grouped by the flag), else a 100% rollout. */
export function defaultStrategyFor(configured: StrategyInput | null | undefined, featureName: string): StrategyInput {
  if (configured) return { ...configured, parameters: { ...(configured.parameters ?? {}), ...(configured.name === 'flexibleRollout' && !configured.parameters?.groupId ? { groupId: featureName } : {}) } }
  return { name: 'flexibleRollout', constraints: [], parameters: { rollout: '100', stickiness: 'default', groupId: featureName } }
}

const PatchedFlagSchema = z
  .object({
    name: z.string(),
    project: z.string(),
    description: z.string().max(10_000).nullable(),
    type: FlagTypeSchema,
    stale: z.boolean(),
    impressionData: z.boolean(),
    archived: z.boolean(),
  })
  .strict()

/** Applies an RFC 6902 patch to a JSON document; any failure is a 400 and nothing is written. */
export function applyJsonPatch<T>(document: T, operations: PatchOperation[]): unknown {
  try {
    return applyPatch(document, operations)
  } catch (error) {
    const e = error as { name?: string; message?: string; index?: number }
    const where = e.index !== undefined ? ` (operation ${e.index})` : ''
    const reason = e.name === 'TEST_OPERATION_FAILED' ? 'a test operation failed' : (e.message ?? 'invalid patch').split('\n')[0]
    throw validationError(`The patch cannot be applied${where}: ${reason}`)
  }
}

/** The flag patch's optimistic write (see src/flags/states.ts): the flag's new metadata and its events, and what the answer needs besides the state. */
const patchMetadataStatement = eventsStatement('flagpost_patch_flag', {
  alongside: [
    guardSql(sql`description = ${sql.placeholder('description')}, type = ${sql.placeholder('type')}, stale = ${sql.placeholder('stale')}, impression_data = ${sql.placeholder('impressionData')}`),
  ],
  guarded: true,
  returning: unversionedPartsJson,
})

/**
 * PATCH /api/admin/projects/{projectId}/features/{featureName}: JSON Patch of a flag's description, type, stale, impressionData and archived. Written
 * optimistically (one statement; see src/flags/states.ts), archiving too.
 */
export async function patchFeature(
  db: Db,
  caller: Caller,
  { projectId, featureName: name, operations }: { projectId: string; featureName: string; operations: PatchOperation[] },
  states?: FlagStates,
): Promise<Feature> {
  const { actor, now, key: principal } = caller
  const variantOp = operations.find((o) => o.path === '/variants' || o.path.startsWith('/variants/') || o.from?.startsWith('/variants'))
  if (variantOp) throw validationError(`Variants cannot be changed here: use PATCH /api/admin/projects/${projectId}/features/${name}/variants (operation ${operations.indexOf(variantOp)})`)
  return writeOptimistically(db, states, { projectId, featureName: name }, { principal, now }, {
    fromRead(feature) {
      const patch = patchMetadata(metadataOf(feature), eventTagsOf(feature), operations)
      return !patch.change && !patch.archive ? feature : undefined
    },
    async write(state, next) {
      const { change, archive } = patchMetadata(metadataOf(state.feature), eventTagsOf(state.feature), operations)
      if (archive) return archiveOptimistically(db, caller, state, change)
      if (!change) return undefined
      const { written, returned } = await patchMetadataStatement(db, actor, now, change.events, { ...guardValues(state), ...change.values, principal })
      if (written === 0) return undefined
      const changed = nextState(state, { metadata: change.values })
      next(changed)
      return asWrittenBy(changed.feature, returned!, actor)
    },
    locked: () =>
      db.transaction(async (tx) => {
        const { row, tags } = await lockForChange(tx, projectId, name)
        const { change, archive } = patchMetadata(metadataOf(row), tags, operations)
        if (change) await recordEvents(tx, actor, now, change.events, { alongside: [tx.update(features).set(change.values).where(eq(features.name, name))] })
        if (archive) await archiveLocked(tx, { actor, now }, { ...row, ...change?.values }, tags)
        return reload(tx, name, caller)
      }),
  })
}

/** A patch archiving the flag (and maybe changing its metadata), computed from `state`: undefined when the version check failed. */
async function archiveOptimistically(db: Db, caller: Caller, state: FlagState, change: ReturnType<typeof patchMetadata>['change']) {
  const { actor, now, key: principal } = caller
  const metadata = { ...metadataOf(state.feature), ...change?.values }
  const events = [...(change?.events ?? []), archivedEvent(metadata, eventTagsOf(state.feature))]
  const { written, returned } = await patchArchivingFlag(db, actor, now, events, { ...guardValues(state), ...metadataValues(metadata), principal })
  // As archiving it alone (and Unleash): a parent is not archived away from the live flags that depend on it.
  if (written === 0 && returned && returned.liveChildren.length > 0) throw liveChildrenError(state.feature.name, returned.liveChildren)
  if (written === 0) return undefined
  // The current stage is the newest one entered, the later in the lifecycle on a tie: archived, unless the clock went back.
  const current = state.feature.lifecycle
  const lifecycle = Date.parse(current.enteredStageAt) > now.getTime() ? current : { stage: 'archived' as const, enteredStageAt: now.toISOString() }
  const archived = nextState(state, { metadata: { ...change?.values, archived: true }, lifecycle })
  return asWrittenBy({ ...archived.feature, archivedAt: now.toISOString() }, returned!.parts!, actor)
}

/** A flag patch applied to a flag: what to write (and its events), and whether it archives the flag; 400 when invalid. */
function patchMetadata(before: Metadata, tags: EventTag[], operations: PatchOperation[]) {
  const parsed = PatchedFlagSchema.safeParse(applyJsonPatch(before, operations))
  if (!parsed.success) throw zodValidationError(parsed.error, 'patched flag')
  const after = parsed.data
  if (after.name !== before.name) throw validationError('The name of a flag cannot be changed')
  if (after.project !== before.project) throw validationError('The project of a flag cannot be changed with a patch')
  const changed = after.description !== before.description || after.type !== before.type || after.stale !== before.stale || after.impressionData !== before.impressionData
  if (!changed) return { change: undefined, archive: after.archived }
  const values = { description: after.description, type: after.type, stale: after.stale, impressionData: after.impressionData }
  const common = { project: before.project, featureName: before.name, tags }
  const events: NewEvent[] = [{ type: 'feature-metadata-updated', ...common, data: { ...before, ...values }, preData: before }]
  if (after.stale !== before.stale) events.push({ type: after.stale ? 'feature-stale-on' : 'feature-stale-off', ...common, data: { stale: after.stale }, preData: { stale: before.stale } })
  if (after.type !== before.type) events.push({ type: 'feature-type-updated', ...common, data: { type: after.type }, preData: { type: before.type } })
  return { change: { values, events }, archive: after.archived }
}
