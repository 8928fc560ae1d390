import { sql } from 'drizzle-orm'
import { clientApplications, clientInstances, clientMetricsHourly, featureStrategies, features } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { isOutdatedSdk } from './outdated-sdks.js'

/** Projects the caller may not read, as SQL that keeps a flag's project out of them. */
const visible = (hidden: readonly string[]) => (hidden.length === 0 ? sql`true` : sql`not (f.project = any(${sql.param([...hidden])}::text[]))`)
const appNotFound = (appName: string) => notFound(`Could not find application ${appName}`)

/** GET /api/admin/metrics/applications/{appName}: the application, its usage in the projects the caller may read. */
export async function getApplication(db: Db, appName: string, hidden: readonly string[]) {
  const [[app], usage] = await Promise.all([
    queryRows<typeof clientApplications.$inferSelect & { strategies: string[] | null }>(
      db,
      sql`select app_name as "appName", sdk_version as "sdkVersion", strategies, description, url, color, icon from ${clientApplications} where app_name = ${appName}`,
    ),
    queryRows<{ project: string; environments: string[] }>(
      db,
      sql`select f.project, array_agg(distinct m.environment order by m.environment) as environments from ${clientMetricsHourly} m join ${features} f on f.name = m.feature_name
        where m.app_name = ${appName} and ${visible(hidden)} group by f.project order by f.project`,
    ),
  ])
  if (!app) throw appNotFound(appName)
  const optional = (key: 'sdkVersion' | 'description' | 'url' | 'color' | 'icon') => (app[key] ? { [key]: app[key] } : {})
  return { appName: app.appName, ...optional('sdkVersion'), strategies: app.strategies ?? [], ...optional('description'), ...(isWebUrl(app.url) ? { url: app.url } : {}), ...optional('color'), ...optional('icon'), usage }
}

export interface NewApplication {
  strategies?: string[]
  url?: string
  color?: string
  icon?: string
}

/**
 * POST /api/admin/metrics/applications/{appName}: creates the application or sets its details (those given), with
 * `application-created`, in one statement.
 */
export async function saveApplication(db: Db, caller: Author, appName: string, input: NewApplication) {
  const { actor, now } = caller
  const at = now.toISOString()
  const strategies = input.strategies === undefined ? null : JSON.stringify(input.strategies)
  const upsert = sql`insert into ${clientApplications} (app_name, created_at, created_by, seen_at, strategies, url, color, icon)
    values (${appName}, ${at}::timestamptz, ${actor.createdBy}, ${at}::timestamptz, ${strategies}::jsonb, ${input.url ?? null}, ${input.color ?? null}, ${input.icon ?? null})
    on conflict (app_name) do update set strategies = coalesce(excluded.strategies, ${clientApplications}.strategies), url = coalesce(excluded.url, ${clientApplications}.url),
      color = coalesce(excluded.color, ${clientApplications}.color), icon = coalesce(excluded.icon, ${clientApplications}.icon)
    returning app_name`
  await recordEvents(db, actor, now, [{ type: 'application-created', data: { appName, ...input } }], { alongside: [upsert] })
}

/** DELETE /api/admin/metrics/applications/{appName}: the application and its instances go (no event, as Unleash); nothing to do for an unknown one. */
export async function deleteApplication(db: Db, appName: string) {
  await queryRows(db, sql`delete from ${clientApplications} where app_name = ${appName}`)
}

/**
 * GET /api/admin/metrics/applications/{appName}/overview: the projects (the caller may read) whose flags it reported and
 * how many flags, per environment its instances, SDKs (frontend or backend by name) and last report, and its issues:
 * outdated SDKs, and strategies the reported flags use that the application did not register.
 */
export async function applicationOverview(db: Db, appName: string, hidden: readonly string[]) {
  const [[app], reported, envs, [missing]] = await Promise.all([
    queryRows<{ appName: string }>(db, sql`select app_name as "appName" from ${clientApplications} where app_name = ${appName}`),
    queryRows<{ project: string; flags: number }>(
      db,
      sql`select f.project, count(distinct f.name)::int as flags from ${clientMetricsHourly} m join ${features} f on f.name = m.feature_name
        where m.app_name = ${appName} and ${visible(hidden)} group by f.project order by f.project`,
    ),
    queryRows<{ name: string; instanceCount: number; sdks: string[]; lastSeen: string | null }>(
      db,
      sql`select environment as name, count(*)::int as "instanceCount", coalesce(array_agg(distinct sdk_version order by sdk_version) filter (where sdk_version is not null), '{}') as sdks,
        max(last_seen) as "lastSeen" from ${clientInstances} where app_name = ${appName} group by environment order by environment`,
    ),
    queryRows<{ strategies: string[] }>(
      db,
      sql`select coalesce(array_agg(distinct s.strategy_name order by s.strategy_name), '{}') as strategies from ${featureStrategies} s
        join ${features} f on f.name = s.feature_name
        where s.feature_name in (select feature_name from ${clientMetricsHourly} where app_name = ${appName}) and ${visible(hidden)}
          and not coalesce((select a.strategies from ${clientApplications} a where a.app_name = ${appName}) ? s.strategy_name, false)
          and (select a.strategies from ${clientApplications} a where a.app_name = ${appName}) is not null`,
    ),
  ])
  if (!app) throw appNotFound(appName)
  const isFrontend = (sdk: string) => /frontend|proxy-client|react|vue|svelte|ios|android|flutter|javascript/i.test(sdk.split(':')[0] ?? '')
  return {
    projects: reported.map((r) => r.project),
    featureCount: reported.reduce((n, r) => n + r.flags, 0),
    environments: envs.map((e) => ({
      name: e.name,
      instanceCount: e.instanceCount,
      sdks: e.sdks,
      frontendSdks: e.sdks.filter(isFrontend),
      backendSdks: e.sdks.filter((s) => !isFrontend(s)),
      lastSeen: e.lastSeen === null ? null : new Date(e.lastSeen).toISOString(),
      issues: { missingFeatures: [] as string[], outdatedSdks: e.sdks.filter(isOutdatedSdk) },
    })),
    issues: { missingStrategies: missing?.strategies ?? [] },
  }
}

/**
 * GET /api/admin/metrics/instances/{appName}/environment/{environment}: the application's instances there, latest first. Their
 * client addresses only to a caller who may read every project whose flags the application reported (`hidden`: the others).
 */
export async function applicationInstances(db: Db, appName: string, environment: string, hidden: readonly string[]) {
  const inHidden =
    hidden.length === 0
      ? sql`false`
      : sql`exists (select from ${clientMetricsHourly} m join ${features} f on f.name = m.feature_name where m.app_name = ${appName} and not ${visible(hidden)})`
  const [[app], instances] = await Promise.all([
    queryRows<{ appName: string; private: boolean }>(db, sql`select app_name as "appName", ${inHidden} as private from ${clientApplications} where app_name = ${appName}`),
    queryRows<{ instanceId: string; sdkVersion: string | null; clientIp: string | null; lastSeen: string }>(
      db,
      sql`select instance_id as "instanceId", sdk_version as "sdkVersion", client_ip as "clientIp", last_seen as "lastSeen" from ${clientInstances}
        where app_name = ${appName} and environment = ${environment} order by last_seen desc, instance_id limit 1000`,
    ),
  ])
  if (!app) throw appNotFound(appName)
  return { instances: instances.map((i) => ({ ...i, clientIp: app.private ? null : i.clientIp, lastSeen: new Date(i.lastSeen).toISOString() })) }
}

/** Whether a stored link may be shown as one: an http(s) URL. A URL stored before the check (`javascript:`) is not answered. */
export function isWebUrl(value: unknown): value is string {
  if (typeof value !== 'string' || !/^https?:\/\//i.test(value)) return false
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}
