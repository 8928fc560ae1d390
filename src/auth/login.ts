import { and, eq, isNull, sql, type SQL } from 'drizzle-orm'
import { signInFailures, users } from '../../schema/index.js'
import { batch, queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { ApiError, validationError } from '../core/errors.js'
import { verifyPassword, hashPassword } from '../users/passwords.js'
import { hasEmailForm, normalEmail } from '../users/schemas.js'
import { displayNameOf } from '../users/principal.js'
import { setPassword, userView } from '../users/store.js'
import type { Author } from '../core/principal.js'
import { findResetToken } from '../users/reset-tokens.js'
import { hashSecret } from '../api-tokens/secrets.js'
import { newSession } from './sessions.js'
import { passwordLinksOff, passwordLinksRefused, passwordSignInRefusedSql } from '../auth-settings/store.js'

/** From this many failed password checks in a row from one address, each further check of the account from that address waits for a lockout delay (LOCKOUT_MINUTES). */
export const MAX_LOGIN_ATTEMPTS = 10
/** The delays, in minutes, after the 10th, 11th, 12th, 13th and every later failure in a row: growing, capped, never permanent. */
export const LOCKOUT_MINUTES = [1, 5, 15, 60] as const
/** An address's failures on an account not added to for this long are forgotten (and their row removed). */
export const FAILURES_KEPT_MS = 24 * 60 * 60_000

/** Who checks a password, for the lockout: the client address's limit key (limitKeyOf; '' when unknown). */
export interface PasswordCheckOptions {
  passwordAlwaysAllowed?: boolean
  address?: string
}

/**
 * The password check of a user (sign-in, change-password's old password), counted in the one statement that reads
 * the user. The lockout is per account and client address (sign_in_failures): an address whose delay on this account
 * has not ended does not match the user (the check fails as an unknown user's does, whatever the password); otherwise
 * its failures go up by one, and the one that reaches MAX_LOGIN_ATTEMPTS (and each after) sets that address's next
 * delay, before the password is verified. A stranger's failures so delay only the stranger's addresses, never the
 * owner's. As it is one statement (the upsert's conflict takes the row's lock and re-checks the delay), concurrent
 * attempts from one address see each other: past the limit, one attempt per delay is verified. The user's
 * login_attempts (Unleash's field) counts every failed check since the last success. Rows of other accounts and
 * addresses not written for FAILURES_KEPT_MS are removed on the way, so the table stays bounded.
 * Answers the user's id and password hash, or nothing.
 */
async function countPasswordCheck(db: Db, userMatch: SQL, address: string, now: Date) {
  const at = sql`${now.toISOString()}::timestamptz`
  const stale = sql`${new Date(now.getTime() - FAILURES_KEPT_MS).toISOString()}::timestamptz`
  const next = sql`case when f.updated_at <= ${stale} then 1 else f.failures + 1 end`
  const delay = (failures: SQL) =>
    sql`case when ${failures} >= ${MAX_LOGIN_ATTEMPTS} then ${at} + (${sql.raw(`array[${LOCKOUT_MINUTES.join(',')}]`)})[least(${failures} - ${MAX_LOGIN_ATTEMPTS}, ${LOCKOUT_MINUTES.length - 1}) + 1] * interval '1 minute' else null end`
  const [row] = await queryRows<{ id: number; passwordHash: string | null }>(
    db,
    sql`with target as (select ${users.id} as id from ${users} where ${userMatch}),
      forgotten as (delete from ${signInFailures} where updated_at <= ${stale} and not (address = ${address} and user_id in (select id from target))),
      attempt as (
        insert into ${signInFailures} as f (user_id, address, failures, locked_until, updated_at)
        select id, ${address}, 1, ${delay(sql`1`)}, ${at} from target
        on conflict (user_id, address) do update set failures = ${next}, locked_until = ${delay(next)}, updated_at = ${at}
        where f.locked_until is null or f.locked_until <= ${at}
        returning user_id),
      counted as (update ${users} set login_attempts = login_attempts + 1 where id in (select user_id from attempt) returning id, password_hash)
      select id, password_hash as "passwordHash" from counted`,
  )
  return row
}

/** What a passed password check forgets: that address's failures on the account. */
const passwordCheckPassed = (userId: number, address: string) => (q: Db) =>
  q.delete(signInFailures).where(and(eq(signInFailures.userId, userId), eq(signInFailures.address, address)))

// One answer for every failure (unknown user, wrong password, account waiting out a lockout), so it reveals nothing.
const signInFailed = () =>
  new ApiError(
    'AuthenticationRequired',
    'The combination of username and password is invalid, or too many failed sign-ins in a row have paused this account\'s sign-in for a while: try again later.',
  )

const passwordSignInOff = () =>
  new ApiError('AuthenticationRequired', 'Password sign-in is switched off on this instance: sign in with single sign-on (OpenID Connect) instead')

const invalidLink = () => new ApiError('AuthenticationRequired', 'The link is invalid, was already used or has expired: ask an admin for a new one')

/**
 * Signs in with a username or e-mail and a password. Each attempt is counted before the password is
 * verified, in one statement (an attempt is a failure until the password proves right; countPasswordCheck):
 * after MAX_LOGIN_ATTEMPTS failures in a row from the client's address, one attempt per growing delay (LOCKOUT_MINUTES)
 * from that address is verified, and during a delay even the right password fails there as a wrong one does; other
 * addresses are not delayed. Every attempt runs one PBKDF2 of the same cost, whether the user exists or not, so timing
 * does not tell whether an account exists. On success: loginAttempts back to 0, that address's failures forgotten, seenAt set, a new
 * session, in one batch. While password sign-in is switched off (auth-settings), nothing is counted and the answer says so, unless
 * the deployment forces it on (`passwordAlwaysAllowed`: FLAGPOST_ALLOW_PASSWORD_LOGIN, the way back in when single
 * sign-on fails); the setting is read in the same round trip as the count.
 */
export async function signIn(db: Db, identifier: string, password: string, now: Date, options: PasswordCheckOptions = {}) {
  const allowed = options.passwordAlwaysAllowed ? sql`true` : sql`not ${passwordSignInRefusedSql}`
  // A service account never signs in: it is not looked for, so it fails as an unknown user does. An identifier with an
  // address's form is looked for by address (composed, lower-case), even one today's rules would refuse to store: an
  // account made before them still signs in.
  const match = and(hasEmailForm(identifier) ? sql`lower(${users.email}) = ${normalEmail(identifier)}` : eq(users.username, identifier), isNull(users.deletedAt), eq(users.isService, false), allowed)
  const address = options.address ?? ''
  const [user, [setting]] = await together(db, [
    (q) => countPasswordCheck(q, match!, address, now),
    (q) => (options.passwordAlwaysAllowed ? Promise.resolve([{ refused: false }]) : queryRows<{ refused: boolean }>(q, sql`select ${passwordSignInRefusedSql} as refused`)),
  ])
  if (setting?.refused) throw passwordSignInOff()
  const matches = await verifyPassword(password, user?.passwordHash)
  if (!user || !matches) throw signInFailed()
  const started = await newSession(user.id, now)
  const [[row]] = await batch(db, [(q) => q.update(users).set({ loginAttempts: 0, seenAt: now }).where(eq(users.id, user.id)).returning(), passwordCheckPassed(user.id, address), started.dropExpired, started.store])
  return { user: await userView(row!), session: started.session }
}

/**
 * The link's user, and whether a password may be set with it: not while password sign-in is switched off (a 403, for
 * any link: the password could not be used), unless the deployment forces it on. One round trip.
 */
async function linkForPassword(db: Db, token: string, now: Date, passwordAlwaysAllowed: boolean | undefined) {
  const hash = await hashSecret(token)
  const [found, [off]] = await together(db, [(q) => findResetToken(q, hash, now), (q) => passwordLinksRefused(q, passwordAlwaysAllowed)])
  if (off?.refused) throw passwordLinksOff()
  if (!found) throw invalidLink()
  return found
}

/** What an invite or reset link stands for (Unleash's tokenUserSchema); 401 when it cannot be used, 403 while password sign-in is off. */
export async function validateResetToken(db: Db, token: string, now: Date, options: { passwordAlwaysAllowed?: boolean } = {}) {
  const found = await linkForPassword(db, token, now, options.passwordAlwaysAllowed)
  const { user, role, createdBy } = found
  return {
    id: user.id,
    ...(user.name ? { name: user.name } : {}),
    ...(user.username ? { username: user.username } : {}),
    email: user.email ?? '',
    token,
    createdBy,
    role: { id: role.id, type: role.type, name: role.name, description: role.description },
  }
}

/**
 * Sets the password of the link's user and uses the link up; the user acts on their own account. The link and its
 * user are read first (the new password is hashed only for a link that works) (refused while password sign-in is off, as validateResetToken), then the password, the link and the
 * event are one statement, made only while both are as read.
 */
export async function resetPasswordWithToken(db: Db, token: string, password: string, now: Date, options: { passwordAlwaysAllowed?: boolean } = {}): Promise<void> {
  const linkHash = await hashSecret(token)
  // Hashed only once the link is found to work: a made-up link costs no PBKDF2.
  let passwordHash: string | undefined
  await untilUnchanged('The user', async () => {
    const found = await linkForPassword(db, token, now, options.passwordAlwaysAllowed)
    passwordHash ??= await hashPassword(password)
    const author = { actor: { createdBy: displayNameOf(found.user), createdByUserId: found.user.id }, now }
    return (await setPassword(db, author, found, passwordHash, linkHash)) || undefined
  })
}

// Also the answer while a lockout lasts, so it does not tell whether the old password was right.
const wrongOldPassword = () =>
  validationError('The old password is incorrect, or too many failed password checks in a row have paused them for a while: try again later', [
    { path: 'body.oldPassword', message: 'incorrect' },
  ])

/**
 * POST /api/admin/user/change-password: a signed-in user sets their own password, proving the old one. The
 * attempt is counted as a sign-in is (the same statement reads the user), so a stolen session cannot guess the
 * password freely: a wrong old password is a failed sign-in, and past MAX_LOGIN_ATTEMPTS of them the check waits out
 * the same growing delays, per client address (countPasswordCheck). The new password forgets the failures of every address. Then
 * the password is set as an admin sets it, only while the user is as read: their sessions end (this one too,
 * they sign in again) and `user-updated` notes the change. Three round trips (count, read with the proven password, write). While password sign-in is switched off (a
 * 403, nothing counted: the setting is read in the counting round trip), unless the deployment forces it on.
 */
export async function changeOwnPassword(
  db: Db,
  caller: Author,
  userId: number,
  input: { password: string; oldPassword?: string; confirmPassword?: string },
  options: PasswordCheckOptions = {},
) {
  if (input.confirmPassword !== undefined && input.confirmPassword !== input.password) {
    throw validationError('The new password and its confirmation differ', [{ path: 'body.confirmPassword', message: 'must equal password' }])
  }
  const oldPassword = input.oldPassword
  if (!oldPassword) throw validationError('oldPassword is required to change your own password', [{ path: 'body.oldPassword', message: 'required' }])
  const passwordHash = await hashPassword(input.password)
  const allowed = options.passwordAlwaysAllowed ? sql`true` : sql`not ${passwordSignInRefusedSql}`
  const address = options.address ?? ''
  await untilUnchanged('The user', async () => {
    const [counted, [off]] = await together(db, [
      (q) => countPasswordCheck(q, and(eq(users.id, userId), isNull(users.deletedAt), eq(users.isService, false), allowed)!, address, caller.now),
      (q) => passwordLinksRefused(q, options.passwordAlwaysAllowed),
    ])
    if (off?.refused) throw passwordLinksOff()
    // A locked user is not read: the PBKDF2 still runs, so the answer takes as long.
    if (!(await verifyPassword(oldPassword, counted?.passwordHash)) || !counted) throw wrongOldPassword()
    // The user as the new password is set on, with the password just proven: changed since, it is tried again.
    const [read] = await db
      .select({ user: users, snapshot: rowText(users) })
      .from(users)
      .where(and(eq(users.id, userId), isNull(users.deletedAt), counted.passwordHash === null ? isNull(users.passwordHash) : eq(users.passwordHash, counted.passwordHash)))
    if (!read) return undefined
    return (await setPassword(db, caller, read, passwordHash)) || undefined
  })
}
