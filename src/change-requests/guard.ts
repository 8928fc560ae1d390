import type { Db } from '../db.js'
import type { AppContext } from '../http/context.js'
import type { Principal } from '../core/principal.js'
import { hasPermission, Permission, requirePermission } from '../core/permissions.js'
import { environmentsRequiringChangeRequests, protectedEnvironmentsUsingSegment } from './store.js'

/*
 * The rule: no write changes what an SDK of an environment where the project requires change requests
 * receives, unless it is an applied change request or the caller holds SKIP_CHANGE_REQUEST there.
 * Every admin write route declares whether it is `guarded` (src/http/openapi.ts); a guarded route
 * calls one of these, and answering success without having done so fails the request.
 */

/** A check that runs inside the write's own transaction, once the write knows what it touches. */
export type DirectChangeCheck = (tx: Db, projectId: string, environment?: string) => Promise<void>

const consulted = (c: AppContext) => c.set('changeRequestRuleConsulted', true)

const requireSkipWhereProtected = (db: Db, c: AppContext, projectId: string, environment?: string) => requireDirectChangeAllowedFor(db, c.var.principal, projectId, environment)

/**
 * The rule for a principal acting outside a request (an action set's service account): a direct change to a flag in
 * `environment` (every environment without it) needs SKIP_CHANGE_REQUEST wherever the project requires change requests.
 */
export async function requireDirectChangeAllowedFor(db: Db, principal: Principal, projectId: string, environment?: string): Promise<void> {
  // Whoever may skip change requests in the project (admins) passes wherever they are required: no need to look.
  if (hasPermission(principal, Permission.SKIP_CHANGE_REQUEST, { project: projectId, environment })) return
  for (const env of await environmentsRequiringChangeRequests(db, projectId, environment)) {
    requirePermission(principal, Permission.SKIP_CHANGE_REQUEST, { project: projectId, environment: env })
  }
}

/**
 * Where the project requires change requests, a direct change to a flag needs SKIP_CHANGE_REQUEST there;
 * everyone else gets 403 and goes through a change request. Without `environment` the change reaches
 * every environment of the project (archiving, dependencies, flag metadata, variants of all
 * environments), so each protected one counts.
 */
export async function requireDirectChangeAllowed(c: AppContext, projectId: string, environment?: string): Promise<void> {
  consulted(c)
  await requireSkipWhereProtected(c.var.db, c, projectId, environment)
}

/** The same rule for writes that learn the flag's project under their own lock (routes that name a flag without its project). */
export function directChangeCheck(c: AppContext): DirectChangeCheck {
  consulted(c)
  return (tx, projectId, environment) => requireSkipWhereProtected(tx, c, projectId, environment)
}

/**
 * A segment is shared: changing it changes every strategy that uses it, so it needs SKIP_CHANGE_REQUEST
 * in every protected environment of every project where a strategy uses it. Run with the read a segment's
 * write is computed from: the write is made only if no strategy started or stopped using it since.
 */
export function segmentChangeCheck(c: AppContext): (tx: Db, segmentId: number) => Promise<void> {
  consulted(c)
  return async (tx, segmentId) => {
    if (hasPermission(c.var.principal, Permission.SKIP_CHANGE_REQUEST)) return
    for (const { project, environment } of await protectedEnvironmentsUsingSegment(tx, segmentId)) {
      requirePermission(c.var.principal, Permission.SKIP_CHANGE_REQUEST, { project, environment })
    }
  }
}

/**
 * For a write that learns from its own read which environments it changes require change requests (removing or
 * deleting an environment): SKIP_CHANGE_REQUEST in each, checked on that read, before the write it decides.
 */
export function protectedEnvironmentsCheck(c: AppContext): (protectedIn: readonly { project: string; environment: string }[]) => void {
  consulted(c)
  return (protectedIn) => {
    for (const { project, environment } of protectedIn) requirePermission(c.var.principal, Permission.SKIP_CHANGE_REQUEST, { project, environment })
  }
}

/** For a guarded route whose request, this once, changes nothing SDKs receive (a patch of a flag's description alone). */
export const changesNothingSdksReceive = (c: AppContext) => consulted(c)

/**
 * Turning change requests off in an environment, or lowering its required approvals, removes the
 * protection itself: it needs SKIP_CHANGE_REQUEST there. Turning them on needs only the route's permission.
 */
export function protectionWeakeningCheck(c: AppContext, projectId: string): (environment: string) => void {
  consulted(c)
  return (environment) => requirePermission(c.var.principal, Permission.SKIP_CHANGE_REQUEST, { project: projectId, environment })
}
