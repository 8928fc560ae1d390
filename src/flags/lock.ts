import { and, eq, getTableColumns, inArray, sql, type SQL } from 'drizzle-orm'
import { environments, featureEnvironments, featureLifecycles, features, featureStrategies, featureTags } from '../../schema/index.js'
import { statement, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import type { EventTag } from '../events/types.js'
import { stageRankOf } from './lifecycle.js'

export type FeatureRow = typeof features.$inferSelect

// A flag's lock is an update of its `version`, not a FOR UPDATE: every writer that takes it moves the
// version on, which gives two things a row lock alone cannot.
// - An optimistic write (src/flags/states.ts) changes the flag only if its version is still the one its
//   change was computed from. Had another writer taken the lock since, the version moved: Postgres re-checks
//   the version check on the newest row once that writer commits, so it cannot pass on a state another transaction
//   is changing.
// - A locking read that had to wait for another writer sees that writer's version on the locked row but
//   not its other changes (every part of a statement reads one snapshot, taken before the wait): comparing
//   the two tells when to read again, now under the lock.

const nextVersion = { version: sql`${features.version} + 1` }

/** Takes the lock of every flag of the project (a change to all of them, like a new environment). */
export const lockProjectFlags = (tx: Db, projectId: string) => lockWhere(tx, eq(features.project, projectId))

function lockWhere(tx: Db, where: SQL) {
  const ordered = tx.select({ name: features.name }).from(features).where(where).orderBy(features.name).for('update')
  return tx.update(features).set(nextVersion).where(inArray(features.name, ordered)).returning({ name: features.name })
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
  fe: { enabled: boolean; variants: unknown[] }
  /** The environment's type. */
  type: string
  /** How many of the flag's strategies in the environment are not disabled. */
  enabledStrategies: number
  /** The flag's current lifecycle stage. */
  stage: string
}

// Spelled out: inside these subqueries a column named without its table could mean another table's column.
const flagName = sql.raw('"features"."name"')
/** SQL of a flag's tags as events carry them (a JSON list of `{ type, value }` by type, then value), `flag` naming the flag's name column. */
export const flagTagsJson = (flag: SQL) =>
  sql`coalesce((select json_agg(json_build_object('type', ftags.tag_type, 'value', ftags.tag_value) order by ftags.tag_type, ftags.tag_value) from ${featureTags} ftags where ftags.feature_name = ${flag}), '[]')`
const tagsColumn = flagTagsJson(flagName)
const environmentsColumn = sql`coalesce((select json_agg(json_build_object('environment', fe.environment, 'variants', fe.variants) order by env.sort_order, env.name) from ${featureEnvironments} fe join ${environments} env on env.name = fe.environment where fe.feature_name = ${flagName}), '[]')`
/** The flag's version in the statement's snapshot (before any wait for its lock, and before this statement's own update). */
const versionSeen = sql`(select f.version from ${features} f where f.name = ${flagName})`

const environment = sql.placeholder('environment')
const environmentColumns = sql`
  (select json_build_object('enabled', fe.enabled, 'variants', fe.variants, 'type', env.type) from ${featureEnvironments} fe join ${environments} env on env.name = fe.environment where fe.feature_name = ${flagName} and fe.environment = ${environment}) as environment,
  (select count(*)::int from ${featureStrategies} s where s.feature_name = ${flagName} and s.environment = ${environment} and not s.disabled) as "enabledStrategies",
  coalesce((select l.stage from ${featureLifecycles} l where l.feature_name = ${flagName} order by l.entered_stage_at desc, ${stageRankOf('l.stage')} desc limit 1), 'initial') as stage`

const featureColumns = getTableColumns(features)

/** The flag's row as drizzle reads it, from the columns of `features` in a raw row (as the driver returns them). */
function featureRowOf(raw: Record<string, unknown>): FeatureRow {
  return Object.fromEntries(Object.entries(featureColumns).map(([key, column]) => [key, raw[column.name] === null ? null : column.mapFromDriverValue(raw[column.name])])) as FeatureRow
}

/**
 * A flag's locking read (see above) with `extra` columns (SQL about the flag, aliased), as the statements `name`
 * (the read made again under the lock) and `${name}_locked`. Placeholders: `name`, and those of `extra`.
 */
function lockingRead<E>(name: string, extra: SQL) {
  const named = sql`${flagName} = ${sql.placeholder('name')}`
  return {
    locked: statement<Record<string, unknown> & E & { versionSeen: number }>(`${name}_locked`, () => sql`update ${features} set version = version + 1 where ${named} returning "features".*, ${extra}, ${versionSeen} as "versionSeen"`),
    read: statement<Record<string, unknown> & E>(name, () => sql`select "features".*, ${extra} from ${features} where ${named}`),
  }
}

const forChange = lockingRead<{ tags: EventTag[]; environments: LockedFeatureWithVariants['environments'] }>('flagpost_flag_for_change', sql`${tagsColumn} as tags, ${environmentsColumn} as environments`)
const forChangeInEnvironment = lockingRead<{ tags: EventTag[]; environment: { enabled: boolean; variants: unknown[]; type: string } | null; enabledStrategies: number; stage: string }>(
  'flagpost_flag_for_change_in_environment',
  sql`${tagsColumn} as tags, ${environmentColumns}`,
)

/** Takes the flag's lock and reads it, in one statement. A read that had to wait for another writer is made again, now under the lock (see above). */
async function lockAndRead<E>(db: Db, read: ReturnType<typeof lockingRead<E>>, values: Record<string, unknown>) {
  const [locked] = await read.locked(db, values)
  const found = !locked || locked.version === locked.versionSeen + 1 ? locked : (await read.read(db, values))[0]
  return found && { ...found, row: featureRowOf(found) }
}

/**
 * Takes the flag's lock and reads what most writes need before changing it, in one round trip: the flag,
 * its tags, and its environments' variants, or (with `environment`) that environment's state, type, enabled
 * strategies and the flag's lifecycle stage. 404 when the flag is not live in the project, or not in the
 * environment.
 */
export async function lockForChange(tx: Db, projectId: string, featureName: string): Promise<LockedFeatureWithVariants>
export async function lockForChange(tx: Db, projectId: string, featureName: string, environment: string): Promise<LockedFeatureEnvironment>
export async function lockForChange(tx: Db, projectId: string, featureName: string, environment?: string): Promise<LockedFeatureWithVariants | LockedFeatureEnvironment> {
  if (environment === undefined) {
    const found = await lockAndRead(tx, forChange, { name: featureName })
    return { row: liveIn(found?.row, projectId, featureName), tags: found!.tags, environments: found!.environments }
  }
  const found = await lockAndRead(tx, forChangeInEnvironment, { name: featureName, environment })
  const row = liveIn(found?.row, projectId, featureName)
  if (!found!.environment) throw notFound(`Could not find environment ${environment} for feature flag ${featureName}`)
  const { type, ...fe } = found!.environment
  return { row, tags: found!.tags, fe, type, enabledStrategies: found!.enabledStrategies, stage: found!.stage }
}

function liveIn(row: FeatureRow | undefined, projectId: string, featureName: string): FeatureRow {
  if (!row || row.project !== projectId || row.archivedAt) throw notFound(`Could not find feature flag ${featureName} in project ${projectId}`)
  return row
}

/** The live flag of the project, or 404 NotFoundError (also for an archived flag or one of another project). */
export async function requireFeature(db: Db, projectId: string, featureName: string): Promise<FeatureRow> {
  const [row] = await db.select().from(features).where(eq(features.name, featureName))
  return liveIn(row, projectId, featureName)
}

/** The flag's environment row and the environment's type; 404 when the flag is not in it. */
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
  const rows = await tx.select({ type: featureTags.type, value: featureTags.value }).from(featureTags).where(eq(featureTags.featureName, featureName)).orderBy(featureTags.type, featureTags.value)
  return rows
}
