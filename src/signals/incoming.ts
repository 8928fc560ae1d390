import type { Context, MiddlewareHandler } from 'hono'
import { limitKeysOf } from '../http/client-address.js'
import { addressWindow } from '../http/address-window.js'
import { sql } from 'drizzle-orm'
import { signalEndpoints, signalEndpointTokens, signals } from '../../schema/index.js'
import { queryRows, statement, type Db } from '../db.js'
import { ApiError, notFound } from '../core/errors.js'
import { credentialOf } from '../core/principal.js'
import { errorBody } from '../http/errors.js'
import type { AppEnv } from '../http/context.js'
import { hashSecret } from '../api-tokens/secrets.js'
import { listeningActionSets, queueRuns, runsFor } from '../actions/runs.js'
import type { ActionSet } from '../actions/schemas.js'

/** Who sent a signal: the endpoint and the token (set by `authenticateSignal`), and the action sets listening to the endpoint. */
export interface SignalSender {
  endpointId: number
  endpointName: string
  tokenId: number
  listening: ActionSet[]
}

declare module 'hono' {
  interface ContextVariableMap {
    signalSender: SignalSender
  }
}

/** The largest payload a signal may carry: alerts and webhooks, not files. */
export const MAX_SIGNAL_BYTES = 64 * 1024
/** Signals kept per endpoint: older ones are dropped as new ones arrive. */
export const KEPT_PER_ENDPOINT = 1_000

export interface SignalRateLimit {
  /** Signals one address may send one endpoint in a minute; default 60. 0: no limit. */
  perMinute?: number
}

const WINDOW_MS = 60_000

const invalidToken = () => new ApiError('AuthenticationRequired', 'A signal endpoint needs one of its tokens in the Authorization header (`Bearer <token>`)')

const p = (name: string) => sql.placeholder(name)

/** The token, by its digest, for the endpoint named, with the action sets listening to it: one statement. */
const senderLookup = statement<{ endpointId: number; enabled: boolean; tokenId: number; listening: unknown }>(
  'flagpost_signal_sender',
  () => sql`select e.id as "endpointId", e.enabled, t.id as "tokenId", ${listeningActionSets(sql`e.id`)} as listening
    from ${signalEndpointTokens} t join ${signalEndpoints} e on e.id = t.signal_endpoint_id
    where t.secret_hash = ${p('hash')} and e.name = ${p('name')}`,
)

/**
 * `POST /api/signal-endpoint/{name}`, before the body is read: a rate limit per client address and endpoint (counted in
 * the process, before any database work), then the endpoint's token. Any other credential (an API token, a personal
 * access token, a session) is no token of an endpoint: 401. An endpoint switched off answers 404, as an unknown one
 * would to its token's holder.
 */
export function authenticateSignal(options: SignalRateLimit, clock: () => Date): MiddlewareHandler<AppEnv> {
  const perMinute = options.perMinute ?? 60
  const sent = addressWindow(WINDOW_MS)
  return async (c, next) => {
    const name = c.req.param('name') ?? ''
    if (perMinute > 0) {
      // An unknown address: one count per endpoint.
      const keys = limitKeysOf(c, perMinute)
      const retryAfter = sent((keys.length ? keys : [['', perMinute] as [string, number]]).map(([key, allowance]) => [`${key} ${name}`, allowance]), clock().getTime())
      if (retryAfter !== undefined) {
        const error = new ApiError('TooManyRequestsError', `Too many signals to ${name}: try again in ${retryAfter} seconds`)
        return c.json(errorBody(error), 429, { 'Retry-After': String(retryAfter) })
      }
    }
    const credential = credentialOf(c.req.header('authorization'))
    if (!credential) throw invalidToken()
    const [found] = await senderLookup(c.var.db, { hash: await hashSecret(credential), name })
    if (!found) throw invalidToken()
    if (!found.enabled) throw notFound(`Signal endpoint ${name} is switched off`)
    // Drivers hand json back parsed or as text.
    const listening = (typeof found.listening === 'string' ? JSON.parse(found.listening) : found.listening) as ActionSet[]
    c.set('signalSender', { endpointId: found.endpointId, endpointName: name, tokenId: found.tokenId, listening })
    await next()
  }
}

/** Reads the body of a signal: any JSON, at most MAX_SIGNAL_BYTES (413 past it); none is `{}`. */
export async function signalPayload(c: Context): Promise<unknown> {
  const text = await c.req.text()
  if (new TextEncoder().encode(text).length > MAX_SIGNAL_BYTES) throw new ApiError('PayloadTooLargeError', `A signal's payload is at most ${MAX_SIGNAL_BYTES} bytes`)
  // The body guard has checked it is JSON.
  return text.trim() === '' ? {} : (JSON.parse(text) as unknown)
}

/**
 * Stores the signal, queues a run of each action set listening to the endpoint whose filters the payload passes, and
 * drops the endpoint's signals older than its newest KEPT_PER_ENDPOINT, in one statement. Answers the signal's id and
 * how many runs it queued.
 */
export async function storeSignal(db: Db, sender: SignalSender, payload: unknown, now: Date): Promise<{ id: number; runs: number }> {
  const runs = runsFor(sender.listening, payload)
  const [row] = await queryRows<{ id: string | number; runs: number }>(
    db,
    sql`with s as (
        insert into ${signals} (source, source_id, payload, created_at, created_by_source_token_id)
        values ('signal-endpoint', ${sender.endpointId}, ${JSON.stringify(payload)}::jsonb, ${now}, ${sender.tokenId})
        returning id, source, source_id, created_at, created_by_source_token_id, payload
      ),
      r as (${queueRuns('s', sql`${JSON.stringify(runs)}`)}),
      old as (
        delete from ${signals} where source_id = ${sender.endpointId}
          and id <= (select id from ${signals} where source_id = ${sender.endpointId} order by id desc offset ${KEPT_PER_ENDPOINT - 1} limit 1)
      )
      select s.id, (select count(*) from r)::int as runs from s`,
  )
  return { id: Number(row!.id), runs: Number(row!.runs) }
}

/** FLAGPOST_SIGNAL_RATE_LIMIT as a count (default 60); anything but a whole number is refused at start. */
export function signalsPerMinute(value: string | undefined): number {
  if (value === undefined || value === '') return 60
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0) throw new Error(`FLAGPOST_SIGNAL_RATE_LIMIT must be a whole number, got "${value}"`)
  return n
}
