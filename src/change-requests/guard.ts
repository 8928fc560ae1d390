import type { AppContext } from '../http/context.js'
import { hasPermission, Permission, requirePermission } from '../http/permissions.js'
import { environmentsRequiringChangeRequests } from './store.js'

/**
 * Where the project requires change requests, a direct change to a flag (on/off, strategies,
 * variants) needs SKIP_CHANGE_REQUEST there; everyone else gets 403 and goes through a change
 * request. Without `environment` (operation 4 writes every environment) each such environment counts.
 */
export async function requireDirectChangeAllowed(c: AppContext, projectId: string, environment?: string): Promise<void> {
  // Whoever may skip change requests in the project (admins) passes wherever they are required: no need to look.
  if (hasPermission(c.var.principal, Permission.SKIP_CHANGE_REQUEST, { project: projectId, environment })) return
  for (const env of await environmentsRequiringChangeRequests(c.var.db, projectId, environment)) {
    requirePermission(c.var.principal, Permission.SKIP_CHANGE_REQUEST, { project: projectId, environment: env })
  }
}
