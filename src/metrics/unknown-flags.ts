import { sql } from 'drizzle-orm'
import { events, features, unknownFlags } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { UNKNOWN_FLAGS_RETENTION_HOURS } from './aggregate.js'

/** The most names GET /api/admin/metrics/unknown-flags answers (Unleash's maximum). */
const MAX_NAMES = 1000
const iso = (column: string) => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`)

interface UnknownFlag {
  name: string
  lastSeenAt: string
  lastEventAt: string | null
  reports: { appName: string; environments: { environment: string; seenAt: string }[] }[]
}

/**
 * GET /api/admin/metrics/unknown-flags: the names SDKs reported in the last day that no flag has (one made since drops
 * out), newest first, each with the applications and environments that reported it and the time of the latest event
 * naming it (a deleted flag's) in a project the caller may read (`hidden`: those it may not), since that project id was
 * last deleted (a project made again under a private one's id does not show the old one's history). One statement.
 */
export async function listUnknownFlags(db: Db, now: Date, hidden: readonly string[]): Promise<{ unknownFlags: UnknownFlag[] }> {
  const since = new Date(now.getTime() - UNKNOWN_FLAGS_RETENTION_HOURS * 3_600_000).toISOString()
  const rows = await queryRows<UnknownFlag>(
    db,
    sql`with recent as (
        select u.name, u.app_name, u.environment, u.seen_at from ${unknownFlags} u
        where u.seen_at >= ${since}::timestamptz and not exists (select 1 from ${features} f where f.name = u.name)
      ), names as (
        select name, max(seen_at) as last_seen from recent group by name order by 2 desc, 1 limit ${MAX_NAMES}
      )
      select n.name, ${iso('n.last_seen')} as "lastSeenAt",
        (select ${iso('max(e.created_at)')} from ${events} e
          where e.feature_name = n.name and (e.project is null or e.project <> all(${sql.param([...hidden])}::text[]))
            and e.id > coalesce((select max(d.id) from ${events} d where d.type = 'project-deleted' and d.project = e.project), 0)) as "lastEventAt",
        (select json_agg(json_build_object('appName', a.app_name, 'environments', a.environments) order by a.app_name) from (
          select r.app_name, json_agg(json_build_object('environment', r.environment, 'seenAt', ${iso('r.seen_at')}) order by r.environment) as environments
          from recent r where r.name = n.name group by r.app_name) a) as reports
      from names n order by n.last_seen desc, n.name`,
  )
  return { unknownFlags: rows }
}
