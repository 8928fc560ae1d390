import { and, asc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm'
import { groupRoles, groups, groupUsers, projectMembers, projects, rolePermissions, roles, users } from '../../schema/index.js'
import { batch, queryRows, together, untilUnchanged, type Db } from '../db.js'
import { conflict, noAccess, notFound, validationError } from '../core/errors.js'
import { covers, hasPermission, heldInProject, heldPermission, Permission, ownsProject, permissionsOfRole } from '../core/permissions.js'
import { eventsStatement, guardPassed } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Caller, Principal } from '../core/principal.js'
import { avatarUrl } from '../users/avatar.js'

/*
 * Who holds which roles in a project: users (project_members) and groups (group_roles), each with any number of
 * project roles, built in (Owner, Member) or custom. Every change is decided on the project's whole access as read
 * and written by one batch (the project's lock, then one statement) only while that access is still as read.
 */

/** The built-in project role every project creator gets (id as seeded, like Unleash's). */
export const OWNER_ROLE_ID = 4

/** Who a change is about: a user or a group. */
export type Subject = { kind: 'user' | 'group'; id: number }

/** The project's lock: every change of its access takes it first, so each is decided on what the previous one left. */
const lockProject = (db: Db, projectId: string) => db.select({ id: projects.id }).from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt))).for('update')

/** The project's access as text (its users' and groups' roles), which a change compares to make sure it is as read. */
const accessText = (project: unknown) => sql<string>`(
  (select coalesce(string_agg('u' || user_id || ':' || role_id, ',' order by user_id, role_id), '') from ${projectMembers} where project_id = ${project}::text)
  || '|' || (select coalesce(string_agg('g' || group_id || ':' || role_id, ',' order by group_id, role_id), '') from ${groupRoles} where project_id = ${project}::text))`

/** A custom role's permissions as text (empty for a built-in role). */
const roleText = (roleId: SQL) => sql<string>`(select coalesce(string_agg(rp.permission || '@' || coalesce(rp.environment, ''), ',' order by rp.permission, rp.environment), '')
  from ${rolePermissions} rp where rp.role_id = ${roleId})`

/** The permissions of the roles `ids` as text (each role's, in the order of their ids), which a change compares: what a caller was allowed to give is what is given. */
const givenText = (ids: unknown) => sql<string>`(select coalesce(string_agg(${roleText(sql`r.id`)}, '|' order by r.id), '') from ${roles} r where r.id = any(${ids}::int[]))`

interface ProjectRole {
  id: number
  name: string
  type: string
  permissions: [string, string | null][]
  /** Its permissions as text (see roleText). */
  text: string
}

/** A project's access as read: its users' and groups' roles (ascending), the project roles there are, and which of the users and groups named exist. */
interface AccessState {
  projectId: string
  live: boolean
  snapshot: string
  users: Map<number, number[]>
  groups: Map<number, number[]>
  roles: Map<number, ProjectRole>
  activeUsers: Set<number>
  knownGroups: Set<number>
}

const json = <T>(value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as T

/** Reads what a change of the project's access is decided on, in one statement. */
async function readAccess(db: Db, projectId: string, named: { users: number[]; groups: number[] }): Promise<AccessState> {
  const [row] = await queryRows<{ live: boolean; snapshot: string; userRoles: unknown; groupRoles: unknown; roles: unknown; activeUsers: unknown; knownGroups: unknown }>(
    db,
    sql`select
      exists (select from ${projects} where id = ${projectId} and archived_at is null) as live,
      ${accessText(projectId)} as snapshot,
      coalesce((select json_agg(json_build_array(user_id, role_id) order by user_id, role_id) from ${projectMembers} where project_id = ${projectId}), '[]') as "userRoles",
      coalesce((select json_agg(json_build_array(group_id, role_id) order by group_id, role_id) from ${groupRoles} where project_id = ${projectId}), '[]') as "groupRoles",
      coalesce((select json_agg(json_build_array(r.id, r.name, r.type,
        coalesce((select json_agg(json_build_array(rp.permission, rp.environment)) from ${rolePermissions} rp where rp.role_id = r.id), '[]'), ${roleText(sql`r.id`)}) order by r.id)
        from ${roles} r where r.type in ('project', 'custom')), '[]') as roles,
      coalesce((select json_agg(id) from ${users} where id = any(${sql.param(named.users)}::int[]) and deleted_at is null), '[]') as "activeUsers",
      coalesce((select json_agg(id) from ${groups} where id = any(${sql.param(named.groups)}::int[])), '[]') as "knownGroups"`,
  )
  const byHolder = (pairs: [number, number][]) => {
    const held = new Map<number, number[]>()
    for (const [holder, role] of pairs) held.set(holder, [...(held.get(holder) ?? []), role])
    return held
  }
  return {
    projectId,
    live: row!.live,
    snapshot: row!.snapshot,
    users: byHolder(json(row!.userRoles)),
    groups: byHolder(json(row!.groupRoles)),
    roles: new Map(json<[number, string, string, [string, string | null][], string][]>(row!.roles).map(([id, name, type, permissions, text]) => [id, { id, name, type, permissions, text }])),
    activeUsers: new Set(json<number[]>(row!.activeUsers)),
    knownGroups: new Set(json<number[]>(row!.knownGroups)),
  }
}

const projectNotFound = (projectId: string) => notFound(`Could not find project ${projectId}`)

function requireProject(state: AccessState) {
  if (!state.live) throw projectNotFound(state.projectId)
}

/** 400 unless every id is a project role (built in or custom). */
function checkRoles(state: AccessState, roleIds: number[], path = 'body.roles') {
  const missing = roleIds.filter((id) => !state.roles.has(id))
  if (missing.length > 0) throw validationError(`Not a project role: ${missing.join(', ')}`, [{ path, message: `roles ${missing.join(', ')} are not project roles` }])
}

/** 400 unless every user is active and every group exists. */
function checkHolders(state: AccessState, userIds: number[], groupIds: number[]) {
  const users = userIds.filter((id) => !state.activeUsers.has(id))
  if (users.length > 0) throw validationError(`Unknown user(s): ${users.join(', ')}`, [{ path: 'body.users', message: `users ${users.join(', ')} do not exist` }])
  const groups = groupIds.filter((id) => !state.knownGroups.has(id))
  if (groups.length > 0) throw validationError(`Unknown group(s): ${groups.join(', ')}`, [{ path: 'body.groups', message: `groups ${groups.join(', ')} do not exist` }])
}

function checkSubject(state: AccessState, subject: Subject) {
  checkHolders(state, subject.kind === 'user' ? [subject.id] : [], subject.kind === 'group' ? [subject.id] : [])
}

/** A project's access: each user's and each group's roles. */
interface Access {
  users: Map<number, number[]>
  groups: Map<number, number[]>
}

type Pair = [holder: number, role: number]
const pairsOf = (held: Map<number, number[]>): Pair[] => [...held].flatMap(([holder, roleIds]) => roleIds.map((role): Pair => [holder, role]))
const minus = (a: Pair[], b: Pair[]) => a.filter(([h, r]) => !b.some(([h2, r2]) => h === h2 && r === r2))
const hasOwner = (access: Access) => [...access.users.values(), ...access.groups.values()].some((roleIds) => roleIds.includes(OWNER_ROLE_ID))

/**
 * 403 unless the caller may give every role in `given` in the project: admins any; anyone else, the project's Owners
 * too, only a role whose every permission they hold there themselves (in the same environment, or in every one).
 * Unleash lets Owners give any role; Flagpost does not, or an Owner could give themselves SKIP_CHANGE_REQUEST, which
 * the Owner role lacks, and switch a change-request-protected environment directly.
 */
function requireMayGive(caller: Caller, state: AccessState, given: number[]) {
  const { principal } = caller
  if (given.length === 0) return
  const held = heldInProject(principal, state.projectId)
  for (const id of given) {
    const role = state.roles.get(id)!
    const missing = missingToGive(held, state.projectId, role)
    if (missing === undefined) continue
    const { permission, environment } = heldPermission(missing)
    throw noAccess(`You cannot give the role ${role.name}: it grants permission=${permission}${environment ? ` defined for environment=${environment}` : ''} in project=${state.projectId}, which you do not hold there`)
  }
}

/** The first permission of `role` that `held` (the caller's in the project) lacks, so that they may not give it; undefined: they may. */
const missingToGive = (held: ReturnType<typeof heldInProject>, project: string, role: { name: string; type: string; permissions: [string, string | null][] }) =>
  permissionsOfRole({ project, name: role.name, type: role.type, permissions: role.permissions }).find((key) => !covers(held, key))

const p = (name: string) => sql.placeholder(name)
const pairRows = (name: string) => sql`jsonb_to_recordset(${p(name)}::jsonb) as x (holder int, role int)`

/**
 * A change of the project's access and its events, made only while what it was decided on holds (read under the
 * project's lock, taken by the statement before it in the same batch): the project is live, its access is exactly as
 * read, the custom roles given have the permissions read, and the users given roles are active. Then drops and adds
 * the pairs (holder, role) of users and of groups.
 */
const changeAccessStatement = eventsStatement('flagpost_change_project_access', {
  alongside: [
    sql`select where exists (select from ${projects} where id = ${p('project')} and archived_at is null)
      and ${accessText(p('project'))} = ${p('snapshot')}::text
      and ${givenText(p('given'))} = ${p('givenText')}::text
      and (select count(*) from ${users} where id = any(${p('users')}::int[]) and deleted_at is null) = cardinality(${p('users')}::int[])`,
  ],
  guarded: true,
  unguarded: [
    sql`delete from ${projectMembers} pm using ${pairRows('dropUsers')} where pm.project_id = ${p('project')} and pm.user_id = x.holder and pm.role_id = x.role and ${guardPassed}`,
    sql`insert into ${projectMembers} (project_id, user_id, role_id, created_at)
      select ${p('project')}, x.holder, x.role, ${p('createdAt')}::timestamptz from ${pairRows('addUsers')} where ${guardPassed} on conflict do nothing`,
    sql`delete from ${groupRoles} gr using ${pairRows('dropGroups')} where gr.project_id = ${p('project')} and gr.group_id = x.holder and gr.role_id = x.role and ${guardPassed}`,
    sql`insert into ${groupRoles} (project_id, group_id, role_id, created_by, created_at)
      select ${p('project')}, x.holder, x.role, ${p('createdBy')}::text, ${p('createdAt')}::timestamptz from ${pairRows('addGroups')} where ${guardPassed} on conflict do nothing`,
  ],
})

const pairsJson = (pairs: Pair[]) => JSON.stringify(pairs.map(([holder, role]) => ({ holder, role })))

/**
 * Writes the project's access as `after` (from `state`) with its events: 400 when it leaves no owner where there was
 * one (as Unleash, so that someone but admins may manage it), 403 when it gives a role the caller may not give. False
 * when the access changed since it was read.
 */
async function writeAccess(db: Db, caller: Caller, state: AccessState, after: Access, events: NewEvent[]): Promise<boolean> {
  if (hasOwner(state) && !hasOwner(after)) throw validationError(`A project must keep at least one owner: give another user or group the Owner role in ${state.projectId} first`)
  const [usersBefore, usersAfter, groupsBefore, groupsAfter] = [pairsOf(state.users), pairsOf(after.users), pairsOf(state.groups), pairsOf(after.groups)]
  const [addUsers, addGroups] = [minus(usersAfter, usersBefore), minus(groupsAfter, groupsBefore)]
  const given = [...new Set([...addUsers, ...addGroups].map(([, role]) => role))].sort((a, b) => a - b)
  requireMayGive(caller, state, given)
  const values = {
    project: state.projectId,
    snapshot: state.snapshot,
    given,
    givenText: given.map((id) => state.roles.get(id)!.text).join('|'),
    users: [...new Set(addUsers.map(([u]) => u))],
    dropUsers: pairsJson(minus(usersBefore, usersAfter)),
    addUsers: pairsJson(addUsers),
    dropGroups: pairsJson(minus(groupsBefore, groupsAfter)),
    addGroups: pairsJson(addGroups),
    createdBy: caller.actor.createdBy,
    createdAt: caller.now.toISOString(),
  }
  const [, { written }] = await batch(db, [(q) => lockProject(q, state.projectId), (q) => changeAccessStatement(q, caller.actor, caller.now, events, values)])
  return written > 0
}

/** Decides a change from the project's access as read (throwing the 4xx of a refused change) and writes it, again from a fresh read if it changed meanwhile. */
async function changeAccess(db: Db, caller: Caller, projectId: string, named: { users: number[]; groups: number[] }, decide: (state: AccessState) => { after: Access; events: NewEvent[] } | undefined) {
  await untilUnchanged(`The access to project ${projectId}`, async () => {
    const state = await readAccess(db, projectId, named)
    requireProject(state)
    const change = decide(state)
    if (!change) return true
    return (await writeAccess(db, caller, state, change.after, change.events)) || undefined
  })
}

const sorted = (ids: Iterable<number>) => [...new Set(ids)].sort((a, b) => a - b)
const copy = (state: AccessState): Access => ({ users: new Map(state.users), groups: new Map(state.groups) })
const heldBy = (access: Access, subject: Subject) => (subject.kind === 'user' ? access.users : access.groups).get(subject.id) ?? []
function withRoles(access: Access, subject: Subject, roleIds: number[]): Access {
  const held = new Map(subject.kind === 'user' ? access.users : access.groups)
  if (roleIds.length === 0) held.delete(subject.id)
  else held.set(subject.id, sorted(roleIds))
  return subject.kind === 'user' ? { ...access, users: held } : { ...access, groups: held }
}
const subjectKey = (subject: Subject) => (subject.kind === 'user' ? { userId: subject.id } : { groupId: subject.id })
const noRoles = (state: AccessState, subject: Subject) => notFound(`${subject.kind === 'user' ? 'User' : 'Group'} ${subject.id} has no role in project ${state.projectId}`)

export interface AddAccess {
  roles: number[]
  users: number[]
  groups?: number[]
}

/** The event of users and groups given roles in a project, with Unleash's data shape. */
export const accessAddedEvent = (projectId: string, roleIds: number[], userIds: number[], groupIds: number[] = []): NewEvent => ({
  type: 'project-access-added',
  project: projectId,
  data: { roles: roleIds.map((roleId) => ({ roleId, groupIds, userIds })) },
})

/** Gives each user and group each role (what they hold already they keep). */
function giving(state: AccessState, roleIds: number[], userIds: number[], groupIds: number[]): Access {
  checkRoles(state, roleIds)
  checkHolders(state, userIds, groupIds)
  let after = copy(state)
  for (const id of userIds) after = withRoles(after, { kind: 'user', id }, [...heldBy(after, { kind: 'user', id }), ...roleIds])
  for (const id of groupIds) after = withRoles(after, { kind: 'group', id }, [...heldBy(after, { kind: 'group', id }), ...roleIds])
  return after
}

/**
 * Giving users and groups roles and its event, for a caller who may give the roles of the types `types` (checked
 * before): made only while the project is live, every role a project role of those types, every user active and every
 * group there; one statement, so the write needs no read first (under the project's lock, taken by the statement
 * before it in the same batch).
 */
const addAccessStatement = eventsStatement('flagpost_add_project_access', {
  alongside: [
    sql`select where exists (select from ${projects} where id = ${p('project')} and archived_at is null)
      and (select count(*) from ${roles} where id = any(${p('roles')}::int[]) and type = any(${p('types')}::text[])) = cardinality(${p('roles')}::int[])
      and (select count(*) from ${users} where id = any(${p('users')}::int[]) and deleted_at is null) = cardinality(${p('users')}::int[])
      and (select count(*) from ${groups} where id = any(${p('groups')}::int[])) = cardinality(${p('groups')}::int[])`,
  ],
  guarded: true,
  unguarded: [
    sql`insert into ${projectMembers} (project_id, user_id, role_id, created_at)
      select ${p('project')}, u, r, ${p('createdAt')}::timestamptz from unnest(${p('users')}::int[]) u, unnest(${p('roles')}::int[]) r where ${guardPassed}
      on conflict do nothing`,
    sql`insert into ${groupRoles} (project_id, group_id, role_id, created_by, created_at)
      select ${p('project')}, g, r, ${p('createdBy')}::text, ${p('createdAt')}::timestamptz from unnest(${p('groups')}::int[]) g, unnest(${p('roles')}::int[]) r where ${guardPassed}
      on conflict do nothing`,
  ],
})

/**
 * POST /api/admin/projects/{projectId}/access: gives every user and group listed every role listed. Emits
 * `project-access-added`. Admins, who may give any role, and the project's Owners giving built-in project roles (Owner
 * and Member, whose permissions the Owner role holds) write at once (one batch; a read only when it wrote nothing, to
 * say why); others, and Owners giving a custom role, have what they give checked first.
 */
export async function addAccess(db: Db, caller: Caller, projectId: string, input: AddAccess) {
  const [roleIds, userIds, groupIds] = [sorted(input.roles), sorted(input.users), sorted(input.groups ?? [])]
  const event = accessAddedEvent(projectId, roleIds, userIds, groupIds)
  const types = hasPermission(caller.principal, Permission.ADMIN) ? ['project', 'custom'] : ownsProject(caller.principal, projectId) ? ['project'] : undefined
  if (types) {
    const values = { project: projectId, roles: roleIds, types, users: userIds, groups: groupIds, createdBy: caller.actor.createdBy, createdAt: caller.now.toISOString() }
    const [, { written }] = await batch(db, [(q) => lockProject(q, projectId), (q) => addAccessStatement(q, caller.actor, caller.now, [event], values)])
    if (written > 0) return
  }
  await changeAccess(db, caller, projectId, { users: userIds, groups: groupIds }, (state) => ({ after: giving(state, roleIds, userIds, groupIds), events: [event] }))
}

/**
 * POST /api/admin/projects/{projectId}/role/{roleId}/access (deprecated in Unleash 5.5 for the route above): gives the
 * users and groups listed the role. Emits `project-access-added` with the data Unleash wrote for it (one role, an object).
 */
export async function addRoleAccess(db: Db, caller: Caller, projectId: string, roleId: number, input: { users: { id: number }[]; groups: { id: number }[] }) {
  const [userIds, groupIds] = [sorted(input.users.map((u) => u.id)), sorted(input.groups.map((g) => g.id))]
  await changeAccess(db, caller, projectId, { users: userIds, groups: groupIds }, (state) => {
    checkRoles(state, [roleId], 'path.roleId')
    return { after: giving(state, [roleId], userIds, groupIds), events: [{ type: 'project-access-added', project: projectId, data: { roles: { roleId, groupIds, userIds } } }] }
  })
}

/**
 * PUT /api/admin/projects/{projectId}/access: the project's access becomes exactly the one given (each role with its
 * users and groups); users and groups not listed lose their roles. Emits `project-access-updated` (data and preData:
 * each role held, with its users and groups).
 */
export async function setProjectAccess(db: Db, caller: Caller, projectId: string, input: { roles: { id: number; users?: number[]; groups?: number[] }[] }) {
  const userIds = sorted(input.roles.flatMap((r) => r.users ?? []))
  const groupIds = sorted(input.roles.flatMap((r) => r.groups ?? []))
  const byRole = (access: Access) =>
    sorted([...access.users.values(), ...access.groups.values()].flat()).map((roleId) => ({
      roleId,
      userIds: [...access.users].filter(([, held]) => held.includes(roleId)).map(([id]) => id),
      groupIds: [...access.groups].filter(([, held]) => held.includes(roleId)).map(([id]) => id),
    }))
  await changeAccess(db, caller, projectId, { users: userIds, groups: groupIds }, (state) => {
    checkRoles(state, sorted(input.roles.map((r) => r.id)))
    checkHolders(state, userIds, groupIds)
    let after: Access = { users: new Map(), groups: new Map() }
    for (const role of input.roles) {
      for (const id of role.users ?? []) after = withRoles(after, { kind: 'user', id }, [...heldBy(after, { kind: 'user', id }), role.id])
      for (const id of role.groups ?? []) after = withRoles(after, { kind: 'group', id }, [...heldBy(after, { kind: 'group', id }), role.id])
    }
    return { after, events: [{ type: 'project-access-updated', project: projectId, data: { roles: byRole(after) }, preData: { roles: byRole(state) } }] }
  })
}

/**
 * PUT /api/admin/projects/{projectId}/users/{userId}/roles and …/groups/{groupId}/roles: replaces the user's or group's
 * roles in the project (an empty list takes them all). Emits `project-access-user-roles-updated` or
 * `project-access-group-roles-updated` (data and preData: the roles and the user or group).
 */
export async function setRoles(db: Db, caller: Caller, projectId: string, subject: Subject, roleIds: number[]) {
  const roles = sorted(roleIds)
  const named = subject.kind === 'user' ? { users: [subject.id], groups: [] } : { users: [], groups: [subject.id] }
  await changeAccess(db, caller, projectId, named, (state) => {
    checkSubject(state, subject)
    checkRoles(state, roles)
    const type = subject.kind === 'user' ? 'project-access-user-roles-updated' : 'project-access-group-roles-updated'
    return { after: withRoles(copy(state), subject, roles), events: [{ type, project: projectId, data: { roles, ...subjectKey(subject) }, preData: { roles: heldBy(state, subject), ...subjectKey(subject) } }] }
  })
}

/**
 * DELETE /api/admin/projects/{projectId}/users/{userId}/roles and …/groups/{groupId}/roles: takes every role of the
 * user or group in the project away; 404 when they hold none. Emits `project-access-user-roles-deleted` or
 * `project-access-group-roles-deleted` (preData: the roles and the user or group).
 */
export async function removeAccess(db: Db, caller: Caller, projectId: string, subject: Subject) {
  await changeAccess(db, caller, projectId, { users: [], groups: [] }, (state) => {
    const before = heldBy(state, subject)
    if (before.length === 0) throw noRoles(state, subject)
    const type = subject.kind === 'user' ? 'project-access-user-roles-deleted' : 'project-access-group-roles-deleted'
    return { after: withRoles(copy(state), subject, []), events: [{ type, project: projectId, preData: { roles: before, ...subjectKey(subject) } }] }
  })
}

/** What the events of one role of a user or group say about it, with Unleash's fields. */
const roleFact = (state: AccessState, subject: Subject, roleId: number) => ({
  ...subjectKey(subject),
  ...(subject.kind === 'group' ? { projectId: state.projectId } : {}),
  roleId,
  roleName: state.roles.get(roleId)?.name ?? null,
})

/**
 * POST /api/admin/projects/{projectId}/users/{userId}/roles/{roleId} and …/groups/{groupId}/roles/{roleId} (Unleash's
 * routes for one role, deprecated in its 5.5): gives the user or group the role; 409 when they hold it. Emits
 * `project-user-added` or `project-group-added`.
 */
export async function addRole(db: Db, caller: Caller, projectId: string, subject: Subject, roleId: number) {
  const named = subject.kind === 'user' ? { users: [subject.id], groups: [] } : { users: [], groups: [subject.id] }
  await changeAccess(db, caller, projectId, named, (state) => {
    checkSubject(state, subject)
    checkRoles(state, [roleId], 'path.roleId')
    const before = heldBy(state, subject)
    if (before.includes(roleId)) throw conflict(`${subject.kind === 'user' ? 'User' : 'Group'} ${subject.id} already has the role ${state.roles.get(roleId)!.name} in project ${projectId}`)
    const type = subject.kind === 'user' ? 'project-user-added' : 'project-group-added'
    return { after: withRoles(copy(state), subject, [...before, roleId]), events: [{ type, project: projectId, data: roleFact(state, subject, roleId) }] }
  })
}

/**
 * PUT …/users/{userId}/roles/{roleId} and …/groups/{groupId}/roles/{roleId}: the role becomes the user's or group's only
 * role in the project; 404 when they hold none; nothing is written when it already is. Emits `project-user-role-changed`
 * or `project-group-role-changed` (preData: their first role before, with all of them in `roles`).
 */
export async function changeRole(db: Db, caller: Caller, projectId: string, subject: Subject, roleId: number) {
  await changeAccess(db, caller, projectId, { users: [], groups: [] }, (state) => {
    checkRoles(state, [roleId], 'path.roleId')
    const before = heldBy(state, subject)
    if (before.length === 0) throw noRoles(state, subject)
    if (before.length === 1 && before[0] === roleId) return undefined
    const type = subject.kind === 'user' ? 'project-user-role-changed' : 'project-group-role-changed'
    const event: NewEvent = { type, project: projectId, data: roleFact(state, subject, roleId), preData: { ...roleFact(state, subject, before[0]!), roles: before } }
    return { after: withRoles(copy(state), subject, [roleId]), events: [event] }
  })
}

/** DELETE …/users/{userId}/roles/{roleId} and …/groups/{groupId}/roles/{roleId}: takes the one role away; 404 when not held. Emits `project-user-removed` or `project-group-removed`. */
export async function removeRole(db: Db, caller: Caller, projectId: string, subject: Subject, roleId: number) {
  await changeAccess(db, caller, projectId, { users: [], groups: [] }, (state) => {
    const before = heldBy(state, subject)
    if (!before.includes(roleId)) throw notFound(`${subject.kind === 'user' ? 'User' : 'Group'} ${subject.id} does not have role ${roleId} in project ${projectId}`)
    const type = subject.kind === 'user' ? 'project-user-removed' : 'project-group-removed'
    return { after: withRoles(copy(state), subject, before.filter((id) => id !== roleId)), events: [{ type, project: projectId, preData: roleFact(state, subject, roleId) }] }
  })
}

/**
 * GET /api/admin/projects/{projectId}/access: the project roles there are (each saying whether `principal` may give it
 * there, as the access routes judge it), and who holds which: users, and groups with their members.
 */
export async function projectAccess(db: Db, projectId: string, principal: Principal) {
  // One round trip at the edge: the project, its roles, its users and groups, and the groups' members.
  const [[project], roleRows, memberRows, groupRows, groupMembers] = await together(db, [
    (q) => q.select({ id: projects.id }).from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt))),
    (q) =>
      q
        .select({
          id: roles.id,
          name: roles.name,
          type: roles.type,
          description: roles.description,
          permissions: sql<[string, string | null][]>`coalesce((select json_agg(json_build_array(${rolePermissions.permission}, ${rolePermissions.environment})) from ${rolePermissions} where ${rolePermissions.roleId} = ${roles.id}), '[]')`,
        })
        .from(roles)
        .where(inArray(roles.type, ['project', 'custom']))
        .orderBy(asc(roles.id)),
    (q) =>
      q
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
    (q) =>
      q
        .select({
          group: groups,
          roles: sql<number[]>`array_agg(${groupRoles.roleId} order by ${groupRoles.roleId})`,
          addedAt: sql<Date>`min(${groupRoles.createdAt})`.mapWith(groupRoles.createdAt),
        })
        .from(groupRoles)
        .innerJoin(groups, eq(groups.id, groupRoles.groupId))
        .where(eq(groupRoles.projectId, projectId))
        .groupBy(groups.id)
        .orderBy(asc(groups.id)),
    (q) =>
      q
        .select({ groupId: groupUsers.groupId, joinedAt: groupUsers.joinedAt, createdBy: groupUsers.createdBy, id: users.id, name: users.name, email: users.email, username: users.username })
        .from(groupUsers)
        .innerJoin(users, and(eq(users.id, groupUsers.userId), isNull(users.deletedAt)))
        .where(inArray(groupUsers.groupId, q.select({ id: groupRoles.groupId }).from(groupRoles).where(eq(groupRoles.projectId, projectId))))
        .orderBy(asc(groupUsers.groupId), asc(users.id)),
  ])
  if (!project) throw projectNotFound(projectId)
  const held = heldInProject(principal, projectId)
  // The access routes need UPDATE_PROJECT there before any role is judged.
  const mayChange = hasPermission(principal, Permission.UPDATE_PROJECT, { project: projectId })
  const imageOf = (u: { id: number; email: string | null; username: string | null }) => avatarUrl(u.email ?? u.username ?? `user-${u.id}`)
  const members = await Promise.all(
    groupMembers.map(async (m) => ({ groupId: m.groupId, member: { joinedAt: m.joinedAt.toISOString(), createdBy: m.createdBy, user: { id: m.id, name: m.name, username: m.username, email: m.email, imageUrl: await imageOf(m) } } })),
  )
  return {
    version: 1,
    roles: roleRows.map((r) => ({ id: r.id, type: r.type, name: r.name, description: r.description, givable: mayChange && missingToGive(held, projectId, r) === undefined })),
    users: await Promise.all(
      memberRows.map(async (m) => ({
        id: m.id,
        name: m.name,
        email: m.email,
        username: m.username,
        imageUrl: await imageOf(m),
        roles: m.roles.map(Number),
        addedAt: m.addedAt.toISOString(),
      })),
    ),
    groups: groupRows.map(({ group, roles: held, addedAt }) => ({
      id: group.id,
      name: group.name,
      description: group.description,
      mappingsSSO: group.mappingsSso,
      rootRole: group.rootRoleId,
      createdBy: group.createdBy,
      createdAt: group.createdAt.toISOString(),
      users: members.filter((m) => m.groupId === group.id).map((m) => m.member),
      roles: held.map(Number),
      addedAt: addedAt.toISOString(),
    })),
  }
}
