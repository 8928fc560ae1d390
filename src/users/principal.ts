import { and, eq, isNull, sql } from 'drizzle-orm'
import { roles, users } from '../../schema/index.js'
import type { Db } from '../db.js'
import type { Principal } from '../core/principal.js'

/** How a user is named in events and listings: e-mail, else username (as Unleash does). */
export const displayNameOf = (user: { email: string | null; username: string | null; name?: string | null }) => user.email ?? user.username ?? user.name ?? 'unknown'

/**
 * The columns that make a user principal, for a select joining `users` and their root role (`roles`).
 * The user's project roles come in the same query, so a request loads them once.
 */
export const userPrincipalColumns = {
  userId: users.id,
  email: users.email,
  username: users.username,
  rootRole: roles.name,
  projectRoles: sql<unknown>`(select coalesce(json_agg(json_build_array(pm.project_id, pr.name)), '[]'::json) from project_members pm join roles pr on pr.id = pm.role_id where pm.user_id = ${users.id})`,
}

export interface UserPrincipalRow {
  userId: number
  email: string | null
  username: string | null
  rootRole: string
  projectRoles: unknown
}

export function toUserPrincipal(row: UserPrincipalRow): Principal {
  // Drivers hand json back parsed or as text, depending on the driver.
  const pairs = (typeof row.projectRoles === 'string' ? JSON.parse(row.projectRoles) : row.projectRoles) as [string, string][]
  const projectRoles = new Map<string, string[]>()
  for (const [project, role] of pairs ?? []) {
    const list = projectRoles.get(project)
    if (list) list.push(role)
    else projectRoles.set(project, [role])
  }
  return { kind: 'user', userId: row.userId, name: displayNameOf(row), rootRole: row.rootRole, projectRoles }
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
