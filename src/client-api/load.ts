import type { Db } from '../db.js'
import { loggable } from '../core/errors.js'
import { isNarrowed, queryView, readClientFeatures, scopeKey, type ClientFeaturesRead, type ClientFeatureView, type ClientScope, type ClientSegmentView } from './payload.js'
import { isNewer, type Revision } from './revision.js'
import { sha256Hex } from './sha256.js'
import { HISTORY, versionOf } from './delta.js'
import type { PayloadEntry, SdkState, StoredPayload } from './state.js'

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * The payload of a scope at `revision`: from the location's shared cache when another process stored it
 * there (one cache read), otherwise read from the database, serialized, and stored in the shared cache
 * before it is answered (a local write, next to the load's reads; the next cold process finds it). Either
 * way it is remembered in this process.
 */
export async function loadPayload(sdk: SdkState, db: Db, scope: ClientScope, key: string, revision: Revision, origin: string, charge?: ChargeMade): Promise<PayloadEntry> {
  const generation = sdk.revisions.generation
  const shared = sdk.options.sharedPayloads
  if (shared) {
    const stored = await shared.get(origin, key, revision).catch((error: unknown) => void console.error('reading a shared SDK payload failed:', loggable(error)))
    const entry = stored && entryFromStored(stored, generation)
    if (entry) {
      remember(sdk, key, entry, isDerived(scope))
      return entry
    }
  }
  // A payload held at an older revision is brought up to date free of charge (a write moved it on); one this process
  // did not hold, of a scope the caller's filters narrowed, is charged to the caller by the bytes made.
  const charged = charge && isNarrowed(scope) && !sdk.payloads.get(key) ? charge : undefined
  // A namePrefix or a project filter narrows the payload of the token's scope: that base is loaded (or kept) once and
  // each narrowing is a filter of it in memory, so new filter values never read and prepare the rows again.
  const entry = isDerived(scope) ? await derive(sdk, db, scope, key, revision, origin, generation, charge) : await build(sdk, db, scope, key, generation)
  charged?.(entry.body.byteLength * (isDerived(scope) ? 1 : DATABASE_BUILD_WEIGHT))
  await shared?.put(origin, key, entry).catch((error: unknown) => console.error('storing a shared SDK payload failed:', loggable(error)))
  return entry
}

/** Takes the bytes a request made for a narrowed scope (service.ts charges them to its API token). */
export type ChargeMade = (bytes: number) => void

/**
 * How many times its bytes a payload read from the database counts against the charge, next to one filtered from a
 * payload in memory (10–20 ns a byte): the read and its preparation take a few times as long.
 */
export const DATABASE_BUILD_WEIGHT = 4

/** Whether the scope's payload is a filter of another's in memory: a namePrefix, or a project filter narrowing the token's projects. */
const isDerived = (scope: ClientScope) => Boolean(scope.namePrefix) || scope.within !== undefined

async function derive(sdk: SdkState, db: Db, scope: ClientScope, key: string, revision: Revision, origin: string, generation: number, charge: ChargeMade | undefined): Promise<PayloadEntry> {
  const prefix = scope.namePrefix ?? ''
  const baseScope: ClientScope = { ...scope, namePrefix: undefined, within: undefined, projects: scope.within ?? scope.projects }
  const baseKey = scopeKey(baseScope)
  let base = sdk.payloads.get(baseKey)
  // The base is the token's own scope (charged only when tags narrow it).
  if (!base || isNewer(revision, base.revision)) base = await loadPayload(sdk, db, baseScope, baseKey, revision, origin, charge)
  const projects = scope.within !== undefined && scope.projects !== '*' ? new Set(scope.projects) : undefined
  const features = base.features.filter((feature) => feature.name.startsWith(prefix) && (!projects || projects.has(feature.project)))
  const used = new Set(features.flatMap((feature) => feature.strategies.flatMap((strategy) => strategy.segments ?? [])))
  return serialize(sdk, scope, key, { revision: base.revision, features, segments: base.segments.filter((segment) => used.has(segment.id)) }, generation)
}

async function build(sdk: SdkState, db: Db, scope: ClientScope, key: string, generation: number): Promise<PayloadEntry> {
  sdk.options.onBuild?.(key)
  return serialize(sdk, scope, key, await readClientFeatures(db, scope), generation)
}

async function serialize(sdk: SdkState, scope: ClientScope, key: string, read: ClientFeaturesRead, generation: number): Promise<PayloadEntry> {
  const query = queryView(scope)
  // The ETag is a hash of what SDKs evaluate (features, segments, query), so a change elsewhere (another
  // project or environment) rebuilds this payload once but still answers unchanged pollers with 304.
  // SDKs that get segment constraints inlined get no segments list, as from Unleash.
  const content = JSON.stringify({ version: 2, features: read.features, ...(scope.inlineSegmentConstraints ? {} : { segments: read.segments }), query })
  const [contentHash, queryHash] = await Promise.all([sha256Hex(content), sha256Hex(JSON.stringify(query))])
  const etag = `"${contentHash.slice(0, 32)}"`
  const meta = { revisionId: read.revision.id, etag, queryHash: queryHash.slice(0, 16) }
  const body = encoder.encode(`${content.slice(0, -1)},"meta":${JSON.stringify(meta)}}`)
  const entry = entryOf({ revision: read.revision, etag, body }, read.features, read.segments, generation)
  sdk.revisions.observe(read.revision, generation)
  remember(sdk, key, entry, isDerived(scope))
  return entry
}

/**
 * A payload rebuilt from its serialized body (as the shared cache holds it): the same features and
 * segments the build had, so the frontend API's ruleset prepared from it answers the same. Undefined for
 * a body that is not a payload.
 */
export function entryFromStored(stored: StoredPayload, generation: number): PayloadEntry | undefined {
  let parsed: { features?: unknown; segments?: unknown }
  try {
    parsed = JSON.parse(decoder.decode(stored.body)) as typeof parsed
  } catch {
    return undefined
  }
  if (!Array.isArray(parsed.features) || (parsed.segments !== undefined && !Array.isArray(parsed.segments))) return undefined
  // Payloads with segment constraints inlined have no segments list, and were built with none.
  return entryOf(stored, parsed.features as ClientFeatureView[], (parsed.segments ?? []) as ClientSegmentView[], generation)
}

function entryOf(stored: StoredPayload, features: ClientFeatureView[], segments: ClientSegmentView[], generation: number): PayloadEntry {
  return { revision: stored.revision, etag: stored.etag, body: stored.body, generation, features, segments, byName: new Map(features.map((f) => [f.name, f])), history: [], deltas: new Map() }
}

/**
 * Keeps the payload unless a newer one is already held (a slow load must not replace a newer one), with the
 * payloads held before it (deltas are computed from them).
 */
function remember(sdk: SdkState, key: string, entry: PayloadEntry, derived: boolean): void {
  const current = sdk.payloads.get(key)
  if (current && isNewer(current.revision, entry.revision)) return
  if (current) {
    const earlier = current.etag === entry.etag ? current.history : [versionOf(current), ...current.history]
    entry.history = earlier.filter((version) => version.etag !== entry.etag).slice(0, HISTORY)
  }
  // The parsed features and the prepared ruleset weigh a few times the JSON; an earlier payload, its parsed features.
  // A narrowed payload (namePrefix, project filter) is a filter of its base's (held too): derived, so narrowings evict only each other, within the bound.
  // A derived payload's features are its base's (shared objects): it weighs its body and its lists.
  const own = derived ? entry.body.byteLength + (entry.features.length + entry.segments.length) * 16 : entry.body.byteLength * 4
  sdk.payloads.set(key, entry, own + entry.history.reduce((sum, version) => sum + version.bytes * 2, 0), derived)
}
