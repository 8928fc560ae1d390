import type { Context } from 'hono'
import { ApiError } from '../core/errors.js'
import type { AppEnv } from '../http/context.js'
import { buildOnce } from './in-flight.js'
import { loadPayload } from './load.js'
import { scopeKey, type ClientScope } from './payload.js'
import { originOf, refreshAfterResponse } from './refresh.js'
import { isNewer } from './revision.js'
import type { PayloadEntry } from './state.js'

/**
 * The payload for a scope. From memory when nothing changed since it was loaded; with stale-while-
 * revalidate (Workers), also when the revision is due for a check or moved on, the check and the reload
 * running after the response: a poll waits only when this process holds no payload for the scope, or a
 * write through it may have changed the payload. Otherwise the revision is read (once per
 * `revisionTtlMs`) and a payload it outdates is loaded again, from the location's shared cache or the
 * database (concurrent requests for the same scope share the load where the runtime allows it).
 */
export async function clientPayload(c: Context<AppEnv>, scope: ClientScope): Promise<PayloadEntry> {
  const sdk = c.get('sdk')
  const key = scopeKey(scope)
  const held = sdk.payloads.get(key)
  const known = sdk.revisions.known()
  if (held && known && held.generation === sdk.revisions.generation) {
    if (known.fresh && !isNewer(known.revision, held.revision)) return held
    if (sdk.options.staleWhileRevalidateMs > 0) {
      refreshAfterResponse(c, { scope, key })
      return held
    }
  }
  const generation = sdk.revisions.generation
  const revision = await sdk.revisions.current(c.get('db'))
  const current = sdk.payloads.get(key)
  if (current && !isNewer(revision, current.revision)) {
    if (generation === sdk.revisions.generation) current.generation = generation
    return current
  }
  if (!scope.namePrefix) return buildOnce(sdk.building, `${key}@${revision.key}`, sdk.options.shareInFlight, () => loadPayload(sdk, c.get('db'), scope, key, revision, originOf(c)))
  // A namePrefix's payload is derived from its scope's in memory and kept; derived again (the cache evicted it among many
  // heavy prefixes) it is charged to the API token, which may derive REDERIVED_BYTES_PER_MINUTE so a minute.
  const who = tokenKey(c)
  const now = Date.now()
  let window = sdk.rederived.get(who)
  if (!window || now - window.since >= REDERIVED_WINDOW_MS) sdk.rederived.set(who, (window = { bytes: 0, since: now }))
  if (window.bytes >= REDERIVED_BYTES_PER_MINUTE) {
    const retryAfter = Math.max(1, Math.ceil((window.since + REDERIVED_WINDOW_MS - now) / 1000))
    c.header('Retry-After', String(retryAfter))
    throw new ApiError('TooManyRequestsError', `This API token's namePrefix payloads were derived again more than ${REDERIVED_BYTES_PER_MINUTE} bytes this minute (more prefixes than the payload cache holds): try again in ${retryAfter} seconds`)
  }
  const entry = await buildOnce(sdk.building, `${key}@${revision.key}`, sdk.options.shareInFlight, () => loadPayload(sdk, c.get('db'), scope, key, revision, originOf(c)))
  if (entry.rederived) window.bytes += entry.body.byteLength
  return entry
}

/**
 * Bytes of namePrefix payloads one API token may have derived again in a minute: deriving takes 10–20 ns a byte (the
 * filter, JSON, its hash), so about half a second of CPU a minute. A prefix is derived again only when the payload
 * cache (maxPayloadBytes) could not keep it, so SDKs that poll a few prefixes never meet the limit.
 */
export const REDERIVED_BYTES_PER_MINUTE = 32 * 1024 * 1024
const REDERIVED_WINDOW_MS = 60_000

function tokenKey(c: Context<AppEnv>): string {
  const principal = c.get('principal')
  return principal.kind === 'user' ? `user:${principal.userId}` : principal.kind === 'admin-token' ? `admin:${principal.name}` : `${principal.kind}:${principal.tokenId}`
}

/** Whether an `If-None-Match` header names this ETag (a list, `*`, and weak forms included). */
export function etagMatches(header: string | undefined, etag: string, method: 'GET' | 'POST' = 'GET'): boolean {
  if (!header) return false
  const bare = etag.replace(/^W\//, '')
  return header.split(',').some((candidate) => {
    const value = candidate.trim()
    // RFC 9110 13.1.2: `*` is "any current representation", answered with 304 only on GET/HEAD. On a POST (OFREP's bulk
    // evaluation, whose answer depends on the context in the body) a `*` names no answer the caller holds: only an ETag does.
    if (value === '*') return method === 'GET'
    return value.replace(/^W\//, '') === bare
  })
}
