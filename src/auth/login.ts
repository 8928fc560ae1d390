import { and, eq, isNull, sql } from 'drizzle-orm'
import { users } from '../../schema/index.js'
import { batch, queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { ApiError, validationError } from '../core/errors.js'
import { verifyPassword, hashPassword } from '../users/passwords.js'
import { isEmail } from '../users/schemas.js'
import { displayNameOf } from '../users/principal.js'
import { setPassword, userView } from '../users/store.js'
import type { Author } from '../core/principal.js'
import { findResetToken } from '../users/reset-tokens.js'
import { hashSecret } from '../api-tokens/secrets.js'
import { newSession } from './sessions.js'
import { passwordLinksOff, passwordLinksRefused, passwordSignInRefusedSql } from '../auth-settings/store.js'

/** From this many failed password checks in a row, each further check waits for a lockout delay (LOCKOUT_MINUTES). */
export const MAX_LOGIN_ATTEMPTS = 10
/** The delays, in minutes, after the 10th, 11th, 12th, 13th and every later failure in a row: growing, capped, never permanent. */
export const LOCKOUT_MINUTES = [1, 5, 15, 60] as const

/**
 * The password check of a user (sign-in, change-password's old password), counted in the statement that reads the
 * user: a user whose lockout has not ended is not matched (the check fails as an unknown user's does, whatever the
 * password), the others get one more attempt, and the attempt that reaches MAX_LOGIN_ATTEMPTS (and each one after)
 * sets the next delay, before its password is verified; a success clears both (`passwordCheckPassed`). As it is one
 * statement, concurrent attempts see each other: once the count reaches the limit, one attempt per delay is verified.
 */
function passwordCheckCounted(now: Date) {
  const attempt = sql`${users.loginAttempts} + 1`
  const step = sql`least(${attempt} - ${MAX_LOGIN_ATTEMPTS}, ${LOCKOUT_MINUTES.length - 1}) + 1`
  const minutes = sql`(${sql.raw(`array[${LOCKOUT_MINUTES.join(',')}]`)})[${step}]`
  return {
    notLocked: sql`(${users.lockedUntil} is null or ${users.lockedUntil} <= ${now.toISOString()}::timestamptz)`,
    counted: {
      loginAttempts: sql`${attempt}`,
      lockedUntil: sql`case when ${attempt} >= ${MAX_LOGIN_ATTEMPTS} then ${now.toISOString()}::timestamptz + ${minutes} * interval '1 minute' else null end`,
    },
  }
}

/** What a passed password check writes: the count and any lockout forgotten. */
const passwordCheckPassed = { loginAttempts: 0, lockedUntil: null }

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
 * verified, in one statement (an attempt is a failure until the password proves right; passwordCheckCounted):
 * after MAX_LOGIN_ATTEMPTS failures in a row, one attempt per growing delay (LOCKOUT_MINUTES) is verified, and during
 * a delay even the right password fails as a wrong one does. Every attempt runs one PBKDF2 of the same cost, whether the user exists or not, so timing
 * does not tell whether an account exists. On success: loginAttempts back to 0, seenAt set, a new session, in
 * one batch. While password sign-in is switched off (auth-settings), nothing is counted and the answer says so, unless
 * the deployment forces it on (`passwordAlwaysAllowed`: FLAGPOST_ALLOW_PASSWORD_LOGIN, the way back in when single
 * sign-on fails); the setting is read in the same round trip as the count.
 */
export async function signIn(db: Db, identifier: string, password: string, now: Date, options: { passwordAlwaysAllowed?: boolean } = {}) {
  const allowed = options.passwordAlwaysAllowed ? sql`true` : sql`not ${passwordSignInRefusedSql}`
  // A service account never signs in: it is not looked for, so it fails as an unknown user does.
  const match = and(isEmail(identifier) ? sql`lower(${users.email}) = ${identifier.toLowerCase()}` : eq(users.username, identifier), isNull(users.deletedAt), eq(users.isService, false), allowed)
  const check = passwordCheckCounted(now)
  const [[user], [setting]] = await together(db, [
    (q) => q.update(users).set(check.counted).where(and(match, check.notLocked)).returning(),
    (q) => (options.passwordAlwaysAllowed ? Promise.resolve([{ refused: false }]) : queryRows<{ refused: boolean }>(q, sql`select ${passwordSignInRefusedSql} as refused`)),
  ])
  if (setting?.refused) throw passwordSignInOff()
  const matches = await verifyPassword(password, user?.passwordHash)
  if (!user || !matches) throw signInFailed()
  const started = await newSession(user.id, now)
  const [[row]] = await batch(db, [(q) => q.update(users).set({ ...passwordCheckPassed, seenAt: now }).where(eq(users.id, user.id)).returning(), started.dropExpired, started.store])
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
 * user are read (refused while password sign-in is off, as validateResetToken), then the password, the link and the
 * event are one statement, made only while both are as read.
 */
export async function resetPasswordWithToken(db: Db, token: string, password: string, now: Date, options: { passwordAlwaysAllowed?: boolean } = {}): Promise<void> {
  const passwordHash = await hashPassword(password)
  const linkHash = await hashSecret(token)
  await untilUnchanged('The user', async () => {
    const found = await linkForPassword(db, token, now, options.passwordAlwaysAllowed)
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
 * the same growing delays (passwordCheckCounted). A right old password forgets the failures. Then
 * the password is set as an admin sets it, only while the user is as read: their sessions end (this one too,
 * they sign in again) and `user-updated` notes the change. Two round trips. While password sign-in is switched off (a
 * 403, nothing counted: the setting is read in the counting round trip), unless the deployment forces it on.
 */
export async function changeOwnPassword(
  db: Db,
  caller: Author,
  userId: number,
  input: { password: string; oldPassword?: string; confirmPassword?: string },
  options: { passwordAlwaysAllowed?: boolean } = {},
) {
  if (input.confirmPassword !== undefined && input.confirmPassword !== input.password) {
    throw validationError('The new password and its confirmation differ', [{ path: 'body.confirmPassword', message: 'must equal password' }])
  }
  const oldPassword = input.oldPassword
  if (!oldPassword) throw validationError('oldPassword is required to change your own password', [{ path: 'body.oldPassword', message: 'required' }])
  const passwordHash = await hashPassword(input.password)
  const allowed = options.passwordAlwaysAllowed ? sql`true` : sql`not ${passwordSignInRefusedSql}`
  const check = passwordCheckCounted(caller.now)
  await untilUnchanged('The user', async () => {
    const [[read], [off]] = await together(db, [
      (q) =>
        q
          .update(users)
          .set(check.counted)
          .where(and(eq(users.id, userId), isNull(users.deletedAt), eq(users.isService, false), allowed, check.notLocked))
          .returning({ user: users, snapshot: rowText(users) }),
      (q) => passwordLinksRefused(q, options.passwordAlwaysAllowed),
    ])
    if (off?.refused) throw passwordLinksOff()
    // A locked user is not read: the PBKDF2 still runs, so the answer takes as long.
    if (!(await verifyPassword(oldPassword, read?.user.passwordHash)) || !read) throw wrongOldPassword()
    return (await setPassword(db, caller, read, passwordHash)) || undefined
  })
}
