import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm'
import { groupRoles, groups, groupUsers, roles, users } from '../../schema/index.js'
import { queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed } from '../events/store.js'
import type { Author } from '../core/principal.js'
import type { NewEvent } from '../events/types.js'
import { userImageUrl } from '../users/store.js'
import type { CreateGroup } from './schemas.js'

type GroupRow = typeof groups.$inferSelect

const groupNotFound = (id: number) => notFound(`Could not find group with id ${id}`)
const nameTaken = () => nameExists('Group name already exists')

/** The groups of `ids` (all when absent) with their members and projects: three set-based queries. */
async function readGroups(db: Db, ids?: number[]) {
  const only = <T>(column: T) => (ids === undefined ? undefined : inArray(column as never, ids))
  const [rows, members, projects] = await together(db, [
    (q) => q.select().from(groups).where(only(groups.id)).orderBy(asc(groups.id)),
    (q) =>
      q
        .select({ groupId: groupUsers.groupId, joinedAt: groupUsers.joinedAt, createdBy: groupUsers.createdBy, id: users.id, name: users.name, username: users.username, email: users.email })
        .from(groupUsers)
        .innerJoin(users, eq(users.id, groupUsers.userId))
        .where(and(only(groupUsers.groupId), isNull(users.deletedAt)))
        .orderBy(asc(groupUsers.groupId), asc(users.id)),
    (q) => q.selectDistinct({ groupId: groupRoles.groupId, project: groupRoles.projectId }).from(groupRoles).where(only(groupRoles.groupId)).orderBy(asc(groupRoles.groupId), asc(groupRoles.projectId)),
  ])
  const users_ = await Promise.all(
    members.map(async (m) => ({
      groupId: m.groupId,
      member: { joinedAt: m.joinedAt.toISOString(), createdBy: m.createdBy, user: { id: m.id, name: m.name, username: m.username, email: m.email, imageUrl: await userImageUrl(m) } },
    })),
  )
  return rows.map((g) => {
    const groupUsersOf = users_.filter((m) => m.groupId === g.id).map((m) => m.member)
    return { ...groupView(g, projects.filter((p) => p.groupId === g.id).map((p) => p.project), groupUsersOf.length), users: groupUsersOf }
  })
}

const groupView = (g: GroupRow, projects: string[], userCount: number) => ({
  id: g.id,
  name: g.name,
  description: g.description,
  mappingsSSO: g.mappingsSso,
  rootRole: g.rootRoleId,
  createdBy: g.createdBy,
  createdAt: g.createdAt.toISOString(),
  projects,
  userCount,
  scimId: null,
})

export async function listGroups(db: Db) {
  return { groups: await readGroups(db) }
}

export async function getGroup(db: Db, id: number) {
  const [group] = await readGroups(db, [id])
  if (!group) throw groupNotFound(id)
  return group
}

/**
 * `GET /api/admin/user-admin/access`: the active accounts and the groups, in their short forms. Service accounts are
 * there, as in Unleash (they may be given project roles), marked by their account type.
 */
export async function usersAndGroups(db: Db) {
  const [userRows, groupRows] = await together(db, [
    (q) => q.select({ id: users.id, name: users.name, username: users.username, email: users.email, isService: users.isService }).from(users).where(isNull(users.deletedAt)).orderBy(asc(users.id)),
    (q) =>
      q
        .select({ id: groups.id, name: groups.name, description: groups.description, rootRole: groups.rootRoleId, userCount: sql<number>`(select count(*) from ${groupUsers} gu join ${users} u on u.id = gu.user_id and u.deleted_at is null where gu.group_id = ${groups}.id)`.mapWith(Number) })
        .from(groups)
        .orderBy(asc(groups.id)),
  ])
  return {
    users: await Promise.all(userRows.map(async ({ isService, ...u }) => ({ ...u, imageUrl: await userImageUrl(u), accountType: isService ? ('Service Account' as const) : ('User' as const) }))),
    groups: groupRows,
  }
}

/** What events say about a group: Unleash's shape, its members by id. */
const groupData = (g: Pick<GroupRow, 'id' | 'name' | 'description' | 'mappingsSso' | 'rootRoleId'>, userIds: number[]) => ({
  id: g.id,
  name: g.name,
  description: g.description,
  mappingsSSO: g.mappingsSso,
  rootRole: g.rootRoleId,
  users: userIds,
})

/** The SSO group IDs, each once, in the order given. */
const mappingsOf = (input: CreateGroup) => (input.mappingsSSO === undefined ? undefined : [...new Set(input.mappingsSSO)])

const memberIds = (input: CreateGroup) => [...new Set((input.users ?? []).map((u) => u.user.id))].sort((a, b) => a - b)

/**
 * What a group write is checked against, in one statement: whether another group has the name, whether the root role
 * is one (built in or custom), which of the users are active.
 */
const checksOf = (input: CreateGroup, userIds: number[], id: number | null) =>
  sql`exists (select from ${groups} where name = ${input.name} and id is distinct from ${id}::int) as taken,
    ${input.rootRole == null ? sql`true` : sql`exists (select from ${roles} where id = ${input.rootRole} and type in ('root', 'root-custom'))`} as "rootRoleOk",
    coalesce((select json_agg(id) from ${users} where id = any(${sql.param(userIds)}::int[]) and deleted_at is null), '[]') as active`

interface Checks {
  taken: boolean
  rootRoleOk: boolean
  active: unknown
}

function check(read: Checks, input: CreateGroup, userIds: number[]) {
  if (read.taken) throw nameTaken()
  if (!read.rootRoleOk) throw validationError(`Not a root role: ${input.rootRole}`, [{ path: 'body.rootRole', message: 'must be the id of a root role (built in or custom)' }])
  const active = (typeof read.active === 'string' ? JSON.parse(read.active) : read.active) as number[]
  const missing = userIds.filter((id) => !active.includes(id))
  if (missing.length > 0) throw validationError(`Unknown user(s): ${missing.join(', ')}`, [{ path: 'body.users', message: `users ${missing.join(', ')} do not exist` }])
}

const p = (name: string) => sql.placeholder(name)

/** The users a write makes members are still active (a deleted user's row stays). */
const stillActive = sql`select where (select count(*) from ${users} where id = any(${p('users')}::int[]) and deleted_at is null) = cardinality(${p('users')}::int[])`

const addMembers = sql`insert into ${groupUsers} (group_id, user_id, created_by, joined_at)
  select ${p('id')}::int, u, ${p('createdBy')}::text, ${p('createdAt')}::timestamptz from unnest(${p('added')}::int[]) u where ${guardPassed}
  on conflict do nothing`

/** Creating a group with the id taken for it, its members and its event, unless the name is taken (the insert decides). */
const createStatement = eventsStatement('flagpost_create_group', {
  alongside: [
    sql`insert into ${groups} (id, name, description, mappings_sso, root_role_id, created_by, created_at)
      values (${p('id')}::int, ${p('name')}::text, ${p('description')}::text, ${p('mappings')}::text[], ${p('rootRole')}::int, ${p('createdBy')}::text, ${p('createdAt')}::timestamptz)
      on conflict do nothing returning id`,
    stillActive,
  ],
  guarded: true,
  unguarded: [addMembers],
})

/**
 * POST /api/admin/groups: a group with its members and root role. 409 when the name is taken, 400 for an unknown user
 * or a root role that is none. Emits `group-created` (data: the group, its members by id). A read, then one statement.
 */
export async function createGroup(db: Db, caller: Author, input: CreateGroup) {
  const userIds = memberIds(input)
  const [read] = await queryRows<Checks & { id: number }>(db, sql`select nextval(pg_get_serial_sequence('groups', 'id'))::int as id, ${checksOf(input, userIds, null)}`)
  check(read!, input, userIds)
  const row: GroupRow = { id: read!.id, name: input.name, description: input.description ?? null, mappingsSso: mappingsOf(input) ?? [], rootRoleId: input.rootRole ?? null, createdBy: caller.actor.createdBy, createdAt: caller.now }
  const { written } = await createStatement(db, caller.actor, caller.now, [{ type: 'group-created', data: groupData(row, userIds) }], {
    id: row.id,
    name: row.name,
    description: row.description,
    mappings: row.mappingsSso,
    rootRole: row.rootRoleId,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    users: userIds,
    added: userIds,
  })
  if (written === 0) throw nameTaken()
  return groupView(row, [], userIds.length)
}

/** The members of a group as text, which a change compares to make sure they are those read. */
const membersText = (id: unknown) => sql<string>`(select coalesce(string_agg(user_id::text, ',' order by user_id), '') from ${groupUsers} where group_id = ${id}::int)`
const membersJson = sql<unknown>`(select coalesce(json_agg(user_id order by user_id), '[]') from ${groupUsers} where group_id = ${groups}.id)`
const projectsJson = sql<unknown>`(select coalesce(json_agg(distinct project_id), '[]') from ${groupRoles} where group_id = ${groups}.id)`
const parsed = <T>(value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as T

const readForChange = (db: Db, id: number) =>
  db.select({ group: groups, snapshot: rowText(groups), members: membersJson, membersText: membersText(sql`${groups}.id`), projects: projectsJson }).from(groups).where(eq(groups.id, id))

/** Updating a group read as `snapshot` with the members `membersText`, dropping and adding members. */
const updateStatement = eventsStatement('flagpost_update_group', {
  alongside: [
    sql`update ${groups} set name = ${p('name')}::text, description = ${p('description')}::text, mappings_sso = ${p('mappings')}::text[], root_role_id = ${p('rootRole')}::int
      where id = ${p('id')}::int and ${rowText(groups)} = ${p('snapshot')}::text and ${membersText(p('id'))} = ${p('membersText')}::text
      returning id`,
    stillActive,
  ],
  guarded: true,
  unguarded: [sql`delete from ${groupUsers} where group_id = ${p('id')}::int and user_id = any(${p('dropped')}::int[]) and ${guardPassed}`, addMembers],
})

/**
 * PUT /api/admin/groups/{groupId}: sets the name, description, SSO mappings and root role, and, when `users` is given,
 * the members (absent: kept). 404 for an unknown group, 409 when another group has the name. Emits `group-updated` (data
 * and preData: the group and its members by id), as Unleash does for a change of members through this route
 * (`group-user-added` and `group-user-removed` are for members joining or leaving otherwise: src/sso's group sync). A read, then one
 * statement made only while the group and its members are as read.
 */
export async function updateGroup(db: Db, caller: Author, id: number, input: CreateGroup) {
  return untilUnchanged(`Group ${id}`, async () => {
    const wanted = input.users === undefined ? undefined : memberIds(input)
    const [[read], [checks]] = await together(db, [(q) => readForChange(q, id), (q) => queryRows<Checks>(q, sql`select ${checksOf(input, wanted ?? [], id)}`)])
    if (!read) throw groupNotFound(id)
    check(checks!, input, wanted ?? [])
    const before = read.group
    const members = parsed<number[]>(read.members)
    const after: GroupRow = { ...before, name: input.name, description: input.description ?? null, mappingsSso: mappingsOf(input) ?? before.mappingsSso, rootRoleId: input.rootRole ?? null }
    const userIds = wanted ?? members
    const event: NewEvent = { type: 'group-updated', data: groupData(after, userIds), preData: groupData(before, members) }
    const { written } = await updateStatement(db, caller.actor, caller.now, [event], {
      id,
      snapshot: read.snapshot,
      membersText: read.membersText,
      name: after.name,
      description: after.description,
      mappings: after.mappingsSso,
      rootRole: after.rootRoleId,
      users: userIds,
      dropped: members.filter((u) => !userIds.includes(u)),
      added: userIds.filter((u) => !members.includes(u)),
      createdBy: caller.actor.createdBy,
      createdAt: caller.now.toISOString(),
    })
    return written === 0 ? undefined : groupView(after, parsed<string[]>(read.projects).sort(), userIds.length)
  })
}

/** Deleting a group read as `snapshot` with the members `membersText`; its members and project roles go with it (by cascade). */
const deleteStatement = eventsStatement('flagpost_delete_group', {
  alongside: [sql`delete from ${groups} where id = ${p('id')}::int and ${rowText(groups)} = ${p('snapshot')}::text and ${membersText(p('id'))} = ${p('membersText')}::text returning id`],
  guarded: true,
})

/**
 * DELETE /api/admin/groups/{groupId}: the group, its members' membership and its roles in projects. An unknown group
 * is a 200 that writes nothing, as in Unleash. Emits `group-deleted` (preData: the group, its members by id).
 */
export async function deleteGroup(db: Db, caller: Author, id: number): Promise<void> {
  await untilUnchanged(`Group ${id}`, async () => {
    const [read] = await readForChange(db, id)
    if (!read) return true
    const event: NewEvent = { type: 'group-deleted', preData: groupData(read.group, parsed<number[]>(read.members)) }
    const { written } = await deleteStatement(db, caller.actor, caller.now, [event], { id, snapshot: read.snapshot, membersText: read.membersText })
    return written > 0 || undefined
  })
}
