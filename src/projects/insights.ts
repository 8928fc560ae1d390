import { sql } from 'drizzle-orm'
import { apiTokens, clientInstances, clientMetricsHourly, environments, events, featureLifecycles, features, groupRoles, groupUsers, projectMembers, projects, segments, users } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { projectNotFound } from './visibility.js'
import { potentiallyStaleSql, projectHealth, projectOverview, projectStats } from './overview.js'

const DAY_MS = 86_400_000

/** 404 (as Unleash) for a project that does not exist; archived ones answer too. */
export async function requireProject(db: Db, projectId: string) {
  const [row] = await queryRows<{ id: string }>(db, sql`select id from ${projects} where id = ${projectId}`)
  if (!row) throw projectNotFound(projectId)
}

/** GET /api/admin/projects/{projectId}/flag-creators: who created the project's flags (live and archived), by name. */
export async function flagCreators(db: Db, projectId: string) {
  await requireProject(db, projectId)
  return queryRows<{ id: number; name: string }>(
    db,
    sql`select distinct u.id, coalesce(u.name, u.username, u.email, ${'user-'} || u.id) as name
      from ${features} f join ${users} u on u.id = f.created_by_user_id
      where f.project = ${projectId} and u.deleted_at is null order by 2, 1`,
  )
}

/** GET /api/admin/projects/{projectId}/health-report: the deprecated project overview with its flags' staleness counted. */
export async function healthReport(db: Db, projectId: string, principal: string, now: Date) {
  const overview = await projectOverview(db, projectId, principal, now)
  const staleCount = overview.features.filter((f) => f.stale).length
  const potentiallyStaleCount = overview.features.filter((f) => !f.stale && 'potentiallyStale' in f && f.potentiallyStale).length
  return { ...overview, technicalDebt: 100 - overview.health, staleCount, potentiallyStaleCount, activeCount: overview.features.length - staleCount - potentiallyStaleCount }
}

const STAGES = ['initial', 'pre-live', 'live', 'completed', 'archived'] as const
const stageKey = { initial: 'initial', 'pre-live': 'preLive', live: 'live', completed: 'completed', archived: 'archived' } as const

/**
 * GET /api/admin/projects/{projectId}/status: a year of activity per day, what the project holds, its health and
 * technical debt, where its flags are in their lifecycle (with the average days flags spent in each stage they left) and
 * how many are stale. One round trip.
 */
export async function projectStatus(db: Db, projectId: string, now: Date) {
  await requireProject(db, projectId)
  const yearAgo = new Date(now.getTime() - 365 * DAY_MS).toISOString()
  // The stage each flag is in: its latest, `initial` without any; archived flags are `archived`.
  const [activity, [resources], health, stages, [stale]] = await Promise.all([
    queryRows<{ date: string; count: number }>(
      db,
      sql`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as date, count(*)::int as count from ${events}
        where project = ${projectId} and created_at >= ${yearAgo}::timestamptz
          and id > coalesce((select max(d.id) from ${events} d where d.type = 'project-deleted' and d.project = ${projectId}), 0)
        group by 1 order by 1`,
    ),
    queryRows<{ apiTokens: number; members: number; segments: number }>(
      db,
      sql`select (select count(*)::int from ${apiTokens} where user_id is null and ${projectId} = any(projects)) as "apiTokens",
        (select count(*)::int from (select user_id from ${projectMembers} where project_id = ${projectId}
          union select gu.user_id from ${groupRoles} gr join ${groupUsers} gu on gu.group_id = gr.group_id where gr.project_id = ${projectId}) m) as members,
        (select count(*)::int from ${segments} where project = ${projectId}) as segments`,
    ),
    projectHealth(db, projectId, now),
    queryRows<{ stage: string; current: number; averageDays: number | null }>(
      db,
      sql`with flags as (select name, archived_at from ${features} where project = ${projectId}),
        entered as (select l.feature_name, l.stage, l.entered_stage_at,
            lead(l.entered_stage_at) over (partition by l.feature_name order by l.entered_stage_at) as left_at
          from ${featureLifecycles} l join flags on flags.name = l.feature_name),
        current as (select f.name, case when f.archived_at is not null then 'archived'
            else coalesce((select e.stage from entered e where e.feature_name = f.name order by e.entered_stage_at desc limit 1), 'initial') end as stage from flags f)
        select s.stage, (select count(*)::int from current c where c.stage = s.stage) as current,
          (select round((avg(extract(epoch from e.left_at - e.entered_stage_at)) / 86400)::numeric, 1)::float8 from entered e where e.stage = s.stage and e.left_at is not null) as "averageDays"
        from unnest(${sql.raw(`array['${STAGES.join("','")}']`)}) as s(stage)`,
    ),
    queryRows<{ total: number }>(db, sql`select count(*)::int as total from ${features} where project = ${projectId} and archived_at is null and stale`),
  ])
  const lifecycleSummary = Object.fromEntries(STAGES.map((stage) => {
    const row = stages.find((s) => s.stage === stage)
    return [stageKey[stage], { averageDays: row?.averageDays ?? null, currentFlags: row?.current ?? 0 }]
  })) as Record<(typeof stageKey)[keyof typeof stageKey], { averageDays: number | null; currentFlags: number }>
  return {
    activityCountByDate: activity,
    resources: resources ?? { apiTokens: 0, members: 0, segments: 0 },
    health: { current: health },
    technicalDebt: { current: 100 - health },
    lifecycleSummary,
    staleFlags: { total: stale?.total ?? 0 },
  }
}

/**
 * GET /api/admin/projects/{projectId}/dora: each live flag's days from creation to its first enabling in a
 * production-type environment (flags never enabled there are left out), and their average.
 */
export async function projectDora(db: Db, projectId: string) {
  await requireProject(db, projectId)
  const rows = await queryRows<{ name: string; timeToProduction: number }>(
    db,
    sql`select f.name, round((extract(epoch from min(e.created_at) - f.created_at) / 86400)::numeric, 1)::float8 as "timeToProduction"
      from ${features} f
      join ${events} e on e.feature_name = f.name and e.type = 'feature-environment-enabled' and e.created_at >= f.created_at
      join ${environments} env on env.name = e.environment and env.type = 'production'
      where f.project = ${projectId} and f.archived_at is null
      group by f.name, f.created_at order by f.name`,
  )
  const average = rows.length === 0 ? 0 : Math.round((rows.reduce((n, r) => n + r.timeToProduction, 0) / rows.length) * 10) / 10
  return { projectAverage: average, features: rows }
}

export interface ProjectApplicationsQuery {
  query?: string
  offset?: string
  limit?: string
  sortBy?: string
  sortOrder?: string
}

/**
 * GET /api/admin/projects/{projectId}/applications: the applications whose SDKs reported the project's flags, with the
 * environments they reported them in, their instances there, and their SDKs and versions. `query` finds names
 * containing it; sorted by name. Two queries: the page with its total.
 */
export async function projectApplications(db: Db, projectId: string, input: ProjectApplicationsQuery) {
  await requireProject(db, projectId)
  const limit = Math.min(Math.max(Number(input.limit ?? 50) || 50, 1), 1000)
  const offset = Math.max(Number(input.offset ?? 0) || 0, 0)
  const direction = input.sortOrder === 'desc' ? sql`desc` : sql`asc`
  const filter = input.query ? sql`and strpos(lower(m.app_name), lower(${input.query})) > 0` : sql``
  const apps = sql`select m.app_name, array_agg(distinct m.environment order by m.environment) as envs
    from ${clientMetricsHourly} m join ${features} f on f.name = m.feature_name
    where f.project = ${projectId} ${filter} group by m.app_name`
  const [rows, [total]] = await Promise.all([
    queryRows<{ name: string; environments: string[]; instances: string[]; sdks: { name: string; versions: string[] }[] }>(
      db,
      sql`with apps as (${apps})
        select a.app_name as name, a.envs as environments,
          coalesce((select array_agg(distinct i.instance_id order by i.instance_id) from ${clientInstances} i where i.app_name = a.app_name and i.environment = any(a.envs)), '{}') as instances,
          coalesce((select json_agg(json_build_object('name', s.name, 'versions', s.versions) order by s.name) from (
            select split_part(i.sdk_version, ':', 1) as name, array_agg(distinct split_part(i.sdk_version, ':', 2) order by split_part(i.sdk_version, ':', 2)) as versions
            from ${clientInstances} i where i.app_name = a.app_name and i.environment = any(a.envs) and i.sdk_version like '%:%' group by 1) s), '[]') as sdks
        from apps a order by a.app_name ${direction} limit ${limit} offset ${offset}`,
    ),
    queryRows<{ n: number }>(db, sql`select count(*)::int as n from (${apps}) a`),
  ])
  return { total: total?.n ?? 0, applications: rows }
}

/**
 * GET /api/admin/projects/{projectId}/insights (Unleash's projectInsightsSchema): the overview's windowed statistics,
 * health and technical debt with the live flags counted as stale, potentially stale and active, DORA lead time, live
 * flags per type, and members now (directly or through a group) with how many were added in the last 30 days.
 */
export async function projectInsights(db: Db, projectId: string, now: Date) {
  await requireProject(db, projectId)
  const [stats, leadTime, counts, featureTypeCounts, [members]] = await Promise.all([
    projectStats(db, projectId, now),
    projectDora(db, projectId),
    flagHealth(db, projectId, now),
    queryRows<{ type: string; count: number }>(db, sql`select type, count(*)::int as count from ${features} where project = ${projectId} and archived_at is null group by type order by type`),
    queryRows<{ current: number }>(
      db,
      sql`select count(*)::int as current from (select user_id from ${projectMembers} where project_id = ${projectId}
        union select gu.user_id from ${groupRoles} gr join ${groupUsers} gu on gu.group_id = gr.group_id join ${users} u on u.id = gu.user_id and u.deleted_at is null where gr.project_id = ${projectId}) m`,
    ),
  ])
  const health = { rating: counts.health, activeCount: counts.active, potentiallyStaleCount: counts.potentiallyStale, staleCount: counts.stale }
  return {
    stats,
    health,
    technicalDebt: { ...health, rating: 100 - counts.health },
    leadTime,
    featureTypeCounts,
    members: { currentMembers: members?.current ?? 0, change: stats.projectMembersAddedCurrentWindow },
  }
}

/** A project's live flags counted by staleness, with its health (the overview's formula). */
export async function flagHealth(db: Db, projectId: string, now: Date) {
  const [row] = await queryRows<{ total: number; stale: number; potentiallyStale: number }>(
    db,
    sql`select count(*)::int as total, (count(*) filter (where ${features.stale}))::int as stale, (count(*) filter (where ${potentiallyStaleSql(now)}))::int as "potentiallyStale"
      from ${features} where ${features.project} = ${projectId} and ${features.archivedAt} is null`,
  )
  const { total = 0, stale = 0, potentiallyStale = 0 } = row ?? {}
  const health = total === 0 ? 100 : Math.max(0, Math.min(100, Math.round(100 - (stale / total) * 100 - (potentiallyStale / total) * 100)))
  return { total, stale, potentiallyStale, active: total - stale - potentiallyStale, health }
}
