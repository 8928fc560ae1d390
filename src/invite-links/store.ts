import { and, asc, eq, gt, inArray, or, sql, type SQL } from 'drizzle-orm'
import { publicSignupTokens, publicSignupTokenUsers, roles, users } from '../../schema/index.js'
import { queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import type { Author } from '../core/principal.js'
import { guardPassed, recordEvents } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import { displaySecret, hashSecret, randomHex } from '../api-tokens/secrets.js'
import { hashPassword } from '../users/passwords.js'
import { userEventData, userView } from '../users/store.js'
import { displayNameOf } from '../users/principal.js'
import { newGuardedSession } from '../auth/sessions.js'
import { passwordLinksOff, passwordLinksRefused, passwordSignInRefusedSql } from '../auth-settings/store.js'
import type { InviteLinkCreate, InviteLinkUpdate, SignUp } from './schemas.js'

type TokenRow = typeof publicSignupTokens.$inferSelect
type RoleRow = typeof roles.$inferSelect
type UserRow = typeof users.$inferSelect

/** The page an invite link opens: the console's sign-up page (a route of the console, not of the app). */
export const SIGN_UP_PATH = '/sign-up'
/** As Unleash: a link works for at most a month from when its expiry is set. */
const MAX_LIFETIME_MS = 31 * 24 * 60 * 60 * 1000
/** Links an instance may hold (a list is answered whole). */
export const MAX_INVITE_LINKS = 1000
/** The first role of people who sign up, when the link names none: Unleash's. */
const DEFAULT_ROLE = 'Viewer'

export const inviteUrl = (baseUrl: string, secret: string) => `${baseUrl.replace(/\/+$/, '')}${SIGN_UP_PATH}?invite=${encodeURIComponent(secret)}`

const roleView = (r: Pick<RoleRow, 'id' | 'name' | 'type' | 'description'>) => ({ id: r.id, type: r.type, name: r.name, description: r.description })

/** What listings and events show of a link: never its secret (its first characters name it). */
function linkView(row: TokenRow, role: RoleRow, now: Date, signedUp: { id: number; name: string | null; email: string | null; username: string | null; createdAt: string }[] | null) {
  return {
    secret: row.displaySecret,
    url: null as string | null,
    name: row.name,
    enabled: row.enabled && row.expiresAt > now,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
    users: signedUp,
    role: roleView(role),
  }
}

/**
 * What events say of a link: the link as its routes answer it, without the secret (its first characters name it), the
 * URL (in the creation's answer only) and who signed up (their own events); `enabled` is the link's switch, not whether
 * it works at that time.
 */
export const inviteLinkEventData = (row: TokenRow, role: Pick<RoleRow, 'id' | 'name' | 'type' | 'description'>) => ({
  secret: row.displaySecret,
  name: row.name,
  enabled: row.enabled,
  expiresAt: row.expiresAt.toISOString(),
  createdAt: row.createdAt.toISOString(),
  createdBy: row.createdBy,
  role: roleView(role),
})

/** The expiry asked for: in the future (400 otherwise), capped at a month from now. */
function expiryOf(value: string, now: Date, path: string): Date {
  const asked = new Date(value)
  if (!(asked > now)) throw validationError('expiresAt must be in the future', [{ path, message: 'must be later than now' }])
  return new Date(Math.min(asked.getTime(), now.getTime() + MAX_LIFETIME_MS))
}

const signedUpJson = sql<unknown>`(select coalesce(json_agg(json_build_object('id', u.id, 'name', u.name, 'email', u.email, 'username', u.username, 'createdAt', tu.created_at) order by tu.created_at), '[]'::json)
  from ${publicSignupTokenUsers} tu join ${users} u on u.id = tu.user_id where tu.token_id = ${publicSignupTokens.id})`

const parsed = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as { id: number; name: string | null; email: string | null; username: string | null; createdAt: string }[]
// json_build_object writes timestamps as Postgres text; the API answers ISO instants.
const withIsoTimes = (list: ReturnType<typeof parsed>) => list.map((u) => ({ ...u, createdAt: new Date(u.createdAt).toISOString() }))

/** GET /api/admin/invite-link/tokens: every link, newest first, with who signed up with it. One read. */
export async function listInviteLinks(db: Db, now: Date) {
  const rows = await db
    .select({ token: publicSignupTokens, role: roles, signedUp: signedUpJson })
    .from(publicSignupTokens)
    .innerJoin(roles, eq(roles.id, publicSignupTokens.roleId))
    .orderBy(sql`${publicSignupTokens.createdAt} desc`, asc(publicSignupTokens.id))
    .limit(MAX_INVITE_LINKS)
  return rows.map((r) => linkView(r.token, r.role, now, withIsoTimes(parsed(r.signedUp))))
}

/** The link named by its full secret, or by the first characters listings show when they name one link. */
async function findLink(db: Db, secretOrDisplay: string) {
  const hash = await hashSecret(secretOrDisplay)
  const matches = await db
    .select({ token: publicSignupTokens, role: roles, snapshot: rowText(publicSignupTokens), signedUp: signedUpJson })
    .from(publicSignupTokens)
    .innerJoin(roles, eq(roles.id, publicSignupTokens.roleId))
    .where(or(eq(publicSignupTokens.secretHash, hash), eq(publicSignupTokens.displaySecret, secretOrDisplay)))
  const found = matches.find((m) => m.token.secretHash === hash) ?? (matches.length === 1 ? matches[0] : undefined)
  if (!found) {
    if (matches.length > 1) throw validationError('More than one invite link is listed as that secret: name it by its full secret')
    throw notFound('Could not find an invite link with that secret')
  }
  return found
}

export async function getInviteLink(db: Db, secretOrDisplay: string, now: Date) {
  const found = await findLink(db, secretOrDisplay)
  return linkView(found.token, found.role, now, withIsoTimes(parsed(found.signedUp)))
}

/**
 * POST /api/admin/invite-link/tokens: a new link with a fresh secret (answered once, with its URL) and the root role
 * asked for (Viewer unless named). A read (the role, and how many links there are), then the link and
 * `public-signup-token-created` in one statement.
 */
export async function createInviteLink(db: Db, caller: Author, input: InviteLinkCreate, baseUrl: string) {
  const { actor, now } = caller
  const ref = input.role ?? DEFAULT_ROLE
  const expiresAt = expiryOf(input.expiresAt, now, 'body.expiresAt')
  const [[role], [counted]] = await together(db, [
    (q) => q.select().from(roles).where(and(typeof ref === 'number' ? eq(roles.id, ref) : eq(roles.name, ref), inArray(roles.type, ['root', 'root-custom']))),
    (q) => q.select({ count: sql<number>`count(*)::int` }).from(publicSignupTokens),
  ])
  if (!role) throw validationError(`Unknown root role: ${ref}`, [{ path: 'body.role', message: `there is no root role ${ref}` }])
  if ((counted?.count ?? 0) >= MAX_INVITE_LINKS) throw validationError(`An instance holds at most ${MAX_INVITE_LINKS} invite links: disable and reuse one`)
  const secret = randomHex(16)
  const row: TokenRow = { id: 0, secretHash: await hashSecret(secret), displaySecret: displaySecret(secret), name: input.name, roleId: role.id, createdBy: actor.createdBy, createdAt: now, expiresAt, enabled: true }
  const { id: _id, ...values } = row
  const written = await recordEvents(db, actor, now, [{ type: 'public-signup-token-created', data: inviteLinkEventData(row, role) }], {
    alongside: [db.insert(publicSignupTokens).values(values).onConflictDoNothing().returning({ id: publicSignupTokens.id })],
    guarded: true,
  })
  if (written === 0) throw nameExists('An invite link with that secret already exists: try again')
  return { ...linkView(row, role, now, []), secret, url: inviteUrl(baseUrl, secret) }
}

/**
 * PUT /api/admin/invite-link/tokens/{token}: a new expiry (capped as at creation) and/or enabled. A read, then the
 * change and `public-signup-token-updated` (with the link as it was) in one statement, made only while the link is
 * as read; nothing changed: nothing recorded.
 */
export async function updateInviteLink(db: Db, caller: Author, secretOrDisplay: string, input: InviteLinkUpdate) {
  const { actor, now } = caller
  const expiresAt = input.expiresAt === undefined ? undefined : expiryOf(input.expiresAt, now, 'body.expiresAt')
  return untilUnchanged('The invite link', async () => {
    const found = await findLink(db, secretOrDisplay)
    const before = found.token
    const after: TokenRow = { ...before, expiresAt: expiresAt ?? before.expiresAt, enabled: input.enabled ?? before.enabled }
    const view = linkView(after, found.role, now, withIsoTimes(parsed(found.signedUp)))
    if (after.expiresAt.getTime() === before.expiresAt.getTime() && after.enabled === before.enabled) return view
    const change = db
      .update(publicSignupTokens)
      .set({ expiresAt: after.expiresAt, enabled: after.enabled })
      .where(and(eq(publicSignupTokens.id, before.id), sql`${rowText(publicSignupTokens)} = ${found.snapshot}`))
      .returning({ id: publicSignupTokens.id })
    const event: NewEvent = { type: 'public-signup-token-updated', data: inviteLinkEventData(after, found.role), preData: inviteLinkEventData(before, found.role) }
    const written = await recordEvents(db, actor, now, [event], { alongside: [change], guarded: true })
    return written > 0 ? view : undefined
  })
}

const usable = (now: Date) => and(eq(publicSignupTokens.enabled, true), gt(publicSignupTokens.expiresAt, now))
const invalidLink = () => validationError('This invite link does not work: it is unknown, disabled or expired. Ask whoever sent it for a new one')

/** Whether password sign-in is forced on by the deployment (FLAGPOST_ALLOW_PASSWORD_LOGIN): sign-up works whatever the settings say. */
export interface SignUpOptions {
  passwordAlwaysAllowed?: boolean
}

/**
 * GET /invite/{token}/validate: whether the link works now (its full secret only); a 403 while password sign-in is
 * switched off (a sign-up makes a password account), read in the same round trip.
 */
export async function inviteLinkWorks(db: Db, secret: string, now: Date, options: SignUpOptions = {}): Promise<boolean> {
  const hash = await hashSecret(secret)
  const [rows, [off]] = await together(db, [
    (q) => q.select({ id: publicSignupTokens.id }).from(publicSignupTokens).where(and(eq(publicSignupTokens.secretHash, hash), usable(now))),
    (q) => passwordLinksRefused(q, options.passwordAlwaysAllowed),
  ])
  if (off?.refused) throw passwordLinksOff()
  return rows.length > 0
}

/**
 * POST /invite/{token}/signup: creates the user with the link's role and a session, so they are signed in. A read (the
 * link, whether the e-mail or username is taken, a user id), then one statement: the user (only while the link still
 * works and the names are free), who signed up with the link, the session, `user-created` and
 * `public-signup-token-user-added`, both by the new user. 400 for a link that does not work, 409 for a taken
 * e-mail or username, 403 while password sign-in is switched off (read with the link, and held by the statement).
 */
export async function signUpWithInviteLink(db: Db, secret: string, input: SignUp, now: Date, options: SignUpOptions = {}) {
  const hash = await hashSecret(secret)
  const username = input.username || null
  // Hashed only once the link is found to work: a made-up link costs no PBKDF2.
  let passwordHash: string | undefined
  return untilUnchanged('The invite link', async () => {
    const [[link], [taken], [ids], [off]] = await together(db, [
      (q) =>
        q
        .select({ token: publicSignupTokens, role: roles })
        .from(publicSignupTokens)
        .innerJoin(roles, eq(roles.id, publicSignupTokens.roleId))
        .where(and(eq(publicSignupTokens.secretHash, hash), usable(now))),
      (q) =>
        q
        .select({ email: users.email })
        .from(users)
        .where(or(sql`lower(${users.email}) = ${input.email}`, username === null ? sql`false` : eq(users.username, username)))
        .limit(1),
      (q) => queryRows<{ userId: number }>(q, sql`select nextval(pg_get_serial_sequence('users', 'id'))::int as "userId"`),
      (q) => passwordLinksRefused(q, options.passwordAlwaysAllowed),
    ])
    if (off?.refused) throw passwordLinksOff()
    if (!link) throw invalidLink()
    if (taken) throw nameExists(taken.email?.toLowerCase() === input.email ? 'A user with that e-mail address already exists: sign in instead' : 'That username is taken: choose another')
    passwordHash ??= await hashPassword(input.password)
    const row: UserRow = { id: ids!.userId, username, email: input.email, name: input.name, passwordHash, rootRoleId: link.role.id, loginAttempts: 0, isService: false, seenAt: now, createdAt: now, deletedAt: null, emailUnproven: true, ssoIssuer: null, ssoSubject: null }
    const started = await newGuardedSession(row.id, now)
    const insertUser: SQL = sql`insert into ${users} (id, username, email, name, password_hash, email_unproven, root_role_id, login_attempts, seen_at, created_at)
      select ${row.id}::integer, ${row.username}::text, ${row.email}::text, ${row.name}::text, ${passwordHash}::text, true, ${row.rootRoleId}::integer, 0, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
      where exists (select from ${publicSignupTokens} where id = ${link.token.id} and enabled and expires_at > ${now.toISOString()}::timestamptz)
        ${options.passwordAlwaysAllowed ? sql`` : sql`and not ${passwordSignInRefusedSql}`}
      on conflict do nothing returning id`
    const linked = sql`insert into ${publicSignupTokenUsers} (token_id, user_id, created_at) select ${link.token.id}::integer, ${row.id}::integer, ${now.toISOString()}::timestamptz where ${guardPassed} returning user_id`
    const actor = { createdBy: displayNameOf(row), createdByUserId: row.id }
    const events: NewEvent[] = [
      { type: 'user-created', data: userEventData(row) },
      { type: 'public-signup-token-user-added', data: { secret: link.token.displaySecret, name: link.token.name, userId: row.id, email: row.email, role: link.role.name } },
    ]
    const written = await recordEvents(db, actor, now, events, { alongside: [insertUser, linked], guarded: true, unguarded: [started.insert] })
    return written > 0 ? { user: await userView(row), session: started.session } : undefined
  })
}
