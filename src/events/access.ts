import { and, notInArray, sql, type SQL } from 'drizzle-orm'
import { events } from '../../schema/index.js'
import type { Principal } from '../core/principal.js'
import { hasPermission, Permission } from '../core/permissions.js'
import { visibleProjectCondition } from '../projects/visibility.js'
import { EVENT_TYPES } from './types.js'

/**
 * Events about accounts, credentials and instance settings (users' e-mails, tokens, sign-in and integration
 * settings) are read only by those who may manage them, admins: every route that manages them needs ADMIN.
 * So is `features-exported`, whose data is a whole export (and may span private projects, having no project).
 */
const ADMIN_EVENT_PREFIXES = ['user-', 'pat-', 'api-token-', 'service-account-', 'group-', 'role-', 'public-signup-token-', 'setting-', 'addon-config-', 'signal-endpoint-token-', 'features-exported']

export const ADMIN_ONLY_EVENT_TYPES: readonly string[] = EVENT_TYPES.filter((type) => ADMIN_EVENT_PREFIXES.some((prefix) => type.startsWith(prefix)))

/**
 * Which events a caller may read: `condition` for the query (undefined: all), `key` naming it in the count cache
 * ('' for all), and the values it depends on.
 */
export interface EventAccess {
  condition: SQL | undefined
  key: string
  admin: boolean
  hiddenProjects: readonly string[]
}

/**
 * Every other event is read by whoever may read its project (see src/projects/visibility.ts); one with no project
 * (environments, global segments, instance-level settings not listed above) by every caller of the admin API.
 * `hidden`: the private projects the caller may not read.
 */
export function eventAccess(principal: Principal, hidden: readonly string[]): EventAccess {
  const admin = hasPermission(principal, Permission.ADMIN)
  const conditions: SQL[] = []
  if (!admin) conditions.push(notInArray(events.type, [...ADMIN_ONLY_EVENT_TYPES]))
  const visible = visibleProjectCondition(events.project, hidden)
  if (visible) conditions.push(visible)
  if (conditions.length === 0) return { condition: undefined, key: '', admin, hiddenProjects: hidden }
  // The key spells out everything the condition depends on, so a cached total is never read under another condition.
  const key = JSON.stringify({ adminOnlyTypesHidden: admin ? [] : ADMIN_EVENT_PREFIXES, hiddenProjects: hidden })
  return { condition: conditions.length === 1 ? conditions[0] : sql`(${sql.join(conditions, sql` and `)})`, key, admin, hiddenProjects: hidden }
}

/**
 * The condition of every caller who is not an admin as one text, for prepared statements: the private projects
 * hidden from them are the placeholder `hiddenProjects` (an array, maybe empty). Admins read every event.
 */
export const nonAdminAccessCondition = () => and(notInArray(events.type, [...ADMIN_ONLY_EVENT_TYPES]), visibleProjectCondition(events.project, sql.placeholder('hiddenProjects')))
