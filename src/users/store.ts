import { and, asc, eq, inArray, isNull, ne, sql, type SQL } from 'drizzle-orm'
import { apiTokens, groups, groupUsers, projectMembers, resetTokens, roles, sessions, signInFailures, users } from '../../schema/index.js'
import { containsPattern, rowText, together, untilUnchanged, type Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed, recordEvents } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import { SYSTEM_ACTOR, type Author } from '../core/principal.js'
import { avatarUrl } from './avatar.js'
import { trySend, type EmailTransport } from './email.js'
import { hashPassword } from './passwords.js'
import { newResetToken, resetLink } from './reset-tokens.js'
import { passwordLinksOff, passwordLinksRefused } from '../auth-settings/store.js'
import { USER_SEARCH_MAX_RESULTS, type CreateUser, type RoleName, type UpdateUser, type UsersSearch, type UserView } from './schemas.js'

type UserRow = typeof users.$inferSelect
type RoleRow = typeof roles.$inferSelect

export const ADMIN_ROLE_ID = 1

/** The picture of a user: computed from the e-mail (else the username), never fetched. */
export const userImageUrl = (user: Pick<UserRow, 'id' | 'email' | 'username'>) => avatarUrl(user.email ?? user.username ?? `user-${user.id}`)

export async function userView(row: UserRow): Promise<UserView> {
  return {
    id: row.id,
    isAPI: false,
    name: row.name,
    ...(row.email ? { email: row.email } : {}),
    username: row.username,
    imageUrl: await userImageUrl(row),
    loginAttempts: row.loginAttempts,
    rootRole: row.rootRoleId,
    seenAt: row.seenAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    accountType: row.isService ? 'Service Account' : 'User',
    permissions: [],
    scimId: null,
    ssoBound: row.ssoSubject !== null,
  }
}

/** What events say about a user: never the password or its hash. */
export const userEventData = (row: UserRow) => ({
  id: row.id,
  name: row.name,
  username: row.username,
  email: row.email,
  rootRole: row.rootRoleId,
  createdAt: row.createdAt.toISOString(),
})

const roleView = (r: RoleRow) => ({ id: r.id, type: r.type, name: r.name, description: r.description })

/**
 * The role a request names as a user's root role: by id or by name, a root role (built in or custom) or a built-in
 * project role (Owner or Member, which as a root role grant their permissions in every project); never a custom project role.
 */
const roleNamed = (ref: number | RoleName) => and(typeof ref === 'number' ? eq(roles.id, ref) : eq(roles.name, ref), ne(roles.type, 'custom'))

/** The role a request named, from the rows read for it; 400 when there is none. */
function requireRole<T>(rows: T[], ref: number | RoleName): T {
  const [found] = rows
  if (!found) throw validationError(`Unknown root role: ${ref}`, [{ path: 'body.rootRole', message: `there is no root role ${ref}` }])
  return found
}

/** Users (not service accounts: src/service-accounts/) that are not deleted. */
const activeUsers = and(isNull(users.deletedAt), eq(users.isService, false))
const active = (id: number) => and(eq(users.id, id), activeUsers)

const p = (name: string) => sql.placeholder(name)

/** The change of a checked user write (the first of its statement): made only while the user is active and exactly as read. */
const userStillAsRead = sql`id = ${p('id')} and deleted_at is null and ${rowText(users)} = ${p('snapshot')}`

export interface CreateUserOptions {
  /** Where links point: the public URL of the instance, or the request's origin. */
  baseUrl: string
  email?: EmailTransport
  /** FLAGPOST_ALLOW_PASSWORD_LOGIN: passwords are set (and invite links made) whatever the sign-in settings say. */
  passwordAlwaysAllowed?: boolean
}

/**
 * Creates the user with a single-use invite link, and, after the commit, sends the welcome
 * e-mail when asked and a transport is configured. Emits `user-created`. While password sign-in is switched off
 * (passwordLinksRefused), a `password` is refused (403) and the user gets no invite link (no link stored, none answered):
 * they sign in through single sign-on. The role is read with the id the user takes (for the event) and the setting,
 * in one round trip, then the user, the link and the event are one statement.
 */
export async function createUser(db: Db, caller: Author, input: CreateUser, options: CreateUserOptions) {
  const { actor, now } = caller
  const username = input.username || undefined
  const email = input.email || undefined
  if (!username && !email) throw validationError('You must specify username or email')
  // The hash is CPU work: done before any database work.
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password)

  // An id is taken only when the role exists (at most one row).
  const [rows, [off]] = await together(db, [
    (q) => q.select({ roleId: roles.id, userId: sql<number>`nextval(pg_get_serial_sequence('users', 'id'))::int` }).from(roles).where(roleNamed(input.rootRole)),
    (q) => passwordLinksRefused(q, options.passwordAlwaysAllowed),
  ])
  if (off?.refused && passwordHash !== null) throw passwordLinksOff()
  const { roleId, userId } = requireRole(rows, input.rootRole)
  const row: UserRow = { id: userId, username: username ?? null, email: email ?? null, name: input.name || null, passwordHash, rootRoleId: roleId, loginAttempts: 0, isService: false, seenAt: null, createdAt: now, deletedAt: null, emailUnproven: false, ssoIssuer: null, ssoSubject: null }
  const link = off?.refused ? undefined : await newResetToken(row.id, actor.createdBy, now)
  const written = await recordEvents(db, actor, now, [{ type: 'user-created', data: userEventData(row) }], {
    alongside: [db.insert(users).values(row).onConflictDoNothing().returning({ id: users.id }), ...(link ? [link.insert] : [])],
    guarded: true,
  })
  if (written === 0) throw validationError('User already exists')

  const inviteLink = link ? resetLink(options.baseUrl, link.token) : undefined
  const signIn = inviteLink
    ? `Set your password here (the link works once, for 7 days):\n\n${inviteLink}\n`
    : `Sign in with single sign-on here:\n\n${options.baseUrl.replace(/\/+$/, '')}/\n`
  const emailSent =
    input.sendEmail !== false && row.email
      ? await trySend(options.email, {
          to: row.email,
          subject: 'Welcome to Flagpost',
          text: `Hello ${row.name ?? row.email},\n\nAn account was created for you on Flagpost. ${signIn}`,
        })
      : false
  const view = await userView(row)
  return { ...view, rootRole: typeof input.rootRole === 'string' ? input.rootRole : view.rootRole, ...(inviteLink ? { inviteLink } : {}), emailSent }
}

/** The root roles users and service accounts may be given, by id: what their listings show with them. */
export async function listRootRoles(db: Db) {
  return (await db.select().from(roles).where(inArray(roles.type, ['root', 'root-custom'])).orderBy(asc(roles.id))).map(roleView)
}

export async function listUsers(db: Db) {
  const [rows, rootRoles] = await Promise.all([db.select().from(users).where(activeUsers).orderBy(asc(users.id)), listRootRoles(db)])
  return { users: await Promise.all(rows.map(userView)), rootRoles }
}

/** The text the user search looks in: the same expression as the trigram index users_search_text_idx. */
const searchText = sql`lower(coalesce(${users.name}, '') || ' ' || coalesce(${users.username}, '') || ' ' || coalesce(${users.email}, ''))`

/**
 * GET /api/admin/user-admin/search: users (not service accounts, as users' listings) whose name, username or e-mail
 * contains `q` (ignoring case), by name, at most USER_SEARCH_MAX_RESULTS of them, each only as far as naming them goes.
 * Fewer than 2 characters find no one (as Unleash).
 */
export async function searchUsers(db: Db, q: string | undefined): Promise<UsersSearch> {
  const text = (q ?? '').trim().toLowerCase()
  if (text.length < 2) return []
  const rows = await db
    .select({ id: users.id, name: users.name, username: users.username, email: users.email })
    .from(users)
    .where(and(activeUsers, sql`${searchText} like ${containsPattern(text)}`))
    .orderBy(sql`lower(coalesce(${users.name}, ${users.username}, ${users.email}, ''))`, asc(users.id))
    .limit(USER_SEARCH_MAX_RESULTS)
  return Promise.all(rows.map(async (row) => ({ ...row, imageUrl: await userImageUrl(row) })))
}

export async function getUser(db: Db, id: number): Promise<UserView> {
  const [row] = await db.select().from(users).where(active(id))
  if (!row) throw notFound(`Could not find user ${id}`)
  return userView(row)
}

/** A user or a service account, not deleted: who a personal access token (of either) acts as. */
export async function getAccount(db: Db, id: number): Promise<UserView> {
  const [row] = await db.select().from(users).where(and(eq(users.id, id), isNull(users.deletedAt)))
  if (!row) throw notFound(`Could not find user ${id}`)
  return userView(row)
}

/**
 * Changes the fields given (an empty string counts as absent). Emits `user-updated`. The user, the role and
 * whether the e-mail is taken are read together, then the change and its event are one statement, made only
 * while the user is exactly as read.
 */
export async function updateUser(db: Db, caller: Author, id: number, input: UpdateUser): Promise<UserView> {
  const { actor, now } = caller
  return untilUnchanged('The user', async () => {
    const [[read], roleRows, taken] = await together(db, [
      (q) => q.select({ user: users, snapshot: rowText(users) }).from(users).where(active(id)),
      (q) => (input.rootRole === undefined ? Promise.resolve([]) : q.select({ id: roles.id }).from(roles).where(roleNamed(input.rootRole))),
      (q) => (input.email ? q.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = ${input.email}`) : Promise.resolve([])),
    ])
    if (!read) throw notFound(`Could not find user ${id}`)
    const before = read.user
    const role = input.rootRole === undefined ? undefined : requireRole(roleRows, input.rootRole)
    const demoted = before.rootRoleId === ADMIN_ROLE_ID && role !== undefined && role.id !== ADMIN_ROLE_ID
    if (demoted && !before.isService && (await otherAdmins(db, id)) === 0) throw lastAdmin(id)
    const email = input.email || before.email
    if (email !== before.email && taken.length > 0) throw validationError('User already exists')
    const after: UserRow = { ...before, email, name: input.name || before.name, rootRoleId: role?.id ?? before.rootRoleId }
    const update = db
      .update(users)
      .set({ email: after.email, name: after.name, rootRoleId: after.rootRoleId })
      .where(and(active(id), sql`${rowText(users)} = ${read.snapshot}`, demoted ? anotherAdminRemains(id) : undefined))
      .returning({ id: users.id })
    const written = await recordEvents(db, actor, now, [{ type: 'user-updated', data: userEventData(after), preData: userEventData(before) }], { alongside: [update], guarded: true })
    return written > 0 ? userView(after) : undefined
  })
}

/** The groups a user is in, as an array SQL compares (`id`: SQL of the user's id). */
const groupsOf = (id: unknown) => sql<number[]>`array(select group_id from ${groupUsers} where user_id = ${id}::int order by group_id)`

/** Deleting a user: the user's row loses what signs in, and the rest goes, only while the row and their groups are as read. */
/**
 * Another active human Admin remains besides user `id` (or `id` is none). The active human Admins' rows are locked in id order
 * first, so of two deletes racing for the last two Admins the second waits, then sees the first one gone and deletes nothing.
 */
const anotherAdminRemains = (id: unknown) => sql`(not ${isAdminSql(sql`${users}`)} or ${users.isService} or exists (select from (select a.id from ${users} a
  where ${isAdminSql(sql`a`)} and a.deleted_at is null and not a.is_service order by a.id for update) o where o.id <> ${id}::int))`

/** Whether the user row `alias` is an Admin: by their root role, or through a group whose root role is Admin. */
const isAdminSql = (alias: SQL) =>
  sql`(${alias}.root_role_id = ${ADMIN_ROLE_ID} or exists (select from ${groupUsers} gu join ${groups} g on g.id = gu.group_id where gu.user_id = ${alias}.id and g.root_role_id = ${ADMIN_ROLE_ID}))`

const deleteUserStatement = eventsStatement('flagpost_delete_user', {
  alongside: [sql`update ${users} set deleted_at = ${p('now')}::timestamptz, email = null, username = null, password_hash = null, sso_issuer = null, sso_subject = null where ${userStillAsRead} and ${groupsOf(p('id'))} = ${p('groups')}::int[] and ${anotherAdminRemains(p('id'))} returning id`],
  guarded: true,
  unguarded: [
    sql`delete from ${sessions} where user_id = ${p('id')} and ${guardPassed}`,
    sql`delete from ${apiTokens} where user_id = ${p('id')} and ${guardPassed}`,
    sql`delete from ${projectMembers} where user_id = ${p('id')} and ${guardPassed}`,
    sql`delete from ${groupUsers} where user_id = ${p('id')} and ${guardPassed}`,
    sql`update ${resetTokens} set used_at = ${p('now')}::timestamptz where user_id = ${p('id')} and used_at is null and ${guardPassed}`,
  ],
})

/**
 * Deletes the user: the row stays (events and flags still name it) but loses its e-mail, username and
 * password, so both can be used again; sessions, personal access tokens, project roles and group memberships go.
 * Emits `user-deleted`, and `group-user-removed` for each group they leave (a member leaving a group other than by
 * the group's own change, as Unleash records a group sync).
 */
/** The refusal to delete (or demote) the instance's last active human Admin: nobody could then administer it. */
const otherAdminsSql = (id: number) => sql<number>`(select count(*)::int from ${users} a where ${isAdminSql(sql`a`)} and a.deleted_at is null and not a.is_service and a.id <> ${id})`
async function otherAdmins(db: Db, id: number) {
  const [row] = await db.select({ n: otherAdminsSql(id) }).from(sql`(select 1) x`)
  return Number(row?.n ?? 0)
}
const lastAdmin = (id: number) => validationError(`User ${id} is the last active Admin: make another user Admin first`)

/**
 * Forgets the single sign-on identity a user's account is bound to (DELETE /api/admin/user-admin/{id}/sso): the next
 * single sign-on with that address binds whichever identity signs in first, as for a new account. Their sessions end.
 * Emits `user-updated` with the issuer it was bound to; a user bound to none is left as they are (no event). 404 for
 * no such active user.
 */
export async function unbindSso(db: Db, caller: Author, id: number): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged('The user', async () => {
    const [read] = await db.select({ user: users, snapshot: rowText(users) }).from(users).where(active(id))
    if (!read) throw notFound(`Could not find user ${id}`)
    if (read.user.ssoSubject === null) return true
    const unbind = sql`update ${users} set sso_issuer = null, sso_subject = null where ${and(active(id), sql`${rowText(users)} = ${read.snapshot}`)} returning id`
    const written = await recordEvents(db, actor, now, [{ type: 'user-updated', data: { ...userEventData(read.user), ssoIssuer: null }, preData: { ...userEventData(read.user), ssoIssuer: read.user.ssoIssuer } }], {
      alongside: [unbind],
      guarded: true,
      unguarded: [sql`delete from ${sessions} where user_id = ${id} and ${guardPassed}`],
    })
    return written > 0 || undefined
  })
}

export async function deleteUser(db: Db, caller: Author, id: number): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged('The user', async () => {
    const [read] = await db
      .select({ user: users, snapshot: rowText(users), groups: groupsOf(sql`${users}.id`), otherAdmins: otherAdminsSql(id), isAdmin: isAdminSql(sql`${users}`).mapWith(Boolean) })
      .from(users)
      .where(active(id))
    if (!read) throw notFound(`Could not find user ${id}`)
    if (read.isAdmin && !read.user.isService && Number(read.otherAdmins) === 0) throw lastAdmin(id)
    const groups = read.groups.map(Number)
    const events: NewEvent[] = [{ type: 'user-deleted', preData: userEventData(read.user) }, ...groups.map((groupId): NewEvent => ({ type: 'group-user-removed', preData: { groupId, userId: id } }))]
    const { written } = await deleteUserStatement(db, actor, now, events, { id, snapshot: read.snapshot, groups, now: now.toISOString() })
    return written > 0 || undefined
  })
}

/**
 * Setting a password: failed sign-ins are forgotten, from every address (an admin may so end a lockout before its delay), other sessions
 * end and open links stop working. With a link (`linkHash`), the link is used up too, and everything waits on
 * that: every writer that uses up a link also changes the user's row, so the user's row passing its check means
 * the link is still unused.
 */
function passwordStatement(name: string, withLink: boolean) {
  const linkUsed = sql`update ${resetTokens} set used_at = ${p('now')}::timestamptz
    where token_hash = ${p('linkHash')} and user_id = ${p('id')} and used_at is null and expires_at > ${p('now')}::timestamptz and exists (select from w0)
    returning user_id`
  const passed = withLink ? sql.raw('exists (select from w1)') : guardPassed
  return eventsStatement(name, {
    alongside: [sql`update ${users} set password_hash = ${p('passwordHash')}, login_attempts = 0 where ${userStillAsRead} returning id`, ...(withLink ? [linkUsed] : [])],
    guarded: true,
    unguarded: [
      sql`delete from ${sessions} where user_id = ${p('id')} and ${passed}`,
      // Every address's sign-in lockout on the account ends with the new password.
      sql`delete from ${signInFailures} where user_id = ${p('id')} and ${passed}`,
      // Not the link used up above: a statement may not change a row twice.
      sql`update ${resetTokens} set used_at = ${p('now')}::timestamptz where user_id = ${p('id')} and used_at is null ${withLink ? sql`and token_hash <> ${p('linkHash')}` : sql``} and ${passed}`,
    ],
  })
}
const setPasswordStatement = passwordStatement('flagpost_set_password', false)
const setPasswordWithLinkStatement = passwordStatement('flagpost_set_password_with_link', true)

/**
 * Sets a new password (already hashed) on the user as read (the row and the row as text, see rowText), and, when given, uses up the
 * link (`linkHash`, the digest of its token) it was set with. Emits `user-updated` noting the change, without the
 * hash. False, writing nothing, when the user or the link changed since the read.
 */
export async function setPassword(db: Db, caller: Author, read: { user: UserRow; snapshot: string }, passwordHash: string, linkHash?: string): Promise<boolean> {
  const { actor, now } = caller
  const before = read.user
  const events: NewEvent[] = [
    { type: 'user-updated', data: { ...userEventData(before), passwordChanged: true, loginAttempts: 0 }, preData: { ...userEventData(before), loginAttempts: before.loginAttempts } },
  ]
  const values = { id: before.id, snapshot: read.snapshot, passwordHash, now: now.toISOString() }
  const { written } = linkHash === undefined ? await setPasswordStatement(db, actor, now, events, values) : await setPasswordWithLinkStatement(db, actor, now, events, { ...values, linkHash })
  return written > 0
}

/**
 * POST /api/admin/user-admin/{id}/change-password: an admin sets a user's password. Refused (403) while password sign-in
 * is switched off, unless the deployment forces it on (`passwordAlwaysAllowed`): nobody could sign in with it. The user
 * and the setting are read in one round trip, then setPassword.
 */
export async function changeUserPassword(db: Db, caller: Author, id: number, password: string, options: { passwordAlwaysAllowed?: boolean } = {}): Promise<void> {
  const passwordHash = await hashPassword(password)
  await untilUnchanged('The user', async () => {
    const [[read], [off]] = await together(db, [(q) => q.select({ user: users, snapshot: rowText(users) }).from(users).where(active(id)), (q) => passwordLinksRefused(q, options.passwordAlwaysAllowed)])
    if (off?.refused) throw passwordLinksOff()
    if (!read) throw notFound(`Could not find user ${id}`)
    return (await setPassword(db, caller, read, passwordHash)) || undefined
  })
}

/** Active users with the Admin root role (for the personal dashboard). */
export async function adminUsers(db: Db) {
  const rows = await db
    .select()
    .from(users)
    .where(and(eq(users.rootRoleId, ADMIN_ROLE_ID), activeUsers))
    .orderBy(asc(users.id))
  return Promise.all(
    rows.map(async (u) => ({
      id: u.id,
      ...(u.name ? { name: u.name } : {}),
      ...(u.username ? { username: u.username } : {}),
      imageUrl: await userImageUrl(u),
      ...(u.email ? { email: u.email } : {}),
    })),
  )
}

/**
 * On a first start (no user ever made), creates the Admin user who signs in to the web console, through
 * `createUser` so it has its `user-created` event (by the system). The password is the one given, else a
 * random one, returned so the server prints it once. Undefined when any user exists: restarts change nothing.
 */
export async function bootstrapAdminUser(db: Db, now: Date, init: { username: string; password?: string }): Promise<{ username: string; password?: string } | undefined> {
  const [anyUser] = await db.select({ id: users.id }).from(users).limit(1)
  if (anyUser) return undefined
  const generated = init.password === undefined ? randomPassword() : undefined
  await createUser(db, { actor: SYSTEM_ACTOR, now }, { username: init.username, password: init.password ?? generated, rootRole: 'Admin', sendEmail: false }, { baseUrl: 'http://localhost', passwordAlwaysAllowed: true })
  return { username: init.username, ...(generated ? { password: generated } : {}) }
}

/** 20 characters from an alphabet without look-alikes (about 110 bits). */
function randomPassword(): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789'
  const bytes = crypto.getRandomValues(new Uint8Array(20))
  return [...bytes].map((b) => alphabet[b % alphabet.length]).join('')
}

/*
 * The one lookup of the root role a request names, by id or name, shared with service accounts (src/service-accounts/):
 * select from `roles` where `roleNamed(ref)`, then `requireRole` (400 when there is none).
 */
export { roleNamed, requireRole }
