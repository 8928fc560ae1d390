import { and, asc, eq, inArray, sql, type SQLWrapper } from 'drizzle-orm'
import { featureStrategies } from '../../schema/index.js'
import type { Db } from '../db.js'
import type { Variant } from '../variants/schemas.js'
import type { Constraint, Strategy } from './schemas.js'

// The strategy read model: how a stored strategy is read and shown, for the flag reads, the strategy routes,
// the SDK payload and the playground.

export type StrategyRow = typeof featureStrategies.$inferSelect & { segments: number[] }

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

/** The ids of a strategy's segments, in order, as an array (a JSON array inside json_build_object): the one way every read gets them. */
export const segmentIdsOf = (strategyId: SQLWrapper) =>
  sql<number[]>`coalesce((select array_agg(fss.segment_id order by fss.segment_id) from feature_strategy_segments fss where fss.strategy_id = ${strategyId}), '{}')`

/** Strategies of the given flags (optionally one environment), in evaluation order. */
export async function loadStrategies(db: Db, featureNames: string[], environment?: string): Promise<StrategyRow[]> {
  if (featureNames.length === 0) return []
  const filter = [inArray(featureStrategies.featureName, featureNames)]
  if (environment) filter.push(eq(featureStrategies.environment, environment))
  const rows = await db
    .select({ strategy: featureStrategies, segments: segmentIdsOf(featureStrategies.id) })
    .from(featureStrategies)
    .where(and(...filter))
    .orderBy(asc(featureStrategies.sortOrder), asc(featureStrategies.createdAt), asc(featureStrategies.id))
  return rows.map((r) => ({ ...r.strategy, segments: r.segments.map(Number) }))
}

