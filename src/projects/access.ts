import { and, asc, eq, isNull, sql } from 'drizzle-orm'
import { projectMembers, projects, roles, users } from '../../schema/index.js'
import { batch, queryRows, untilUnchanged, type Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { avatarUrl } from '../users/avatar.js'

/** The built-in project role every project creator gets (id as seeded, like Unleash's). */
export const OWNER_ROLE_ID = 4

export interface AddAccess {
  roles: number[]
  users: number[]
  groups?: number[]
}

/** The project's lock: every change of its members takes it first, so each is decided on what the previous one left. */
const lockProject = (db: Db, projectId: string) => db.select({ id: projects.id }).from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt))).for('update')

/** What a change of the project's access is decided on: the roles and users it names that exist, `userId`'s roles in the project (ascending), and whether another user owns it. */
interface AccessState {
  live: boolean
  projectRoles: number[]
  activeUsers: number[]
  before: number[]
  otherOwner: boolean
}

/** Reads what a change of the project's access is decided on, in one statement. */
async function readAccess(db: Db, projectId: string, roleIds: number[], userIds: number[], userId: number | null): Promise<AccessState> {
  const [state] = await queryRows<AccessState>(
    db,
    sql`select
      exists (select from ${projects} where id = ${projectId} and archived_at is null) as live,
      coalesce((select json_agg(id) from ${roles} where id = any(${sql.param(roleIds)}::int[]) and type = 'project'), '[]') as "projectRoles",
      coalesce((select json_agg(id) from ${users} where id = any(${sql.param(userIds)}::int[]) and deleted_at is null), '[]') as "activeUsers",
      coalesce((select json_agg(role_id order by role_id) from ${projectMembers} where project_id = ${projectId} and user_id = ${userId}), '[]') as before,
      exists (select from ${projectMembers} where project_id = ${projectId} and role_id = ${OWNER_ROLE_ID} and user_id is distinct from ${userId}) as "otherOwner"`,
  )
  return state!
}

function requireProject(state: AccessState, projectId: string) {
  if (!state.live) throw notFound(`Could not find project ${projectId}`)
}

/** 400 unless every id is a project role. */
function checkProjectRoles(state: AccessState, roleIds: number[]) {
  const missing = roleIds.filter((id) => !state.projectRoles.includes(id))
  if (missing.length > 0) throw validationError(`Not a project role: ${missing.join(', ')}`, [{ path: 'body.roles', message: `roles ${missing.join(', ')} are not project roles` }])
}

/** 400 unless every id is an active user. */
function checkUsers(state: AccessState, userIds: number[]) {
  const missing = userIds.filter((id) => !state.activeUsers.includes(id))
  if (missing.length > 0) throw validationError(`Unknown user(s): ${missing.join(', ')}`, [{ path: 'body.users', message: `users ${missing.join(', ')} do not exist` }])
}

/** Losing the last owner leaves nobody but admins to manage the project: refused, as in Unleash. Answers whether the change needs another owner. */
function keepAnOwner(state: AccessState, projectId: string, after: number[]): boolean {
  if (!state.before.includes(OWNER_ROLE_ID) || after.includes(OWNER_ROLE_ID)) return false
  if (!state.otherOwner) throw validationError(`A project must keep at least one owner: give another user the Owner role in ${projectId} first`)
  return true
}

const p = (name: string) => sql.placeholder(name)

/**
 * A change of the project's members and its event, made only if what it was decided on still holds (read under the
 * project's lock, taken by the statement before it in the same batch): the project is live, every role in `roles`
 * a project role, every user in `users` active, `userId`'s roles still `before` and, when the change takes the last
 * Owner role of `userId`, another owner is left. Then takes `dropped` roles from `userId` and gives every user in
 * `users` every role in `roles`.
 */
const changeAccessStatement = eventsStatement('flagpost_change_project_access', {
  alongside: [
    sql`select where exists (select from ${projects} where id = ${p('project')} and archived_at is null)
      and (select count(*) from ${roles} where id = any(${p('roles')}::int[]) and type = 'project') = cardinality(${p('roles')}::int[])
      and (select count(*) from ${users} where id = any(${p('users')}::int[]) and deleted_at is null) = cardinality(${p('users')}::int[])
      and (${p('userId')}::int is null or coalesce((select array_agg(role_id order by role_id) from ${projectMembers} where project_id = ${p('project')} and user_id = ${p('userId')}::int), '{}') = ${p('before')}::int[])
      and (not ${p('needsOtherOwner')}::boolean or exists (select from ${projectMembers} where project_id = ${p('project')} and role_id = ${OWNER_ROLE_ID} and user_id <> ${p('userId')}::int))`,
  ],
  guarded: true,
  unguarded: [
    sql`delete from ${projectMembers} where project_id = ${p('project')} and user_id = ${p('userId')}::int and role_id = any(${p('dropped')}::int[]) and ${guardPassed}`,
    sql`insert into ${projectMembers} (project_id, user_id, role_id, created_at)
      select ${p('project')}, u, r, ${p('createdAt')}::timestamptz from unnest(${p('users')}::int[]) u, unnest(${p('roles')}::int[]) r where ${guardPassed}
      on conflict do nothing`,
  ],
})

interface AccessChange {
  roles: number[]
  users: number[]
  userId?: number
  before?: number[]
  dropped?: number[]
  needsOtherOwner?: boolean
}

/** Writes a change of the project's members and its event in one batch (the project's lock, then the change); false when what it was decided on no longer holds. */
async function writeAccess(db: Db, caller: Author, projectId: string, change: AccessChange, event: NewEvent): Promise<boolean> {
  const values = { project: projectId, roles: change.roles, users: change.users, userId: change.userId ?? null, before: change.before ?? [], dropped: change.dropped ?? [], needsOtherOwner: change.needsOtherOwner ?? false }
  const [, { written }] = await batch(db, [(q) => lockProject(q, projectId), (q) => changeAccessStatement(q, caller.actor, caller.now, [event], values)])
  return written > 0
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

/** The event of users given roles in a project, with Unleash's data shape. */
export const accessAddedEvent = (projectId: string, roleIds: number[], userIds: number[]): NewEvent => ({
  type: 'project-access-added',
  project: projectId,
  data: { roles: roleIds.map((roleId) => ({ roleId, groupIds: [], userIds })) },
})

/**
 * POST /api/admin/projects/{projectId}/access: gives each user each role (what they already hold is kept), in one
 * batch that checks the project, roles and users as it writes; only when it wrote nothing, a read tells why (or the
 * write is tried again). Emits `project-access-added`.
 */
export async function addAccess(db: Db, caller: Author, projectId: string, input: AddAccess) {
  if ((input.groups ?? []).length > 0) throw validationError('Flagpost has no user groups: give roles to users', [{ path: 'body.groups', message: 'must be empty' }])
  const roleIds = [...new Set(input.roles)]
  const userIds = [...new Set(input.users)]
  await untilUnchanged(`The access to project ${projectId}`, async () => {
    if (await writeAccess(db, caller, projectId, { roles: roleIds, users: userIds }, accessAddedEvent(projectId, roleIds, userIds))) return true
    const state = await readAccess(db, projectId, roleIds, userIds, null)
    requireProject(state, projectId)
    checkProjectRoles(state, roleIds)
    checkUsers(state, userIds)
    return undefined
  })
}

/** PUT /api/admin/projects/{projectId}/users/{userId}/roles: replaces the user's roles in the project, after one read. Emits `project-access-user-roles-updated`. */
export async function setUserRoles(db: Db, caller: Author, projectId: string, userId: number, roleIds: number[]) {
  const after = [...new Set(roleIds)].sort((a, b) => a - b)
  await untilUnchanged(`The access to project ${projectId}`, async () => {
    const state = await readAccess(db, projectId, after, [userId], userId)
    requireProject(state, projectId)
    checkUsers(state, [userId])
    checkProjectRoles(state, after)
    const { before } = state
    const needsOtherOwner = keepAnOwner(state, projectId, after)
    // Roles the user keeps keep the date they were given.
    const dropped = before.filter((id) => !after.includes(id))
    const event: NewEvent = { type: 'project-access-user-roles-updated', project: projectId, data: { roles: after, userId }, preData: { roles: before, userId } }
    return (await writeAccess(db, caller, projectId, { roles: after, users: [userId], userId, before, dropped, needsOtherOwner }, event)) || undefined
  })
}

/** DELETE /api/admin/projects/{projectId}/users/{userId}/roles: takes every role of the user in the project away, after one read. Emits `project-access-user-roles-deleted`. */
export async function removeUserAccess(db: Db, caller: Author, projectId: string, userId: number) {
  await untilUnchanged(`The access to project ${projectId}`, async () => {
    const state = await readAccess(db, projectId, [], [], userId)
    requireProject(state, projectId)
    const { before } = state
    if (before.length === 0) throw notFound(`User ${userId} has no role in project ${projectId}`)
    const needsOtherOwner = keepAnOwner(state, projectId, [])
    const event: NewEvent = { type: 'project-access-user-roles-deleted', project: projectId, preData: { roles: before, userId } }
    return (await writeAccess(db, caller, projectId, { roles: [], users: [], userId, before, dropped: before, needsOtherOwner }, event)) || undefined
  })
}
