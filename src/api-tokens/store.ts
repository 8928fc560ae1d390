import { and, asc, count, eq, inArray, isNull, or } from 'drizzle-orm'
import { apiTokens, environments, projects } from '../../schema/index.js'
import type { Db } from '../db.js'
import type { Principal, Author } from '../core/principal.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import { SYSTEM_ACTOR } from '../core/principal.js'
import { displaySecret, hashSecret, newSecret } from './secrets.js'
import { loadUserPrincipal } from '../users/principal.js'

export type TokenType = 'admin' | 'client' | 'frontend'

/** The `type` of personal access tokens: rows with a `user_id`, acting as that user. */
export const PAT_TYPE = 'pat'

export interface NewToken {
  tokenName: string
  type: TokenType
  projects: string[]
  environment: string
  expiresAt: Date | null
}

type TokenRow = typeof apiTokens.$inferSelect

// A token's last use is written at most this often, so authenticating stays a read.
const SEEN_AT_RESOLUTION_MS = 60_000

export function tokenView(row: TokenRow, secret?: string) {
  return {
    secret: secret ?? row.displaySecret,
    tokenName: row.tokenName,
    type: row.type as TokenType,
    environment: row.environment,
    project: row.projects.length === 1 ? row.projects[0]! : '[]',
    projects: row.projects,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    seenAt: row.seenAt?.toISOString() ?? null,
    alias: null,
  }
}

// An event names a project or environment only when the token is for exactly one (not `*`).
const eventProject = (projects: string[]) => (projects.length === 1 && projects[0] !== '*' ? projects[0] : null)
const eventEnvironment = (environment: string) => (environment === '*' ? null : environment)

const eventData = (row: TokenRow) => ({
  tokenName: row.tokenName,
  type: row.type,
  projects: row.projects,
  environment: row.environment,
  expiresAt: row.expiresAt?.toISOString() ?? null,
})

// Admin tokens are checked on every admin request: a valid one is remembered for a few seconds, so a
// burst of requests costs one lookup (and one hash) instead of one each. Deleting a token through this
// process forgets them all at once; another instance stops accepting it within ADMIN_TOKEN_MEMO_MS (Unleash
// keeps its tokens in memory for a minute). Personal access tokens are not remembered: user roles change.
const ADMIN_TOKEN_MEMO_MS = 5_000
const adminTokenMemo = new Map<string, { principal: Principal; expiresAt: Date | null; until: number }>()
let adminTokenGeneration = 0

function forgetAdminTokens() {
  adminTokenGeneration++
  adminTokenMemo.clear()
}

export async function findTokenPrincipal(db: Db, secret: string, now: Date): Promise<Principal | undefined> {
  const remembered = adminTokenMemo.get(secret)
  if (remembered && Date.now() < remembered.until && (!remembered.expiresAt || remembered.expiresAt > now)) return remembered.principal
  const generation = adminTokenGeneration
  const [row] = await db.select().from(apiTokens).where(eq(apiTokens.secretHash, await hashSecret(secret))).limit(1)
  if (!row || (row.expiresAt && row.expiresAt <= now)) return undefined
  if (!row.seenAt || now.getTime() - row.seenAt.getTime() > SEEN_AT_RESOLUTION_MS) {
    await db.update(apiTokens).set({ seenAt: now }).where(eq(apiTokens.id, row.id))
  }
  if (row.type === PAT_TYPE) return row.userId === null ? undefined : loadUserPrincipal(db, row.userId)
  if (row.type === 'admin') {
    const principal: Principal = { kind: 'admin-token', tokenId: row.id, name: row.tokenName, rootRole: 'Admin' }
    if (generation === adminTokenGeneration) {
      if (adminTokenMemo.size >= 1_000) adminTokenMemo.clear()
      adminTokenMemo.set(secret, { principal, expiresAt: row.expiresAt, until: Date.now() + ADMIN_TOKEN_MEMO_MS })
    }
    return principal
  }
  const kind = row.type === 'frontend' ? 'frontend-token' : 'client-token'
  return { kind, tokenId: row.id, name: row.tokenName, projects: row.projects, environment: row.environment }
}

export async function listTokens(db: Db, types: TokenType[]) {
  if (types.length === 0) return []
  const rows = await db
    .select()
    .from(apiTokens)
    .where(and(inArray(apiTokens.type, types), isNull(apiTokens.userId)))
    .orderBy(asc(apiTokens.createdAt), asc(apiTokens.id))
  return rows.map((row) => tokenView(row))
}

/** Checks that the token's projects and environment exist; throws 400 naming what does not. */
async function checkScope(db: Db, token: NewToken) {
  const named = token.projects.filter((p) => p !== '*')
  if (named.length > 0) {
    const found = await db.select({ id: projects.id }).from(projects).where(inArray(projects.id, named))
    const missing = named.filter((p) => !found.some((f) => f.id === p))
    if (missing.length > 0) throw validationError(`Unknown project(s): ${missing.join(', ')}`)
  }
  if (token.environment !== '*') {
    const [env] = await db.select({ name: environments.name }).from(environments).where(eq(environments.name, token.environment))
    if (!env) throw validationError(`Unknown environment: ${token.environment}`)
  }
}

export async function createToken(db: Db, caller: Author, token: NewToken, secret = newSecret(token.projects, token.environment)) {
  const { actor, now } = caller
  await checkScope(db, token)
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(apiTokens)
      .values({
        secretHash: await hashSecret(secret),
        displaySecret: displaySecret(secret),
        tokenName: token.tokenName,
        type: token.type,
        projects: token.projects,
        environment: token.environment,
        expiresAt: token.expiresAt,
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning()
    if (!row) throw nameExists('A token with that secret already exists')
    await recordEvents(tx, actor, now, [
      { type: 'api-token-created', project: eventProject(token.projects), environment: eventEnvironment(token.environment), data: eventData(row) },
    ])
    return tokenView(row, secret)
  })
}

/** Deletes the token named by its full secret, or by the masked secret listings show (when that is unambiguous). */
export async function deleteToken(db: Db, caller: Author, secretOrDisplay: string, allowedTypes: TokenType[]) {
  const { actor, now } = caller
  const hash = await hashSecret(secretOrDisplay)
  forgetAdminTokens()
  const result = await db.transaction(async (tx) => {
    const matches = await tx
      .select()
      .from(apiTokens)
      .where(and(isNull(apiTokens.userId), or(eq(apiTokens.secretHash, hash), eq(apiTokens.displaySecret, secretOrDisplay))))
      .for('update')
    const byHash = matches.find((m) => m.secretHash === hash)
    const row = byHash ?? (matches.length === 1 ? matches[0] : undefined)
    if (!row) {
      if (matches.length > 1) throw validationError('More than one token is listed as that secret: delete it with its full secret')
      throw notFound('Could not find an API token with that secret')
    }
    if (!allowedTypes.includes(row.type as TokenType)) return { denied: row.type as TokenType }
    await tx.delete(apiTokens).where(eq(apiTokens.id, row.id))
    await recordEvents(tx, actor, now, [
      { type: 'api-token-deleted', project: eventProject(row.projects), environment: eventEnvironment(row.environment), preData: eventData(row) },
    ])
    return { deleted: row.type as TokenType }
  })
  forgetAdminTokens()
  return result
}

/**
 * Start-up: creates the given admin tokens that do not exist yet (idempotent). With no token at all in
 * the database and none given, creates one admin token and returns its secret so it can be shown once.
 */
export async function bootstrapAdminTokens(db: Db, now: Date, initTokens: string[]): Promise<string | undefined> {
  const adminToken = (tokenName: string): NewToken => ({ tokenName, type: 'admin', projects: ['*'], environment: '*', expiresAt: null })
  for (const [i, secret] of initTokens.entries()) {
    const [existing] = await db.select({ id: apiTokens.id }).from(apiTokens).where(eq(apiTokens.secretHash, await hashSecret(secret)))
    if (!existing) await createToken(db, { actor: SYSTEM_ACTOR, now: now }, adminToken(`init-admin-token-${i + 1}`), secret)
  }
  if (initTokens.length > 0) return undefined
  const [row] = await db.select({ n: count() }).from(apiTokens)
  if ((row?.n ?? 0) > 0) return undefined
  return (await createToken(db, { actor: SYSTEM_ACTOR, now: now }, adminToken('first-admin-token'))).secret
}
