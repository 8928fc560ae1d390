import type { ClientFeatureView, ClientSegmentView } from './payload.js'
import type { PayloadEntry, PayloadVersion } from './state.js'

/** Unleash's delta events, as `GET /api/client/delta` and `/api/client/streaming` send them (`eventId`: the newest event id of the payload). */
export type DeltaEvent =
  | { eventId: number; type: 'hydration'; features: ClientFeatureView[]; segments: ClientSegmentView[] }
  | { eventId: number; type: 'feature-updated'; feature: ClientFeatureView }
  | { eventId: number; type: 'feature-removed'; featureName: string; project: string }
  | { eventId: number; type: 'segment-updated'; segment: ClientSegmentView }
  | { eventId: number; type: 'segment-removed'; segmentId: number }

/** How many earlier payloads of a scope are kept to answer deltas from (a client further behind is hydrated). */
export const HISTORY = 8

/**
 * The payload a client holds is named by its ETag (the hash of its content, see load.ts), never by an event id:
 * event ids do not commit in order (revision.ts), so "the changes since event N" could miss a late commit, while two
 * payloads with the same hash are the same payload. These are the tags a header names, bare (no `W/`, no quotes).
 */
export function heldRevisions(header: string | undefined): string[] {
  if (!header) return []
  return header.split(',').map((tag) => tag.trim().replace(/^W\//, '').replace(/^"|"$/g, '')).filter(Boolean)
}

export const bareTag = (etag: string) => etag.replace(/^"|"$/g, '')

/** A payload as history keeps it: its content only (no link to older ones, so history stays bounded). */
export function versionOf(entry: PayloadEntry): PayloadVersion {
  return { etag: entry.etag, features: entry.features, segments: entry.segments, bytes: entry.body.byteLength }
}

/** Each item serialized, by its identity, once per payload (payloads never change once built). */
const serialized = new WeakMap<object, Map<string | number, string>>()
function byValue<T extends object>(items: T[], id: (item: T) => string | number): Map<string | number, string> {
  let map = serialized.get(items)
  if (!map) {
    map = new Map(items.map((item) => [id(item), JSON.stringify(item)]))
    serialized.set(items, map)
  }
  return map
}
const featureName = (f: ClientFeatureView) => f.name
const segmentId = (s: ClientSegmentView) => s.id

/**
 * The events that bring a client holding the payload tagged `held` to `to`: flags and segments compared by value,
 * segments updated first and removed last so that no flag ever names a segment the client lacks. Undefined when
 * `held` is neither `to` nor one of the payloads kept before it (the client is then hydrated).
 */
export function deltaEvents(to: PayloadEntry, held: string): DeltaEvent[] | undefined {
  const eventId = to.revision.id
  if (held === bareTag(to.etag)) return []
  const from = to.history.find((version) => bareTag(version.etag) === held)
  if (!from) return undefined
  const events: DeltaEvent[] = []
  const oldSegments = byValue(from.segments, segmentId)
  const newSegments = byValue(to.segments, segmentId)
  for (const segment of to.segments) if (oldSegments.get(segment.id) !== newSegments.get(segment.id)) events.push({ eventId, type: 'segment-updated', segment })
  const oldFeatures = byValue(from.features, featureName)
  const newFeatures = byValue(to.features, featureName)
  for (const feature of to.features) if (oldFeatures.get(feature.name) !== newFeatures.get(feature.name)) events.push({ eventId, type: 'feature-updated', feature })
  for (const feature of from.features) if (!newFeatures.has(feature.name)) events.push({ eventId, type: 'feature-removed', featureName: feature.name, project: feature.project })
  for (const segment of from.segments) if (!newSegments.has(segment.id)) events.push({ eventId, type: 'segment-removed', segmentId: segment.id })
  return events
}

/**
 * The body (`{"events":[…]}`) that brings a client holding `held` to `to`, and whether it is a hydration: the
 * delta when `to` knows what the client holds, else the whole payload. Serialized once per payload and held tag.
 */
export function deltaBody(to: PayloadEntry, held: string | undefined): { json: string; hydration: boolean } {
  const key = held ?? ''
  const cached = to.deltas.get(key)
  if (cached) return cached
  const events = held === undefined ? undefined : deltaEvents(to, held)
  const body = events
    ? { json: JSON.stringify({ events }), hydration: false }
    : { json: JSON.stringify({ events: [{ eventId: to.revision.id, type: 'hydration', features: to.features, segments: to.segments }] }), hydration: true }
  // The unknown tags clients send all get the hydration: keep it under '' rather than under each of them.
  to.deltas.set(events ? key : '', body)
  return body
}
