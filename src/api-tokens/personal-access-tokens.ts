import { and, asc, eq, sql } from 'drizzle-orm'
import { apiTokens } from '../../schema/index.js'
import { queryRows, untilUnchanged, type Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { displaySecret, hashSecret, randomHex } from './secrets.js'
import { PAT_TYPE } from './store.js'

/*
 * Personal access tokens are api_tokens rows with a user_id and type `pat`: `user:<64 hex>`, stored as a
 * SHA-256 like every token, shown once. Authenticating with one acts as its user (see findTokenPrincipal).
 */

type TokenRow = typeof apiTokens.$inferSelect

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

const eventData = (row: TokenRow) => ({ id: row.id, description: row.tokenName, expiresAt: row.expiresAt?.toISOString() ?? null, userId: row.userId })

const ownedBy = (userId: number) => and(eq(apiTokens.userId, userId), eq(apiTokens.type, PAT_TYPE))

export async function listPats(db: Db, userId: number) {
  const rows = await db.select().from(apiTokens).where(ownedBy(userId)).orderBy(asc(apiTokens.id))
  return rows.map(patView)
}

/** How every personal access token's secret starts. */
export const PAT_PREFIX = 'user:'

/**
 * Creates a PAT for the user; its secret is in this answer only. Emits `pat-created` (without the secret). Its id
 * is taken first, for the event, then the token and its event are one statement.
 */
export async function createPat(db: Db, caller: Author, userId: number, input: NewPat) {
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
    userId,
    expiresAt,
    createdAt: now,
    seenAt: null,
  }
  await recordEvents(db, actor, now, [{ type: 'pat-created', data: eventData(row) }], { alongside: [db.insert(apiTokens).values(row)] })
  return { ...patView(row), secret }
}

/**
 * Deletes one of the user's PATs; another user's (or an unknown) id is a 404. Emits `pat-deleted`. A read, then
 * the deletion and its event in one statement, made only while the token is still there.
 */
export async function deletePat(db: Db, caller: Author, userId: number, id: number): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged('The personal access token', async () => {
    const [row] = await db.select().from(apiTokens).where(and(ownedBy(userId), eq(apiTokens.id, id)))
    if (!row) throw notFound(`Could not find personal access token ${id}`)
    const deletion = db.delete(apiTokens).where(eq(apiTokens.id, row.id)).returning({ id: apiTokens.id })
    return (await recordEvents(db, actor, now, [{ type: 'pat-deleted', preData: eventData(row) }], { alongside: [deletion], guarded: true })) > 0 || undefined
  })
}
