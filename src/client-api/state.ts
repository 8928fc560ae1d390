import type { RunInBackground } from '../http/background.js'
import type { Clock } from '../core/clock.js'
import type { Principal } from '../core/principal.js'
import type { PreparedRuleset } from '../evaluation/index.js'
import { createAggregationScheduler, type AggregationScheduler } from '../metrics/scheduler.js'
import { Lru } from './lru.js'
import { RevisionMemo, type Revision } from './revision.js'
import type { ClientFeatureView, ClientSegmentView } from './payload.js'

export interface SdkOptions {
  /** How long a read revision is trusted before the next request reads it again (writes through this process reset it at once). */
  revisionTtlMs: number
  /** How long a resolved API token is remembered (writes through this process, such as deleting a token, clear it at once). */
  tokenTtlMs: number
  /** Bounds of the serialized payload cache. */
  maxPayloads: number
  maxPayloadBytes: number
  /** Allowed origins of browser calls to `/api/frontend` (`*` for any). */
  frontendCorsOrigins: string[]
  /**
   * Whether requests may wait on work another request started (one payload build or revision read for
   * many concurrent requests). On Node yes; on Workers no, since a promise that belongs to another
   * request may never settle there.
   */
  shareInFlight: boolean
}

export const DEFAULT_SDK_OPTIONS: SdkOptions = {
  revisionTtlMs: 1_000,
  tokenTtlMs: 10_000,
  maxPayloads: 256,
  maxPayloadBytes: 64 * 1024 * 1024,
  frontendCorsOrigins: ['*'],
  shareInFlight: true,
}

/** Work run after the response: detached on Node, handed to `waitUntil` on Workers. */

/** The frontend API's view of a payload: prepared once, evaluated for every request. */
export interface FrontendRuleset {
  ruleset: PreparedRuleset
  /** Flag names in payload order with their impressionData. */
  flags: { name: string; impressionData: boolean }[]
}

export interface PayloadEntry {
  revision: Revision
  etag: string
  /** The serialized `GET /api/client/features` body. */
  body: Uint8Array
  features: ClientFeatureView[]
  segments: ClientSegmentView[]
  byName: Map<string, ClientFeatureView>
  frontend?: FrontendRuleset
}

/** Everything the SDK-facing routes keep in memory, one per app (per process on Node, per isolate on Workers). */
export interface SdkState {
  options: SdkOptions
  tokens: Lru<string, Principal>
  revisions: RevisionMemo
  payloads: Lru<string, PayloadEntry>
  building: Map<string, Promise<PayloadEntry>>
  defaultEnvironment?: { revisionKey: string; name: string | undefined }
  aggregation: AggregationScheduler
  /** Forget what a write may have changed: the revision and the resolved tokens. */
  invalidate(): void
}

export function createSdkState(options: Partial<SdkOptions> & { clock: Clock; background?: RunInBackground }): SdkState {
  const { clock, background, ...rest } = options
  const resolved: SdkOptions = { ...DEFAULT_SDK_OPTIONS, ...stripUndefined(rest) }
  const tokens = new Lru<string, Principal>({ maxEntries: 10_000, ttlMs: resolved.tokenTtlMs })
  const revisions = new RevisionMemo(resolved.revisionTtlMs, resolved.shareInFlight)
  return {
    options: resolved,
    tokens,
    revisions,
    payloads: new Lru({ maxEntries: resolved.maxPayloads, maxWeight: resolved.maxPayloadBytes }),
    building: new Map(),
    aggregation: createAggregationScheduler({ clock, background, coalesce: resolved.shareInFlight }),
    invalidate() {
      revisions.invalidate()
      tokens.clear()
    },
  }
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
