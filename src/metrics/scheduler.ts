import type { Clock } from '../core/clock.js'
import { backgroundJob, type BackgroundJob, type RunInBackground } from '../http/background.js'
import { aggregatePendingMetrics } from './aggregate.js'
import type { Logger } from '../http/request-log.js'

export type AggregationScheduler = BackgroundJob

/** Folds what SDKs reported (the rows are already stored) into the aggregates, after the response. */
export function createAggregationScheduler(options: { clock: Clock; background?: RunInBackground; coalesce: boolean; clientNewApplicationsPerDay?: number; logger?: Logger }): AggregationScheduler {
  return backgroundJob('metrics aggregation', (db) => aggregatePendingMetrics(db, options.clock, undefined, options.clientNewApplicationsPerDay, options.logger), options)
}
