import type { Revision } from './revision.js'
import { sha256Hex } from './sha256.js'
import type { SharedPayloads } from './state.js'

/** The part of the Web Cache interface used here, as Workers' `caches.default` has it (Node's types have no Cache). */
export interface CacheLike {
  match(request: Request): Promise<Response | undefined>
  put(request: Request, response: Response): Promise<void>
}

export interface CacheApiPayloadOptions {
  /**
   * The database's connection string. It enters the key whole, credentials included, so keys cannot be guessed: on
   * a zone where the Worker serves only some routes, a request for the key's URL could reach the cache directly.
   */
  database: string
  /** The Worker's version: a new deployment never reads what an older one stored (its payloads may differ). */
  version?: string
  /** Larger payloads are not stored (each process builds its own). Default 8 MiB. */
  maxBytes?: number
  /** How long an entry may stay. A revision's payload never changes, so this only bounds what piles up. Default a day. */
  maxAgeSeconds?: number
}

/** Bump when the stored body or headers change shape (the version id covers code changes where there is one). */
const FORMAT = 1
const REVISION_HEADER = 'x-flagpost-revision'
const ETAG_HEADER = 'x-flagpost-etag'

/**
 * SDK payloads shared through the Cache API of a Workers location (`caches.default`): the processes of
 * one data center read what one of them loaded. The cache key is a hash of everything that decides the
 * body: database, deployment version, revision and scope (the projects a token may see narrowed by its
 * filters, environment, namePrefix, tags, segment format), so a key names one body and a token is only
 * ever answered from the key of its own scope. Entries are immutable; nothing is ever invalidated, a new
 * revision is a new key. The Cache API only works for a Worker served from a custom domain; elsewhere
 * (workers.dev, previews) it stores nothing and every cold process loads its payload.
 */
export function cacheApiPayloads(cache: CacheLike, options: CacheApiPayloadOptions): SharedPayloads {
  const maxBytes = options.maxBytes ?? 8 * 1024 * 1024
  const maxAge = options.maxAgeSeconds ?? 24 * 60 * 60
  // On the request's own host, as Cloudflare asks of Cache API keys; no route serves the path.
  const keyOf = async (origin: string, scopeKey: string, revision: Revision) =>
    new Request(`${origin}/__flagpost/sdk-payloads/${await sha256Hex(JSON.stringify([FORMAT, options.version ?? '', options.database, revision.key, scopeKey]))}`)

  return {
    async get(origin, scopeKey, revision) {
      const response = await cache.match(await keyOf(origin, scopeKey, revision))
      if (!response) return undefined
      const etag = response.headers.get(ETAG_HEADER)
      if (!response.ok || !etag || response.headers.get(REVISION_HEADER) !== revision.key) {
        await response.body?.cancel()
        return undefined
      }
      return { revision, etag, body: new Uint8Array(await response.arrayBuffer()) }
    },
    async put(origin, scopeKey, payload) {
      if (payload.body.byteLength > maxBytes) return
      const headers = { 'content-type': 'application/json', 'cache-control': `max-age=${maxAge}`, [ETAG_HEADER]: payload.etag, [REVISION_HEADER]: payload.revision.key }
      await cache.put(await keyOf(origin, scopeKey, payload.revision), new Response(payload.body as Uint8Array<ArrayBuffer>, { headers }))
    },
  }
}
