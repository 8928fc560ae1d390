import { sql } from 'drizzle-orm'
import { featureEnvironments, features } from '../../schema/index.js'
import { buildOnce } from '../client-api/in-flight.js'
import { Lru } from '../core/lru.js'
import { revisionColumn, revisionOf } from '../client-api/revision.js'
import { statement, type Db } from '../db.js'
import { searchFeatures } from './search.js'
import type { FeatureSearchQuery } from './search-schemas.js'

/*
 * The flag search of one project (`project=IS:<id>`, what the console's flags page reads, a thousand flags at a time) is
 * kept serialized per app, as the project overview is (projects/overview.ts): gathering a thousand flags as JSON is the
 * heavy part of the request, and the answer changes only with what the key covers. The key: the caller (their
 * favorites, the projects hidden from them), the query, the revision (every change to a flag, its environments,
 * strategies, tags, lifecycle, dependencies and favorites, and to a project's visibility, writes an event), the
 * project's flags' lastSeenAt (SDK metrics move it without an event), and the time in TIME_STEP_MS steps (a lifetime
 * change, which writes no event, lets the potentially-stale job clear marks). A request then costs one small statement
 * and a copy of bytes; a miss costs that statement more than the search alone, so the home decides (AppDeps'
 * cacheProjectReads).
 */

const TIME_STEP_MS = 10_000
const encoder = new TextEncoder()

/** Serialized search answers by key, one set per app. */
export interface SearchCache {
  entries: Lru<string, Uint8Array>
  building: Map<string, Promise<Uint8Array>>
  /** Whether concurrent requests may wait on one build (Node), or each builds its own (Workers). */
  shareInFlight: boolean
}

export function createSearchCache(shareInFlight: boolean): SearchCache {
  return { entries: new Lru({ maxEntries: 64, maxWeight: 64 * 1024 * 1024 }), building: new Map(), shareInFlight }
}

// The placeholder is read through a subquery so that the prepared statement keeps one plan (see overview.ts).
const project = sql`(select ${sql.placeholder('project')}::text)`
/** What a cached answer does not cover by itself: the revision, and the project's flags' lastSeenAt. */
const searchMarkers = statement<{ revision: [string, string, number]; last_seen: string }>('flagpost_project_search', () => sql`
    select ${revisionColumn} as revision,
      (select count(fe.last_seen_at)::text || '/' || coalesce(sum(extract(epoch from fe.last_seen_at)), 0)::text
        from ${featureEnvironments} fe join ${features} f on f.name = fe.feature_name where f.project = ${project}) as last_seen`)

/** The one project a search is limited to (`project=IS:<id>`); undefined for any other search. */
function singleProject(q: FeatureSearchQuery): string | undefined {
  const match = /^IS:([^,]+)$/.exec(q.project ?? '')
  return match?.[1]?.trim() || undefined
}

/**
 * GET /api/admin/search/features as JSON: a search limited to one project from `cache` (when the home keeps one),
 * any other as searchFeatures answers it.
 */
export async function searchFeaturesJson(db: Db, cache: SearchCache | undefined, q: FeatureSearchQuery, viewer: { principal: string; hidden: readonly string[] }, now: Date): Promise<string | Uint8Array> {
  const projectId = singleProject(q)
  if (!cache || projectId === undefined) return JSON.stringify(await searchFeatures(db, q, viewer))
  const [markers] = await searchMarkers(db, { project: projectId })
  const query = Object.entries(q).sort(([a], [b]) => (a < b ? -1 : 1))
  const key = JSON.stringify([viewer.principal, viewer.hidden, query, revisionOf(markers?.revision).key, markers?.last_seen, Math.floor(now.getTime() / TIME_STEP_MS)])
  const cached = cache.entries.get(key)
  if (cached) return cached
  const built = await buildOnce(cache.building, key, cache.shareInFlight, async () => encoder.encode(JSON.stringify(await searchFeatures(db, q, viewer))))
  cache.entries.set(key, built, built.byteLength)
  return built
}

declare module 'hono' {
  interface ContextVariableMap {
    /** Serialized answers of project-scoped flag searches, when the home keeps them. */
    flagSearches: SearchCache | undefined
  }
}
