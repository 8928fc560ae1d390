import { and, asc, count, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm'
import { actionSets, signalEndpoints, signalEndpointTokens, signals } from '../../schema/index.js'
import { together, type Db } from '../db.js'
import { conflict, nameExists, notFound, validationError } from '../core/errors.js'
import { derivedEventsStatement } from '../events/store.js'
import { describeEvent } from '../events/describe.js'
import type { EventType } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { hashSecret, randomHex } from '../api-tokens/secrets.js'
import type { CreateSignalEndpoint, SignalEndpoint, SignalEndpointToken } from './schemas.js'

/*
 * Signal endpoints and their tokens (ADMIN's, as in Unleash). Every write is one statement that decides alone (as
 * banners'): the change, its event built from what the change returns, and the answer.
 */

/** How many endpoints an instance has, and tokens an endpoint (Unleash's defaults are 5 and 5; these are roomier). */
export const MAX_SIGNAL_ENDPOINTS = 50
export const MAX_TOKENS_PER_ENDPOINT = 10

const p = (name: string) => sql.placeholder(name)
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** An endpoint row (under `alias`) as JSON, as the API and its events show it (without its tokens). */
const endpointJson = (alias: string) =>
  sql.raw(`jsonb_build_object('id', ${alias}.id, 'name', ${alias}.name, 'description', ${alias}.description, 'enabled', ${alias}.enabled,
    'createdAt', ${iso(`${alias}.created_at`)}, 'createdByUserId', ${alias}.created_by_user_id)`)

/** A token row (under `alias`) as JSON, never its secret. */
const tokenJson = (alias: string) =>
  sql.raw(`jsonb_build_object('id', ${alias}.id, 'name', ${alias}.name, 'signalEndpointId', ${alias}.signal_endpoint_id,
    'createdAt', ${iso(`${alias}.created_at`)}, 'createdByUserId', ${alias}.created_by_user_id)`)

/** The tokens of the endpoint whose id is `id` (SQL), oldest first, as a JSON array. */
const tokensOf = (id: SQL) => sql`(select coalesce(jsonb_agg(${tokenJson('t')} order by t.id), '[]') from ${signalEndpointTokens} t where t.signal_endpoint_id = ${id})`

const eventOf = (type: EventType, data: SQL | null, preData: SQL | null, from: string) =>
  sql`(select coalesce(jsonb_agg(jsonb_build_object('type', ${type}::text, 'data', ${data ?? sql`null::jsonb`}, 'pre_data', ${preData ?? sql`null::jsonb`}, 'tags', '[]'::jsonb,
    'label', ${p('label')}::text, 'summary', ${p('summary')}::text)), '[]') from ${sql.raw(from)})`

const label = (caller: Author, type: EventType) => describeEvent(caller.actor, { type })

// Drivers hand jsonb back parsed or as text.
const parsed = <T>(value: unknown): T | undefined => (value === null || value === undefined ? undefined : typeof value === 'string' ? (JSON.parse(value) as T) : (value as T))

const missingEndpoint = (id: number | string) => notFound(`Could not find signal endpoint ${id}`)
const missingToken = (id: number) => notFound(`Could not find signal endpoint token ${id}`)

type EndpointRow = typeof signalEndpoints.$inferSelect
type TokenRow = typeof signalEndpointTokens.$inferSelect

const tokenView = (row: TokenRow): SignalEndpointToken => ({
  id: row.id,
  name: row.name,
  signalEndpointId: row.signalEndpointId,
  createdAt: row.createdAt.toISOString(),
  createdByUserId: row.createdByUserId,
})

const endpointView = (row: EndpointRow, tokens: TokenRow[]): SignalEndpoint => ({
  id: row.id,
  name: row.name,
  description: row.description,
  enabled: row.enabled,
  createdAt: row.createdAt.toISOString(),
  createdByUserId: row.createdByUserId,
  tokens: tokens.filter((t) => t.signalEndpointId === row.id).map(tokenView),
})

/** GET /api/admin/signal-endpoints: every endpoint, by id, with its tokens (never their secrets): one round trip. */
export async function listSignalEndpoints(db: Db): Promise<SignalEndpoint[]> {
  const [rows, tokens] = await together(db, [
    (q) => q.select().from(signalEndpoints).orderBy(asc(signalEndpoints.id)),
    (q) => q.select().from(signalEndpointTokens).orderBy(asc(signalEndpointTokens.id)),
  ])
  return rows.map((row) => endpointView(row, tokens))
}

export async function listSignalEndpointTokens(db: Db, endpointId: number): Promise<SignalEndpointToken[]> {
  const [endpoint, tokens] = await together(db, [
    (q) => q.select({ id: signalEndpoints.id }).from(signalEndpoints).where(eq(signalEndpoints.id, endpointId)),
    (q) => q.select().from(signalEndpointTokens).where(eq(signalEndpointTokens.signalEndpointId, endpointId)).orderBy(asc(signalEndpointTokens.id)),
  ])
  if (endpoint.length === 0) throw missingEndpoint(endpointId)
  return tokens.map(tokenView)
}

const createEndpointStatement = derivedEventsStatement<SignalEndpoint>('flagpost_create_signal_endpoint', {
  alongside: [
    sql`insert into ${signalEndpoints} (name, description, enabled, created_at, created_by_user_id)
      select ${p('name')}::text, ${p('description')}::text, ${p('enabled')}::boolean, ${p('createdAt')}::timestamptz, ${p('createdByUserId')}::integer
      where (select count(*) from ${signalEndpoints}) < ${MAX_SIGNAL_ENDPOINTS}
      on conflict (name) do nothing
      returning ${endpointJson('signal_endpoints')} as endpoint`,
  ],
  events: eventOf('signal-endpoint-created', sql`w0.endpoint`, null, 'w0'),
  returning: sql<SignalEndpoint>`(select endpoint || jsonb_build_object('tokens', '[]'::jsonb) from w0)`,
})

// The endpoint as it was (locked, so the event's preData is what the change replaced).
const lockedEndpoint = sql`select ${endpointJson('e')} as endpoint, e.id from ${signalEndpoints} e where e.id = ${p('id')}::integer for update`

const updateEndpointStatement = derivedEventsStatement<SignalEndpoint>('flagpost_update_signal_endpoint', {
  alongside: [
    lockedEndpoint,
    sql`update ${signalEndpoints} e set name = ${p('name')}::text, description = ${p('description')}::text, enabled = coalesce(${p('enabled')}::boolean, e.enabled)
      from w0 where e.id = w0.id
      returning ${endpointJson('e')} as endpoint, e.id`,
  ],
  events: eventOf('signal-endpoint-updated', sql`w1.endpoint`, sql`w0.endpoint`, 'w1, w0'),
  returning: sql<SignalEndpoint>`(select w1.endpoint || jsonb_build_object('tokens', ${tokensOf(sql`w1.id`)}) from w1)`,
})

// Switching on or off: an update only where it changes something (no event otherwise), answering the endpoint either way.
const switchEndpointStatement = derivedEventsStatement<SignalEndpoint>('flagpost_switch_signal_endpoint', {
  alongside: [
    lockedEndpoint,
    sql`update ${signalEndpoints} e set enabled = ${p('enabled')}::boolean from w0 where e.id = w0.id and e.enabled <> ${p('enabled')}::boolean
      returning ${endpointJson('e')} as endpoint`,
  ],
  events: eventOf('signal-endpoint-updated', sql`w1.endpoint`, sql`w0.endpoint`, 'w1, w0'),
  returning: sql<SignalEndpoint>`(select coalesce((select endpoint from w1), w0.endpoint) || jsonb_build_object('tokens', ${tokensOf(sql`w0.id`)}) from w0)`,
})

const deleteEndpointStatement = derivedEventsStatement<number>('flagpost_delete_signal_endpoint', {
  alongside: [
    sql`delete from ${signalEndpoints} e where e.id = ${p('id')}::integer and not exists (select from ${actionSets} a where a.source_id = e.id) returning ${endpointJson('e')} as endpoint`,
  ],
  events: eventOf('signal-endpoint-deleted', null, sql`w0.endpoint`, 'w0'),
  returning: sql<number>`(select count(*)::int from w0)`,
})

const fields = (input: CreateSignalEndpoint) => ({ name: input.name, description: input.description ?? null })

/** Renaming onto a taken name fails on the unique name: that is a 409 naming it. */
async function namedUniquely<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (error) {
    const code = (error as { code?: string; cause?: { code?: string } }).code ?? (error as { cause?: { code?: string } }).cause?.code
    if (code === '23505') throw nameExists(`A signal endpoint named ${name} already exists`)
    throw error
  }
}

/** POST /api/admin/signal-endpoints: one statement with `signal-endpoint-created`; a taken name is a 409, past the limit a 400. */
export async function createSignalEndpoint(db: Db, caller: Author, input: CreateSignalEndpoint): Promise<SignalEndpoint> {
  const { returned } = await createEndpointStatement(db, caller.actor, caller.now, { ...fields(input), enabled: input.enabled ?? true, ...label(caller, 'signal-endpoint-created') })
  const endpoint = parsed<SignalEndpoint>(returned)
  if (endpoint) return endpoint
  const [taken] = await db.select({ id: signalEndpoints.id }).from(signalEndpoints).where(eq(signalEndpoints.name, input.name))
  if (taken) throw nameExists(`A signal endpoint named ${input.name} already exists`)
  throw validationError(`An instance has at most ${MAX_SIGNAL_ENDPOINTS} signal endpoints`)
}

/** PUT /api/admin/signal-endpoints/{id}: replaces name and description (`enabled` kept when left out); one statement with `signal-endpoint-updated`. */
export async function updateSignalEndpoint(db: Db, caller: Author, id: number, input: CreateSignalEndpoint): Promise<SignalEndpoint> {
  const { returned } = await namedUniquely(input.name, () => updateEndpointStatement(db, caller.actor, caller.now, { id, ...fields(input), enabled: input.enabled ?? null, ...label(caller, 'signal-endpoint-updated') }))
  const endpoint = parsed<SignalEndpoint>(returned)
  if (!endpoint) throw missingEndpoint(id)
  return endpoint
}

/** POST /api/admin/signal-endpoints/{id}/on and /off: `signal-endpoint-updated` only when it changes. */
export async function switchSignalEndpoint(db: Db, caller: Author, id: number, enabled: boolean): Promise<SignalEndpoint> {
  const { returned } = await switchEndpointStatement(db, caller.actor, caller.now, { id, enabled, ...label(caller, 'signal-endpoint-updated') })
  const endpoint = parsed<SignalEndpoint>(returned)
  if (!endpoint) throw missingEndpoint(id)
  return endpoint
}

/**
 * DELETE /api/admin/signal-endpoints/{id}: its tokens and signals go with it (foreign keys); one statement with
 * `signal-endpoint-deleted`, made only while no action set listens to it (409 naming them).
 */
export async function deleteSignalEndpoint(db: Db, caller: Author, id: number): Promise<void> {
  const { returned } = await deleteEndpointStatement(db, caller.actor, caller.now, { id, ...label(caller, 'signal-endpoint-deleted') })
  if (returned) return
  const [endpoint, listening] = await together(db, [
    (q) => q.select({ id: signalEndpoints.id }).from(signalEndpoints).where(eq(signalEndpoints.id, id)),
    (q) => q.select({ project: actionSets.project, name: actionSets.name }).from(actionSets).where(eq(actionSets.sourceId, id)).orderBy(asc(actionSets.id)),
  ])
  if (endpoint.length === 0) throw missingEndpoint(id)
  if (listening.length > 0) throw conflict(`Action sets listen to signal endpoint ${id}: ${listening.map((a) => `${a.name} (project ${a.project})`).join(', ')}. Delete them or make them listen to another endpoint first`)
  throw conflict('The signal endpoint changed meanwhile: try again')
}

const createTokenStatement = derivedEventsStatement<SignalEndpointToken>('flagpost_create_signal_endpoint_token', {
  alongside: [
    sql`insert into ${signalEndpointTokens} (signal_endpoint_id, name, secret_hash, created_at, created_by_user_id)
      select e.id, ${p('name')}::text, ${p('hash')}::text, ${p('createdAt')}::timestamptz, ${p('createdByUserId')}::integer
      from ${signalEndpoints} e
      where e.id = ${p('endpointId')}::integer and (select count(*) from ${signalEndpointTokens} t where t.signal_endpoint_id = e.id) < ${MAX_TOKENS_PER_ENDPOINT}
      returning ${tokenJson('signal_endpoint_tokens')} as token`,
  ],
  events: eventOf('signal-endpoint-token-created', sql`w0.token`, null, 'w0'),
  returning: sql<SignalEndpointToken>`(select token from w0)`,
})

const lockedToken = sql`select ${tokenJson('t')} as token, t.id from ${signalEndpointTokens} t where t.id = ${p('tokenId')}::integer and t.signal_endpoint_id = ${p('endpointId')}::integer for update`

const renameTokenStatement = derivedEventsStatement<SignalEndpointToken>('flagpost_rename_signal_endpoint_token', {
  alongside: [
    lockedToken,
    sql`update ${signalEndpointTokens} t set name = ${p('name')}::text from w0 where t.id = w0.id and t.name <> ${p('name')}::text returning ${tokenJson('t')} as token`,
  ],
  events: eventOf('signal-endpoint-token-updated', sql`w1.token`, sql`w0.token`, 'w1, w0'),
  returning: sql<SignalEndpointToken>`coalesce((select token from w1), (select token from w0))`,
})

const deleteTokenStatement = derivedEventsStatement<number>('flagpost_delete_signal_endpoint_token', {
  alongside: [
    sql`delete from ${signalEndpointTokens} t where t.id = ${p('tokenId')}::integer and t.signal_endpoint_id = ${p('endpointId')}::integer returning ${tokenJson('t')} as token`,
  ],
  events: eventOf('signal-endpoint-token-deleted', null, sql`w0.token`, 'w0'),
  returning: sql<number>`(select count(*)::int from w0)`,
})

/**
 * POST /api/admin/signal-endpoints/{id}/tokens: a new token, in this answer only (stored as a SHA-256); one statement
 * with `signal-endpoint-token-created` (never the token). 404 for an unknown endpoint, 400 past the limit.
 */
export async function createSignalEndpointToken(db: Db, caller: Author, endpointId: number, name: string): Promise<SignalEndpointToken & { token: string }> {
  const token = randomHex(32)
  const { returned } = await createTokenStatement(db, caller.actor, caller.now, { endpointId, name, hash: await hashSecret(token), ...label(caller, 'signal-endpoint-token-created') })
  const created = parsed<SignalEndpointToken>(returned)
  if (created) return { ...created, token }
  const [endpoint] = await db.select({ id: signalEndpoints.id }).from(signalEndpoints).where(eq(signalEndpoints.id, endpointId))
  if (!endpoint) throw missingEndpoint(endpointId)
  throw validationError(`A signal endpoint has at most ${MAX_TOKENS_PER_ENDPOINT} tokens`)
}

/** PUT /api/admin/signal-endpoints/{id}/tokens/{tokenId}: renames it; `signal-endpoint-token-updated` only when the name changes. */
export async function renameSignalEndpointToken(db: Db, caller: Author, endpointId: number, tokenId: number, name: string): Promise<SignalEndpointToken> {
  const { returned } = await renameTokenStatement(db, caller.actor, caller.now, { endpointId, tokenId, name, ...label(caller, 'signal-endpoint-token-updated') })
  const token = parsed<SignalEndpointToken>(returned)
  if (!token) throw missingToken(tokenId)
  return token
}

/** DELETE /api/admin/signal-endpoints/{id}/tokens/{tokenId}: it stops working at once; `signal-endpoint-token-deleted`. */
export async function deleteSignalEndpointToken(db: Db, caller: Author, endpointId: number, tokenId: number): Promise<void> {
  const { returned } = await deleteTokenStatement(db, caller.actor, caller.now, { endpointId, tokenId, ...label(caller, 'signal-endpoint-token-deleted') })
  if (!returned) throw missingToken(tokenId)
}

const signalColumns = {
  id: signals.id,
  source: signals.source,
  sourceId: signals.sourceId,
  createdAt: signals.createdAt,
  payload: signals.payload,
  tokenName: signalEndpointTokens.name,
}

type SignalRow = { id: number; source: string; sourceId: number; createdAt: Date; payload: unknown; tokenName: string | null }
const signalView = <T extends SignalRow>(row: T) => ({ ...row, source: 'signal-endpoint' as const, createdAt: row.createdAt.toISOString() })

/** GET /api/admin/signal-endpoints/{id}/signals: the endpoint's signals, newest first (one round trip). */
export async function listEndpointSignals(db: Db, endpointId: number, page: { limit: number; offset: number }) {
  const [endpoint, rows] = await together(db, [
    (q) => q.select({ id: signalEndpoints.id }).from(signalEndpoints).where(eq(signalEndpoints.id, endpointId)),
    (q) =>
      q
        .select(signalColumns)
        .from(signals)
        .leftJoin(signalEndpointTokens, eq(signalEndpointTokens.id, signals.createdBySourceTokenId))
        .where(eq(signals.sourceId, endpointId))
        .orderBy(desc(signals.id))
        .limit(page.limit)
        .offset(page.offset),
  ])
  if (endpoint.length === 0) throw missingEndpoint(endpointId)
  return rows.map(signalView)
}

/** GET /api/admin/signals: every endpoint's signals, newest first, between two days (UTC, both included), with the total. */
export async function querySignals(db: Db, query: { limit: number; offset: number; from?: string; to?: string }) {
  const day = (value: string) => new Date(`${value.slice(3)}T00:00:00Z`)
  const from = query.from ? day(query.from) : undefined
  const to = query.to ? new Date(day(query.to).getTime() + 86_400_000) : undefined
  if (from && to && from >= to) throw validationError('`from` must be a day before `to`, or the same day')
  const where = and(from ? gte(signals.createdAt, from) : undefined, to ? lt(signals.createdAt, to) : undefined)
  const [rows, [total]] = await together(db, [
    (q) =>
      q
        .select({ ...signalColumns, sourceName: signalEndpoints.name, sourceDescription: signalEndpoints.description })
        .from(signals)
        .innerJoin(signalEndpoints, eq(signalEndpoints.id, signals.sourceId))
        .leftJoin(signalEndpointTokens, eq(signalEndpointTokens.id, signals.createdBySourceTokenId))
        .where(where)
        .orderBy(desc(signals.id))
        .limit(query.limit)
        .offset(query.offset),
    (q) => q.select({ n: count() }).from(signals).where(where),
  ])
  return { signals: rows.map(signalView), total: total?.n ?? 0 }
}
