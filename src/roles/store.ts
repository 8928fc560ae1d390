import { and, asc, eq, sql, type SQL } from 'drizzle-orm'
import { environments, groupRoles, groups, projectMembers, publicSignupTokens, rolePermissions, roles, users } from '../../schema/index.js'
import { queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { conflict, nameExists, noAccess, notFound, validationError } from '../core/errors.js'
import { BUILT_IN_ROLE_TYPES, PERMISSION_INFO, projectRolePermissions, rootRolePermissions, type PermissionType } from '../core/permissions.js'
import { eventsStatement, guardPassed } from '../events/store.js'
import type { Author } from '../core/principal.js'
import type { NewEvent } from '../events/types.js'
import { inviteLinkEventData } from '../invite-links/store.js'
import type { CreateRole, CustomRoleType, PermissionRef } from './schemas.js'

type RoleRow = typeof roles.$inferSelect

/** The permission list, numbered in the order Flagpost declares them (src/core/permissions.ts). */
const CATALOGUE = Object.entries(PERMISSION_INFO).map(([name, info], i) => ({ id: i + 1, name, displayName: info.displayName as string, type: info.type as PermissionType }))
const BY_NAME = new Map(CATALOGUE.map((p) => [p.name, p]))

/** The role Flagpost gives deleted users whose root role is deleted (their row stays, for the events that name them). */
const VIEWER_ROLE_ID = 3

/** A permission a role holds: its name, and the one environment it is limited to (null: every environment). */
export interface RolePermission {
  name: string
  environment: string | null
}

const adminPermission = ({ name, environment }: RolePermission) => {
  const info = BY_NAME.get(name)!
  return { id: info.id, name, displayName: info.displayName, type: info.type, ...(environment ? { environment } : {}) }
}

/** GET /api/admin/permissions: every permission, root and project ones, and the environment ones once per environment. */
export async function listPermissions(db: Db) {
  const envs = await db.select({ name: environments.name }).from(environments).orderBy(asc(environments.sortOrder), asc(environments.name))
  const ofType = (type: PermissionType) => CATALOGUE.filter((p) => p.type === type)
  return {
    version: 1 as const,
    permissions: {
      root: ofType('root').map((p) => adminPermission({ name: p.name, environment: null })),
      project: ofType('project').map((p) => adminPermission({ name: p.name, environment: null })),
      environments: envs.map(({ name }) => ({ name, permissions: ofType('environment').map((p) => adminPermission({ name: p.name, environment: name })) })),
    },
  }
}

export const roleView = (r: Pick<RoleRow, 'id' | 'name' | 'type' | 'description'>) => ({ id: r.id, type: r.type, name: r.name, description: r.description })

export const isCustom = (type: string): type is CustomRoleType => !BUILT_IN_ROLE_TYPES.includes(type)

export async function listRoles(db: Db) {
  const rows = await db.select().from(roles).orderBy(asc(roles.id))
  return { version: 1 as const, roles: rows.map(roleView) }
}

/** A custom role's permissions, as JSON `[[name, environment], …]` in a stable order, for a select of `roles`. */
const permissionsJson = sql<unknown>`(select coalesce(json_agg(json_build_array(rp.permission, rp.environment) order by rp.permission, rp.environment nulls first), '[]'::json)
  from ${rolePermissions} rp where rp.role_id = ${roles}.id)`

/** The same as text, which a change compares to make sure they are still those read. */
const permissionsText = (roleId: unknown) =>
  sql<string>`(select coalesce(string_agg(rp.permission || '@' || coalesce(rp.environment, ''), ',' order by rp.permission, rp.environment nulls first), '')
    from ${rolePermissions} rp where rp.role_id = ${roleId}::int)`

const parsedPermissions = (value: unknown): RolePermission[] =>
  ((typeof value === 'string' ? JSON.parse(value) : value) as [string, string | null][]).map(([name, environment]) => ({ name, environment }))

/** The permissions a role holds: a built-in one's from Flagpost's code (in every environment), a custom one's as stored. */
function permissionsOf(role: Pick<RoleRow, 'name' | 'type'>, stored: RolePermission[]): RolePermission[] {
  if (isCustom(role.type)) return stored
  const table = role.type === 'root' ? rootRolePermissions : projectRolePermissions
  return [...(table[role.name] ?? [])].map((name) => ({ name, environment: null }))
}

const byCatalogue = (a: RolePermission, b: RolePermission) => BY_NAME.get(a.name)!.id - BY_NAME.get(b.name)!.id || (a.environment ?? '').localeCompare(b.environment ?? '')

/** What events say about a role: Unleash's shape, permissions by name and environment (absent: every one). */
const roleData = (role: Pick<RoleRow, 'id' | 'name' | 'type' | 'description'>, permissions: RolePermission[]) => ({
  id: role.id,
  name: role.name,
  description: role.description,
  type: role.type,
  permissions: permissions.map(({ name, environment }) => (environment ? { name, environment } : { name })),
})

const roleNotFound = (id: number) => notFound(`Could not find role with id ${id}`)
const builtIn = () => noAccess('You cannot change built in roles: create a custom role instead')
const nameTaken = (name: string) => nameExists(`There already exists a role with the name ${name}`)

/** A role with its permissions and the text both are compared by, for a read before a change. */
const selectRole = (db: Db, id: number) =>
  db.select({ role: roles, snapshot: rowText(roles), permissions: permissionsJson, permissionsText: permissionsText(sql`${roles}.id`) }).from(roles).where(eq(roles.id, id))

async function readRole(db: Db, id: number) {
  const [read] = await selectRole(db, id)
  return read && { ...read, permissions: parsedPermissions(read.permissions) }
}

/** GET /api/admin/roles/{roleId}: the role and its permissions (a built-in role's as Flagpost grants them). */
export async function getRole(db: Db, id: number) {
  const read = await readRole(db, id)
  if (!read) throw roleNotFound(id)
  return { ...roleView(read.role), permissions: permissionsOf(read.role, read.permissions).sort(byCatalogue).map(adminPermission) }
}

const ALLOWED: Record<CustomRoleType, PermissionType[]> = { 'root-custom': ['root'], custom: ['project', 'environment'] }

/**
 * The permissions a custom role of `type` is to hold, checked (400 naming each problem): each exists, is of a kind the
 * role may hold (root ones for a custom root role; project and environment ones for a custom project role), and only an
 * environment permission names an environment, one of `known`. Empty environments mean every environment; duplicates go.
 */
export function checkPermissions(type: CustomRoleType | undefined, refs: PermissionRef[], known: readonly string[]): RolePermission[] {
  const problems: { path: string; message: string }[] = []
  const unknown: string[] = []
  const found = new Map<string, RolePermission>()
  refs.forEach((ref, i) => {
    const info = ref.name !== undefined ? BY_NAME.get(ref.name) : CATALOGUE[ref.id! - 1]
    const path = `body.permissions.${i}`
    if (!info) return void unknown.push(ref.name ?? `permission with ID: ${ref.id}`)
    const environment = ref.environment || null
    if (type && !ALLOWED[type].includes(info.type)) problems.push({ path, message: `${info.name} is a ${info.type} permission: a ${type === 'custom' ? 'custom project role holds project and environment' : 'custom root role holds root'} permissions only` })
    else if (environment !== null && info.type !== 'environment') problems.push({ path: `${path}.environment`, message: `${info.name} is not an environment permission: it takes no environment` })
    else if (environment !== null && !known.includes(environment)) problems.push({ path: `${path}.environment`, message: `there is no environment ${environment}` })
    else found.set(`${info.name}@${environment ?? ''}`, { name: info.name, environment })
  })
  if (unknown.length > 0) throw validationError(`Invalid permissions supplied. The following permissions don't exist: ${unknown.join(', ')}.`, [{ path: 'body.permissions', message: `unknown: ${unknown.join(', ')}` }])
  if (problems.length > 0) throw validationError(`Invalid permissions supplied: ${problems.map((p) => p.message).join('; ')}`, problems)
  return [...found.values()].sort(byCatalogue)
}

const environmentsNamed = (refs: PermissionRef[] | null | undefined) => [...new Set((refs ?? []).map((r) => r.environment).filter((e): e is string => !!e))]

/** The environments of `names` that exist, as one SQL value (to read along with other things). */
const existingEnvironments = (names: string[]) => sql<string[]>`array(select name from ${environments} where name = any(${sql.param(names)}::text[]))`

/** POST /api/admin/roles/validate: the name is free (409 otherwise) and the permissions are valid. Writes nothing. */
export async function validateRole(db: Db, input: { name: string; type?: CustomRoleType; permissions?: PermissionRef[] | null }) {
  const [read] = await queryRows<{ taken: boolean; envs: string[] }>(
    db,
    sql`select exists (select from ${roles} where name = ${input.name}) as taken, ${existingEnvironments(environmentsNamed(input.permissions))} as envs`,
  )
  if (read!.taken) throw nameTaken(input.name)
  checkPermissions(input.type, input.permissions ?? [], read!.envs)
}

const p = (name: string) => sql.placeholder(name)

/** The permissions of a change as rows, from a JSON array of `{ permission, environment }`. */
const permissionRows = (name: string) => sql`jsonb_to_recordset(${p(name)}::jsonb) as x (permission text, environment text)`

/** Creating a role with the id taken for it, its permissions and its event, unless the name is taken (the insert decides). */
const createStatement = eventsStatement('flagpost_create_role', {
  alongside: [
    sql`insert into ${roles} (id, name, type, description, created_at)
      values (${p('id')}::int, ${p('name')}::text, ${p('type')}::text, ${p('description')}::text, ${p('createdAt')}::timestamptz)
      on conflict do nothing returning id`,
  ],
  guarded: true,
  unguarded: [sql`insert into ${rolePermissions} (role_id, permission, environment) select ${p('id')}::int, x.permission, x.environment from ${permissionRows('permissions')} where ${guardPassed}`],
})

const toRows = (permissions: RolePermission[]) => JSON.stringify(permissions.map(({ name, environment }) => ({ permission: name, environment })))

/**
 * POST /api/admin/roles: a custom role (type `custom` unless `root-custom` is asked) with its permissions. 409 when the
 * name is taken. Emits `role-created` (data: the role and its permissions). A read (an id, the environments named),
 * then one statement.
 */
export async function createRole(db: Db, caller: Author, input: CreateRole) {
  const type = input.type ?? 'custom'
  const [read] = await queryRows<{ id: number; envs: string[] }>(db, sql`select nextval(pg_get_serial_sequence('roles', 'id'))::int as id, ${existingEnvironments(environmentsNamed(input.permissions))} as envs`)
  const permissions = checkPermissions(type, input.permissions ?? [], read!.envs)
  const role = { id: read!.id, name: input.name, type, description: input.description ?? '' }
  const event: NewEvent = { type: 'role-created', data: roleData(role, permissions) }
  const { written } = await createStatement(db, caller.actor, caller.now, [event], { ...role, createdAt: caller.now.toISOString(), permissions: toRows(permissions) })
  if (written === 0) throw nameTaken(input.name)
  return { version: 1 as const, roles: roleView(role) }
}

/** SQL: the invite link (alias `l`) can be used at `at` (SQL of a time): switched on and not expired. */
const linkUsableAt = (at: unknown) => sql`(l.enabled and l.expires_at > ${at})`

/**
 * Where a role is held, as SQL of one JSON value (`roleId`: SQL of the role's id). With `usableAt` (SQL of a time), only
 * the invite links usable then count, and are named (`inviteLinkNames`): what blocks a delete.
 */
const usesOf = (roleId: unknown, usableAt?: unknown) => sql<unknown>`json_build_object(
  'users', (select count(*) from ${users} u where u.root_role_id = ${roleId} and u.deleted_at is null and not u.is_service),
  'serviceAccounts', (select count(*) from ${users} u where u.root_role_id = ${roleId} and u.deleted_at is null and u.is_service),
  'groups', (select count(*) from ${groups} g where g.root_role_id = ${roleId}),
  'inviteLinks', (select count(*) from ${publicSignupTokens} l where l.role_id = ${roleId} ${usableAt === undefined ? sql`` : sql`and ${linkUsableAt(usableAt)}`}),
  'inviteLinkNames', ${
    usableAt === undefined
      ? sql`'[]'::json`
      : sql`(select coalesce(json_agg(l.name order by l.name, l.id), '[]'::json) from ${publicSignupTokens} l where l.role_id = ${roleId} and ${linkUsableAt(usableAt)})`
  },
  'projects', (select coalesce(json_agg(json_build_array(project, u, g, s) order by project), '[]'::json) from (
    select project, sum(u)::int as u, sum(g)::int as g, sum(s)::int as s from (
      select pm.project_id as project, case when pu.is_service then 0 else 1 end as u, 0 as g, case when pu.is_service then 1 else 0 end as s
        from ${projectMembers} pm join ${users} pu on pu.id = pm.user_id where pm.role_id = ${roleId}
      union all select gr.project_id, 0, 1, 0 from ${groupRoles} gr where gr.role_id = ${roleId}
    ) held group by project) per_project))`

/**
 * SQL: nobody holds the role (`roleId`: SQL of its id), as root role (users, service accounts, groups, invite links) or in
 * a project. Deleted users do not count; with `usableAt` (SQL of a time), nor do invite links no longer usable then.
 */
const unusedSql = (roleId: SQL, usableAt?: SQL) => sql`not exists (select from ${users} where root_role_id = ${roleId} and deleted_at is null)
      and not exists (select from ${groups} where root_role_id = ${roleId})
      and not exists (select from ${publicSignupTokens} l where l.role_id = ${roleId} ${usableAt === undefined ? sql`` : sql`and ${linkUsableAt(usableAt)}`})
      and not exists (select from ${projectMembers} where role_id = ${roleId})
      and not exists (select from ${groupRoles} where role_id = ${roleId})`

interface RoleUses {
  users: number
  serviceAccounts: number
  groups: number
  inviteLinks: number
  inviteLinkNames: string[]
  projects: [project: string, users: number, groups: number, serviceAccounts: number][]
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`

/** 409 saying where the role is held, when it is, and what to do first (`then`). */
function requireUnused(name: string, value: unknown, then = 'Take it from them before deleting it') {
  const uses = (typeof value === 'string' ? JSON.parse(value) : value) as RoleUses
  const links = plural(Number(uses.inviteLinks), 'invite link') + (uses.inviteLinkNames?.length ? ` (${uses.inviteLinkNames.map((n) => JSON.stringify(n)).join(', ')})` : '')
  const holders = [plural(Number(uses.users), 'user'), plural(Number(uses.serviceAccounts), 'service account'), plural(Number(uses.groups), 'group'), links].filter((h) => !h.startsWith('0 '))
  const where = [
    ...(holders.length > 0 ? [`the root role of ${holders.join(' and ')}`] : []),
    ...uses.projects.map(([project, u, g, sa]) => `held in project ${project} by ${[plural(u, 'user'), plural(sa, 'service account'), plural(g, 'group')].filter((h) => !h.startsWith('0 ')).join(' and ')}`),
  ]
  if (where.length > 0) throw conflict(`Role ${name} is in use: ${where.join('; ')}. ${then}`)
}

/**
 * Updating a role read as `snapshot` with the permissions `permissionsText`: its name, description and type, the
 * permissions dropped and added. A new type only while nobody holds the role; deleted users whose root role it was
 * get Viewer when it becomes a project role (their row stays, as when a role is deleted).
 */
const updateStatement = eventsStatement('flagpost_update_role', {
  alongside: [
    sql`update ${roles} set name = ${p('name')}::text, description = ${p('description')}::text, type = ${p('type')}::text
      where id = ${p('id')}::int and ${rowText(roles)} = ${p('snapshot')}::text and ${permissionsText(p('id'))} = ${p('permissionsText')}::text
        and (type = ${p('type')}::text or (${unusedSql(sql`${p('id')}::int`)}))
      returning id`,
  ],
  guarded: true,
  unguarded: [
    sql`update ${users} set root_role_id = ${VIEWER_ROLE_ID} where root_role_id = ${p('id')}::int and deleted_at is not null and ${p('type')}::text <> 'root-custom' and ${guardPassed}`,
    sql`delete from ${rolePermissions} rp using ${permissionRows('dropped')}
      where rp.role_id = ${p('id')}::int and rp.permission = x.permission and coalesce(rp.environment, '') = coalesce(x.environment, '') and ${guardPassed}`,
    sql`insert into ${rolePermissions} (role_id, permission, environment) select ${p('id')}::int, x.permission, x.environment from ${permissionRows('added')} where ${guardPassed}`,
  ],
})

const keyOf = (p: RolePermission) => `${p.name}@${p.environment ?? ''}`

/**
 * PUT /api/admin/roles/{roleId}: a custom role's name and description, its type when given (absent: kept), and its
 * permissions when given (absent: kept, and then checked against the new type). 403 for a built-in role, 404 for an
 * unknown one. A new type, as Unleash allows, only while nobody holds the role (409 saying where: a root role of users,
 * service accounts, groups or invite links cannot become a project role, nor a role held in projects a root role).
 * Emits `role-updated` (data and preData: the role and its permissions). A read, then one statement made only while the
 * role and its permissions are as read (and, for a new type, while it is unused).
 */
export async function updateRole(db: Db, caller: Author, id: number, input: CreateRole) {
  return untilUnchanged(`Role ${id}`, async () => {
    const [[row], [names]] = await together(db, [
      (q) => q.select({ role: roles, snapshot: rowText(roles), permissions: permissionsJson, permissionsText: permissionsText(sql`${roles}.id`), uses: usesOf(sql`${roles}.id`) }).from(roles).where(eq(roles.id, id)),
      (q) => queryRows<{ taken: boolean; envs: string[] }>(q, sql`select exists (select from ${roles} where name = ${input.name} and id <> ${id}) as taken, ${existingEnvironments(environmentsNamed(input.permissions))} as envs`),
    ])
    if (!row) throw roleNotFound(id)
    const read = { ...row, permissions: parsedPermissions(row.permissions) }
    const before = read.role
    if (!isCustom(before.type)) throw builtIn()
    const type = input.type ?? before.type
    if (type !== before.type) requireUnused(before.name, read.uses, `Take it from them before changing its type (${before.type} to ${type})`)
    if (names!.taken) throw nameTaken(input.name)
    const permissions =
      input.permissions == null
        ? type === before.type
          ? read.permissions
          : checkPermissions(type, read.permissions, read.permissions.flatMap((p) => (p.environment ? [p.environment] : [])))
        : checkPermissions(type, input.permissions, names!.envs)
    const after = { ...before, name: input.name, description: input.description ?? '', type }
    const [was, will] = [new Set(read.permissions.map(keyOf)), new Set(permissions.map(keyOf))]
    const event: NewEvent = { type: 'role-updated', data: roleData(after, permissions), preData: roleData(before, read.permissions) }
    const { written } = await updateStatement(db, caller.actor, caller.now, [event], {
      id,
      name: after.name,
      description: after.description,
      type,
      snapshot: read.snapshot,
      permissionsText: read.permissionsText,
      dropped: toRows(read.permissions.filter((p) => !will.has(keyOf(p)))),
      added: toRows(permissions.filter((p) => !was.has(keyOf(p)))),
    })
    return written === 0 ? undefined : { version: 1 as const, roles: roleView(after) }
  })
}

/** SQL: the invite links (alias `l`) giving the role (`roleId`) that are no longer usable at `at`, each row as text, as one JSON array by id. */
const staleLinksText = (roleId: SQL, at: SQL) =>
  sql`(select coalesce(json_agg(l::text order by l.id), '[]'::json)::jsonb from ${publicSignupTokens} l where l.role_id = ${roleId} and not ${linkUsableAt(at)})`

/**
 * Deleting a custom role read as `snapshot`, with its permissions (by cascade), only while nobody holds it (invite
 * links no longer usable at `now` aside) and the links no longer usable that give it are exactly as read (`links`):
 * those are moved to the Viewer role. Deleted users keep their row (events name them): those whose root role it was get
 * the Viewer role. Both moves are what the role's deletion needs (the references are checked when the statement ends).
 */
const deleteStatement = eventsStatement('flagpost_delete_role', {
  alongside: [
    sql`delete from ${roles} where id = ${p('id')}::int and ${rowText(roles)} = ${p('snapshot')}::text and type in ('root-custom', 'custom')
      and ${unusedSql(sql`${p('id')}::int`, sql`${p('now')}::timestamptz`)}
      and ${staleLinksText(sql`${p('id')}::int`, sql`${p('now')}::timestamptz`)} = ${p('links')}::jsonb
      returning id`,
  ],
  guarded: true,
  unguarded: [
    sql`update ${users} set root_role_id = ${VIEWER_ROLE_ID} where root_role_id = ${p('id')}::int and deleted_at is not null and ${guardPassed}`,
    sql`update ${publicSignupTokens} l set role_id = ${VIEWER_ROLE_ID} where l.role_id = ${p('id')}::int and not ${linkUsableAt(sql`${p('now')}::timestamptz`)} and ${guardPassed}`,
  ],
})

/**
 * DELETE /api/admin/roles/{roleId}: a custom role nobody holds. 403 for a built-in role, 404 for an unknown one, 409
 * (saying where) while a user, service account, group or usable invite link (switched on, not expired: named) holds it as
 * root role, or a user or group holds it in a project. Invite links no longer usable that give it (their role cannot be
 * changed otherwise) are moved to Viewer, each with `public-signup-token-updated` (data and preData as the invite-link
 * routes write them). Emits `role-deleted` (preData: the role and its permissions). A read (the role, those links and
 * Viewer, one round trip), then one statement that deletes only while the role and those links are as read and it is unused.
 */
export async function deleteRole(db: Db, caller: Author, id: number): Promise<void> {
  const now = sql`${caller.now.toISOString()}::timestamptz`
  await untilUnchanged(`Role ${id}`, async () => {
    const [[read], stale, [viewer]] = await together(db, [
      (q) => q.select({ role: roles, snapshot: rowText(roles), permissions: permissionsJson, uses: usesOf(sql`${roles}.id`, now) }).from(roles).where(eq(roles.id, id)),
      (q) =>
        q
          .select({ link: publicSignupTokens, text: rowText(publicSignupTokens) })
          .from(publicSignupTokens)
          .where(and(eq(publicSignupTokens.roleId, id), sql`not (${publicSignupTokens.enabled} and ${publicSignupTokens.expiresAt} > ${now})`))
          .orderBy(asc(publicSignupTokens.id)),
      (q) => q.select().from(roles).where(eq(roles.id, VIEWER_ROLE_ID)),
    ])
    if (!read) throw roleNotFound(id)
    if (!isCustom(read.role.type)) throw builtIn()
    requireUnused(read.role.name, read.uses, 'Take it from them before deleting it (switch the invite links off: links no longer usable are moved to Viewer)')
    const events: NewEvent[] = [
      ...stale.map(({ link }): NewEvent => ({ type: 'public-signup-token-updated', data: inviteLinkEventData(link, viewer!), preData: inviteLinkEventData(link, read.role) })),
      { type: 'role-deleted', preData: roleData(read.role, parsedPermissions(read.permissions)) },
    ]
    const { written } = await deleteStatement(db, caller.actor, caller.now, events, { id, snapshot: read.snapshot, now: caller.now.toISOString(), links: JSON.stringify(stale.map((l) => l.text)) })
    return written > 0 || undefined
  })
}

/** GET /api/admin/projects/roles/{roleId}/access: for each project where the role is held, by how many users and groups. */
export async function roleProjectUsage(db: Db, id: number) {
  const [read] = await db.select({ id: roles.id, uses: usesOf(sql`${roles}.id`) }).from(roles).where(eq(roles.id, id))
  if (!read) throw roleNotFound(id)
  const uses = (typeof read.uses === 'string' ? JSON.parse(read.uses) : read.uses) as RoleUses
  return { projects: uses.projects.map(([project, userCount, groupCount, serviceAccountCount]) => ({ project, role: id, userCount, groupCount, serviceAccountCount })) }
}
