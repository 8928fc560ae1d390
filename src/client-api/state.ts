import type { Context } from 'hono'
import { runDetached, type RunInBackground } from '../http/background.js'
import type { AppEnv } from '../http/context.js'
import type { Clock } from '../core/clock.js'
import type { ResolvedPrincipal } from '../core/principal.js'
import type { PreparedRuleset } from '../evaluation/index.js'
import type { Logger } from '../http/request-log.js'
import { createAggregationScheduler, type AggregationScheduler } from '../metrics/scheduler.js'
import { Lru } from '../core/lru.js'
import { RevisionMemo, type Revision } from './revision.js'
import type { ClientFeatureView, ClientScope, ClientSegmentView } from './payload.js'

/** The routes whose answer is a flag payload, as their templates (the label of the payload size metric). */
export type SdkPayloadRoute = '/api/client/features' | '/api/client/delta' | '/api/client/streaming' | '/api/frontend'

/** The UTF-8 size of a string, counted without encoding it (a JSON payload is ASCII but for names and values). */
export function utf8Length(text: string): number {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    // Two bytes below U+0800, three above; a surrogate pair (two units) is four bytes.
    if (code < 0x800) bytes += 1
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 2
      i++
    } else bytes += 2
  }
  return bytes
}

export interface SdkOptions {
  /** How long a read revision is trusted before the next request reads it again (writes through this process reset it at once). */
  revisionTtlMs: number
  /** How long a resolved API token is remembered (writes through this process, such as deleting a token, clear it at once). */
  tokenTtlMs: number
  /**
   * Stale-while-revalidate: for how long past `revisionTtlMs` (and `tokenTtlMs`) a payload (a token) held
   * in memory is still served at once, the revision (the token) being checked after the response, so an
   * SDK poll never waits on the database while the process holds its payload; the poll after the check
   * sees what it found. 0: never, a poll past the ttl waits for the check (Node, whose database is near).
   * A write through this process is still seen by the next poll at once.
   */
  staleWhileRevalidateMs: number
  /** Bounds of the serialized payload cache. */
  maxPayloads: number
  maxPayloadBytes: number
  /** New applications one client token may create in a day (FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY); reports of more are dropped. */
  clientNewApplicationsPerDay?: number
  /** Called with the scope key each time a payload is built from the database (a seam for tests and measurements). */
  onBuild?: (key: string) => void
  /**
   * Told the size of each flag payload answered with 200 or written to a stream (the Node server's Prometheus metrics):
   * one call, no allocation, on the SDK routes' answer; none on the 304 path.
   */
  observePayload?: (route: SdkPayloadRoute, bytes: number) => void
  /**
   * Whether an unchanged `GET /api/client/features` poll is answered before the router (client-api/fast-poll.ts; default
   * true). Off, every poll takes the routed way: the seam to compare the two.
   */
  fastPolls: boolean
  /** Called each time a poll is answered before the router (a seam for tests and measurements). */
  onFastPoll?: () => void
  /** Allowed origins of browser calls to `/api/frontend` (`*` for any). */
  frontendCorsOrigins: string[]
  /**
   * Whether requests may wait on work another request started (one payload build or revision read for
   * many concurrent requests). On Node yes; on Workers no, since a promise that belongs to another
   * request may never settle there.
   */
  shareInFlight: boolean
  /** Payloads shared between the processes of a location (the Workers Cache API); none on Node. */
  sharedPayloads?: SharedPayloads
}

/**
 * How many of the newest payloads are kept even when together they are over `maxPayloadBytes`: a few scopes whose payloads
 * are at the limits (client, frontend, another project's token) are each kept instead of evicting each other per request.
 * Memory: at most this many payloads at the configuration size limits, plus `maxPayloadBytes`.
 */
export const PAYLOADS_KEPT_OVER_WEIGHT = 4

export const DEFAULT_SDK_OPTIONS: SdkOptions = {
  revisionTtlMs: 1_000,
  tokenTtlMs: 10_000,
  staleWhileRevalidateMs: 0,
  maxPayloads: 256,
  maxPayloadBytes: 64 * 1024 * 1024,
  frontendCorsOrigins: ['*'],
  shareInFlight: true,
  fastPolls: true,
}

/** The frontend API's view of a payload: prepared once, evaluated for every request. */
export interface FrontendRuleset {
  ruleset: PreparedRuleset
  /** Flag names in payload order with their impressionData. */
  flags: { name: string; impressionData: boolean }[]
}

/** A payload as stored outside the process: what decides it is its key (scope and revision), see SharedPayloads. */
export interface StoredPayload {
  revision: Revision
  etag: string
  /** The serialized `GET /api/client/features` body. */
  body: Uint8Array
}

/**
 * Where the processes of one location share payloads (on Workers, the Cache API of the data center), so a
 * cold one answers its first poll with one read instead of loading the payload from the database. The key
 * is everything that decides the body: the scope (environment, the projects the token may see narrowed by
 * its filters, namePrefix, tags, the segment format) and the revision.
 */
export interface SharedPayloads {
  /** The payload of `scopeKey` at exactly `revision`, if some process of the location stored it. `origin`: the request's, the host the cache belongs to. */
  get(origin: string, scopeKey: string, revision: Revision): Promise<StoredPayload | undefined>
  put(origin: string, scopeKey: string, payload: StoredPayload): Promise<void>
}

export interface PayloadEntry extends StoredPayload {
  /** The revision memo's generation it was loaded in: after a write through this process it is not served before a check. */
  generation: number
  features: ClientFeatureView[]
  segments: ClientSegmentView[]
  byName: Map<string, ClientFeatureView>
  frontend?: FrontendRuleset
  /** The payloads of the same scope this process held before, newest first (at most delta.ts `HISTORY`): what deltas are computed from. */
  history: PayloadVersion[]
  /** Delta bodies already serialized, by the tag the client held ('' for the hydration). */
  deltas: Map<string, { json: string; hydration: boolean }>
}

/** An earlier payload of a scope, kept to compute deltas from. */
export interface PayloadVersion {
  etag: string
  features: ClientFeatureView[]
  segments: ClientSegmentView[]
  bytes: number
}

/**
 * Where `GET /api/client/streaming` connections live: injected on Node (client-api/streaming.ts), absent on
 * Workers, where the route answers 404 and the SDKs poll instead.
 */
export interface StreamHub {
  /** Opens a stream of `scope` for this request (a 429 past the limits), held to its API token (`tokenId`): deleted or expired, it ends the stream. */
  open(c: Context<AppEnv>, scope: ClientScope, who: { token: string; tokenId: number; address: string | undefined; network?: string | undefined }): Promise<Response>
  /** A write through this app may have changed payloads: bring every open stream up to date. */
  changed(): void
  /** Ends every stream and stops the hub's timers (server shutdown). */
  close(): Promise<void>
}

/** Everything the SDK-facing routes keep in memory, one per app (per process on Node, per isolate on Workers). */
export interface SdkState {
  options: SdkOptions
  /** Resolved SDK tokens, with their expiry (never served past it). */
  tokens: Lru<string, ResolvedPrincipal>
  revisions: RevisionMemo
  payloads: Lru<string, PayloadEntry>
  building: Map<string, Promise<PayloadEntry>>
  /** Per API token, the bytes of payloads narrowed by its filters made within the current minute (see service.ts). */
  narrowedBytes: Lru<string, { bytes: number; since: number; making: string[] }>
  defaultEnvironment?: { revisionKey: string; generation: number; name: string | undefined }
  /** What a stale-while-revalidate answer left to check after the response (see refresh.ts). */
  refresh: PendingRefresh
  /** Runs work after the response (waitUntil on Workers). */
  background: RunInBackground
  aggregation: AggregationScheduler
  /** Server-sent event streams (Node). */
  streams?: StreamHub
  /** Forget what a write may have changed: the revision and the resolved tokens (and tell the streams). */
  invalidate(): void
}

export interface PendingRefresh {
  /** The payloads to bring to the current revision, by scope key. */
  scopes: Map<string, { scope: ClientScope; origin: string }>
  /** The admin tokens' default environment too. */
  defaultEnvironment: boolean
  /** When the run under way started (one at a time per process). */
  runningSince?: number
}

export function createSdkState(options: Partial<SdkOptions> & { clock: Clock; background?: RunInBackground; streams?: (sdk: SdkState) => StreamHub; logger?: Logger }): SdkState {
  const { clock, background, streams, logger, ...rest } = options
  const resolved: SdkOptions = { ...DEFAULT_SDK_OPTIONS, ...stripUndefined(rest) }
  const tokens = new Lru<string, ResolvedPrincipal>({ maxEntries: 10_000, ttlMs: resolved.tokenTtlMs, staleMs: resolved.staleWhileRevalidateMs })
  const revisions = new RevisionMemo(resolved.revisionTtlMs, resolved.shareInFlight, Date.now, resolved.staleWhileRevalidateMs)
  const sdk: SdkState = {
    options: resolved,
    tokens,
    revisions,
    payloads: new Lru({ maxEntries: resolved.maxPayloads, maxWeight: resolved.maxPayloadBytes, keepNewest: PAYLOADS_KEPT_OVER_WEIGHT }),
    building: new Map(),
    narrowedBytes: new Lru({ maxEntries: 10_000 }),
    refresh: { scopes: new Map(), defaultEnvironment: false },
    background: background ?? runDetached,
    aggregation: createAggregationScheduler({ clock, background, coalesce: resolved.shareInFlight, clientNewApplicationsPerDay: resolved.clientNewApplicationsPerDay, logger }),
    invalidate() {
      revisions.invalidate()
      tokens.clear()
      sdk.streams?.changed()
    },
  }
  if (streams) sdk.streams = streams(sdk)
  return sdk
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}

declare module 'hono' {
  interface ContextVariableMap {
    /** Caches and background work of the SDK-facing routes (client API, frontend API, metrics). */
    sdk: SdkState
  }
}
