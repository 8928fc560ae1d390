import type { Context } from 'hono'
import { ApiError } from '../core/errors.js'
import type { AppEnv } from '../http/context.js'
import { buildOnce } from './in-flight.js'
import { loadPayload, type ChargeMade } from './load.js'
import { isNarrowed, scopeKey, type ClientScope } from './payload.js'
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
  if (!isNarrowed(scope)) return buildOnce(sdk.building, `${key}@${revision.key}`, sdk.options.shareInFlight, () => loadPayload(sdk, c.get('db'), scope, key, revision, originOf(c)))
  // A payload the caller's filters narrowed (project, namePrefix, tag) that this process does not hold is made for this
  // caller: charged to its API token, which may have NARROWED_BYTES_PER_MINUTE made so a minute.
  const charge = narrowedPayloadCharge(c, key, current !== undefined)
  const made = buildOnce(sdk.building, `${key}@${revision.key}`, sdk.options.shareInFlight, () => loadPayload(sdk, c.get('db'), scope, key, revision, originOf(c), charge?.made))
  return charge ? made.finally(charge.done) : made
}

/**
 * Bytes of narrowed payloads one API token may have made in a minute (a payload read from the database counts
 * DATABASE_BUILD_WEIGHT times its bytes): filtering a payload in memory takes 10–20 ns a byte (the filter, JSON, its
 * hash), so about half a second of CPU a minute. Only payloads the process does not hold are charged: SDKs that
 * poll a few filters pay once while the cache holds them, and a write that moves them on costs them nothing. A cache too
 * small for them makes each poll a new payload, charged like any other: cycling filters past the cache is the attack
 * this charge stops, and SDKs polling every few seconds stay well under it.
 */
export const NARROWED_BYTES_PER_MINUTE = 32 * 1024 * 1024
const NARROWED_WINDOW_MS = 60_000
/**
 * Distinct charged payloads one token may have in the making at once: the bytes are known only once made, so without it
 * requests sent together would all pass the check before any is counted (the minute's bytes are overshot by at most
 * this many payloads). Requests for a filter already in the making share that build and its charge.
 */
export const MAKING_PER_TOKEN = 4

/**
 * The charge of the caller's narrowed payloads this minute: 429 TooManyRequestsError (with Retry-After) before
 * anything is made once the token has had its bytes or has MAKING_PER_TOKEN others in the making; else what to add the
 * bytes made to, and what to call when the making ends. None for a payload held or one in the making already.
 */
function narrowedPayloadCharge(c: Context<AppEnv>, key: string, held: boolean): { made: ChargeMade; done: () => void } | undefined {
  if (held) return undefined
  const sdk = c.get('sdk')
  const who = tokenKey(c)
  const now = Date.now()
  let window = sdk.narrowedBytes.get(who)
  if (window?.making.includes(key)) return undefined
  if (!window || now - window.since >= NARROWED_WINDOW_MS) {
    sdk.narrowedBytes.set(who, (window = { bytes: 0, since: now, making: window?.making ?? [] }))
  }
  if (window.bytes >= NARROWED_BYTES_PER_MINUTE || window.making.length >= MAKING_PER_TOKEN) {
    const retryAfter = window.bytes >= NARROWED_BYTES_PER_MINUTE ? Math.max(1, Math.ceil((window.since + NARROWED_WINDOW_MS - now) / 1000)) : 1
    c.header('Retry-After', String(retryAfter))
    throw new ApiError(
      'TooManyRequestsError',
      window.bytes >= NARROWED_BYTES_PER_MINUTE
        ? `This API token had more than ${NARROWED_BYTES_PER_MINUTE} bytes of payloads narrowed by project, namePrefix or tag made this minute (more filter values than the payload cache holds): try again in ${retryAfter} seconds`
        : `This API token has ${MAKING_PER_TOKEN} payloads narrowed by other filters in the making: try again in ${retryAfter} seconds`,
    )
  }
  const charged = window
  charged.making.push(key)
  return {
    made: (bytes) => void (charged.bytes += bytes),
    done: () => {
      const at = charged.making.indexOf(key)
      if (at >= 0) charged.making.splice(at, 1)
    },
  }
}

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
