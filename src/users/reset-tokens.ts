import { and, eq, gt, isNull, sql, type SQL } from 'drizzle-orm'
import { resetTokens, roles, users } from '../../schema/index.js'
import { rowText, type Db } from '../db.js'
import { guardPassed } from '../events/store.js'
import { hashSecret, randomHex } from '../api-tokens/secrets.js'

/** Invite and reset links work once, for seven days. */
export const RESET_TOKEN_TTL_MS = 7 * 24 * 60 * 60 * 1000

/** The web console's page an invite or password-reset link opens (console/src/pages/new-user.tsx): the console's, not the app's. */
export const NEW_USER_PATH = '/new-user'

export const resetLink = (baseUrl: string, token: string) => `${baseUrl.replace(/\/+$/, '')}${NEW_USER_PATH}?token=${encodeURIComponent(token)}`

/**
 * A new single-use token for the user, and the insert that stores its hash: made alongside the user's creation
 * (with `recordEvents`' `guarded`, as its second change), only when the first change wrote.
 */
export async function newResetToken(userId: number, createdBy: string, now: Date): Promise<{ token: string; insert: SQL }> {
  const token = randomHex(32)
  const insert = sql`insert into ${resetTokens} (token_hash, user_id, created_by, created_at, expires_at)
    select ${await hashSecret(token)}::text, ${userId}::integer, ${createdBy}::text, ${now.toISOString()}::timestamptz, ${new Date(now.getTime() + RESET_TOKEN_TTL_MS).toISOString()}::timestamptz
    where ${guardPassed}
    returning token_hash`
  return { token, insert }
}

const usable = (hash: string, now: Date) => and(eq(resetTokens.tokenHash, hash), isNull(resetTokens.usedAt), gt(resetTokens.expiresAt, now))

/**
 * The user an unused, unexpired token (by its hash, `hashSecret`) belongs to, with their root role (and the user's row
 * as text, see rowText); undefined otherwise. One query, so it can be sent with others (`together`).
 */
export async function findResetToken(db: Db, tokenHash: string, now: Date) {
  const [row] = await db
    .select({ user: users, snapshot: rowText(users), createdBy: resetTokens.createdBy, role: roles })
    .from(resetTokens)
    .innerJoin(users, eq(users.id, resetTokens.userId))
    .innerJoin(roles, eq(roles.id, users.rootRoleId))
    .where(and(usable(tokenHash, now), isNull(users.deletedAt)))
    .limit(1)
  return row
}
