import { asc, eq, sql, type SQL } from 'drizzle-orm'
import { featureTypes } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound } from '../core/errors.js'
import type { FeatureType } from './schemas.js'

const view = (row: typeof featureTypes.$inferSelect): FeatureType => ({ id: row.id, name: row.name, description: row.description, lifetimeDays: row.lifetimeDays })

export async function listFeatureTypes(db: Db): Promise<FeatureType[]> {
  return (await db.select().from(featureTypes).orderBy(asc(featureTypes.sortOrder), asc(featureTypes.id))).map(view)
}

/**
 * PUT /api/admin/feature-types/{id}/lifetime: 0 is stored as null (never potentially stale), as Unleash does. One
 * statement; 404 for an unknown type. Unleash records no event for it, and the catalogue has none that fits
 * (`feature-type-updated` is a flag's type changing): the flags it makes potentially stale get theirs from the
 * potentially-stale job, which also clears the mark of flags a longer lifetime makes fresh again.
 */
export async function updateFeatureTypeLifetime(db: Db, id: string, lifetimeDays: number | null): Promise<FeatureType> {
  const [row] = await db
    .update(featureTypes)
    .set({ lifetimeDays: lifetimeDays === 0 ? null : lifetimeDays })
    .where(eq(featureTypes.id, id))
    .returning()
  if (!row) throw notFound(`The feature type you tried to update ("${id}") does not exist.`)
  return view(row)
}

/** SQL for "the flag `f` (a row of features, by that alias) is older than its type's stored lifetime at `now` (SQL of a timestamptz)". */
export const pastLifetimeSql = (now: SQL) =>
  sql`coalesce(f.created_at + (select t.lifetime_days from ${featureTypes} t where t.id = f.type) * interval '1 day' < ${now}, false)`
