import type { Clock } from '../core/clock.js'
import { credentialOf } from '../core/principal.js'
import { logRequest, requestIdOf, type Logger } from '../http/request-log.js'
import { scopeKey } from './payload.js'
import { isNewer } from './revision.js'
import { supportsSegments, tokenProjects } from './scope.js'
import { etagMatches } from './service.js'
import type { SdkPrincipal } from './auth.js'
import type { SdkState } from './state.js'

/** The route the fast path answers, as the router names it (the request log's and the metrics' `route`). */
export const CLIENT_FEATURES_PATH = '/api/client/features'

type ClientToken = Extract<SdkPrincipal, { kind: 'client-token' | 'frontend-token' }>

export interface FastPollDeps {
  sdk: SdkState
  clock: Clock
  logger: Logger
  observe?: (request: { route: string; method: string; status: number; seconds: number }) => void
}

/**
 * The unchanged SDK poll answered before Hono's dispatch: `GET /api/client/features`, no query, `If-None-Match` naming
 * the ETag of the payload this process holds for the token's scope. It answers only what the routed request would
 * answer from memory alone, the same 304 (ETag, X-Request-Id) with the same request log line and metrics:
 *
 * - the token is one the SDK routes remember and still fresh (the auth middleware's memo, client-api/auth.ts), not
 *   expired by the app's clock, a client token of one environment (admin tokens' environment is chosen per request);
 * - the revision is known and fresh, and the held payload is of it and of the memo's generation (a write through this
 *   process moved the generation on and forgot every token: both paths then look them up again);
 * - nothing would be left to check after the response (no stale token or revision: those go the routed way, which
 *   schedules the check).
 *
 * Anything else (another method, HEAD included; a query; another path; no or another ETag; an unknown, stale or
 * expired token; a frontend or admin token) returns undefined: the app's router answers it, with every middleware.
 * The 304 does not depend on Accept-Encoding (the compression passes 304s as they are), so that header is not read.
 */
/** The fast path for a server that reads requests itself (the Node server: src/fast-poll-node.ts). */
export interface FastPoll {
  (request: Request): Response | undefined
  /**
   * The same decision for `GET /api/client/features` without a query (the caller has checked the method and path), from
   * a reader of the request's headers (lowercase names; null or undefined when absent): the 304's header record when
   * it answers (its log line and metrics written), else undefined (route it).
   */
  answer(header: (name: string) => string | null | undefined): { etag: string; 'x-request-id': string } | undefined
}

export function fastPolls(deps: FastPollDeps): FastPoll {
  const { sdk, clock, logger, observe } = deps
  if (!sdk.options.fastPolls) return Object.assign(() => undefined, { answer: () => undefined })
  const logRequests = logger.enabled('info')
  const timed = logRequests || observe !== undefined
  // The scope keys of a resolved principal without filters, with and without segments (one object per token lookup).
  const keys = new WeakMap<ClientToken, [withSegments: string, inline: string]>()
  const keysOf = (principal: ClientToken) => {
    let known = keys.get(principal)
    if (known === undefined) {
      const scope = { environment: principal.environment, projects: tokenProjects(principal) }
      known = [scopeKey({ ...scope, inlineSegmentConstraints: false }), scopeKey({ ...scope, inlineSegmentConstraints: true })]
      keys.set(principal, known)
    }
    return known
  }
  /** The ETag to answer 304 with, and who asked, when the routed request would answer exactly that from memory. */
  const unchanged = (header: (name: string) => string | null | undefined): { etag: string; principal: ClientToken } | undefined => {
    const ifNoneMatch = header('if-none-match')
    if (!ifNoneMatch) return undefined
    const credential = credentialOf(header('authorization') ?? undefined)
    if (credential === undefined) return undefined
    const remembered = sdk.tokens.lookup(credential)
    if (remembered === undefined || !remembered.fresh) return undefined
    const { principal, expiresAt } = remembered.value
    if (principal.kind !== 'client-token' || principal.environment === '*') return undefined
    if (expiresAt !== null && expiresAt <= clock()) return undefined
    const known = sdk.revisions.known()
    if (known === undefined || !known.fresh) return undefined
    const [withSegments, inline] = keysOf(principal)
    const held = sdk.payloads.get(supportsSegments(header('unleash-client-spec')) ? withSegments : inline)
    if (held === undefined || held.generation !== sdk.revisions.generation || isNewer(known.revision, held.revision)) return undefined
    // The SDK sends back the one ETag it was given: compared as it is first, as a list of candidates only if it differs.
    return ifNoneMatch === held.etag || etagMatches(ifNoneMatch, held.etag) ? { etag: held.etag, principal } : undefined
  }
  const answer: FastPoll['answer'] = (header) => {
    const start = timed ? performance.now() : 0
    let found: ReturnType<typeof unchanged>
    let requestId: string
    try {
      found = unchanged(header)
      if (found === undefined) return undefined
      requestId = requestIdOf(header('x-request-id'))
    } catch {
      // Never a reason for a 500: whatever goes wrong here, the router answers.
      return undefined
    }
    try {
      sdk.options.onFastPoll?.()
      if (logRequests) logRequest(logger, requestId, 'GET', CLIENT_FEATURES_PATH, 304, start, found.principal)
      observe?.({ route: CLIENT_FEATURES_PATH, method: 'GET', status: 304, seconds: (performance.now() - start) / 1000 })
    } catch {
      // A log or a metric that fails never turns the answer into a 500.
    }
    return { etag: found.etag, 'x-request-id': requestId }
  }
  const fastPoll = (request: Request) => {
    if (request.method !== 'GET') return undefined
    const url = request.url
    // The path as Hono reads it (from the first `/` after the scheme's `//`), exactly, and nothing after it: no query.
    const at = url.indexOf('/', url.indexOf(':') + 4)
    if (at < 0 || url.length - at !== CLIENT_FEATURES_PATH.length || !url.endsWith(CLIENT_FEATURES_PATH)) return undefined
    const answered = answer((name) => request.headers.get(name))
    return answered === undefined ? undefined : new Response(null, { status: 304, headers: answered })
  }
  return Object.assign(fastPoll, { answer })
}
