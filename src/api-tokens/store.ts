import { and, asc, count, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm'
import { apiTokens, environments, projects, roles, users } from '../../schema/index.js'
import { batch, statement, together, untilUnchanged, type Db } from '../db.js'
import type { Author, Principal, ResolvedPrincipal } from '../core/principal.js'
import { ApiError, fromDatabaseError, nameExists, notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import { SYSTEM_ACTOR } from '../core/principal.js'
import { displaySecret, hashSecret, newSecret } from './secrets.js'
import { toUserPrincipal, userPrincipalColumns, type UserPrincipalRow } from '../users/principal.js'

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

export function tokenView(row: Omit<TokenRow, 'id'>, secret?: string) {
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

/** What events say of a token: as its routes answer it, without its secret (not even masked), its one `project` (of `projects`), when it was last used and its alias. */
const eventData = (row: Omit<TokenRow, 'id'>) => ({
  tokenName: row.tokenName,
  type: row.type,
  projects: row.projects,
  environment: row.environment,
  expiresAt: row.expiresAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
})

/** The `api-token-created` event of a new token (never its secret). */
export const tokenCreatedEvent = (row: Omit<TokenRow, 'id'>): NewEvent => ({ type: 'api-token-created', project: eventProject(row.projects), environment: eventEnvironment(row.environment), data: eventData(row) })

/** The `api-token-deleted` event of a token (deleted by its route, or with the one project it was for). */
export const tokenDeletedEvent = (row: Omit<TokenRow, 'id'>): NewEvent => ({ type: 'api-token-deleted', project: eventProject(row.projects), environment: eventEnvironment(row.environment), preData: eventData(row) })

const p = (name: string) => sql.placeholder(name)

/**
 * A token by the digest of its secret, in one statement: the token, the user a personal access token acts as
 * (with their roles, unless deleted), and the token's last use written when it is older than
 * SEEN_AT_RESOLUTION_MS (and the token has not expired).
 */
const tokenLookup = statement<Omit<UserPrincipalRow, 'userId'> & { id: number; type: string; tokenName: string; projects: string[]; environment: string; expiresAt: Date | string | null; userId: number | null }>(
  'flagpost_token_principal',
  () => sql`with token as (select * from ${apiTokens} where secret_hash = ${p('hash')}),
    seen as (
      update ${apiTokens} set seen_at = ${p('now')}::timestamptz
      where id = (select id from token) and (seen_at is null or seen_at < ${p('seenBefore')}::timestamptz) and (expires_at is null or expires_at > ${p('now')}::timestamptz)
    )
    select token.id, token.type, token.token_name as "tokenName", token.projects, token.environment, token.expires_at as "expiresAt",
      ${users.id} as "userId", ${users.email} as email, ${users.username} as username, ${roles.name} as "rootRole", ${userPrincipalColumns.heldRoles} as "heldRoles"
    from token
      left join ${users} on ${users.id} = token.user_id and ${users.deletedAt} is null
      left join ${roles} on ${roles.id} = ${users.rootRoleId}`,
)

/**
 * The principal of a token, by the digest of its secret (`hashSecret`): one statement, so it can travel in a
 * batch. Undefined for an unknown or expired token, and for a personal access token of a deleted user.
 */
export async function lookUpToken(db: Db, hash: string, now: Date): Promise<ResolvedPrincipal | undefined> {
  const [row] = await tokenLookup(db, { hash, now, seenBefore: new Date(now.getTime() - SEEN_AT_RESOLUTION_MS) })
  if (!row) return undefined
  // Drivers hand timestamps of raw rows back as Date or as text.
  const expiresAt = row.expiresAt === null ? null : new Date(row.expiresAt)
  if (expiresAt && expiresAt <= now) return undefined
  if (row.type === PAT_TYPE) return row.userId === null ? undefined : { principal: toUserPrincipal({ ...row, userId: row.userId }), expiresAt }
  if (row.type === 'admin') return { principal: { kind: 'admin-token', tokenId: row.id, name: row.tokenName, rootRole: 'Admin' }, expiresAt }
  const kind = row.type === 'frontend' ? 'frontend-token' : 'client-token'
  return { principal: { kind, tokenId: row.id, name: row.tokenName, projects: row.projects, environment: row.environment }, expiresAt }
}

/**
 * The live API tokens (admin, client, frontend; not personal access tokens) among these digests, in one
 * statement: what Unleash Edge's token validation answers. Expired tokens are left out, as unknown ones.
 */
export async function liveApiTokensByHash(db: Db, hashes: string[], now: Date) {
  if (hashes.length === 0) return []
  return db
    .select({ secretHash: apiTokens.secretHash, type: apiTokens.type, projects: apiTokens.projects, environment: apiTokens.environment })
    .from(apiTokens)
    .where(
      and(
        inArray(apiTokens.secretHash, hashes),
        inArray(apiTokens.type, ['admin', 'client', 'frontend']),
        isNull(apiTokens.userId),
        or(isNull(apiTokens.expiresAt), sql`${apiTokens.expiresAt} > ${now.toISOString()}::timestamptz`),
      ),
    )
}

/**
 * The tokens among `ids` that still exist, each with when it expires (null: never): what open SDK streams are held
 * to (client-api/streaming.ts), so that deleting a token or its expiry ends them.
 */
export async function tokenExpiries(db: Db, ids: number[]): Promise<Map<number, Date | null>> {
  if (ids.length === 0) return new Map()
  const rows = await db.select({ id: apiTokens.id, expiresAt: apiTokens.expiresAt }).from(apiTokens).where(inArray(apiTokens.id, ids))
  return new Map(rows.map((row) => [row.id, row.expiresAt]))
}

/** Marks the tokens with these digests as used now (where their last use is older than SEEN_AT_RESOLUTION_MS): tokens Edge saw in use. */
export async function markTokensSeen(db: Db, hashes: string[], now: Date): Promise<void> {
  if (hashes.length === 0) return
  const before = new Date(now.getTime() - SEEN_AT_RESOLUTION_MS)
  await db
    .update(apiTokens)
    .set({ seenAt: now })
    .where(
      and(
        inArray(apiTokens.secretHash, hashes),
        isNull(apiTokens.userId),
        or(isNull(apiTokens.seenAt), lt(apiTokens.seenAt, before)),
        or(isNull(apiTokens.expiresAt), sql`${apiTokens.expiresAt} > ${now.toISOString()}::timestamptz`),
      ),
    )
}

/** The principal of a live admin API token by its id (undefined once deleted or expired): whose access background work acts with. */
export async function adminTokenPrincipal(db: Db, tokenId: number, now: Date): Promise<Principal | undefined> {
  const [row] = await db
    .select({ id: apiTokens.id, tokenName: apiTokens.tokenName })
    .from(apiTokens)
    .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.type, 'admin'), or(isNull(apiTokens.expiresAt), sql`${apiTokens.expiresAt} > ${now.toISOString()}::timestamptz`)))
  return row ? { kind: 'admin-token', tokenId: row.id, name: row.tokenName, rootRole: 'Admin' } : undefined
}

/** The instance's API tokens of `types` (not personal access tokens), those named `tokenName` when given, oldest first, masked. */
export async function listTokens(db: Db, types: TokenType[], tokenName?: string) {
  if (types.length === 0) return []
  const rows = await db
    .select()
    .from(apiTokens)
    .where(and(inArray(apiTokens.type, types), isNull(apiTokens.userId), tokenName === undefined ? undefined : eq(apiTokens.tokenName, tokenName)))
    .orderBy(asc(apiTokens.createdAt), asc(apiTokens.id))
  return rows.map((row) => tokenView(row))
}

/** Checks that the token's projects and environment exist (one round trip); throws 400 naming what does not. */
async function checkScope(db: Db, token: NewToken) {
  const named = token.projects.filter((p) => p !== '*')
  const [found, envs] = await together(db, [
    // An archived project takes no new token, as it takes no other write (it is not a project SDKs can be served from).
    (q) => (named.length > 0 ? q.select({ id: projects.id }).from(projects).where(and(inArray(projects.id, named), isNull(projects.archivedAt))) : Promise.resolve([])),
    (q) => (token.environment !== '*' ? q.select({ name: environments.name }).from(environments).where(eq(environments.name, token.environment)) : Promise.resolve([])),
  ])
  const missing = named.filter((p) => !found.some((f) => f.id === p))
  if (missing.length > 0) throw validationError(`Unknown or archived project(s): ${missing.join(', ')}`)
  if (token.environment !== '*' && envs.length === 0) throw validationError(`Unknown environment: ${token.environment}`)
}

/** A new API token's row (no id yet) for `secret`: what the instance's and a project's routes store, answer and record. */
export async function newTokenRow(token: NewToken, secret: string, now: Date): Promise<Omit<TokenRow, 'id'>> {
  return {
    secretHash: await hashSecret(secret),
    displaySecret: displaySecret(secret),
    tokenName: token.tokenName,
    type: token.type,
    projects: token.projects,
    environment: token.environment,
    expiresAt: token.expiresAt,
    createdAt: now,
    userId: null,
    seenAt: null,
  }
}

/**
 * Which of `matches` (tokens whose digest is `hash` or whose masked secret is what was sent) the caller names: the one
 * with that digest, else the only one listed as that masked secret; 'ambiguous' when several are; undefined for none.
 */
export function namedToken<T extends { secretHash: string }>(matches: T[], hash: string): T | 'ambiguous' | undefined {
  const byHash = matches.find((m) => m.secretHash === hash)
  if (byHash) return byHash
  if (matches.length > 1) return 'ambiguous'
  return matches[0]
}

/** Creates the token and its event in one batch, after the scope's read: two round trips. */
export async function createToken(db: Db, caller: Author, token: NewToken, secret = newSecret(token.projects, token.environment)) {
  const { actor, now } = caller
  await checkScope(db, token)
  const row = await newTokenRow(token, secret, now)
  try {
    await batch(db, [(q) => q.insert(apiTokens).values(row), (q) => recordEvents(q, actor, now, [tokenCreatedEvent(row)])])
  } catch (error) {
    // The secret's digest is the one unique value a new token has: taken, the batch writes nothing.
    if (fromDatabaseError(error)?.name === 'NameExistsError') throw nameExists('A token with that secret already exists')
    throw error
  }
  return tokenView(row, secret)
}

/** The API token (not a personal access token) named by its full secret, or by the masked secret listings show when that names one token. */
async function findToken(db: Db, secretOrDisplay: string, hash: string, action: 'delete' | 'update'): Promise<TokenRow> {
  const matches = await db
    .select()
    .from(apiTokens)
    .where(and(isNull(apiTokens.userId), or(eq(apiTokens.secretHash, hash), eq(apiTokens.displaySecret, secretOrDisplay))))
  const row = namedToken(matches, hash)
  if (row === 'ambiguous') throw validationError(`More than one token is listed as that secret: ${action} it with its full secret`)
  if (!row) throw notFound('Could not find an API token with that secret')
  return row
}

/**
 * PUT /api/admin/api-tokens/{token}: sets when the token (named as for deleting it) expires; a time already past
 * expires it at once. A read, then the change and `api-token-updated` in one statement, made only while the token
 * still has the expiry read; nothing is written when the expiry is already that.
 */
export async function updateTokenExpiry(db: Db, caller: Author, secretOrDisplay: string, expiresAt: Date, allowedTypes: TokenType[]): Promise<{ denied?: TokenType }> {
  const { actor, now } = caller
  const hash = await hashSecret(secretOrDisplay)
  return untilUnchanged<{ denied?: TokenType }>('The API token', async () => {
    const row = await findToken(db, secretOrDisplay, hash, 'update')
    if (!allowedTypes.includes(row.type as TokenType)) return { denied: row.type as TokenType }
    if (row.expiresAt?.getTime() === expiresAt.getTime()) return { updated: false }
    const update = db
      .update(apiTokens)
      .set({ expiresAt })
      .where(and(eq(apiTokens.id, row.id), row.expiresAt === null ? isNull(apiTokens.expiresAt) : eq(apiTokens.expiresAt, row.expiresAt)))
      .returning({ id: apiTokens.id })
    const after = { ...row, expiresAt }
    const event: NewEvent = { type: 'api-token-updated', project: eventProject(row.projects), environment: eventEnvironment(row.environment), data: eventData(after), preData: eventData(row) }
    return (await recordEvents(db, actor, now, [event], { alongside: [update], guarded: true })) > 0 ? { updated: true } : undefined
  })
}

/**
 * Deletes the token named by its full secret, or by the masked secret listings show (when that is unambiguous):
 * a read, then the deletion and its event in one statement, made only while the token is still there.
 */
export async function deleteToken(db: Db, caller: Author, secretOrDisplay: string, allowedTypes: TokenType[]) {
  const { actor, now } = caller
  const hash = await hashSecret(secretOrDisplay)
  return untilUnchanged('The API token', async () => {
    const row = await findToken(db, secretOrDisplay, hash, 'delete')
    if (!allowedTypes.includes(row.type as TokenType)) return { denied: row.type as TokenType }
    // What the event says of a token never changes: that it is still there is all the write checks.
    const written = await recordEvents(
      db,
      actor,
      now,
      [tokenDeletedEvent(row)],
      { alongside: [db.delete(apiTokens).where(eq(apiTokens.id, row.id)).returning({ id: apiTokens.id })], guarded: true },
    )
    return written > 0 ? { deleted: row.type as TokenType } : undefined
  })
}

/**
 * Start-up: creates the given admin tokens that do not exist yet (idempotent). With no token at all in
 * the database and none given, creates one admin token and returns its secret so it can be shown once.
 */
/**
 * INIT_CLIENT_API_TOKENS / INIT_FRONTEND_API_TOKENS, as Unleash: each secret (`<project>:<environment>.<random>`, one
 * project or `*`) becomes a token of that scope at start-up unless a token has it already. One whose project or
 * environment does not exist (yet: before a migration) is skipped with its scope answered (never the secret).
 */
export async function bootstrapSdkTokens(db: Db, now: Date, initTokens: { type: 'client' | 'frontend'; secret: string }[]): Promise<string[]> {
  const skipped: string[] = []
  for (const [i, { type, secret }] of initTokens.entries()) {
    const [existing] = await db.select({ id: apiTokens.id }).from(apiTokens).where(eq(apiTokens.secretHash, await hashSecret(secret)))
    if (existing) continue
    const scope = secret.slice(0, secret.indexOf('.'))
    const [project, environment] = scope.split(':') as [string, string]
    try {
      await createToken(db, { actor: SYSTEM_ACTOR, now }, { tokenName: `init-${type}-token-${i + 1}`, type, projects: [project], environment, expiresAt: null }, secret)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      skipped.push(`${type} token ${scope}: ${error.message}`)
    }
  }
  return skipped
}

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
