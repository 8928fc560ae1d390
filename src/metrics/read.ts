import { and, asc, count, desc, eq, gte, inArray, sql, type SQL } from 'drizzle-orm'
import { clientApplications, clientImpactMetrics, clientMetricsHourly, clientMetricsVariantsHourly, features } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import type { ApplicationsQuery } from './schemas.js'
import { visibleProjectCondition } from '../projects/visibility.js'
import { isWebUrl } from './applications.js'

const HOUR_MS = 3_600_000
const MAX_PAGE = 1000
const startOfHour = (at: Date) => new Date(at.getTime() - (at.getTime() % HOUR_MS))

const SORT_COLUMNS = { appName: clientApplications.appName, createdAt: clientApplications.createdAt, seenAt: clientApplications.seenAt } as const

/**
 * A page of applications (two queries: the page with its total, then the usage of the page's applications).
 * `hidden`: private projects the caller may not read, left out of the usage.
 */
export async function listApplications(db: Db, query: ApplicationsQuery, hidden: readonly string[]) {
  const limit = Math.min(Number(query.limit ?? MAX_PAGE), MAX_PAGE)
  const offset = Number(query.offset ?? 0)
  const filter: SQL | undefined = query.query ? sql`strpos(lower(${clientApplications.appName}), lower(${query.query})) > 0` : undefined
  const column = SORT_COLUMNS[query.sortBy ?? 'appName']
  const direction = query.sortOrder === 'desc' ? desc : asc
  const [rows, [total]] = await Promise.all([
    db.select().from(clientApplications).where(filter).orderBy(direction(column), asc(clientApplications.appName)).limit(limit).offset(offset),
    db.select({ n: count() }).from(clientApplications).where(filter),
  ])
  const names = rows.map((r) => r.appName)
  const usageRows =
    names.length === 0
      ? []
      : await db
          .select({
            appName: clientMetricsHourly.appName,
            project: features.project,
            environments: sql<string[]>`array_agg(distinct ${clientMetricsHourly.environment} order by ${clientMetricsHourly.environment})`,
          })
          .from(clientMetricsHourly)
          .innerJoin(features, eq(features.name, clientMetricsHourly.featureName))
          .where(and(inArray(clientMetricsHourly.appName, names), visibleProjectCondition(features.project, hidden)))
          .groupBy(clientMetricsHourly.appName, features.project)
          .orderBy(asc(clientMetricsHourly.appName), asc(features.project))
  return {
    total: total?.n ?? 0,
    applications: rows.map((row) => ({
      appName: row.appName,
      ...(row.sdkVersion ? { sdkVersion: row.sdkVersion } : {}),
      strategies: (row.strategies as string[] | null) ?? [],
      ...(row.description ? { description: row.description } : {}),
      ...(isWebUrl(row.url) ? { url: row.url } : {}),
      ...(row.color ? { color: row.color } : {}),
      ...(row.icon ? { icon: row.icon } : {}),
      createdAt: row.createdAt.toISOString(),
      seenAt: row.seenAt.toISOString(),
      usage: usageRows.filter((u) => u.appName === row.appName).map((u) => ({ project: u.project, environments: u.environments })),
    })),
  }
}

async function requireFeature(db: Db, name: string) {
  const [row] = await db.select({ name: features.name }).from(features).where(eq(features.name, name))
  if (!row) throw notFound(`Could not find feature flag ${name}`)
}

// Spelled out: drizzle leaves columns of a single-table select unqualified, which inside this subquery would name v's own.
const variantsOf = sql<Record<string, number> | null>`(
  select jsonb_object_agg(v.variant, v.count) from client_metrics_variants_hourly v
  where v.feature_name = client_metrics_hourly.feature_name and v.app_name = client_metrics_hourly.app_name
    and v.environment = client_metrics_hourly.environment and v.timestamp = client_metrics_hourly.timestamp)`

/** Up to this many hours back the rows are hourly; further back (Unleash's daily range) one row per UTC day. */
export const HOURLY_RANGE = 48
const DAY_MS = 24 * HOUR_MS
const utcDay = sql.raw(`date_trunc('day', timestamp at time zone 'UTC') at time zone 'UTC'`)

/**
 * The daily rows of a flag from the UTC day `hoursBack` hours ago on, oldest first: the days the pruning rolled up
 * (`client_metrics_daily`) plus the hours still kept hourly, added up per day.
 */
async function featureMetricsDaily(db: Db, featureName: string, hoursBack: number, now: Date) {
  const since = new Date(now.getTime() - hoursBack * HOUR_MS)
  const from = new Date(since.getTime() - (since.getTime() % DAY_MS))
  const [rows, variantRows] = await Promise.all([
    queryRows<{ app_name: string; environment: string; date: Date | string; yes: string; no: string }>(
      db,
      sql`select app_name, environment, date, sum(yes) as yes, sum(no) as no from (
        select app_name, environment, date, yes, no from client_metrics_daily where feature_name = ${featureName} and date >= ${from}
        union all
        select app_name, environment, ${utcDay}, yes, no from client_metrics_hourly where feature_name = ${featureName} and timestamp >= ${from}
      ) r group by 1, 2, 3 order by 3, 2, 1`,
    ),
    queryRows<{ app_name: string; environment: string; date: Date | string; variant: string; count: string }>(
      db,
      sql`select app_name, environment, date, variant, sum(count) as count from (
        select app_name, environment, date, variant, count from client_metrics_variants_daily where feature_name = ${featureName} and date >= ${from}
        union all
        select app_name, environment, ${utcDay}, variant, count from client_metrics_variants_hourly where feature_name = ${featureName} and timestamp >= ${from}
      ) r group by 1, 2, 3, 4`,
    ),
  ])
  const iso = (d: Date | string) => new Date(d).toISOString()
  const key = (r: { app_name: string; environment: string; date: Date | string }) => `${r.environment}\u0000${r.app_name}\u0000${iso(r.date)}`
  const variants = new Map<string, Record<string, number>>()
  for (const v of variantRows) {
    const k = key(v)
    variants.set(k, { ...variants.get(k), [v.variant]: Number(v.count) })
  }
  return rows.map((r) => ({ featureName, appName: r.app_name, environment: r.environment, timestamp: iso(r.date), yes: Number(r.yes), no: Number(r.no), variants: variants.get(key(r)) ?? {} }))
}

/**
 * The rows of a flag from `hoursBack` hours ago on, oldest first: hourly (from the hour, rounded down) up to 48 hours
 * back, daily beyond (from the day, rounded down), as Unleash answers.
 */
export async function featureMetricsRaw(db: Db, featureName: string, hoursBack: number, now: Date) {
  await requireFeature(db, featureName)
  if (hoursBack > HOURLY_RANGE) return { version: 1, maturity: 'stable', data: await featureMetricsDaily(db, featureName, hoursBack, now) }
  const since = startOfHour(new Date(now.getTime() - hoursBack * HOUR_MS))
  const rows = await db
    .select({ row: clientMetricsHourly, variants: variantsOf })
    .from(clientMetricsHourly)
    .where(and(eq(clientMetricsHourly.featureName, featureName), gte(clientMetricsHourly.timestamp, since)))
    .orderBy(asc(clientMetricsHourly.timestamp), asc(clientMetricsHourly.environment), asc(clientMetricsHourly.appName))
  return {
    version: 1,
    maturity: 'stable',
    data: rows.map(({ row, variants }) => ({
      featureName: row.featureName,
      appName: row.appName,
      environment: row.environment,
      timestamp: row.timestamp.toISOString(),
      yes: Number(row.yes),
      no: Number(row.no),
      variants: numbers(variants),
    })),
  }
}

/**
 * Unleash's usage summary of a flag: per environment, the counts of the last hour (this hour and the
 * one before) and of the whole retention period, and the applications that reported it.
 */
export async function featureUsage(db: Db, featureName: string, now: Date) {
  await requireFeature(db, featureName)
  const since = startOfHour(new Date(now.getTime() - HOUR_MS))
  const byFeature = eq(clientMetricsHourly.featureName, featureName)
  const [lastHour, lastHourVariants, total, apps] = await Promise.all([
    db
      .select({
        environment: clientMetricsHourly.environment,
        timestamp: sql<Date>`max(${clientMetricsHourly.timestamp})`.mapWith(clientMetricsHourly.timestamp),
        yes: sql<number>`sum(${clientMetricsHourly.yes})`.mapWith(Number),
        no: sql<number>`sum(${clientMetricsHourly.no})`.mapWith(Number),
      })
      .from(clientMetricsHourly)
      .where(and(byFeature, gte(clientMetricsHourly.timestamp, since)))
      .groupBy(clientMetricsHourly.environment)
      .orderBy(asc(clientMetricsHourly.environment)),
    db
      .select({
        environment: clientMetricsVariantsHourly.environment,
        variant: clientMetricsVariantsHourly.variant,
        count: sql<number>`sum(${clientMetricsVariantsHourly.count})`.mapWith(Number),
      })
      .from(clientMetricsVariantsHourly)
      .where(and(eq(clientMetricsVariantsHourly.featureName, featureName), gte(clientMetricsVariantsHourly.timestamp, since)))
      .groupBy(clientMetricsVariantsHourly.environment, clientMetricsVariantsHourly.variant),
    db
      .select({
        environment: clientMetricsHourly.environment,
        yes: sql<number>`sum(${clientMetricsHourly.yes})`.mapWith(Number),
        no: sql<number>`sum(${clientMetricsHourly.no})`.mapWith(Number),
      })
      .from(clientMetricsHourly)
      .where(byFeature)
      .groupBy(clientMetricsHourly.environment)
      .orderBy(asc(clientMetricsHourly.environment)),
    db.selectDistinct({ appName: clientMetricsHourly.appName }).from(clientMetricsHourly).where(byFeature).orderBy(asc(clientMetricsHourly.appName)),
  ])
  return {
    version: 1,
    maturity: 'stable',
    featureName,
    lastHourUsage: lastHour.map((row) => ({
      featureName,
      environment: row.environment,
      timestamp: row.timestamp.toISOString(),
      yes: row.yes,
      no: row.no,
      variants: Object.fromEntries(lastHourVariants.filter((v) => v.environment === row.environment).map((v) => [v.variant, v.count])),
    })),
    totalUsage: total,
    seenApplications: apps.map((a) => a.appName),
  }
}

function numbers(record: Record<string, number | string> | null): Record<string, number> {
  return Object.fromEntries(Object.entries(record ?? {}).map(([k, v]) => [k, Number(v)]))
}

type Bucket = { le: number | '+Inf'; count: number }
const boundOf = (b: Bucket) => (b.le === '+Inf' ? Infinity : b.le)

/**
 * An application's impact metrics, one entry per series (environment, name, labels) in that order; 404 for an unknown
 * application. `hidden`: private projects the caller may not read: series labelled with a flag of one are left out.
 */
export async function applicationImpactMetrics(db: Db, appName: string, hidden: readonly string[]) {
  const ofHiddenFlag =
    hidden.length === 0
      ? undefined
      : sql`not exists (select 1 from ${features} f where f.name = ${clientImpactMetrics.labels}->>'featureName' and f.project = any(${sql.param([...hidden])}::text[]))`
  const [[app], rows] = await Promise.all([
    db.select({ appName: clientApplications.appName }).from(clientApplications).where(eq(clientApplications.appName, appName)),
    db
      .select()
      .from(clientImpactMetrics)
      .where(and(eq(clientImpactMetrics.appName, appName), ofHiddenFlag))
      .orderBy(asc(clientImpactMetrics.environment), asc(clientImpactMetrics.name), asc(clientImpactMetrics.labelsKey)),
  ])
  if (!app) throw notFound(`Could not find application ${appName}`)
  return {
    appName,
    impactMetrics: rows.map((row) => ({
      name: row.name,
      help: row.help,
      type: row.type as 'counter' | 'gauge' | 'histogram',
      environment: row.environment,
      labels: row.labels as Record<string, string | number>,
      ...(row.value !== null ? { value: row.value } : {}),
      ...(row.count !== null ? { count: row.count } : {}),
      ...(row.sum !== null ? { sum: row.sum } : {}),
      ...(row.buckets !== null ? { buckets: [...(row.buckets as Bucket[])].sort((a, b) => boundOf(a) - boundOf(b)) } : {}),
      updatedAt: row.updatedAt.toISOString(),
    })),
  }
}
