import { and, asc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm'
import { environments, featureDependencies, featureEnvironments, features, featureStrategies, featureStrategySegments, segments } from '../../schema/index.js'
import { segmentIdsOf } from '../strategies/read.js'
import { batch, type Db } from '../db.js'
import type { Constraint } from '../strategies/schemas.js'
import type { Variant } from '../variants/schemas.js'
import { readRevision, type Revision } from './revision.js'

/** What one SDK payload covers: an environment, a set of projects, Unleash's optional filters, and the segment format. */
export interface ClientScope {
  environment: string
  /** `*` for every project; otherwise sorted and non-empty (an empty intersection is `[]`, which matches nothing). */
  projects: '*' | string[]
  namePrefix?: string
  /** `[type, value]` pairs, sorted; a flag matches when it has any of them. */
  tags?: [string, string][]
  /** For SDKs that do not know segments (no `Unleash-Client-Spec` of 4.2.0 or later): their constraints are copied into the strategies. */
  inlineSegmentConstraints: boolean
  /**
   * The token's projects, when a `project` filter narrows them to `projects`: the payload is then a filter of the
   * token's own (load.ts), never a read of its own. Not part of the key: the narrowed payload is the same whatever it came from.
   */
  within?: '*' | string[]
}

/** Whether the caller's filters (project, namePrefix, tag) narrow the scope below its token's: such payloads are charged (service.ts). */
export function isNarrowed(scope: ClientScope): boolean {
  return scope.within !== undefined || Boolean(scope.namePrefix) || (scope.tags?.length ?? 0) > 0
}

/** What identifies a payload besides its revision: everything of the scope that decides the body. */
export function scopeKey(scope: ClientScope): string {
  return JSON.stringify([scope.environment, scope.projects, scope.namePrefix ?? '', scope.tags ?? [], scope.inlineSegmentConstraints])
}

export interface ClientStrategyView {
  name: string
  constraints: Constraint[]
  parameters: Record<string, string>
  variants: Variant[]
  segments?: number[]
}

export interface ClientFeatureView {
  name: string
  type: string
  enabled: boolean
  stale: boolean
  impressionData: boolean
  project: string
  strategies: ClientStrategyView[]
  variants: Variant[]
  dependencies?: { feature: string; enabled: boolean; variants?: string[] }[]
}

export interface ClientSegmentView {
  id: number
  name: string
  constraints: Constraint[]
}

export interface ClientQueryView {
  environment: string
  project?: string[]
  namePrefix?: string
  tag?: string[][]
  inlineSegmentConstraints: boolean
}

export interface ClientFeaturesRead {
  revision: Revision
  features: ClientFeatureView[]
  segments: ClientSegmentView[]
}

/** The filters of a scope as a condition on `features` (archived flags never reach SDKs). */
function scopeFilter(scope: ClientScope): SQL {
  const filter: SQL[] = [isNull(features.archivedAt)]
  if (scope.projects !== '*') filter.push(scope.projects.length > 0 ? inArray(features.project, scope.projects) : sql`false`)
  if (scope.namePrefix) filter.push(sql`starts_with(${features.name}, ${scope.namePrefix})`)
  if (scope.tags && scope.tags.length > 0) {
    const pairs = sql.join(
      scope.tags.map(([type, value]) => sql`(${type}, ${value})`),
      sql`, `,
    )
    filter.push(sql`exists (select 1 from feature_tags ft where ft.feature_name = features.name and (ft.tag_type, ft.tag_value) in (${pairs}))`)
  }
  return and(...filter)!
}


/**
 * Reads what `GET /api/client/features` serves for a scope, and the revision it is current for, in one
 * read-only snapshot (one batch: one round trip over Neon's HTTP): five set-based queries (the revision, flags
 * with their environment, enabled strategies, dependencies, the segments those strategies use) whatever the
 * number of flags.
 */
export async function readClientFeatures(db: Db, scope: ClientScope): Promise<ClientFeaturesRead> {
  const inScope = (q: Db) => q.select({ name: features.name }).from(features).where(scopeFilter(scope))
  // Disabled strategies are left out, as Unleash's client API does.
  const servedStrategy = (q: Db) => and(eq(featureStrategies.environment, scope.environment), eq(featureStrategies.disabled, false), inArray(featureStrategies.featureName, inScope(q)))
  const [revision, flagRows, strategyRows, dependencyRows, segmentRows] = await batch(
    db,
    [
      (q) => readRevision(q),
      (q) =>
        q
          .select({
            name: features.name,
            type: features.type,
            project: features.project,
            stale: features.stale,
            impressionData: features.impressionData,
            enabled: featureEnvironments.enabled,
            variants: featureEnvironments.variants,
          })
          .from(features)
          .leftJoin(featureEnvironments, and(eq(featureEnvironments.featureName, features.name), eq(featureEnvironments.environment, scope.environment)))
          .where(scopeFilter(scope))
          .orderBy(asc(features.name)),
      (q) =>
        q
          .select({
            featureName: featureStrategies.featureName,
            name: featureStrategies.name,
            parameters: featureStrategies.parameters,
            constraints: featureStrategies.constraints,
            variants: featureStrategies.variants,
            segments: segmentIdsOf(featureStrategies.id),
          })
          .from(featureStrategies)
          .where(servedStrategy(q))
          .orderBy(asc(featureStrategies.featureName), asc(featureStrategies.sortOrder), asc(featureStrategies.createdAt), asc(featureStrategies.id)),
      (q) =>
        q
          .select()
          .from(featureDependencies)
          .where(inArray(featureDependencies.child, inScope(q)))
          .orderBy(asc(featureDependencies.child), asc(featureDependencies.parent)),
      (q) =>
        q
          .select({ id: segments.id, name: segments.name, constraints: segments.constraints })
          .from(segments)
          .where(
            inArray(
              segments.id,
              q
                .select({ id: featureStrategySegments.segmentId })
                .from(featureStrategySegments)
                .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegments.strategyId))
                .where(servedStrategy(q)),
            ),
          )
          .orderBy(asc(segments.id)),
    ],
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  )

  const segmentViews: ClientSegmentView[] = segmentRows.map((s) => ({ id: s.id, name: s.name, constraints: s.constraints as Constraint[] }))
  const segmentById = new Map(segmentViews.map((s) => [s.id, s]))

  const strategiesOf = new Map<string, ClientStrategyView[]>()
  for (const row of strategyRows) {
    const ids = row.segments.map(Number)
    const constraints = row.constraints as Constraint[]
    const strategy: ClientStrategyView = scope.inlineSegmentConstraints
      ? {
          name: row.name,
          constraints: [...constraints, ...ids.flatMap((id) => segmentById.get(id)?.constraints ?? [])],
          parameters: stringParameters(row.parameters),
          variants: row.variants as Variant[],
        }
      : {
          name: row.name,
          constraints,
          parameters: stringParameters(row.parameters),
          variants: row.variants as Variant[],
          ...(ids.length > 0 ? { segments: ids } : {}),
        }
    const list = strategiesOf.get(row.featureName)
    if (list) list.push(strategy)
    else strategiesOf.set(row.featureName, [strategy])
  }
  const dependenciesOf = new Map<string, NonNullable<ClientFeatureView['dependencies']>>()
  for (const d of dependencyRows) {
    const dependency = { feature: d.parent, enabled: d.enabled, ...(d.enabled ? { variants: d.variants as string[] } : {}) }
    const list = dependenciesOf.get(d.child)
    if (list) list.push(dependency)
    else dependenciesOf.set(d.child, [dependency])
  }

  const featureViews = flagRows.map((f): ClientFeatureView => {
    const dependencies = dependenciesOf.get(f.name)
    return {
      name: f.name,
      type: f.type,
      // An environment with no enabled strategy is never served on (SDKs read an empty list as on for everyone).
      enabled: f.enabled === true && strategiesOf.has(f.name),
      stale: f.stale,
      impressionData: f.impressionData,
      project: f.project,
      strategies: strategiesOf.get(f.name) ?? [],
      variants: (f.variants as Variant[] | null) ?? [],
      ...(dependencies ? { dependencies } : {}),
    }
  })
  return { revision, features: featureViews, segments: scope.inlineSegmentConstraints ? [] : segmentViews }
}

function stringParameters(parameters: unknown): Record<string, string> {
  const result: Record<string, string> = {}
  for (const [key, value] of Object.entries((parameters ?? {}) as Record<string, unknown>)) {
    if (value !== undefined && value !== null) result[key] = typeof value === 'string' ? value : String(value)
  }
  return result
}

/** The `query` Unleash echoes in the payload. */
export function queryView(scope: ClientScope): ClientQueryView {
  return {
    environment: scope.environment,
    ...(scope.projects !== '*' ? { project: scope.projects } : {}),
    ...(scope.namePrefix ? { namePrefix: scope.namePrefix } : {}),
    ...(scope.tags && scope.tags.length > 0 ? { tag: scope.tags.map(([type, value]) => [type, value]) } : {}),
    inlineSegmentConstraints: scope.inlineSegmentConstraints,
  }
}

/** The environment admin tokens get when they name none: the first enabled one in sort order (Unleash falls back to its `default`). */
export async function readDefaultEnvironment(db: Db): Promise<string | undefined> {
  const [row] = await db
    .select({ name: environments.name })
    .from(environments)
    .where(eq(environments.enabled, true))
    .orderBy(asc(environments.sortOrder), asc(environments.name))
    .limit(1)
  return row?.name
}
