import type { Db } from '../db.js'
import { loggable } from '../core/errors.js'
import { queryView, readClientFeatures, scopeKey, type ClientFeaturesRead, type ClientFeatureView, type ClientScope, type ClientSegmentView } from './payload.js'
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
export async function loadPayload(sdk: SdkState, db: Db, scope: ClientScope, key: string, revision: Revision, origin: string): Promise<PayloadEntry> {
  const generation = sdk.revisions.generation
  const shared = sdk.options.sharedPayloads
  if (shared) {
    const stored = await shared.get(origin, key, revision).catch((error: unknown) => void console.error('reading a shared SDK payload failed:', loggable(error)))
    const entry = stored && entryFromStored(stored, generation)
    if (entry) {
      remember(sdk, key, entry, Boolean(scope.namePrefix))
      return entry
    }
  }
  // A namePrefix narrows the payload of its scope without one: that base is loaded (or kept) once and each prefix is a
  // filter of it in memory, so new namePrefix values never read and prepare the rows again.
  const entry = scope.namePrefix ? await derive(sdk, db, scope, key, revision, origin, generation) : await build(sdk, db, scope, key, generation)
  await shared?.put(origin, key, entry).catch((error: unknown) => console.error('storing a shared SDK payload failed:', loggable(error)))
  return entry
}

async function derive(sdk: SdkState, db: Db, scope: ClientScope, key: string, revision: Revision, origin: string, generation: number): Promise<PayloadEntry> {
  const prefix = scope.namePrefix ?? ''
  const baseScope: ClientScope = { ...scope, namePrefix: undefined }
  const baseKey = scopeKey(baseScope)
  let base = sdk.payloads.get(baseKey)
  if (!base || isNewer(revision, base.revision)) base = await loadPayload(sdk, db, baseScope, baseKey, revision, origin)
  const features = base.features.filter((feature) => feature.name.startsWith(prefix))
  const used = new Set(features.flatMap((feature) => feature.strategies.flatMap((strategy) => strategy.segments ?? [])))
  const derived = base.derivedPrefixes ?? (base.derivedPrefixes = new Set())
  const again = derived.has(prefix)
  if (!again && derived.size < MAX_DERIVED_PREFIXES) derived.add(prefix)
  const entry = await serialize(sdk, scope, key, { revision: base.revision, features, segments: base.segments.filter((segment) => used.has(segment.id)) }, generation)
  if (again) entry.rederived = true
  return entry
}

/** namePrefix values remembered per base payload (what tells a prefix derived again): a few hundred bytes each at most. */
const MAX_DERIVED_PREFIXES = 10_000

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
  remember(sdk, key, entry, Boolean(scope.namePrefix))
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
  // A namePrefix's payload is a filter of its base's (held too): derived, so prefixes evict only each other, within the bound.
  // A derived payload's features are its base's (shared objects): it weighs its body and its lists.
  const own = derived ? entry.body.byteLength + (entry.features.length + entry.segments.length) * 16 : entry.body.byteLength * 4
  sdk.payloads.set(key, entry, own + entry.history.reduce((sum, version) => sum + version.bytes * 2, 0), derived)
}
