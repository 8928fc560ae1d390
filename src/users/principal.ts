import { and, eq, isNull, sql } from 'drizzle-orm'
import { groupRoles, groups, groupUsers, projectMembers, rolePermissions, roles, users } from '../../schema/index.js'
import type { Db } from '../db.js'
import type { Principal } from '../core/principal.js'
import { grantsOf, type HeldRole } from '../core/permissions.js'

/** How a user is named in events and listings: e-mail, else username (as Unleash does). */
export const displayNameOf = (user: { email: string | null; username: string | null; name?: string | null }) => user.email ?? user.username ?? user.name ?? 'unknown'

/**
 * Every role the user of the row holds, as JSON `[project or null, name, type, permissions]`: their root role and
 * project roles, their groups' root roles and project roles; a custom role with its permissions (`[name,
 * environment]`), a built-in one without (Flagpost's code knows them). Read with the user, so a request loads them
 * once and every permission check after is synchronous.
 */
const heldRoles = sql<unknown>`(select coalesce(json_agg(json_build_array(h.project, r.name, r.type,
    (select json_agg(json_build_array(rp.permission, rp.environment)) from ${rolePermissions} rp where rp.role_id = r.id))), '[]'::json)
  from (
    select null::text as project, ${users}.root_role_id as role_id
    union select pm.project_id, pm.role_id from ${projectMembers} pm where pm.user_id = ${users}.id
    union select null, g.root_role_id from ${groupUsers} gu join ${groups} g on g.id = gu.group_id where gu.user_id = ${users}.id and g.root_role_id is not null
    union select gr.project_id, gr.role_id from ${groupUsers} gu join ${groupRoles} gr on gr.group_id = gu.group_id where gu.user_id = ${users}.id
  ) h join ${roles} r on r.id = h.role_id)`

/** The columns that make a user principal, for a select joining `users` and their root role (`roles`). */
export const userPrincipalColumns = {
  userId: users.id,
  email: users.email,
  username: users.username,
  rootRole: roles.name,
  heldRoles,
}

export interface UserPrincipalRow {
  userId: number
  email: string | null
  username: string | null
  rootRole: string
  heldRoles: unknown
}

type HeldRoleRow = [project: string | null, name: string, type: string, permissions: [string, string | null][] | null]

export function toUserPrincipal(row: UserPrincipalRow): Principal {
  // Drivers hand json back parsed or as text, depending on the driver.
  const rows = (typeof row.heldRoles === 'string' ? JSON.parse(row.heldRoles) : row.heldRoles) as HeldRoleRow[] | null
  const held: HeldRole[] = (rows ?? []).map(([project, name, type, permissions]) => ({ project, name, type, permissions: permissions ?? [] }))
  return { kind: 'user', userId: row.userId, name: displayNameOf(row), rootRole: row.rootRole, grants: grantsOf(held) }
}

/** The principal of an active user (for a personal access token), with their roles, in one query. */
export async function loadUserPrincipal(db: Db, userId: number): Promise<Principal | undefined> {
  const [row] = await db
    .select(userPrincipalColumns)
    .from(users)
    .innerJoin(roles, eq(roles.id, users.rootRoleId))
    .where(and(eq(users.id, userId), isNull(users.deletedAt)))
    .limit(1)
  return row ? toUserPrincipal(row) : undefined
}
