import { and, notInArray, sql, type SQL } from 'drizzle-orm'
import { events } from '../../schema/index.js'
import type { Principal } from '../core/principal.js'
import { hasPermission, Permission } from '../core/permissions.js'
import { seesAllProjects, visibleProjectCondition } from '../projects/visibility.js'
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
  /** Whether the events of deleted private projects' lives are hidden (from all who do not see every project). */
  pastLivesHidden: boolean
}

/**
 * SQL keeping the events that belong to no earlier life of a private project: a project's id may be used again once
 * it is deleted, and the events of the deleted private project must not become the new project's history (its members
 * and, for an open one, everyone would read them). An event is of an earlier life when its project's `project-deleted`
 * event of a private project is it or came after it (a small partial index, events_project_deleted_idx). Over-hides only the
 * events of an open life followed by a private one, which those who see every project still read.
 */
const notOfPastPrivateLife = sql`not exists (select from ${events} d where d.type = 'project-deleted' and d.project = ${events.project} and d.id >= ${events.id} and d.pre_data->>'mode' = 'private')`

/**
 * Every other event is read by whoever may read its project (see src/projects/visibility.ts); one with no project
 * (environments, global segments, instance-level settings not listed above) by every caller of the admin API.
 * `hidden`: the private projects the caller may not read.
 */
export function eventAccess(principal: Principal, hidden: readonly string[]): EventAccess {
  const admin = hasPermission(principal, Permission.ADMIN)
  const pastLivesHidden = !seesAllProjects(principal)
  const conditions: SQL[] = []
  if (!admin) conditions.push(notInArray(events.type, [...ADMIN_ONLY_EVENT_TYPES]))
  const visible = visibleProjectCondition(events.project, hidden)
  if (visible) conditions.push(visible)
  if (pastLivesHidden) conditions.push(notOfPastPrivateLife)
  if (conditions.length === 0) return { condition: undefined, key: '', admin, hiddenProjects: hidden, pastLivesHidden }
  // The key spells out everything the condition depends on, so a cached total is never read under another condition.
  const key = JSON.stringify({ adminOnlyTypesHidden: admin ? [] : ADMIN_EVENT_PREFIXES, hiddenProjects: hidden, ...(pastLivesHidden ? { pastPrivateLivesHidden: true } : {}) })
  return { condition: conditions.length === 1 ? conditions[0] : sql`(${sql.join(conditions, sql` and `)})`, key, admin, hiddenProjects: hidden, pastLivesHidden }
}

/**
 * The condition of every caller who is not an admin as one text, for prepared statements: the private projects
 * hidden from them are the placeholder `hiddenProjects` (an array, maybe empty), and `pastLivesHidden` (a boolean)
 * whether deleted private projects' lives are hidden. Admins read every event.
 */
export const nonAdminAccessCondition = () =>
  and(
    notInArray(events.type, [...ADMIN_ONLY_EVENT_TYPES]),
    visibleProjectCondition(events.project, sql.placeholder('hiddenProjects')),
    sql`(not ${sql.placeholder('pastLivesHidden')}::boolean or ${notOfPastPrivateLife})`,
  )
