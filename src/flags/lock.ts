import { and, asc, eq, sql } from 'drizzle-orm'
import { environments, featureEnvironments, featureLifecycles, features, featureStrategies, featureTags } from '../../schema/index.js'
import { runPrepared, type Db } from '../db.js'
import { notFound } from '../http/errors.js'
import type { EventTag } from '../events/store.js'
import { stageRankOf } from './lifecycle.js'

export type FeatureRow = typeof features.$inferSelect

/**
 * Locks a live (not archived) flag of the project for a read-modify-write, so concurrent changes
 * queue up and each one's audit event sees exactly the state the previous one left.
 */
export async function lockFeature(tx: Db, projectId: string, featureName: string): Promise<FeatureRow> {
  return requireFeature(tx, projectId, featureName, true)
}

export interface LockedFeature {
  row: FeatureRow
  /** The tags every event about the flag carries. */
  tags: EventTag[]
}

export interface LockedFeatureWithVariants extends LockedFeature {
  /** The flag's environments in display order, with their variants. */
  environments: { environment: string; variants: unknown[] }[]
}

export interface LockedFeatureEnvironment extends LockedFeature {
  fe: typeof featureEnvironments.$inferSelect
  /** The environment's type. */
  type: string
  /** How many of the flag's strategies in the environment are not disabled. */
  enabledStrategies: number
  /** The flag's current lifecycle stage. */
  stage: string
}

// Spelled out: in a query of one table drizzle names its columns without the table, which inside these
// subqueries would mean another table's column.
const flagName = sql.raw('"features"."name"')
const tagsColumn = sql<EventTag[]>`coalesce((select json_agg(json_build_object('type', t.tag_type, 'value', t.tag_value) order by t.tag_type, t.tag_value) from ${featureTags} t where t.feature_name = ${flagName}), '[]')`

const environmentsColumn = sql<LockedFeatureWithVariants['environments']>`coalesce((select json_agg(json_build_object('environment', fe.environment, 'variants', fe.variants) order by env.sort_order, env.name) from ${featureEnvironments} fe join ${environments} env on env.name = fe.environment where fe.feature_name = ${flagName}), '[]')`

/** SQL: the flag's tags are still `tags` (as `tagsColumn` read them, in the same order). */
export const tagsUnchanged = (featureName: string, tags: EventTag[]) =>
  sql`coalesce((select jsonb_agg(jsonb_build_object('type', t.tag_type, 'value', t.tag_value) order by t.tag_type, t.tag_value) from ${featureTags} t where t.feature_name = ${featureName}), '[]'::jsonb) = ${JSON.stringify(tags)}::jsonb`

/** The flag with its tags and its environments' variants, locked or not. */
async function readFlag(db: Db, projectId: string, featureName: string, lock: boolean): Promise<LockedFeatureWithVariants> {
  const query = db.select({ row: features, tags: tagsColumn, environments: environmentsColumn }).from(features).where(eq(features.name, featureName))
  const [found] = await runPrepared(db, lock ? query.for('update') : query, lock ? 'flagpost_lock_for_change' : 'flagpost_read_for_change')
  const row = liveIn(found?.row, projectId, featureName)
  return { row, tags: found!.tags, environments: found!.environments }
}

/**
 * What `lockForChange` reads, without locking: for an optimistic write, which then changes the flag only if
 * it is still as read (see `recordEvents`' `guarded`).
 */
export const readForChange = (db: Db, projectId: string, featureName: string) => readFlag(db, projectId, featureName, false)

/**
 * `lockFeature`, `tagsOf` and (with an environment) `featureEnvironmentOf` in one round trip, as one
 * prepared statement: what most writes read before changing a flag.
 */
export async function lockForChange(tx: Db, projectId: string, featureName: string): Promise<LockedFeatureWithVariants>
export async function lockForChange(tx: Db, projectId: string, featureName: string, environment: string): Promise<LockedFeatureEnvironment>
export async function lockForChange(tx: Db, projectId: string, featureName: string, environment?: string): Promise<LockedFeatureWithVariants | LockedFeatureEnvironment> {
  if (environment === undefined) return readFlag(tx, projectId, featureName, true)
  const query = tx
    .select({
      row: features,
      tags: tagsColumn,
      fe: featureEnvironments,
      type: environments.type,
      enabledStrategies: sql<number>`(select count(*) from ${featureStrategies} s where s.feature_name = ${flagName} and s.environment = ${featureEnvironments.environment} and not s.disabled)`.mapWith(Number),
      stage: sql<string>`coalesce((select l.stage from ${featureLifecycles} l where l.feature_name = ${flagName} order by l.entered_stage_at desc, ${stageRankOf('l.stage')} desc limit 1), 'initial')`,
    })
    .from(features)
    .leftJoin(featureEnvironments, and(eq(featureEnvironments.featureName, features.name), eq(featureEnvironments.environment, environment)))
    .leftJoin(environments, eq(environments.name, featureEnvironments.environment))
    .where(eq(features.name, featureName))
    .for('update', { of: features })
  const [found] = await runPrepared(tx, query, 'flagpost_lock_for_change_in_environment')
  const row = liveIn(found?.row, projectId, featureName)
  if (!found!.fe || found!.type === null) throw notFound(`Could not find environment ${environment} for feature flag ${featureName}`)
  return { row, tags: found!.tags, fe: found!.fe, type: found!.type, enabledStrategies: found!.enabledStrategies, stage: found!.stage }
}

function liveIn(row: FeatureRow | undefined, projectId: string, featureName: string): FeatureRow {
  if (!row || row.project !== projectId || row.archivedAt) throw notFound(`Could not find feature flag ${featureName} in project ${projectId}`)
  return row
}

/** The live flag of the project, or 404 NotFoundError (also for an archived flag or one of another project). */
export async function requireFeature(db: Db, projectId: string, featureName: string, lock = false): Promise<FeatureRow> {
  const query = db.select().from(features).where(eq(features.name, featureName))
  const [row] = lock ? await query.for('update') : await query
  return liveIn(row, projectId, featureName)
}

/** The flag's environment row (locked with the flag) and the environment's type; 404 when the flag is not in it. */
export async function featureEnvironmentOf(tx: Db, featureName: string, environment: string) {
  const [row] = await tx
    .select({ fe: featureEnvironments, type: environments.type })
    .from(featureEnvironments)
    .innerJoin(environments, eq(environments.name, featureEnvironments.environment))
    .where(and(eq(featureEnvironments.featureName, featureName), eq(featureEnvironments.environment, environment)))
  if (!row) throw notFound(`Could not find environment ${environment} for feature flag ${featureName}`)
  return row
}

/** The flag's tags, which every event about the flag carries. */
export async function tagsOf(tx: Db, featureName: string): Promise<EventTag[]> {
  const rows = await tx.select({ type: featureTags.type, value: featureTags.value }).from(featureTags).where(eq(featureTags.featureName, featureName)).orderBy(asc(featureTags.type), asc(featureTags.value))
  return rows
}
