import { and, asc, eq, isNull, sql } from 'drizzle-orm'
import { environments, events, favoriteFeatures, featureTypes, favoriteProjects, featureEnvironments, features, groupRoles, groupUsers, projectEnvironments, projectMembers, projects } from '../../schema/index.js'
import { buildOnce } from '../client-api/in-flight.js'
import { Lru } from '../core/lru.js'
import { revisionColumn, revisionOf } from '../client-api/revision.js'
import { batch, queryRows, statement, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { loadFeatures } from '../flags/read.js'

const DAY_MS = 86_400_000
const WINDOW_DAYS = 30

/** SQL for "this flag is potentially stale at `now`": not marked stale, and older than its type's stored lifetime (feature_types). */
export function potentiallyStaleSql(now: Date) {
  return sql`(not ${features.stale} and coalesce(${features.createdAt} + (select ft.lifetime_days from ${featureTypes} ft where ft.id = ${features.type}) * interval '1 day' < ${now}, false))`
}

/** Project health 0..100: 100 minus the share of stale and of potentially stale flags among the live ones. */
export async function projectHealth(db: Db, projectId: string, now: Date): Promise<number> {
  const [row] = await db
    .select({
      total: sql<number>`count(*)`.mapWith(Number),
      stale: sql<number>`count(*) filter (where ${features.stale})`.mapWith(Number),
      potentiallyStale: sql<number>`count(*) filter (where ${potentiallyStaleSql(now)})`.mapWith(Number),
    })
    .from(features)
    .where(and(eq(features.project, projectId), isNull(features.archivedAt)))
  if (!row || row.total === 0) return 100
  return Math.max(0, Math.min(100, Math.round(100 - (row.stale / row.total) * 100 - (row.potentiallyStale / row.total) * 100)))
}

/** The windowed statistics of the project overview, in one query: current window = the last 30 days, past = the 30 before. */
export async function projectStats(db: Db, projectId: string, now: Date) {
  const current = new Date(now.getTime() - WINDOW_DAYS * DAY_MS)
  const past = new Date(now.getTime() - 2 * WINDOW_DAYS * DAY_MS)
  // The current window ends now, inclusive; the past window ends where the current one starts.
  const inWindow = (column: unknown, from: Date, to: Date) => (to === now ? sql`${column} >= ${from} and ${column} <= ${to}` : sql`${column} >= ${from} and ${column} < ${to}`)
  // The project's activity is its own, not that of a deleted project whose id it has again (nor a deleted flag's whose name it reuses).
  const thisLife = sql`${events.id} > coalesce((select max(d.id) from ${events} d where d.type = 'project-deleted' and d.project = ${projectId}), 0)`
  // The enablings in production of the current window first (materialized: read by type and time on events_type_idx).
  // Planned from the flags instead, Postgres looked up each flag's events by name AND by type (a BitmapAnd reading every
  // enabling of the window once per flag): 5.6 s for a project of 10,000 flags on PGlite, whose tables are never
  // ANALYZEd (no autovacuum), so the planner takes every table for small. An enabling after a flag's creation in the
  // window is itself in the window.
  const [row = {}] = await queryRows<Record<string, string | number | null>>(db, sql`
    with enablings as materialized (
      select e.feature_name, e.created_at from ${events} e
      join ${environments} env on env.name = e.environment and env.type = 'production'
      where e.type = 'feature-environment-enabled' and e.created_at >= ${current}
    )
    select
      (select count(*) from ${features} where ${features.project} = ${projectId} and ${inWindow(features.createdAt, current, now)}) as created_current,
      (select count(*) from ${features} where ${features.project} = ${projectId} and ${inWindow(features.createdAt, past, current)}) as created_past,
      (select count(*) from ${features} where ${features.project} = ${projectId} and ${inWindow(features.archivedAt, current, now)}) as archived_current,
      (select count(*) from ${features} where ${features.project} = ${projectId} and ${inWindow(features.archivedAt, past, current)}) as archived_past,
      (select count(*) from ${events} where ${events.project} = ${projectId} and ${thisLife} and ${inWindow(events.createdAt, current, now)}) as activity_current,
      (select count(*) from ${events} where ${events.project} = ${projectId} and ${thisLife} and ${inWindow(events.createdAt, past, current)}) as activity_past,
      (select count(*) from ${projectMembers} where ${projectMembers.projectId} = ${projectId} and ${inWindow(projectMembers.createdAt, current, now)}) as members_added,
      (select coalesce(avg(extract(epoch from first_enabled - created_at)) / 86400, 0) from (
        select f.created_at, min(en.created_at) as first_enabled
        from enablings en
        join ${features} f on f.name = en.feature_name and en.created_at >= f.created_at
        where f.project = ${projectId} and f.created_at >= ${current} and f.created_at <= ${now}
        group by f.name, f.created_at
      ) as first_enablings) as avg_time_to_prod
  `)
  const n = (key: string) => Number(row[key] ?? 0)
  return {
    avgTimeToProdCurrentWindow: Math.round(n('avg_time_to_prod') * 10) / 10,
    createdCurrentWindow: n('created_current'),
    createdPastWindow: n('created_past'),
    archivedCurrentWindow: n('archived_current'),
    archivedPastWindow: n('archived_past'),
    projectActivityCurrentWindow: n('activity_current'),
    projectActivityPastWindow: n('activity_past'),
    projectMembersAddedCurrentWindow: n('members_added'),
  }
}

// The placeholders are read through subqueries: planned without their values, the plan does not depend on
// them, so Postgres keeps one plan for the prepared statement instead of planning every call.
const project = sql`(select ${sql.placeholder('project')}::text)`
const viewer = sql`(select ${sql.placeholder('principal')}::text)`
/** What a cached overview does not cover (see projectOverviewJson): the revision, the flags' lastSeenAt, the members, and the viewer's favorites. */
const overviewMarkers = statement<{ revision: [string, string, number]; last_seen: string; members: string; favorites: string[]; favorite: boolean }>('flagpost_project_overview', () => sql`
    select ${revisionColumn} as revision,
      (select count(fe.last_seen_at)::text || '/' || coalesce(sum(extract(epoch from fe.last_seen_at)), 0)::text
        from ${featureEnvironments} fe join ${features} f on f.name = fe.feature_name where f.project = ${project}) as last_seen,
      (select count(*)::text || '/' || coalesce(max(m.created_at)::text, '') from ${projectMembers} m where m.project_id = ${project})
        || '|' || (select count(*)::text || '/' || coalesce(max(gu.joined_at)::text, '') || '/' || coalesce(max(gr.created_at)::text, '')
          from ${groupRoles} gr join ${groupUsers} gu on gu.group_id = gr.group_id where gr.project_id = ${project}) as members,
      coalesce((select json_agg(ff.feature_name) from ${favoriteFeatures} ff join ${features} f on f.name = ff.feature_name
        where ff.principal = ${viewer} and f.project = ${project}), '[]') as favorites,
      exists (select 1 from ${favoriteProjects} fp where fp.principal = ${viewer} and fp.project = ${project}) as favorite`)

/**
 * The project overview (GET /api/admin/projects/{projectId}) as JSON. Building it is heavy (every flag in full, the windowed statistics), so it is
 * built once per project and configuration revision and kept serialized in `cache`; a request then
 * costs one small query (the revision and what the revision does not cover) and a string join.
 *
 * The key covers everything the overview shows: the revision (every change to a project, flag,
 * strategy, tag, favorite or member writes an event), the flags' lastSeenAt (metrics move it without
 * an event), the members, directly or through groups (also when written behind the API's back) and the time in
 * STATS_BUCKET_MS steps, since the statistics windows, health and potentiallyStale follow the clock:
 * those may lag by up to that long. Favorites are the viewer's own, so they are filled in per request.
 */
export async function projectOverviewJson(db: Db, cache: OverviewCache, projectId: string, principal: string, now: Date): Promise<string | Uint8Array> {
  const [fresh] = await overviewMarkers(db, { project: projectId, principal })
  const key = [projectId, revisionOf(fresh?.revision).key, fresh?.last_seen, fresh?.members, Math.floor(now.getTime() / STATS_BUCKET_MS)].join('\n')
  let entry = cache.entries.get(key)
  if (!entry) {
    const built = await buildOnce(cache.building, key, cache.shareInFlight, () => buildOverview(db, projectId, now))
    cache.entries.set(key, built, built.weight)
    entry = built
  }
  const favorites = new Set(fresh?.favorites ?? [])
  const favorite = fresh?.favorite === true
  // Most viewers have no favorites in the project: their answer is the same bytes, made once.
  if (favorites.size === 0 && !favorite) return (entry.plain ??= new TextEncoder().encode(assemble(entry, favorites, false)))
  return assemble(entry, favorites, favorite)
}

function assemble(entry: CachedOverview, favorites: Set<string>, favorite: boolean): string {
  const flags = entry.flags.map((f) => `{"favorite":${favorites.has(f.name)},${f.json.slice(1)}`).join(',')
  return `${entry.head.slice(0, -1)},"features":[${flags}],"favorite":${favorite}}`
}

/** Serialized overviews by project and revision, one set per app. */
export interface OverviewCache {
  entries: Lru<string, CachedOverview>
  building: Map<string, Promise<CachedOverview>>
  /** Overviews without flags (`…/overview`), without the viewer's favorite, where the home keeps them (see projectSummaryJson). */
  summaries?: { entries: Lru<string, string>; building: Map<string, Promise<string>> }
  /** Whether concurrent requests may wait on one build (Node), or each builds its own (Workers). */
  shareInFlight: boolean
}

/** The overview without the viewer's favorites: the rest as JSON, and each flag's JSON without `favorite`. */
interface CachedOverview {
  head: string
  flags: { name: string; json: string }[]
  weight: number
  /** The whole answer for a viewer without favorites in the project, once asked for. */
  plain?: Uint8Array
}

export function createOverviewCache(shareInFlight: boolean, options: { summaries: boolean } = { summaries: true }): OverviewCache {
  return {
    entries: new Lru({ maxEntries: 64, maxWeight: 64 * 1024 * 1024 }),
    building: new Map(),
    ...(options.summaries ? { summaries: { entries: new Lru({ maxEntries: 256, maxWeight: 4 * 1024 * 1024 }), building: new Map() } } : {}),
    shareInFlight,
  }
}

const STATS_BUCKET_MS = 10_000

async function buildOverview(db: Db, projectId: string, now: Date): Promise<CachedOverview> {
  const { features: flags, favorite: _, ...rest } = await projectOverview(db, projectId, '', now)
  const head = JSON.stringify(rest)
  const serialized = flags.map(({ favorite: _, ...flag }) => ({ name: flag.name, json: JSON.stringify(flag) }))
  // Weight: the strings (two bytes a character at most) and the encoded answer.
  return { head, flags: serialized, weight: 3 * (head.length + serialized.reduce((n, f) => n + f.json.length, 0)) }
}

/**
 * What both overviews read of a project, each one statement for one snapshot: the project (archived or not), its
 * environments, members, the viewer's favorite, health and statistics.
 */
const projectHead = (projectId: string, principal: string, now: Date) =>
  [
    (q: Db) => q.select().from(projects).where(eq(projects.id, projectId)),
    (q: Db) =>
      q
        .select({ environment: projectEnvironments.environment, changeRequestsEnabled: projectEnvironments.changeRequestsEnabled, defaultStrategy: projectEnvironments.defaultStrategy })
        .from(projectEnvironments)
        .innerJoin(environments, eq(environments.name, projectEnvironments.environment))
        .where(eq(projectEnvironments.projectId, projectId))
        .orderBy(asc(environments.sortOrder), asc(environments.name)),
    // Its members: users with a role there, directly or through a group.
    (q: Db) =>
      queryRows<{ n: number }>(
        q,
        sql`select count(*)::int as n from (select user_id from ${projectMembers} where project_id = ${projectId}
          union select gu.user_id from ${groupRoles} gr join ${groupUsers} gu on gu.group_id = gr.group_id where gr.project_id = ${projectId}) m`,
      ),
    (q: Db) => q.select({ project: favoriteProjects.project }).from(favoriteProjects).where(and(eq(favoriteProjects.project, projectId), eq(favoriteProjects.principal, principal))),
    (q: Db) => projectHealth(q, projectId, now),
    (q: Db) => projectStats(q, projectId, now),
  ] as const

type Answers<T extends readonly unknown[]> = { -readonly [K in keyof T]: T[K] extends (q: Db) => PromiseLike<infer R> ? R : never }
type HeadRows = Answers<ReturnType<typeof projectHead>>

/** The fields both overviews share, from what projectHead read; undefined for an unknown project. */
function headOf([[project], envs, members, favorite, health, stats]: HeadRows) {
  if (!project) return undefined
  return {
    project,
    head: {
      stats,
      version: 1,
      name: project.name,
      description: project.description,
      defaultStickiness: project.defaultStickiness,
      mode: project.mode as 'open' | 'protected' | 'private',
      featureLimit: project.featureLimit,
      featureNaming: { pattern: project.featureNamingPattern, example: project.featureNamingExample, description: project.featureNamingDescription },
      members: members[0]?.n ?? 0,
      health,
      environments: envs.map((e) => ({
        environment: e.environment,
        changeRequestsEnabled: e.changeRequestsEnabled,
        ...(e.defaultStrategy ? { defaultStrategy: e.defaultStrategy as Record<string, unknown> } : {}),
      })),
    },
    favorite: favorite.length > 0,
  }
}

/** The deprecated project overview: a live project with every live flag, its environments, health and statistics, read in one snapshot (one batch). */
export async function projectOverview(db: Db, projectId: string, principal: string, now: Date) {
  const [project, envs, members, favorite, health, stats, flags] = await batch(db, [...projectHead(projectId, principal, now), (q) => loadFeatures(q, projectId, { principal, now })], {
    isolationLevel: 'repeatable read',
    accessMode: 'read only',
  })
  const read = headOf([project, envs, members, favorite, health, stats])
  if (!read || read.project.archivedAt) throw notFound(`Could not find project ${projectId}`)
  return {
    ...read.head,
    features: flags,
    updatedAt: read.project.updatedAt?.toISOString() ?? null,
    createdAt: read.project.createdAt.toISOString(),
    favorite: read.favorite,
  }
}

/**
 * GET /api/admin/projects/{projectId}/overview as JSON. Where the home keeps them (`cache.summaries`), it is kept
 * serialized under the deprecated overview's key (the statistics over the events are most of its work), the viewer's
 * favorite filled in per request; a request then costs the one small statement of the markers. Elsewhere (Workers, where
 * that statement would be a round trip of its own) it is read afresh.
 */
export async function projectSummaryJson(db: Db, cache: OverviewCache, projectId: string, principal: string, now: Date): Promise<string> {
  const summaries = cache.summaries
  if (!summaries) return JSON.stringify(await projectSummary(db, projectId, principal, now))
  const [fresh] = await overviewMarkers(db, { project: projectId, principal })
  const key = [projectId, revisionOf(fresh?.revision).key, fresh?.last_seen, fresh?.members, Math.floor(now.getTime() / STATS_BUCKET_MS)].join('\n')
  let json = summaries.entries.get(key)
  if (json === undefined) {
    json = await buildOnce(summaries.building, key, cache.shareInFlight, async () => {
      const { favorite: _, ...rest } = await projectSummary(db, projectId, '', now)
      return JSON.stringify(rest)
    })
    summaries.entries.set(key, json, 2 * json.length)
  }
  return `${json.slice(0, -1)},"favorite":${fresh?.favorite === true}}`
}

type OnboardingStatus = { status: 'onboarding-started' | 'onboarded' } | { status: 'first-flag-created'; feature: string }

/**
 * The project overview without its flags (GET /api/admin/projects/{projectId}/overview), archived projects too (with
 * `archivedAt`), read in one snapshot. Its flags are the flag search's.
 */
export async function projectSummary(db: Db, projectId: string, principal: string, now: Date) {
  const [project, envs, members, favorite, health, stats, typeCounts, [onboarding]] = await batch(
    db,
    [
      ...projectHead(projectId, principal, now),
      (q) =>
        q
          .select({ type: features.type, count: sql<number>`count(*)::int` })
          .from(features)
          .where(and(eq(features.project, projectId), isNull(features.archivedAt)))
          .groupBy(features.type)
          .orderBy(asc(features.type)),
      // As Unleash: onboarded once an SDK has seen one of its flags, else its first flag named once it has one.
      (q) =>
        queryRows<{ seen: boolean; first_flag: string | null }>(
          q,
          sql`select exists (select 1 from ${featureEnvironments} fe join ${features} f on f.name = fe.feature_name where f.project = ${projectId} and fe.last_seen_at is not null) as seen,
            (select f.name from ${features} f where f.project = ${projectId} order by f.created_at, f.name limit 1) as first_flag`,
        ),
    ],
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  )
  const read = headOf([project, envs, members, favorite, health, stats])
  if (!read) throw notFound(`Could not find project ${projectId}`)
  const onboardingStatus: OnboardingStatus = onboarding?.seen
    ? { status: 'onboarded' }
    : onboarding?.first_flag
      ? { status: 'first-flag-created', feature: onboarding.first_flag }
      : { status: 'onboarding-started' }
  return {
    ...read.head,
    technicalDebt: 100 - read.head.health,
    featureTypeCounts: typeCounts,
    updatedAt: read.project.updatedAt?.toISOString() ?? null,
    archivedAt: read.project.archivedAt?.toISOString() ?? null,
    createdAt: read.project.createdAt.toISOString(),
    favorite: read.favorite,
    onboardingStatus,
  }
}

declare module 'hono' {
  interface ContextVariableMap {
    /** Serialized project overviews by revision. */
    overviews: OverviewCache
  }
}
