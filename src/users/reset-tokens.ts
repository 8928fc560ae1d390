import { and, eq, gt, isNull } from 'drizzle-orm'
import { resetTokens, roles, users } from '../../schema/index.js'
import type { Db } from '../db.js'
import { hashSecret, randomHex } from '../api-tokens/secrets.js'

/** Invite and reset links work once, for seven days. */
export const RESET_TOKEN_TTL_MS = 7 * 24 * 60 * 60 * 1000

/** The page an invite link opens (served by the auth routes). */
export const NEW_USER_PATH = '/new-user'

export const resetLink = (baseUrl: string, token: string) => `${baseUrl.replace(/\/+$/, '')}${NEW_USER_PATH}?token=${encodeURIComponent(token)}`

/** Creates a single-use token for the user (in the caller's transaction); only its hash is stored. */
export async function createResetToken(tx: Db, userId: number, createdBy: string, now: Date): Promise<string> {
  const token = randomHex(32)
  await tx.insert(resetTokens).values({
    tokenHash: await hashSecret(token),
    userId,
    createdBy,
    createdAt: now,
    expiresAt: new Date(now.getTime() + RESET_TOKEN_TTL_MS),
  })
  return token
}

const usable = (hash: string, now: Date) => and(eq(resetTokens.tokenHash, hash), isNull(resetTokens.usedAt), gt(resetTokens.expiresAt, now))

/** The user an unused, unexpired token belongs to, with their root role; undefined otherwise. */
export async function findResetToken(db: Db, token: string, now: Date) {
  const [row] = await db
    .select({ user: users, createdBy: resetTokens.createdBy, role: roles })
    .from(resetTokens)
    .innerJoin(users, eq(users.id, resetTokens.userId))
    .innerJoin(roles, eq(roles.id, users.rootRoleId))
    .where(and(usable(await hashSecret(token), now), isNull(users.deletedAt)))
    .limit(1)
  return row
}

/** Marks the token used and answers its user id; undefined when it was not usable (also under concurrent use). */
export async function consumeResetToken(tx: Db, token: string, now: Date): Promise<number | undefined> {
  const [row] = await tx.update(resetTokens).set({ usedAt: now }).where(usable(await hashSecret(token), now)).returning({ userId: resetTokens.userId })
  return row?.userId
}

/** Every link of the user stops working (after a password change). */
export async function expireResetTokens(tx: Db, userId: number, now: Date): Promise<void> {
  await tx.update(resetTokens).set({ usedAt: now }).where(and(eq(resetTokens.userId, userId), isNull(resetTokens.usedAt)))
}
