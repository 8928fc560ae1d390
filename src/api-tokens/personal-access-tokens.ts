import { and, asc, eq, sql } from 'drizzle-orm'
import { apiTokens, users } from '../../schema/index.js'
import { queryRows, untilUnchanged, type Db } from '../db.js'
import { noAccess, notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { displaySecret, hashSecret, randomHex } from './secrets.js'
import { PAT_TYPE } from './store.js'

/*
 * Personal access tokens are api_tokens rows with a user_id and type `pat`: `user:<64 hex>`, stored as a
 * SHA-256 like every token, shown once. Authenticating with one acts as its account (see lookUpToken):
 * a user (who manages their own at /api/admin/user/tokens) or a service account (whose tokens admins manage at
 * /api/admin/service-account/{id}/token). Each route manages the tokens of one kind of account only.
 */

type TokenRow = typeof apiTokens.$inferSelect

/** Whose tokens a call manages: a user's own, or a service account's. */
export type TokenOwner = { userId: number; kind: 'user' | 'service-account' }

export interface NewPat {
  description: string
  expiresAt: string
}

const patView = (row: TokenRow) => ({
  id: row.id,
  description: row.tokenName,
  expiresAt: row.expiresAt!.toISOString(),
  createdAt: row.createdAt.toISOString(),
  seenAt: row.seenAt?.toISOString() ?? null,
  userId: row.userId!,
})

export type PatView = ReturnType<typeof patView>

/** What events say of a token: as its routes answer it, without its secret or when it was last used. */
const eventData = (row: TokenRow) => ({ id: row.id, description: row.tokenName, expiresAt: row.expiresAt?.toISOString() ?? null, createdAt: row.createdAt.toISOString(), userId: row.userId })

/** The owner's account, not deleted, and of the kind the call manages. */
const ownerIsLive = (owner: TokenOwner) => and(eq(users.id, owner.userId), sql`${users.deletedAt} is null`, eq(users.isService, owner.kind === 'service-account'))

const notTheirs = (owner: TokenOwner) =>
  owner.kind === 'user'
    ? noAccess("A service account's tokens are managed by admins (/api/admin/service-account/{id}/token), not through /api/admin/user/tokens")
    : notFound(`Could not find service account ${owner.userId}`)

/**
 * The owner's tokens, oldest first, in one query that also finds the owner: a user's route refuses a service account
 * (403), a service account's route an unknown one (404).
 */
export async function listPats(db: Db, owner: TokenOwner) {
  const rows = await db
    .select({ token: apiTokens })
    .from(users)
    .leftJoin(apiTokens, and(eq(apiTokens.userId, users.id), eq(apiTokens.type, PAT_TYPE)))
    .where(ownerIsLive(owner))
    .orderBy(asc(apiTokens.id))
  if (rows.length === 0) throw notTheirs(owner)
  return rows.flatMap(({ token }) => (token ? [patView(token)] : []))
}

/** The tokens of each of the accounts, by account id (one query). */
export async function patsOf(db: Db, userIds: number[]): Promise<Map<number, PatView[]>> {
  const byOwner = new Map<number, PatView[]>(userIds.map((id) => [id, []]))
  if (userIds.length === 0) return byOwner
  const rows = await db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.type, PAT_TYPE), sql`${apiTokens.userId} = any(${sql.param(userIds)}::int[])`))
    .orderBy(asc(apiTokens.id))
  for (const row of rows) byOwner.get(row.userId!)?.push(patView(row))
  return byOwner
}

/** How every personal access token's secret starts. */
export const PAT_PREFIX = 'user:'

/**
 * Creates a token for the owner; its secret is in this answer only. Emits `pat-created` (without the secret). Its id
 * is taken first, for the event, then the token and its event are one statement, made only while the owner is live
 * and of the kind the call manages (its row is locked for the statement, so deleting it waits, then deletes the token too).
 */
export async function createPat(db: Db, caller: Author, owner: TokenOwner, input: NewPat) {
  const { actor, now } = caller
  const expiresAt = new Date(input.expiresAt)
  if (expiresAt <= now) throw validationError('expiresAt must be in the future', [{ path: 'body.expiresAt', message: 'must be in the future' }])
  const secret = `${PAT_PREFIX}${randomHex(32)}`
  const [{ id }] = (await queryRows<{ id: number }>(db, sql`select nextval(pg_get_serial_sequence('api_tokens', 'id'))::int as id`)) as [{ id: number }]
  const row: TokenRow = {
    id,
    secretHash: await hashSecret(secret),
    displaySecret: displaySecret(secret),
    tokenName: input.description,
    type: PAT_TYPE,
    projects: ['*'],
    environment: '*',
    userId: owner.userId,
    expiresAt,
    createdAt: now,
    seenAt: null,
  }
  const insert = sql`insert into ${apiTokens} (id, secret_hash, display_secret, token_name, type, projects, environment, user_id, expires_at, created_at)
    select ${row.id}, ${row.secretHash}, ${row.displaySecret}, ${row.tokenName}, ${row.type}, ${sql.param(row.projects)}::text[], ${row.environment}, ${row.userId}, ${expiresAt}, ${now}
    where exists (select from ${users} where ${ownerIsLive(owner)} for share)
    returning id`
  const written = await recordEvents(db, actor, now, [{ type: 'pat-created', data: eventData(row) }], { alongside: [insert], guarded: true })
  if (written === 0) throw notTheirs(owner)
  return { ...patView(row), secret }
}

/**
 * Deletes one of the owner's tokens; another account's (or an unknown) id is a 404. Emits `pat-deleted`. A read, then
 * the deletion and its event in one statement, made only while the token is still there.
 */
export async function deletePat(db: Db, caller: Author, owner: TokenOwner, id: number): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged('The personal access token', async () => {
    const [read] = await db
      .select({ token: apiTokens })
      .from(apiTokens)
      .innerJoin(users, eq(users.id, apiTokens.userId))
      .where(and(eq(apiTokens.id, id), eq(apiTokens.type, PAT_TYPE), ownerIsLive(owner)))
    if (!read) throw notFound(`Could not find personal access token ${id}`)
    const deletion = db.delete(apiTokens).where(eq(apiTokens.id, read.token.id)).returning({ id: apiTokens.id })
    return (await recordEvents(db, actor, now, [{ type: 'pat-deleted', preData: eventData(read.token) }], { alongside: [deletion], guarded: true })) > 0 || undefined
  })
}
