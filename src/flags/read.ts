import { sql, type SQL } from 'drizzle-orm'
import { features } from '../../schema/index.js'
import { statement, type Db } from '../db.js'
import { SYSTEM_USER_ID, type Actor } from '../core/principal.js'
import { notFound } from '../core/errors.js'
import type { Strategy } from '../strategies/schemas.js'
import { segmentIdsOf } from '../strategies/read.js'
import type { Variant } from '../variants/schemas.js'
import { avatarUrl } from '../users/avatar.js'
import { stageRankOf } from './lifecycle.js'
import type { Feature, FlagType } from './schemas.js'
import { linksOf, type FeatureLink } from '../links/store.js'

/** Who is reading (their favorites) and when (staleness). */
export interface Viewer {
  principal: string
  now: Date
}

/** Epoch milliseconds of a timestamp column: the same instant on every driver (they differ in how they return dates). */
const epochMs = (column: SQL | string) => sql.raw(`(extract(epoch from ${column}) * 1000)::float8`)
const isoOf = (ms: number) => new Date(ms).toISOString()
const isoOrNull = (ms: number | null) => (ms === null ? null : isoOf(ms))

export interface FeatureReadRow {
  name: string
  project: string
  type: string
  description: string | null
  stale: boolean
  potentially_stale: boolean
  impression_data: boolean
  created_at: number
  created_by: string
  created_by_user_id: number | null
  archived_at: number | null
  version: number
  environments: {
    environment: string
    enabled: boolean
    variants: Variant[]
    lastSeenAt: number | null
    type: string
    sortOrder: number
    strategies: (Omit<Strategy, 'featureName'> & { disabled: boolean })[]
  }[]
  tags: { value: string; type: string }[]
  children: string[]
  dependencies: { feature: string; enabled: boolean; variants: string[] }[]
  links: FeatureLink[]
  lifecycle: { stage: string; enteredStageAt: number } | null
  collaborators: { id: number | null; name: string }[]
  favorite: boolean
}

/**
 * Reads the live flags of a project in one query, however many there are: each flag with its environments,
 * strategies (and their segments), tags, dependencies, links, lifecycle stage, collaborators and whether the
 * viewer made it a favorite, gathered by Postgres as JSON. One round trip instead of one per kind.
 */
export async function loadFeatures(db: Db, projectId: string, viewer: Viewer): Promise<Feature[]> {
  const rows = await projectFeatures(db, { project: projectId, principal: viewer.principal })
  return Promise.all(rows.map(async (row) => (await toFeature(row)).feature))
}

// The parts of a flag its version does not pin down (see src/flags/states.ts): who made it a favorite, when
// SDKs last saw it, who changed it (events of change requests name a flag without changing it), and the
// dependencies (removing one locks the child only). `flag`: SQL naming the flag.
const childrenOf = (flag: SQL) => sql`coalesce((select json_agg(d.child order by d.child) from feature_dependencies d where d.parent = ${flag}), '[]')`
const dependenciesOf = (flag: SQL) =>
  sql`coalesce((select json_agg(json_build_object('feature', d.parent, 'enabled', d.enabled, 'variants', d.variants) order by d.parent) from feature_dependencies d where d.child = ${flag}), '[]')`
const collaboratorsOf = (flag: SQL) =>
  sql`coalesce((select json_agg(json_build_object('id', c.created_by_user_id, 'name', c.created_by) order by c.latest_event_id desc) from feature_collaborators c where c.feature_name = ${flag}), '[]')`
const favoriteOf = (flag: SQL, principal: unknown) => sql`exists (select 1 from favorite_features ff where ff.principal = ${principal} and ff.feature_name = ${flag})`

/** The flags matching `where` (SQL about `features`), as the rows `toFeature` reads; `principal`'s favorites; `extra` columns (SQL about `f`). */
function featuresSql(where: SQL | undefined, principal: unknown, extra?: SQL): SQL {
  const flag = sql.raw('f.name')
  return sql`
    select
      f.name, f.project, f.type, f.description, f.stale, f.potentially_stale, f.impression_data, f.created_by, f.created_by_user_id, f.version,
      ${epochMs('f.created_at')} as created_at, ${epochMs('f.archived_at')} as archived_at,
      coalesce((
        select json_agg(json_build_object(
          'environment', fe.environment, 'enabled', fe.enabled, 'variants', fe.variants, 'lastSeenAt', ${epochMs('fe.last_seen_at')},
          'type', env.type, 'sortOrder', env.sort_order,
          'strategies', coalesce((
            select json_agg(json_build_object(
              'id', s.id, 'name', s.strategy_name, 'title', s.title, 'disabled', s.disabled, 'sortOrder', s.sort_order,
              'segments', ${segmentIdsOf(sql.raw('s.id'))},
              'constraints', s.constraints, 'variants', s.variants, 'parameters', s.parameters
            ) order by s.sort_order, s.created_at, s.id)
            from feature_strategies s where s.feature_name = f.name and s.environment = fe.environment
          ), '[]')
        ) order by env.sort_order, env.name)
        from feature_environments fe join environments env on env.name = fe.environment
        where fe.feature_name = f.name
      ), '[]') as environments,
      coalesce((select json_agg(json_build_object('value', t.tag_value, 'type', t.tag_type) order by t.tag_type, t.tag_value) from feature_tags t where t.feature_name = f.name), '[]') as tags,
      ${childrenOf(flag)} as children,
      ${dependenciesOf(flag)} as dependencies,
      ${linksOf(flag)} as links,
      (select json_build_object('stage', l.stage, 'enteredStageAt', ${epochMs('l.entered_stage_at')})
        from feature_lifecycles l where l.feature_name = f.name
        order by l.entered_stage_at desc, ${stageRankOf('l.stage')} desc limit 1) as lifecycle,
      ${collaboratorsOf(flag)} as collaborators,
      ${favoriteOf(flag, principal)} as favorite${extra ? sql`, ${extra}` : sql``}
    from (select * from ${features} where ${where}) f
    order by f.name`
}

type UnversionedParts = Pick<FeatureReadRow, 'favorite' | 'collaborators' | 'children' | 'dependencies'> & {
  /** Epoch milliseconds by environment. */
  lastSeen: Record<string, number | null>
}

/**
 * The parts of the flag named that its version does not pin down, as one JSON value for a statement's
 * `returning` (placeholders `name` and `principal`): what `asWrittenBy` puts into a flag known by version.
 */
const namedFlag = sql`${sql.placeholder('name')}::text`
export const unversionedPartsJson = sql<UnversionedParts>`(select json_build_object(
    'favorite', ${favoriteOf(namedFlag, sql.placeholder('principal'))},
    'lastSeen', coalesce((select json_object_agg(fe.environment, ${epochMs('fe.last_seen_at')}) from feature_environments fe where fe.feature_name = ${namedFlag}), '{}'),
    'collaborators', ${collaboratorsOf(namedFlag)},
    'children', ${childrenOf(namedFlag)},
    'dependencies', ${dependenciesOf(namedFlag)}))`

/**
 * The answer of a write by `actor`: the flag (as of a version, with the change) with its parts that the version
 * does not pin down as `parts` read them. The parts were read in the write's snapshot,
 * before its events: the actor is put first among the collaborators (newest first), as the next read has it.
 */
export async function asWrittenBy(feature: Feature, parts: UnversionedParts, actor: Actor): Promise<Feature> {
  const environments = feature.environments.map((e) => ({ ...e, lastSeenAt: isoOrNull(parts.lastSeen[e.name] ?? null) }))
  const author = { id: actor.createdByUserId, name: actor.createdBy }
  const others = parts.collaborators.filter((c) => c.id !== author.id || c.name !== author.name)
  return {
    ...feature,
    favorite: parts.favorite,
    environments,
    lastSeenAt: lastSeenOf(environments),
    children: parts.children,
    dependencies: parts.dependencies,
    collaborators: { users: await collaboratorsView([author, ...others]) },
  }
}

const lastSeenOf = (environments: { lastSeenAt: string | null }[]) =>
  environments
    .map((e) => e.lastSeenAt)
    .filter((s): s is string => s !== null)
    .sort()
    .at(-1) ?? null

/** Rows without a user id (written before every actor had one) are shown as the system's, as Unleash does. */
const collaboratorsView = (rows: FeatureReadRow['collaborators']) =>
  Promise.all(rows.map(async (c) => ({ id: c.id ?? SYSTEM_USER_ID, name: c.name || 'unknown', imageUrl: await avatarUrl(c.name) })))

const featureNamed = statement<FeatureReadRow>('flagpost_feature_named', () => featuresSql(sql`${features.name} = ${sql.placeholder('name')}`, sql.placeholder('principal')))
const projectFeatures = statement<FeatureReadRow>('flagpost_project_features', () =>
  featuresSql(sql`${features.project} = ${sql.placeholder('project')} and ${features.archivedAt} is null`, sql.placeholder('principal')),
)

/** A flag (row of `featuresSql`, or its JSON) as the API shows it, with its version (see src/flags/lock.ts). */
export async function toFeature(row: FeatureReadRow): Promise<{ feature: Feature; version: number; createdAtMs: number }> {
  const envs = row.environments.map((fe) => {
    const strategies: Strategy[] = fe.strategies.map((s) => ({ ...s, featureName: row.name, segments: s.segments.map(Number) }))
    return {
      name: fe.environment,
      featureName: row.name,
      environment: fe.environment,
      type: fe.type,
      enabled: fe.enabled,
      sortOrder: fe.sortOrder,
      variantCount: fe.variants.length,
      strategies,
      variants: fe.variants,
      lastSeenAt: isoOrNull(fe.lastSeenAt),
      hasStrategies: strategies.length > 0,
      hasEnabledStrategies: strategies.some((s) => !s.disabled),
    }
  })
  const createdAt = new Date(row.created_at)
  const feature: Feature = {
    name: row.name,
    type: row.type as FlagType,
    description: row.description,
    archived: row.archived_at !== null,
    project: row.project,
    enabled: envs.some((e) => e.enabled),
    stale: row.stale,
    potentiallyStale: row.potentially_stale,
    favorite: row.favorite,
    impressionData: row.impression_data,
    createdAt: createdAt.toISOString(),
    createdBy: { id: row.created_by_user_id ?? SYSTEM_USER_ID, name: row.created_by, imageUrl: await avatarUrl(row.created_by) },
    archivedAt: isoOrNull(row.archived_at),
    lastSeenAt: lastSeenOf(envs),
    environments: envs,
    variants: envs[0]?.variants ?? [],
    tags: row.tags,
    children: row.children,
    lifecycle: {
      stage: (row.lifecycle?.stage ?? 'initial') as Feature['lifecycle']['stage'],
      enteredStageAt: row.lifecycle ? isoOf(row.lifecycle.enteredStageAt) : createdAt.toISOString(),
    },
    dependencies: row.dependencies,
    collaborators: { users: await collaboratorsView(row.collaborators) },
    links: row.links,
  }
  return { feature, version: row.version, createdAtMs: row.created_at }
}

/** One flag, archived or not (unless `includeArchived` is false), in one prepared statement. */
export async function loadFeature(db: Db, name: string, viewer: Viewer, includeArchived = true): Promise<Feature | undefined> {
  const [row] = await featureNamed(db, { name, principal: viewer.principal })
  if (!row || (!includeArchived && row.archived_at !== null)) return undefined
  return (await toFeature(row)).feature
}

// With the default strategies of the flag's project environments (as stored), which enabling an environment with
// no enabled strategy adds: they are not the flag's, so a write that adds one checks it is still the same.
const featureForChange = statement<FeatureReadRow & { default_strategies: Record<string, unknown> }>('flagpost_feature_for_change', () =>
  featuresSql(
    sql`${features.name} = ${sql.placeholder('name')}`,
    sql.placeholder('principal'),
    sql`coalesce((select json_object_agg(pe.environment_name, pe.default_strategy) from project_environments pe where pe.project_id = f.project), '{}') as default_strategies`,
  ),
)

/**
 * A live flag of the project, its version and creation instant (epoch ms), and its project environments' default
 * strategies, for an optimistic write; 404 when there is none.
 */
export async function readFeatureForChange(db: Db, projectId: string, name: string, viewer: Viewer) {
  const [row] = await featureForChange(db, { name, principal: viewer.principal })
  const found = row && (await toFeature(row))
  if (!found || found.feature.project !== projectId || found.feature.archived) throw notFound(`Could not find feature flag ${name} in project ${projectId}`)
  return { ...found, defaultStrategies: row.default_strategies }
}
