import { and, eq, gt, isNull, lte, sql } from 'drizzle-orm'
import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import { roles, sessions, users } from '../../schema/index.js'
import type { Db } from '../db.js'
import type { ResolvedPrincipal } from '../core/principal.js'
import { hashSecret, randomHex } from '../api-tokens/secrets.js'
import { toUserPrincipal, userPrincipalColumns } from '../users/principal.js'
import { guardPassed } from '../events/store.js'

export const SESSION_COOKIE = 'flagpost-session'
/** Sessions last two days from sign-in (Unleash's default), then the user signs in again. */
export const SESSION_TTL_MS = 48 * 60 * 60 * 1000

/**
 * A new session for the user: its id, which only the cookie holds, and the statements that store it and drop the
 * user's expired sessions (made in the sign-in's batch). `idToken`: the provider's, for a session made by single
 * sign-on (the hint of its sign-out there), kept with the session only.
 */
export async function newSession(userId: number, now: Date, idToken?: string) {
  const id = randomHex(32)
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS)
  const sessionHash = await hashSecret(id)
  return {
    session: { id, expiresAt },
    dropExpired: (q: Db) => q.delete(sessions).where(and(eq(sessions.userId, userId), lte(sessions.expiresAt, now))),
    store: (q: Db) => q.insert(sessions).values({ sessionHash, userId, createdAt: now, expiresAt, idToken: idToken ?? null }),
  }
}

/**
 * A new session stored by a statement with `recordEvents`' `guarded` (the user's insert, or another check, first):
 * its id, and the insert and the drop of the user's expired sessions, made only when the guard passed.
 */
export async function newGuardedSession(userId: number, now: Date, idToken?: string) {
  const id = randomHex(32)
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS)
  const insert = sql`insert into ${sessions} (session_hash, user_id, created_at, expires_at, id_token)
    select ${await hashSecret(id)}::text, ${userId}::integer, ${now.toISOString()}::timestamptz, ${expiresAt.toISOString()}::timestamptz, ${idToken ?? null}::text where ${guardPassed}`
  const dropExpired = sql`delete from ${sessions} where user_id = ${userId}::integer and expires_at <= ${now.toISOString()}::timestamptz and ${guardPassed}`
  return { session: { id, expiresAt }, insert, dropExpired }
}

/**
 * The signed-in user of a live session, by the digest of its id (`hashSecret`), with their roles and when the
 * session ends; undefined for an unknown, expired or deleted one. One statement, so it can travel in a batch.
 */
export async function lookUpSession(db: Db, sessionHash: string, now: Date): Promise<ResolvedPrincipal | undefined> {
  const [row] = await db
    .select({ ...userPrincipalColumns, expiresAt: sessions.expiresAt })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .innerJoin(roles, eq(roles.id, users.rootRoleId))
    .where(and(eq(sessions.sessionHash, sessionHash), gt(sessions.expiresAt, now), isNull(users.deletedAt)))
    .limit(1)
  return row ? { principal: toUserPrincipal(row), expiresAt: row.expiresAt } : undefined
}

/** Ends a session; answers the provider's ID token it was made with (single sign-on), if any, for the provider's sign-out. */
export async function deleteSession(db: Db, sessionId: string): Promise<{ idToken: string | null } | undefined> {
  const [ended] = await db.delete(sessions).where(eq(sessions.sessionHash, await hashSecret(sessionId))).returning({ idToken: sessions.idToken })
  return ended
}

export const sessionIdOf = (c: Context) => getCookie(c, SESSION_COOKIE) || undefined

/** Whether the browser reached us over HTTPS (directly, through a proxy that says so, or by the public URL): cookies are then `Secure`. */
export const isHttps = (c: Context, publicUrl: string | undefined) =>
  new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https' || (publicUrl?.startsWith('https:') ?? false)

export function setSessionCookie(c: Context, session: { id: string }, publicUrl: string | undefined) {
  setCookie(c, SESSION_COOKIE, session.id, {
    path: '/',
    httpOnly: true,
    secure: isHttps(c, publicUrl),
    sameSite: 'Lax',
    // Max-Age only: relative, so the app's clock (a test clock years away, a skewed server) never decides a browser
    // date (Hono refuses an Expires more than 400 days from the real now). The session row keeps its own expiry.
    maxAge: Math.floor(SESSION_TTL_MS / 1000),
  })
}

export function clearSessionCookie(c: Context, publicUrl: string | undefined) {
  deleteCookie(c, SESSION_COOKIE, { path: '/', httpOnly: true, secure: isHttps(c, publicUrl), sameSite: 'Lax' })
}
