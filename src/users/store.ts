import { and, asc, eq, isNull, sql } from 'drizzle-orm'
import { apiTokens, projectMembers, roles, sessions, users } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { avatarUrl } from './avatar.js'
import { trySend, type EmailTransport } from './email.js'
import { hashPassword } from './passwords.js'
import { createResetToken, expireResetTokens, resetLink } from './reset-tokens.js'
import type { CreateUser, RoleName, UpdateUser, UserView } from './schemas.js'

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
    accountType: 'User',
    permissions: [],
    scimId: null,
  }
}

/** What events say about a user: never the password or its hash. */
const eventData = (row: UserRow) => ({
  id: row.id,
  name: row.name,
  username: row.username,
  email: row.email,
  rootRole: row.rootRoleId,
  createdAt: row.createdAt.toISOString(),
})

const roleView = (r: RoleRow) => ({ id: r.id, type: r.type, name: r.name, description: r.description })

/** The role a request names by id or by name; 400 when there is none. */
async function resolveRole(db: Db, ref: number | RoleName): Promise<RoleRow> {
  const [role] = await db
    .select()
    .from(roles)
    .where(typeof ref === 'number' ? eq(roles.id, ref) : eq(roles.name, ref))
    .limit(1)
  if (!role) throw validationError(`Unknown role: ${ref}`, [{ path: 'body.rootRole', message: `there is no role ${ref}` }])
  return role
}

const active = (id: number) => and(eq(users.id, id), isNull(users.deletedAt))

async function lockUser(tx: Db, id: number): Promise<UserRow> {
  const [row] = await tx.select().from(users).where(active(id)).for('update')
  if (!row) throw notFound(`Could not find user ${id}`)
  return row
}

export interface CreateUserOptions {
  /** Where links point: the public URL of the instance, or the request's origin. */
  baseUrl: string
  email?: EmailTransport
}

/**
 * Creates the user with a single-use invite link, and, after the commit, sends the welcome
 * e-mail when asked and a transport is configured. Emits `user-created`.
 */
export async function createUser(db: Db, caller: Author, input: CreateUser, options: CreateUserOptions) {
  const { actor, now } = caller
  const username = input.username || undefined
  const email = input.email || undefined
  if (!username && !email) throw validationError('You must specify username or email')
  // The hash is CPU work: done before the transaction, which then stays short.
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password)

  const { row, token } = await db.transaction(async (tx) => {
    const role = await resolveRole(tx, input.rootRole)
    const [row] = await tx
      .insert(users)
      .values({ username: username ?? null, email: email ?? null, name: input.name || null, passwordHash, rootRoleId: role.id, createdAt: now })
      .onConflictDoNothing()
      .returning()
    if (!row) throw validationError('User already exists')
    const token = await createResetToken(tx, row.id, actor.createdBy, now)
    await recordEvents(tx, actor, now, [{ type: 'user-created', data: eventData(row) }])
    return { row, token }
  })

  const inviteLink = resetLink(options.baseUrl, token)
  const emailSent =
    input.sendEmail !== false && row.email
      ? await trySend(options.email, {
          to: row.email,
          subject: 'Welcome to Flagpost',
          text: `Hello ${row.name ?? row.email},\n\nAn account was created for you on Flagpost. Set your password here (the link works once, for 7 days):\n\n${inviteLink}\n`,
        })
      : false
  const view = await userView(row)
  return { ...view, rootRole: typeof input.rootRole === 'string' ? input.rootRole : view.rootRole, inviteLink, emailSent }
}

export async function listUsers(db: Db) {
  const [rows, rootRoles] = await Promise.all([
    db.select().from(users).where(isNull(users.deletedAt)).orderBy(asc(users.id)),
    db.select().from(roles).where(eq(roles.type, 'root')).orderBy(asc(roles.id)),
  ])
  return { users: await Promise.all(rows.map(userView)), rootRoles: rootRoles.map(roleView) }
}

export async function getUser(db: Db, id: number): Promise<UserView> {
  const [row] = await db.select().from(users).where(active(id))
  if (!row) throw notFound(`Could not find user ${id}`)
  return userView(row)
}

/** Changes the fields given (an empty string counts as absent). Emits `user-updated`. */
export async function updateUser(db: Db, caller: Author, id: number, input: UpdateUser): Promise<UserView> {
  const { actor, now } = caller
  return db.transaction(async (tx) => {
    const before = await lockUser(tx, id)
    const role = input.rootRole === undefined ? undefined : await resolveRole(tx, input.rootRole)
    const email = input.email || before.email
    if (email !== before.email) {
      const [taken] = await tx.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = ${email}`)
      if (taken) throw validationError('User already exists')
    }
    const [after] = await tx
      .update(users)
      .set({ email, name: input.name || before.name, rootRoleId: role?.id ?? before.rootRoleId })
      .where(eq(users.id, id))
      .returning()
    await recordEvents(tx, actor, now, [{ type: 'user-updated', data: eventData(after!), preData: eventData(before) }])
    return userView(after!)
  })
}

/**
 * Deletes the user: the row stays (events and flags still name it) but loses its e-mail, username and
 * password, so both can be used again; sessions, personal access tokens and project roles go. Emits `user-deleted`.
 */
export async function deleteUser(db: Db, caller: Author, id: number): Promise<void> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    const before = await lockUser(tx, id)
    await tx.update(users).set({ deletedAt: now, email: null, username: null, passwordHash: null }).where(eq(users.id, id))
    await tx.delete(sessions).where(eq(sessions.userId, id))
    await tx.delete(apiTokens).where(eq(apiTokens.userId, id))
    await tx.delete(projectMembers).where(eq(projectMembers.userId, id))
    await expireResetTokens(tx, id, now)
    await recordEvents(tx, actor, now, [{ type: 'user-deleted', preData: eventData(before) }])
  })
}

/**
 * Sets a new password (already hashed): failed sign-ins are forgotten (this is how an admin unlocks an
 * account), other sessions end and open links stop working. Emits `user-updated` noting the change, without the hash.
 */
export async function setPassword(tx: Db, caller: Author, id: number, passwordHash: string): Promise<void> {
  const { actor, now } = caller
  const before = await lockUser(tx, id)
  const [after] = await tx.update(users).set({ passwordHash, loginAttempts: 0 }).where(eq(users.id, id)).returning()
  await tx.delete(sessions).where(eq(sessions.userId, id))
  await expireResetTokens(tx, id, now)
  await recordEvents(tx, actor, now, [
    { type: 'user-updated', data: { ...eventData(after!), passwordChanged: true, loginAttempts: 0 }, preData: { ...eventData(before), loginAttempts: before.loginAttempts } },
  ])
}

export async function changeUserPassword(db: Db, caller: Author, id: number, password: string): Promise<void> {
  const { actor, now } = caller
  const passwordHash = await hashPassword(password)
  await db.transaction((tx) => setPassword(tx, { actor, now }, id, passwordHash))
}

/** Active users with the Admin root role (for the personal dashboard). */
export async function adminUsers(db: Db) {
  const rows = await db
    .select()
    .from(users)
    .where(and(eq(users.rootRoleId, ADMIN_ROLE_ID), isNull(users.deletedAt)))
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
