import type { Db } from '../db.js'
import { buildOnce } from './in-flight.js'
import { queryView, readClientFeatures, type ClientScope } from './payload.js'
import { isNewer } from './revision.js'
import type { PayloadEntry, SdkState } from './state.js'

const encoder = new TextEncoder()

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)))
  let hex = ''
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0')
  return hex
}

/** One cache key per scope; the revision is checked against the entry, not part of the key, so old revisions do not pile up. */
export function scopeKey(scope: ClientScope): string {
  return JSON.stringify([scope.environment, scope.projects, scope.namePrefix ?? '', scope.tags ?? [], scope.inlineSegmentConstraints])
}

/**
 * The payload for a scope at the current revision: from memory when nothing changed since it was
 * built, otherwise read and serialized once (concurrent requests for the same scope share the build
 * where the runtime allows it).
 */
export async function clientPayload(sdk: SdkState, db: Db, scope: ClientScope): Promise<PayloadEntry> {
  const key = scopeKey(scope)
  const revision = await sdk.revisions.current(db)
  const cached = sdk.payloads.get(key)
  if (cached && cached.revision.key === revision.key) return cached
  return buildOnce(sdk.building, `${key}@${revision.key}`, sdk.options.shareInFlight, () => build(sdk, db, scope, key))
}

async function build(sdk: SdkState, db: Db, scope: ClientScope, key: string): Promise<PayloadEntry> {
  const generation = sdk.revisions.generation
  const read = await readClientFeatures(db, scope)
  const query = queryView(scope)
  // The ETag is a hash of what SDKs evaluate (features, segments, query), so a change elsewhere (another
  // project or environment) rebuilds this payload once but still answers unchanged pollers with 304.
  // SDKs that get segment constraints inlined get no segments list, as from Unleash.
  const content = JSON.stringify({ version: 2, features: read.features, ...(scope.inlineSegmentConstraints ? {} : { segments: read.segments }), query })
  const [contentHash, queryHash] = await Promise.all([sha256Hex(content), sha256Hex(JSON.stringify(query))])
  const etag = `"${contentHash.slice(0, 32)}"`
  const meta = { revisionId: read.revision.id, etag, queryHash: queryHash.slice(0, 16) }
  const body = encoder.encode(`${content.slice(0, -1)},"meta":${JSON.stringify(meta)}}`)
  const entry: PayloadEntry = {
    revision: read.revision,
    etag,
    body,
    features: read.features,
    segments: read.segments,
    byName: new Map(read.features.map((f) => [f.name, f])),
  }
  sdk.revisions.observe(read.revision, generation)
  const current = sdk.payloads.get(key)
  if (!current || isNewer(read.revision, current.revision)) {
    // The parsed features and the prepared ruleset weigh a few times the JSON.
    sdk.payloads.set(key, entry, body.byteLength * 4)
  }
  return entry
}

/** Whether an `If-None-Match` header names this ETag (a list, `*`, and weak forms included). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false
  const bare = etag.replace(/^W\//, '')
  return header.split(',').some((candidate) => {
    const value = candidate.trim()
    return value === '*' || value.replace(/^W\//, '') === bare
  })
}
