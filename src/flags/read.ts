import { and, asc, desc, eq, inArray, isNull, or, sql, type SQL } from 'drizzle-orm'
import {
  environments,
  events,
  favoriteFeatures,
  featureDependencies,
  featureEnvironments,
  featureLifecycles,
  features,
  featureStrategies,
  featureStrategySegments,
  featureTags,
} from '../../schema/index.js'
import type { Db } from '../db.js'
import type { Constraint, Strategy } from '../strategies/schemas.js'
import type { Variant } from '../variants/schemas.js'
import { avatarCache } from '../users/avatar.js'
import { stageRank } from './lifecycle.js'
import { EXPECTED_LIFETIME_DAYS, type Feature, type FlagType } from './schemas.js'

/** Unleash's id for changes made with an admin token rather than by a user. */
export const TOKEN_USER_ID = -1337

type StrategyRow = typeof featureStrategies.$inferSelect & { segments: number[] }

export function strategyView(row: StrategyRow): Strategy {
  return {
    id: row.id,
    name: row.name,
    title: row.title,
    disabled: row.disabled,
    featureName: row.featureName,
    sortOrder: row.sortOrder,
    segments: row.segments,
    constraints: row.constraints as Constraint[],
    variants: row.variants as Variant[],
    parameters: row.parameters as Record<string, string>,
  }
}

const segmentIdsOf = sql<number[]>`coalesce((select array_agg(${featureStrategySegments.segmentId} order by ${featureStrategySegments.segmentId}) from ${featureStrategySegments} where ${featureStrategySegments.strategyId} = ${featureStrategies.id}), '{}')`

/** Strategies of the given flags (optionally one environment), in evaluation order. */
export async function loadStrategies(db: Db, featureNames: string[], environment?: string): Promise<StrategyRow[]> {
  if (featureNames.length === 0) return []
  const filter = [inArray(featureStrategies.featureName, featureNames)]
  if (environment) filter.push(eq(featureStrategies.environment, environment))
  const rows = await db
    .select({ strategy: featureStrategies, segments: segmentIdsOf })
    .from(featureStrategies)
    .where(and(...filter))
    .orderBy(asc(featureStrategies.sortOrder), asc(featureStrategies.createdAt), asc(featureStrategies.id))
  return rows.map((r) => ({ ...r.strategy, segments: r.segments.map(Number) }))
}

export interface FeatureQuery {
  names?: string[]
  project?: string
  includeArchived?: boolean
}

/**
 * Reads whole flags with a fixed number of set-based queries, however many flags match:
 * flags, environments, strategies, tags, dependencies, lifecycle, collaborators, favorites.
 */
/** Who is reading (their favorites) and when (staleness). */
export interface Viewer {
  principal: string
  now: Date
}

export async function loadFeatures(db: Db, query: FeatureQuery, viewer: Viewer): Promise<Feature[]> {
  const { principal, now } = viewer
  const filter: SQL[] = []
  if (query.names) filter.push(inArray(features.name, query.names))
  if (query.project) filter.push(eq(features.project, query.project))
  if (!query.includeArchived) filter.push(isNull(features.archivedAt))
  const rows = await db.select().from(features).where(and(...filter)).orderBy(asc(features.name))
  if (rows.length === 0) return []
  const names = rows.map((r) => r.name)

  const [envRows, strategyRows, tagRows, dependencyRows, lifecycleRows, collaboratorRows, favoriteRows] = await Promise.all([
    db
      .select({ fe: featureEnvironments, type: environments.type, sortOrder: environments.sortOrder })
      .from(featureEnvironments)
      .innerJoin(environments, eq(environments.name, featureEnvironments.environment))
      .where(inArray(featureEnvironments.featureName, names))
      .orderBy(asc(environments.sortOrder), asc(environments.name)),
    loadStrategies(db, names),
    db.select().from(featureTags).where(inArray(featureTags.featureName, names)).orderBy(asc(featureTags.type), asc(featureTags.value)),
    db
      .select()
      .from(featureDependencies)
      .where(or(inArray(featureDependencies.child, names), inArray(featureDependencies.parent, names)))
      .orderBy(asc(featureDependencies.parent), asc(featureDependencies.child)),
    db
      .selectDistinctOn([featureLifecycles.featureName])
      .from(featureLifecycles)
      .where(inArray(featureLifecycles.featureName, names))
      .orderBy(featureLifecycles.featureName, desc(featureLifecycles.enteredStageAt), desc(stageRank)),
    db
      .select({ featureName: events.featureName, createdBy: events.createdBy, userId: events.createdByUserId, latest: sql<number>`max(${events.id})`.mapWith(Number) })
      .from(events)
      .where(inArray(events.featureName, names))
      .groupBy(events.featureName, events.createdBy, events.createdByUserId)
      .orderBy(desc(sql`max(${events.id})`)),
    db.select({ featureName: favoriteFeatures.featureName }).from(favoriteFeatures).where(and(eq(favoriteFeatures.principal, principal), inArray(favoriteFeatures.featureName, names))),
  ])

  const avatar = avatarCache()
  const favorites = new Set(favoriteRows.map((f) => f.featureName))
  const group = <T, K>(items: T[], key: (item: T) => K) => {
    const map = new Map<K, T[]>()
    for (const item of items) {
      const list = map.get(key(item))
      if (list) list.push(item)
      else map.set(key(item), [item])
    }
    return map
  }
  const envsByFeature = group(envRows, (r) => r.fe.featureName)
  const strategiesByFeatureEnv = group(strategyRows, (s) => `${s.featureName}\u0000${s.environment}`)
  const tagsByFeature = group(tagRows, (t) => t.featureName)
  const parentsOf = group(dependencyRows, (d) => d.child)
  const childrenOf = group(dependencyRows, (d) => d.parent)
  const lifecycleOf = new Map(lifecycleRows.map((l) => [l.featureName, l]))
  const collaboratorsOf = group(collaboratorRows, (c) => c.featureName!)

  return Promise.all(
    rows.map(async (row): Promise<Feature> => {
      const envs = (envsByFeature.get(row.name) ?? []).map(({ fe, type, sortOrder }) => {
        const strategies = (strategiesByFeatureEnv.get(`${row.name}\u0000${fe.environment}`) ?? []).map(strategyView)
        const variants = fe.variants as Variant[]
        return {
          name: fe.environment,
          featureName: row.name,
          environment: fe.environment,
          type,
          enabled: fe.enabled,
          sortOrder,
          variantCount: variants.length,
          strategies,
          variants,
          lastSeenAt: fe.lastSeenAt?.toISOString() ?? null,
          hasStrategies: strategies.length > 0,
          hasEnabledStrategies: strategies.some((s) => !s.disabled),
        }
      })
      const lastSeen = envs.map((e) => e.lastSeenAt).filter((s): s is string => s !== null).sort().at(-1) ?? null
      const lifecycle = lifecycleOf.get(row.name)
      return {
        name: row.name,
        type: row.type as FlagType,
        description: row.description,
        archived: row.archivedAt !== null,
        project: row.project,
        enabled: envs.some((e) => e.enabled),
        stale: row.stale,
        potentiallyStale: isPotentiallyStale(row, now),
        favorite: favorites.has(row.name),
        impressionData: row.impressionData,
        createdAt: row.createdAt.toISOString(),
        createdBy: { id: row.createdByUserId ?? TOKEN_USER_ID, name: row.createdBy, imageUrl: await avatar(row.createdBy) },
        archivedAt: row.archivedAt?.toISOString() ?? null,
        lastSeenAt: lastSeen,
        environments: envs,
        variants: envs[0]?.variants ?? [],
        tags: (tagsByFeature.get(row.name) ?? []).map((t) => ({ value: t.value, type: t.type })),
        children: (childrenOf.get(row.name) ?? []).map((d) => d.child),
        lifecycle: {
          stage: (lifecycle?.stage ?? 'initial') as Feature['lifecycle']['stage'],
          enteredStageAt: (lifecycle?.enteredStageAt ?? row.createdAt).toISOString(),
        },
        dependencies: (parentsOf.get(row.name) ?? []).map((d) => ({ feature: d.parent, enabled: d.enabled, variants: d.variants as string[] })),
        collaborators: {
          users: await Promise.all(
            (collaboratorsOf.get(row.name) ?? []).map(async (c) => ({
              id: c.userId ?? TOKEN_USER_ID,
              name: c.createdBy || 'unknown',
              imageUrl: await avatar(c.createdBy),
            })),
          ),
        },
      }
    }),
  )
}

export async function loadFeature(db: Db, name: string, viewer: Viewer, includeArchived = true): Promise<Feature | undefined> {
  return (await loadFeatures(db, { names: [name], includeArchived }, viewer))[0]
}

/** Not marked stale, but older than its type's expected lifetime (kill switches and permissions never are). */
export function isPotentiallyStale(row: { stale: boolean; type: string; createdAt: Date }, now: Date): boolean {
  const days = EXPECTED_LIFETIME_DAYS[row.type as FlagType]
  return !row.stale && days !== null && days !== undefined && now.getTime() - row.createdAt.getTime() > days * 86_400_000
}
