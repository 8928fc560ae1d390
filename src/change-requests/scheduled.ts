import type { Db } from '../db.js'
import { DEFAULT_LOGGER, errorFields, type Logger } from '../http/request-log.js'
import { hasPermission } from '../core/permissions.js'
import { callerOf, type Principal } from '../core/principal.js'
import { principalOfKey } from './principals.js'
import { APPLY_PERMISSION } from './permissions.js'
import { applySchedule, pendingSchedules, suspendSchedule, type PendingSchedule } from './store.js'

/** Why the schedule's author may no longer apply it, if so. */
function accessLost(principal: Principal | undefined, s: PendingSchedule): string | undefined {
  const author = s.principalKey.startsWith('token:') ? `The API token ${s.scheduledBy.createdBy}` : s.scheduledBy.createdBy
  if (!principal) return `${author}, who scheduled it, ${s.principalKey.startsWith('token:') ? 'was deleted or has expired' : 'no longer exists'}`
  if (!hasPermission(principal, APPLY_PERMISSION, { project: s.project, environment: s.environment })) {
    return `${author}, who scheduled it, no longer has permission=${APPLY_PERMISSION} in environment ${s.environment} of project ${s.project}`
  }
  return undefined
}

/** In words, the conflicting change that landed on a flag of the request (see pendingSchedules for the rule). */
function conflictReason(s: PendingSchedule): string | undefined {
  const c = s.conflict
  if (!c) return undefined
  switch (c.type) {
    case 'feature-archived':
      return `The flag ${c.feature} was archived`
    case 'feature-strategy-remove':
      return `The strategy ${c.strategyId} of ${c.feature} in ${s.environment} was deleted`
    case 'feature-strategy-update':
      return `The strategy ${c.strategyId} of ${c.feature} in ${s.environment} was changed since the change request was scheduled: applying it would overwrite that change`
    default:
      return `The variants of ${c.feature} in ${s.environment} were changed since the change request was scheduled: applying it would overwrite that change`
  }
}

/**
 * The scheduled-application job, run by the Node timer (every minute, and at start) and the Workers cron trigger:
 * every pending schedule whose author lost access (deleted, expired, or without the permission to apply in the
 * environment) or whose request a conflicting change has met since it was scheduled is suspended; then every due one
 * is applied with its author's access, or marked failed with why. Each write decides in its own statement or
 * transaction, so overlapping runs apply a request once. Answers what it did.
 */
export async function applyScheduledChangeRequests(db: Db, now: Date, logger: Logger = DEFAULT_LOGGER): Promise<{ applied: number; failed: number; suspended: number }> {
  const job = 'scheduled_change_requests'
  const done = { applied: 0, failed: 0, suspended: 0 }
  const principals = new Map<string, Promise<Principal | undefined>>()
  for (const s of await pendingSchedules(db, now)) {
    try {
      if (!principals.has(s.principalKey)) principals.set(s.principalKey, principalOfKey(db, s.principalKey, now))
      const principal = await principals.get(s.principalKey)!
      const reason = accessLost(principal, s) ?? conflictReason(s)
      if (reason) {
        if (await suspendSchedule(db, now, s, reason)) {
          done.suspended++
          logger.log('info', 'scheduled change request suspended', { job, changeRequestId: s.id, reason })
        }
        continue
      }
      if (!s.due) continue
      const outcome = await applySchedule(db, callerOf(principal!, now), s)
      if (outcome.outcome === 'applied') done.applied++
      if (outcome.outcome === 'failed') done.failed++
      logger.log('info', 'scheduled change request', { job, changeRequestId: s.id, outcome: outcome.outcome })
    } catch (error) {
      // One request's unexpected failure (a lost connection…) leaves it pending for the next run, and the others go on.
      logger.log('error', 'scheduled change request failed', { job, changeRequestId: s.id, ...errorFields(error) })
    }
  }
  return done
}
