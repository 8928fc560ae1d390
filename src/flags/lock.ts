import { and, asc, eq } from 'drizzle-orm'
import { environments, featureEnvironments, features, featureTags } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound } from '../http/errors.js'
import type { EventTag } from '../events/store.js'

export type FeatureRow = typeof features.$inferSelect

/**
 * Locks a live (not archived) flag of the project for a read-modify-write, so concurrent changes
 * queue up and each one's audit event sees exactly the state the previous one left.
 */
export async function lockFeature(tx: Db, projectId: string, featureName: string): Promise<FeatureRow> {
  return requireFeature(tx, projectId, featureName, true)
}

/** The live flag of the project, or 404 NotFoundError (also for an archived flag or one of another project). */
export async function requireFeature(db: Db, projectId: string, featureName: string, lock = false): Promise<FeatureRow> {
  const query = db.select().from(features).where(eq(features.name, featureName))
  const [row] = lock ? await query.for('update') : await query
  if (!row || row.project !== projectId || row.archivedAt) throw notFound(`Could not find feature flag ${featureName} in project ${projectId}`)
  return row
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
