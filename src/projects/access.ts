import { and, asc, eq, inArray, isNull, ne, sql } from 'drizzle-orm'
import { projectMembers, projects, roles, users } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { avatarUrl } from '../users/avatar.js'

/** The built-in project role every project creator gets (id as seeded, like Unleash's). */
export const OWNER_ROLE_ID = 4

export interface AddAccess {
  roles: number[]
  users: number[]
  groups?: number[]
}

async function lockProject(tx: Db, projectId: string) {
  const [row] = await tx.select({ id: projects.id }).from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt))).for('update')
  if (!row) throw notFound(`Could not find project ${projectId}`)
}

/** 400 unless every id is a project role. */
async function checkProjectRoles(tx: Db, roleIds: number[]) {
  if (roleIds.length === 0) return
  const found = await tx.select({ id: roles.id }).from(roles).where(and(inArray(roles.id, roleIds), eq(roles.type, 'project')))
  const missing = roleIds.filter((id) => !found.some((f) => f.id === id))
  if (missing.length > 0) throw validationError(`Not a project role: ${missing.join(', ')}`, [{ path: 'body.roles', message: `roles ${missing.join(', ')} are not project roles` }])
}

/** 400 unless every id is an active user. */
async function checkUsers(tx: Db, userIds: number[]) {
  if (userIds.length === 0) return
  const found = await tx.select({ id: users.id }).from(users).where(and(inArray(users.id, userIds), isNull(users.deletedAt)))
  const missing = userIds.filter((id) => !found.some((f) => f.id === id))
  if (missing.length > 0) throw validationError(`Unknown user(s): ${missing.join(', ')}`, [{ path: 'body.users', message: `users ${missing.join(', ')} do not exist` }])
}

async function rolesOf(tx: Db, projectId: string, userId: number): Promise<number[]> {
  const rows = await tx
    .select({ roleId: projectMembers.roleId })
    .from(projectMembers)
    .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, userId)))
    .orderBy(asc(projectMembers.roleId))
  return rows.map((r) => r.roleId)
}

/** Losing the last owner leaves nobody but admins to manage the project: refused, as in Unleash. */
async function keepAnOwner(tx: Db, projectId: string, userId: number, before: number[], after: number[]) {
  if (!before.includes(OWNER_ROLE_ID) || after.includes(OWNER_ROLE_ID)) return
  const [other] = await tx
    .select({ userId: projectMembers.userId })
    .from(projectMembers)
    .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.roleId, OWNER_ROLE_ID), ne(projectMembers.userId, userId)))
    .limit(1)
  if (!other) throw validationError(`A project must keep at least one owner: give another user the Owner role in ${projectId} first`)
}

/** Every role holder of the project, with the project roles there are to give. */
export async function projectAccess(db: Db, projectId: string) {
  const [project] = await db.select({ id: projects.id }).from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt)))
  if (!project) throw notFound(`Could not find project ${projectId}`)
  const [roleRows, memberRows] = await Promise.all([
    db.select().from(roles).where(eq(roles.type, 'project')).orderBy(asc(roles.id)),
    db
      .select({
        id: users.id,
        name: users.name,
        email: users.email,
        username: users.username,
        roles: sql<number[]>`array_agg(${projectMembers.roleId} order by ${projectMembers.roleId})`,
        addedAt: sql<Date>`min(${projectMembers.createdAt})`.mapWith(projectMembers.createdAt),
      })
      .from(projectMembers)
      .innerJoin(users, eq(users.id, projectMembers.userId))
      .where(and(eq(projectMembers.projectId, projectId), isNull(users.deletedAt)))
      .groupBy(users.id)
      .orderBy(asc(users.id)),
  ])
  return {
    version: 1,
    roles: roleRows.map((r) => ({ id: r.id, type: r.type, name: r.name, description: r.description })),
    users: await Promise.all(
      memberRows.map(async (m) => ({
        id: m.id,
        name: m.name,
        email: m.email,
        username: m.username,
        imageUrl: await avatarUrl(m.email ?? m.username ?? `user-${m.id}`),
        roles: m.roles.map(Number),
        addedAt: m.addedAt.toISOString(),
      })),
    ),
    groups: [],
  }
}

/**
 * Gives each user each role in the project (what they already hold is kept). Emits `project-access-added`
 * with Unleash's data shape. Call it inside the transaction of the change.
 */
export async function grantAccess(tx: Db, caller: Author, projectId: string, roleIds: number[], userIds: number[]) {
  const { actor, now } = caller
  const rows = roleIds.flatMap((roleId) => userIds.map((userId) => ({ projectId, userId, roleId, createdAt: now })))
  if (rows.length > 0) await tx.insert(projectMembers).values(rows).onConflictDoNothing()
  await recordEvents(tx, actor, now, [
    { type: 'project-access-added', project: projectId, data: { roles: roleIds.map((roleId) => ({ roleId, groupIds: [], userIds })) } },
  ])
}

export async function addAccess(db: Db, caller: Author, projectId: string, input: AddAccess) {
  const { actor, now } = caller
  if ((input.groups ?? []).length > 0) throw validationError('Flagpost has no user groups: give roles to users', [{ path: 'body.groups', message: 'must be empty' }])
  const roleIds = [...new Set(input.roles)]
  const userIds = [...new Set(input.users)]
  await db.transaction(async (tx) => {
    await lockProject(tx, projectId)
    await checkProjectRoles(tx, roleIds)
    await checkUsers(tx, userIds)
    await grantAccess(tx, { actor, now }, projectId, roleIds, userIds)
  })
}

/** Replaces the user's roles in the project. Emits `project-access-user-roles-updated`. */
export async function setUserRoles(db: Db, caller: Author, projectId: string, userId: number, roleIds: number[]) {
  const { actor, now } = caller
  const after = [...new Set(roleIds)].sort((a, b) => a - b)
  await db.transaction(async (tx) => {
    await lockProject(tx, projectId)
    await checkUsers(tx, [userId])
    await checkProjectRoles(tx, after)
    const before = await rolesOf(tx, projectId, userId)
    await keepAnOwner(tx, projectId, userId, before, after)
    // Roles the user keeps keep the date they were given.
    const dropped = before.filter((id) => !after.includes(id))
    if (dropped.length > 0) {
      await tx
        .delete(projectMembers)
        .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, userId), inArray(projectMembers.roleId, dropped)))
    }
    if (after.length > 0) await tx.insert(projectMembers).values(after.map((roleId) => ({ projectId, userId, roleId, createdAt: now }))).onConflictDoNothing()
    await recordEvents(tx, actor, now, [
      { type: 'project-access-user-roles-updated', project: projectId, data: { roles: after, userId }, preData: { roles: before, userId } },
    ])
  })
}

/** Takes every role of the user in the project away. Emits `project-access-user-roles-deleted`. */
export async function removeUserAccess(db: Db, caller: Author, projectId: string, userId: number) {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    await lockProject(tx, projectId)
    const before = await rolesOf(tx, projectId, userId)
    if (before.length === 0) throw notFound(`User ${userId} has no role in project ${projectId}`)
    await keepAnOwner(tx, projectId, userId, before, [])
    await tx.delete(projectMembers).where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, userId)))
    await recordEvents(tx, actor, now, [{ type: 'project-access-user-roles-deleted', project: projectId, preData: { roles: before, userId } }])
  })
}
