import { sql } from 'drizzle-orm'
import { apiTokens, groupRoles, groups, groupUsers, projectMembers, roles, users } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import type { Author } from '../core/principal.js'
import { ApiError } from '../core/errors.js'
import { ADMIN_ROLE_ID, deleteUser } from './store.js'

/** A user who has not signed in (nor used a personal access token) for this long is inactive, as in Unleash. */
export const INACTIVE_AFTER_DAYS = 180

/** GET /api/admin/user-admin/admin-count: active admins with and without a password, and admin service accounts. */
export async function adminCount(db: Db) {
  const [row] = await queryRows<{ password: number; noPassword: number; service: number }>(
    db,
    sql`select count(*) filter (where not is_service and password_hash is not null)::int as password,
      count(*) filter (where not is_service and password_hash is null)::int as "noPassword",
      count(*) filter (where is_service)::int as service
      from ${users} where deleted_at is null and root_role_id = ${ADMIN_ROLE_ID}`,
  )
  return row ?? { password: 0, noPassword: 0, service: 0 }
}

const inactiveSql = (now: Date) => {
  const since = sql`${new Date(now.getTime() - INACTIVE_AFTER_DAYS * 86_400_000).toISOString()}::timestamptz`
  return sql`u.deleted_at is null and not u.is_service and coalesce(u.seen_at, u.created_at) < ${since}
    and not exists (select from ${apiTokens} t where t.user_id = u.id and t.seen_at >= ${since})`
}

/** GET /api/admin/user-admin/inactive: users (not service accounts) not seen for INACTIVE_AFTER_DAYS, by id. */
export async function inactiveUsers(db: Db, now: Date) {
  const rows = await queryRows<{ id: number; name: string | null; email: string | null; username: string | null; seenAt: string | null; createdAt: string }>(
    db,
    sql`select u.id, u.name, u.email, u.username, u.seen_at as "seenAt", u.created_at as "createdAt" from ${users} u where ${inactiveSql(now)} order by u.id`,
  )
  const iso = (v: string | Date | null) => (v === null ? null : new Date(v).toISOString())
  return { version: 1, inactiveUsers: rows.map((r) => ({ id: r.id, name: r.name, ...(r.email ? { email: r.email } : {}), username: r.username, seenAt: iso(r.seenAt), createdAt: iso(r.createdAt)! })) }
}

/**
 * POST /api/admin/user-admin/inactive/delete: deletes those of `ids` that are inactive users (others are left, as in
 * Unleash), never the caller nor the last active Admin; each as DELETE /api/admin/user-admin/{id} does, with its `user-deleted`.
 */
export async function deleteInactiveUsers(db: Db, caller: Author, callerUserId: number | undefined, ids: number[]) {
  const wanted = [...new Set(ids)].filter((id) => id !== callerUserId)
  if (wanted.length === 0) return 0
  const rows = await queryRows<{ id: number }>(db, sql`select u.id from ${users} u where u.id = any(${sql.raw(`'{${wanted.join(',')}}'`)}::int[]) and ${inactiveSql(caller.now)} order by u.id`)
  let deleted = 0
  for (const { id } of rows) {
    try {
      await deleteUser(db, caller, id)
      deleted++
    } catch (e) {
      // The last active Admin stays (as DELETE /api/admin/user-admin/{id} refuses it), and one deleted meanwhile is gone already.
      if (e instanceof ApiError && (e.name === 'ValidationError' || e.name === 'NotFoundError')) continue
      throw e
    }
  }
  return deleted
}

/** The projects a user has a role in, directly or through a group, and their groups. */
export async function profileOf(db: Db, userId: number) {
  const [[rootRole], projects, memberOf] = await Promise.all([
    queryRows<{ id: number; type: string; name: string; description: string | null }>(db, sql`select r.id, r.type, r.name, r.description from ${roles} r join ${users} u on u.root_role_id = r.id where u.id = ${userId}`),
    queryRows<{ project: string }>(
      db,
      sql`select project_id as project from ${projectMembers} where user_id = ${userId}
        union select gr.project_id from ${groupRoles} gr join ${groupUsers} gu on gu.group_id = gr.group_id where gu.user_id = ${userId} order by 1`,
    ),
    queryRows<{ id: number; name: string; description: string | null; mappingsSSO: string[]; rootRole: number | null }>(
      db,
      sql`select g.id, g.name, g.description, g.mappings_sso as "mappingsSSO", g.root_role_id as "rootRole" from ${groups} g join ${groupUsers} gu on gu.group_id = g.id where gu.user_id = ${userId} order by g.id`,
    ),
  ])
  return {
    rootRole: rootRole!,
    projects: projects.map((p) => p.project),
    groups: memberOf.map((g) => ({ id: g.id, name: g.name, description: g.description, mappingsSSO: g.mappingsSSO, ...(g.rootRole === null ? {} : { rootRole: g.rootRole }) })),
  }
}

/**
 * GET /api/admin/user/roles: the caller's roles, given directly and through their groups: in `projectId`, their project
 * roles there; without one, their root roles.
 */
export async function rolesOf(db: Db, userId: number, projectId: string | undefined) {
  const query =
    projectId === undefined
      ? sql`select r.id, r.type, r.name, r.description from ${roles} r where r.id in (
          select root_role_id from ${users} where id = ${userId}
          union select g.root_role_id from ${groups} g join ${groupUsers} gu on gu.group_id = g.id where gu.user_id = ${userId}) order by r.id`
      : sql`select r.id, r.type, r.name, r.description from ${roles} r where r.id in (
          select role_id from ${projectMembers} where user_id = ${userId} and project_id = ${projectId}
          union select gr.role_id from ${groupRoles} gr join ${groupUsers} gu on gu.group_id = gr.group_id where gu.user_id = ${userId} and gr.project_id = ${projectId}) order by r.id`
  return { version: 1, roles: await queryRows<{ id: number; type: string; name: string; description: string | null }>(db, query) }
}
