import { sql } from 'drizzle-orm'
import { resetEmailClaims, resetTokens, users } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { hashSecret, randomHex } from '../api-tokens/secrets.js'
import { passwordSignInRefusedSql } from '../auth-settings/store.js'
import { trySend, type EmailTransport } from './email.js'
import { resetLink } from './reset-tokens.js'
import { normalEmail } from './schemas.js'

/** A link sent by e-mail works once, for a day. */
export const RESET_EMAIL_TTL_MS = 24 * 60 * 60_000
/** At most one reset link per account in this time (a mailbox is not flooded, whoever asks from however many addresses). */
export const RESET_EMAIL_GAP_MS = 60_000

/**
 * A new reset link for the active user (not a service account) `match` finds, stored as its hash, unless password links
 * are refused (sign-in by password off) or the account got a link less than RESET_EMAIL_GAP_MS ago (`gap`, claimed
 * atomically on reset_email_claims). One statement: the user, the claim and the insert. Answers the user's e-mail and the link's token, or nothing.
 */
async function storeResetLink(db: Db, match: ReturnType<typeof sql>, now: Date, createdBy: string, options: { gap: boolean; passwordAlwaysAllowed?: boolean }) {
  const token = randomHex(32)
  const at = now.toISOString()
  const recent = new Date(now.getTime() - RESET_EMAIL_GAP_MS).toISOString()
  const [row] = await queryRows<{ userId: number; email: string | null; name: string | null }>(
    db,
    sql`with target as (select id, email, name from ${users} where ${match} and deleted_at is null and not is_service
          ${options.passwordAlwaysAllowed ? sql`` : sql`and not ${passwordSignInRefusedSql}`}
          limit 1),
        ${options.gap
          // The gap is claimed on the account's one row: a concurrent request waits for this one's commit, then finds the
          // claim too recent and writes nothing (ON CONFLICT re-reads the committed row; a separate check could not).
          ? sql`claimed as (insert into ${resetEmailClaims} (user_id, sent_at) select id, ${at}::timestamptz from target
                on conflict (user_id) do update set sent_at = excluded.sent_at where ${resetEmailClaims}.sent_at <= ${recent}::timestamptz
                returning user_id),`
          : sql`claimed as (select id as user_id from target),`}
        stored as (insert into ${resetTokens} (token_hash, user_id, created_by, created_at, expires_at)
          select ${await hashSecret(token)}, user_id, ${createdBy}, ${at}::timestamptz, ${new Date(now.getTime() + RESET_EMAIL_TTL_MS).toISOString()}::timestamptz from claimed returning user_id)
      select t.id as "userId", t.email, t.name from target t join stored s on s.user_id = t.id`,
  )
  return row ? { ...row, token } : undefined
}

/** Who a reset link sent on someone's own request is made by: also what the per-account gap counts. */
const SELF_SERVICE = 'password-reset-email'

/**
 * POST /auth/reset/password-email: e-mails a reset link to the account with that address, if there is one, password
 * sign-in is on, the deployment has a public URL and an e-mail transport, and the account got no such link in the last
 * minute. Nothing of this is told to the caller (the route answers 200 before any of it runs, in the background).
 */
export async function sendResetEmail(db: Db, email: string, now: Date, settings: { publicUrl?: string; email?: EmailTransport; passwordAlwaysAllowed?: boolean }) {
  // Links point to the configured public URL only: never to a host the request named.
  if (!settings.publicUrl || !settings.email) return false
  const found = await storeResetLink(db, sql`lower(email) = ${normalEmail(email.trim())}`, now, SELF_SERVICE, { gap: true, passwordAlwaysAllowed: settings.passwordAlwaysAllowed })
  if (!found?.email) return false
  const link = resetLink(settings.publicUrl, found.token)
  return trySend(settings.email, {
    to: found.email,
    subject: 'Reset your Flagpost password',
    text: `Hello ${found.name ?? found.email},\n\nSomeone asked to reset the password of your Flagpost account. If it was you, set a new password here (the link works once, for 24 hours):\n\n${link}\n\nIf it was not you, ignore this e-mail: your password stays as it is.\n`,
  })
}

/**
 * POST /api/admin/user-admin/reset-password: an admin makes a reset link for a user (by e-mail, or by id) and gets it;
 * the user is sent it too when an e-mail transport is configured. 404 for no such user; 403 while password sign-in is off
 * (checked by the caller first).
 */
export async function adminResetLink(db: Db, who: string, now: Date, createdBy: string, settings: { baseUrl: string; email?: EmailTransport; passwordAlwaysAllowed?: boolean }) {
  const match = /^\d{1,9}$/.test(who) ? sql`id = ${Number(who)}` : sql`lower(email) = ${normalEmail(who.trim())}`
  const found = await storeResetLink(db, match, now, createdBy, { gap: false, passwordAlwaysAllowed: true })
  if (!found) throw notFound(`Could not find user ${who}`)
  const link = resetLink(settings.baseUrl, found.token)
  if (found.email) {
    await trySend(settings.email, {
      to: found.email,
      subject: 'Reset your Flagpost password',
      text: `Hello ${found.name ?? found.email},\n\nAn admin made a link for you to set a new Flagpost password (it works once, for 24 hours):\n\n${link}\n`,
    })
  }
  return link
}
