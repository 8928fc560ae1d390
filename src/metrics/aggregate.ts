import { and, asc, count, eq, gt, gte, inArray, lt, sql, type SQL } from 'drizzle-orm'
import { clientApplications, clientImpactMetrics, clientMetricsInbox, unknownFlags } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import type { Clock } from '../core/clock.js'
import { recordEvents } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import { SYSTEM_USER_ID, type Actor } from '../core/principal.js'
import type { ImpactMetric } from './schemas.js'
import { DEFAULT_LOGGER, errorFields, type Logger } from '../http/request-log.js'

/** Hourly rows older than this are deleted (Unleash keeps 48 hours of hourly metrics too). */
export const RETENTION_HOURS = 48
const BATCH = 200
const MAX_BATCHES = 100
const HOUR_MS = 3_600_000

type InboxRow = typeof clientMetricsInbox.$inferSelect

interface RegisterPayload {
  sdkVersion: string | null
  strategies: string[]
}

interface MetricsPayload {
  sdkVersion: string | null
  bucket: { start: string; stop: string; toggles: Record<string, { yes: number; no: number; variants?: Record<string, number> | null }> } | null
  impactMetrics?: ImpactMetric[]
}

/** Impact metric series (name and labels) kept per application and environment; reports of further new series are dropped. */
export const MAX_IMPACT_SERIES = 1000
/** Impact metric series nobody reported for this long are deleted. */
export const IMPACT_RETENTION_HOURS = 7 * 24

/**
 * Folds the reports SDKs left in the inbox into applications, instances, hourly per-flag counts and
 * the flags' lastSeenAt, batch by batch, each batch one transaction that also deletes its inbox rows
 * (so a report is counted exactly once, even with several processes aggregating: SKIP LOCKED). A new
 * application writes `application-created` in that transaction. Flags that do not exist, or are not in
 * the reporting token's projects, are ignored. Returns how many reports it folded.
 */
export async function aggregatePendingMetrics(db: Db, clock: Clock, batchSize = BATCH, clientQuota = CLIENT_NEW_APPLICATIONS_PER_DAY, logger: Logger = DEFAULT_LOGGER): Promise<number> {
  let total = 0
  for (let i = 0; i < MAX_BATCHES; i++) {
    let folded: number
    try {
      folded = await db.transaction((tx) => aggregateBatch(tx, clock(), batchSize, undefined, clientQuota))
    } catch (error) {
      // One bad report must not hold back every report behind it: go one by one, and set aside the one that fails alone.
      logger.log('warn', 'metrics aggregation: a batch failed, folding its reports one by one', { job: 'metrics_aggregation', ...errorFields(error) })
      folded = await aggregateOneByOne(db, clock, batchSize, clientQuota, logger)
    }
    total += folded
    if (folded < batchSize) break
  }
  if (total > 0) {
    logger.log('debug', 'metrics aggregation', { job: 'metrics_aggregation', reports: total })
    await pruneMetrics(db, clock())
  }
  return total
}

async function aggregateOneByOne(db: Db, clock: Clock, count: number, clientQuota: number, logger: Logger): Promise<number> {
  let folded = 0
  let after = 0
  for (let i = 0; i < count; i++) {
    const [next] = await db.select({ id: clientMetricsInbox.id }).from(clientMetricsInbox).where(gt(clientMetricsInbox.id, after)).orderBy(asc(clientMetricsInbox.id)).limit(1)
    if (!next) break
    after = next.id
    try {
      folded += await db.transaction((tx) => aggregateBatch(tx, clock(), 1, next.id, clientQuota))
    } catch (error) {
      logger.log('error', 'metrics aggregation: dropping a report that cannot be folded', { job: 'metrics_aggregation', reportId: next.id, ...errorFields(error) })
      await db.delete(clientMetricsInbox).where(eq(clientMetricsInbox.id, next.id))
      folded++
    }
  }
  return folded
}

/** Daily rows older than this are deleted: Unleash's longest `hoursBack` (91 days). */
export const DAILY_RETENTION_DAYS = 91

/**
 * Hourly rows older than the retention move into their UTC day (`client_metrics_daily` and its variants): one statement
 * per table deletes them and adds them to the day, so an hour is counted in one table or the other, never both or none.
 */
export async function pruneMetrics(db: Db, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - RETENTION_HOURS * HOUR_MS)
  const day = sql.raw(`date_trunc('day', timestamp at time zone 'UTC') at time zone 'UTC'`)
  await db.execute(sql`with gone as (delete from client_metrics_hourly where timestamp < ${cutoff} returning *)
    insert into client_metrics_daily (feature_name, app_name, environment, date, yes, no)
    select feature_name, app_name, environment, ${day}, sum(yes), sum(no) from gone group by 1, 2, 3, 4
    on conflict (feature_name, app_name, environment, date) do update set yes = client_metrics_daily.yes + excluded.yes, no = client_metrics_daily.no + excluded.no`)
  await db.execute(sql`with gone as (delete from client_metrics_variants_hourly where timestamp < ${cutoff} returning *)
    insert into client_metrics_variants_daily (feature_name, app_name, environment, date, variant, count)
    select feature_name, app_name, environment, ${day}, variant, sum(count) from gone group by 1, 2, 3, 4, 5
    on conflict (feature_name, app_name, environment, date, variant) do update set count = client_metrics_variants_daily.count + excluded.count`)
  const dailyCutoff = new Date(now.getTime() - DAILY_RETENTION_DAYS * 24 * HOUR_MS)
  await db.execute(sql`delete from client_metrics_daily where date < ${dailyCutoff}`)
  await db.execute(sql`delete from client_metrics_variants_daily where date < ${dailyCutoff}`)
  await db.delete(clientImpactMetrics).where(lt(clientImpactMetrics.updatedAt, new Date(now.getTime() - IMPACT_RETENTION_HOURS * HOUR_MS)))
  await db.delete(unknownFlags).where(lt(unknownFlags.seenAt, new Date(now.getTime() - UNKNOWN_FLAGS_RETENTION_HOURS * HOUR_MS)))
}

/** Unknown flags kept per application and environment; reports of further new names are dropped until some age out. */
export const MAX_UNKNOWN_FLAGS = 100
/** Unknown flags nobody reported for this long are deleted (GET /api/admin/metrics/unknown-flags shows a day, as Unleash). */
export const UNKNOWN_FLAGS_RETENTION_HOURS = 24

/**
 * Records the names the batch's metrics reported that no flag has (live or archived), per application and environment
 * with when last reported: known rows move their time on, new ones are taken in name order while the application
 * and environment hold fewer than MAX_UNKNOWN_FLAGS.
 */
async function foldUnknownFlags(tx: Db, rows: InboxRow[]) {
  const reported = new Map<string, { app_name: string; environment: string; name: string; seen_at: string }>()
  for (const row of rows) {
    if (row.kind !== 'metrics') continue
    const bucket = (row.payload as MetricsPayload).bucket
    if (!bucket) continue
    const seen = row.receivedAt.toISOString()
    for (const name of Object.keys(bucket.toggles)) {
      const key = `${name}\u0000${row.appName}\u0000${row.environment}`
      const last = reported.get(key)
      if (!last) reported.set(key, { app_name: row.appName, environment: row.environment, name, seen_at: seen })
      else if (seen > last.seen_at) last.seen_at = seen
    }
  }
  if (reported.size === 0) return
  await tx.execute(
    boundedInsertPerApplication({
      table: 'unknown_flags',
      rows: [...reported.values()],
      key: ['name'],
      rest: ['seen_at'],
      types: sql`name text, seen_at timestamptz`,
      where: sql`not exists (select 1 from features f where f.name = v.name) and exists (select 1 from environments e where e.name = v.environment)`,
      max: MAX_UNKNOWN_FLAGS,
      update: sql`seen_at = greatest(unknown_flags.seen_at, excluded.seen_at)`,
    }),
  )
}

/**
 * An insert of `rows` (JSON objects with `app_name`, `environment`, the `key` columns and the `rest`, typed as
 * `types` says of the key and the rest) into `table`, whose unique key is (app_name, environment, ...key), that
 * keeps at most `max` rows per application and environment: a row already there is updated (`update`, an
 * `on conflict … do update set` list), new ones are taken in key order while the application and environment
 * hold fewer than `max`; the others are dropped. `where` filters the rows first (on `v`). Rows go in in key
 * order, so concurrent folds lock them in the same order. `table` and the column names are ours, never input.
 */
function boundedInsertPerApplication(o: { table: string; rows: object[]; key: string[]; rest: string[]; types: SQL; where?: SQL; max: number; update: SQL }): SQL {
  const columns = sql.raw(['app_name', 'environment', ...o.key, ...o.rest].join(', '))
  const ranked = sql.raw(['app_name', 'environment', ...o.key, ...o.rest].map((c) => `r.${c}`).join(', '))
  const keyOrder = sql.raw(o.key.map((c) => `v.${c}`).join(', '))
  const sameKey = sql.raw(o.key.map((c) => ` and t.${c} = v.${c}`).join(''))
  const order = sql.raw(Array.from({ length: 2 + o.key.length }, (_, i) => i + 1).join(', '))
  const table = sql.raw(o.table)
  return sql`
    with v as (
      select * from jsonb_to_recordset(${json(o.rows)}) as v(app_name text, environment text, ${o.types})${o.where ? sql` where ${o.where}` : sql``}
    ), kept as (
      select app_name, environment, count(*) as n from ${table}
      where (app_name, environment) in (select app_name, environment from v)
      group by 1, 2
    ), ranked as (
      select v.*, t.app_name is not null as known,
        row_number() over (partition by v.app_name, v.environment, t.app_name is null order by ${keyOrder}) as rank
      from v left join ${table} t on t.app_name = v.app_name and t.environment = v.environment${sameKey}
    )
    insert into ${table} (${columns})
    select ${ranked}
    from ranked r left join kept k on k.app_name = r.app_name and k.environment = r.environment
    where r.known or coalesce(k.n, 0) + r.rank <= ${o.max}
    order by ${order}
    on conflict (${sql.raw(['app_name', 'environment', ...o.key].join(', '))}) do update set ${o.update}`
}

/** Folds up to `batchSize` of the oldest reports nobody else is folding (or just report `onlyId`). */
async function aggregateBatch(tx: Db, now: Date, batchSize: number, onlyId: number | undefined, clientQuota: number): Promise<number> {
  const claimed = tx
    .select({ id: clientMetricsInbox.id })
    .from(clientMetricsInbox)
    .where(onlyId === undefined ? undefined : eq(clientMetricsInbox.id, onlyId))
    .orderBy(asc(clientMetricsInbox.id))
    .limit(batchSize)
    .for('update', { skipLocked: true })
  const claimedRows = (await tx.delete(clientMetricsInbox).where(inArray(clientMetricsInbox.id, claimed)).returning()).sort((a, b) => a.id - b.id)
  if (claimedRows.length === 0) return 0
  const rows = await withinNewApplicationQuota(tx, now, claimedRows, clientQuota)
  await foldApplications(tx, now, rows)
  await foldInstances(tx, rows)
  await foldCounts(tx, rows)
  await foldImpactMetrics(tx, rows)
  await foldUnknownFlags(tx, rows)
  return claimedRows.length
}

/** New applications one frontend token (by name) may create in a day. */
export const FRONTEND_NEW_APPLICATIONS_PER_DAY = 10
/** New applications one client (or admin) token may create in a day, by default (FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY). */
export const CLIENT_NEW_APPLICATIONS_PER_DAY = 200
/** FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY as a count (default 200); anything but a whole number is refused at start. */
export function clientNewApplicationsPerDay(value: string | undefined): number {
  if (value === undefined || value === '') return CLIENT_NEW_APPLICATIONS_PER_DAY
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0) throw new Error(`FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY must be a whole number, got "${value}"`)
  return n
}

/**
 * A frontend token ships in browsers: anyone may report with it. Reports of applications nobody knows yet are
 * kept for only the first FRONTEND_NEW_APPLICATIONS_PER_DAY such applications the token creates in a day;
 * the others are dropped (their SDKs were still answered 200, so they do not retry), so random appNames
 * cannot fill the applications list or fan `application-created` events out to integrations. A client token
 * (a server SDK, Unleash Edge's bulk reports) the same with `clientQuota` a day: over time it could otherwise
 * create any number (100 per bulk request).
 */
async function withinNewApplicationQuota(tx: Db, now: Date, rows: InboxRow[], clientQuota: number): Promise<InboxRow[]> {
  if (rows.length === 0) return rows
  const names = [...new Set(rows.map((r) => r.appName))]
  const tokens = [...new Set(rows.map((r) => r.tokenName))]
  const since = new Date(now.getTime() - 24 * HOUR_MS)
  const [known, createdToday] = await Promise.all([
    tx.select({ appName: clientApplications.appName }).from(clientApplications).where(inArray(clientApplications.appName, names)),
    tx
      .select({ createdBy: clientApplications.createdBy, n: count() })
      .from(clientApplications)
      .where(and(inArray(clientApplications.createdBy, tokens), gte(clientApplications.createdAt, since)))
      .groupBy(clientApplications.createdBy),
  ])
  const allowed = new Set(known.map((k) => k.appName))
  // Token names are unique across types; a name reporting from the frontend API is a frontend token's.
  const frontendTokens = new Set(rows.filter((r) => r.fromFrontend).map((r) => r.tokenName))
  const quotaOf = (token: string) => (frontendTokens.has(token) ? FRONTEND_NEW_APPLICATIONS_PER_DAY : clientQuota)
  const left = new Map(tokens.map((t) => [t, quotaOf(t) - (createdToday.find((c) => c.createdBy === t)?.n ?? 0)]))
  return rows.filter((r) => {
    if (allowed.has(r.appName)) return true
    const remaining = left.get(r.tokenName) ?? 0
    if (remaining <= 0) return false
    left.set(r.tokenName, remaining - 1)
    allowed.add(r.appName)
    return true
  })
}

// Counts saturate rather than overflow: in memory at the largest exact double, in the tables at the largest bigint.
const saturated = (n: number) => Math.min(n, Number.MAX_SAFE_INTEGER)
const BIGINT_MAX = sql.raw('9223372036854775807')

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`

/** Upserts the batch's applications in name order (so concurrent batches lock them in one order) and announces new ones. */
async function foldApplications(tx: Db, now: Date, rows: InboxRow[]) {
  const apps = new Map<string, { app_name: string; created_at: string; created_by: string; seen_at: string; sdk_version: string | null; strategies: string[] | null; environment: string }>()
  for (const row of rows) {
    const payload = row.payload as Partial<RegisterPayload>
    let app = apps.get(row.appName)
    if (!app) {
      app = { app_name: row.appName, created_at: row.receivedAt.toISOString(), created_by: row.tokenName, seen_at: row.receivedAt.toISOString(), sdk_version: null, strategies: null, environment: row.environment }
      apps.set(row.appName, app)
    }
    if (row.receivedAt.toISOString() > app.seen_at) app.seen_at = row.receivedAt.toISOString()
    if (payload.sdkVersion) app.sdk_version = payload.sdkVersion
    if (row.kind === 'register' && Array.isArray(payload.strategies)) app.strategies = payload.strategies
  }
  const list = [...apps.values()].sort((a, b) => (a.app_name < b.app_name ? -1 : a.app_name > b.app_name ? 1 : 0))
  const upserted = await queryRows<{ app_name: string; inserted: boolean }>(tx, sql`
    insert into client_applications (app_name, created_at, created_by, seen_at, sdk_version, strategies)
    select v.app_name, v.created_at, v.created_by, v.seen_at, v.sdk_version, v.strategies
    from jsonb_to_recordset(${json(list)}) as v(app_name text, created_at timestamptz, created_by text, seen_at timestamptz, sdk_version text, strategies jsonb)
    order by v.app_name
    on conflict (app_name) do update set
      seen_at = greatest(client_applications.seen_at, excluded.seen_at),
      sdk_version = coalesce(excluded.sdk_version, client_applications.sdk_version),
      strategies = coalesce(excluded.strategies, client_applications.strategies)
    returning app_name, (xmax = 0) as inserted`)
  const created = upserted.filter((r) => r.inserted)
  // Each new application is attributed to the token that reported it first.
  const byActor = new Map<string, NewEvent[]>()
  for (const { app_name } of created) {
    const app = apps.get(app_name)!
    const event: NewEvent = {
      type: 'application-created',
      environment: app.environment,
      data: { appName: app.app_name, sdkVersion: app.sdk_version, strategies: app.strategies ?? [], createdAt: app.created_at },
    }
    const list = byActor.get(app.created_by)
    if (list) list.push(event)
    else byActor.set(app.created_by, [event])
  }
  for (const [createdBy, events] of byActor) {
    // Folded by the system on behalf of the SDK token that reported the application.
    const actor: Actor = { createdBy, createdByUserId: SYSTEM_USER_ID }
    await recordEvents(tx, actor, now, events)
  }
}

async function foldInstances(tx: Db, rows: InboxRow[]) {
  const instances = new Map<string, { app_name: string; instance_id: string; environment: string; sdk_version: string | null; client_ip: string | null; created_at: string; last_seen: string }>()
  for (const row of rows) {
    if (!row.instanceId) continue
    const key = `${row.appName}\u0000${row.instanceId}\u0000${row.environment}`
    const seen = row.receivedAt.toISOString()
    const sdkVersion = (row.payload as { sdkVersion?: string | null }).sdkVersion ?? null
    const instance = instances.get(key)
    if (!instance) {
      instances.set(key, { app_name: row.appName, instance_id: row.instanceId, environment: row.environment, sdk_version: sdkVersion, client_ip: row.clientIp, created_at: seen, last_seen: seen })
    } else {
      if (seen > instance.last_seen) instance.last_seen = seen
      instance.sdk_version = sdkVersion ?? instance.sdk_version
      instance.client_ip = row.clientIp ?? instance.client_ip
    }
  }
  if (instances.size === 0) return
  await tx.execute(sql`
    insert into client_instances (app_name, instance_id, environment, sdk_version, client_ip, created_at, last_seen)
    select v.app_name, v.instance_id, v.environment, v.sdk_version, v.client_ip, v.created_at, v.last_seen
    from jsonb_to_recordset(${json([...instances.values()])}) as v(app_name text, instance_id text, environment text, sdk_version text, client_ip text, created_at timestamptz, last_seen timestamptz)
    order by v.app_name, v.instance_id, v.environment
    on conflict (app_name, instance_id, environment) do update set
      last_seen = greatest(client_instances.last_seen, excluded.last_seen),
      sdk_version = coalesce(excluded.sdk_version, client_instances.sdk_version),
      client_ip = coalesce(excluded.client_ip, client_instances.client_ip)`)
}

/** The hour a bucket counts for: the hour it started in, unless the SDK's clock puts it after the report arrived. */
function hourOf(bucketStart: string, receivedAt: Date): string {
  const start = Date.parse(bucketStart)
  const at = Number.isFinite(start) && start <= receivedAt.getTime() ? start : receivedAt.getTime()
  return new Date(at - (at % HOUR_MS)).toISOString()
}

/**
 * Sums the batch per flag, application, environment and hour in memory, then writes each kind of row
 * with one statement: unknown flags and environments and flags outside the token's projects drop out in
 * the joins, and rows are written in key order.
 */
async function foldCounts(tx: Db, rows: InboxRow[]) {
  const counts = new Map<string, { feature_name: string; app_name: string; environment: string; ts: string; projects: string[]; yes: number; no: number }>()
  const variants = new Map<string, { feature_name: string; app_name: string; environment: string; ts: string; projects: string[]; variant: string; count: number }>()
  const seen = new Map<string, { feature_name: string; environment: string; projects: string[]; seen: string }>()
  for (const row of rows) {
    if (row.kind !== 'metrics') continue
    const bucket = (row.payload as MetricsPayload).bucket
    if (!bucket) continue
    const ts = hourOf(bucket.start, row.receivedAt)
    const scope = row.projects.join(',')
    for (const [featureName, toggle] of Object.entries(bucket.toggles)) {
      const yes = toggle.yes ?? 0
      const no = toggle.no ?? 0
      const key = `${featureName}\u0000${row.appName}\u0000${row.environment}\u0000${ts}\u0000${scope}`
      const count = counts.get(key)
      if (count) {
        count.yes = saturated(count.yes + yes)
        count.no = saturated(count.no + no)
      } else {
        counts.set(key, { feature_name: featureName, app_name: row.appName, environment: row.environment, ts, projects: row.projects, yes, no })
      }
      for (const [variant, n] of Object.entries(toggle.variants ?? {})) {
        if (!n) continue
        const variantKey = `${key}\u0000${variant}`
        const existing = variants.get(variantKey)
        if (existing) existing.count = saturated(existing.count + n)
        else variants.set(variantKey, { feature_name: featureName, app_name: row.appName, environment: row.environment, ts, projects: row.projects, variant, count: n })
      }
      if (yes + no > 0) {
        const seenKey = `${featureName}\u0000${row.environment}\u0000${scope}`
        const at = row.receivedAt.toISOString()
        const last = seen.get(seenKey)
        if (!last) seen.set(seenKey, { feature_name: featureName, environment: row.environment, projects: row.projects, seen: at })
        else if (at > last.seen) last.seen = at
      }
    }
  }
  const inScope = sql`join features f on f.name = v.feature_name and ('*' = any(v.projects) or f.project = any(v.projects))`
  if (counts.size > 0) {
    await tx.execute(sql`
      insert into client_metrics_hourly (feature_name, app_name, environment, timestamp, yes, no)
      select v.feature_name, v.app_name, v.environment, v.ts, least(sum(v.yes), ${BIGINT_MAX})::bigint, least(sum(v.no), ${BIGINT_MAX})::bigint
      from jsonb_to_recordset(${json([...counts.values()])}) as v(feature_name text, app_name text, environment text, ts timestamptz, projects text[], yes bigint, no bigint)
      ${inScope}
      join environments e on e.name = v.environment
      group by 1, 2, 3, 4
      order by 1, 2, 3, 4
      on conflict (feature_name, app_name, environment, timestamp) do update set
        yes = least(client_metrics_hourly.yes::numeric + excluded.yes, ${BIGINT_MAX})::bigint,
        no = least(client_metrics_hourly.no::numeric + excluded.no, ${BIGINT_MAX})::bigint`)
  }
  if (variants.size > 0) {
    await tx.execute(sql`
      insert into client_metrics_variants_hourly (feature_name, app_name, environment, timestamp, variant, count)
      select v.feature_name, v.app_name, v.environment, v.ts, v.variant, least(sum(v.count), ${BIGINT_MAX})::bigint
      from jsonb_to_recordset(${json([...variants.values()])}) as v(feature_name text, app_name text, environment text, ts timestamptz, projects text[], variant text, count bigint)
      ${inScope}
      join environments e on e.name = v.environment
      group by 1, 2, 3, 4, 5
      order by 1, 2, 3, 4, 5
      on conflict (feature_name, app_name, environment, timestamp, variant) do update set
        count = least(client_metrics_variants_hourly.count::numeric + excluded.count, ${BIGINT_MAX})::bigint`)
  }
  if (seen.size > 0) {
    // lastSeenAt is approximate by nature: rows an admin write holds are skipped rather than waited for.
    await tx.execute(sql`
      with seen as (
        select v.feature_name, v.environment, max(v.seen) as seen
        from jsonb_to_recordset(${json([...seen.values()])}) as v(feature_name text, environment text, projects text[], seen timestamptz)
        ${inScope}
        group by 1, 2
      ), locked as (
        select fe.feature_name, fe.environment, seen.seen
        from feature_environments fe
        join seen on seen.feature_name = fe.feature_name and seen.environment = fe.environment
        order by 1, 2
        for no key update of fe skip locked
      )
      update feature_environments fe set last_seen_at = greatest(fe.last_seen_at, locked.seen)
      from locked
      where fe.feature_name = locked.feature_name and fe.environment = locked.environment`)
  }
}

interface ImpactSeries {
  app_name: string
  environment: string
  name: string
  labels_key: string
  labels: Record<string, string | number>
  type: string
  help: string
  value: number | null
  count: number | null
  sum: number | null
  buckets: { le: number | '+Inf'; count: number }[] | null
  updated_at: string
}

/** A series' identity: its labels as `name=value` pairs in name order (as the SDKs key them). */
const labelsKeyOf = (labels: Record<string, string | number> | undefined) =>
  Object.keys(labels ?? {})
    .sort()
    .map((k) => `${k}=${labels![k]}`)
    .join(',')

function addBuckets(into: { le: number | '+Inf'; count: number }[], more: { le: number | '+Inf'; count: number }[]) {
  for (const bucket of more) {
    const same = into.find((b) => b.le === bucket.le)
    if (same) same.count += bucket.count
    else into.push({ ...bucket })
  }
}

/**
 * Folds the batch's impact metrics into one row per series (application, environment, name, labels), as Unleash's
 * translator folds them into its registry: counters and histograms add up what each report counted, a gauge keeps
 * its last value; a series whose type changed starts again. New series beyond MAX_IMPACT_SERIES per application
 * and environment are dropped (the first ones in name order kept).
 */
async function foldImpactMetrics(tx: Db, rows: InboxRow[]) {
  const series = new Map<string, ImpactSeries>()
  for (const row of rows) {
    if (row.kind !== 'metrics') continue
    const metrics = (row.payload as MetricsPayload).impactMetrics
    if (!metrics) continue
    const at = row.receivedAt.toISOString()
    for (const metric of metrics) {
      for (const sample of metric.samples) {
        const labelsKey = labelsKeyOf(sample.labels)
        const key = `${row.appName}\u0000${row.environment}\u0000${metric.name}\u0000${labelsKey}`
        let entry = series.get(key)
        if (entry && entry.type !== metric.type) series.delete(key)
        entry = series.get(key)
        if (!entry) {
          entry = { app_name: row.appName, environment: row.environment, name: metric.name, labels_key: labelsKey, labels: sample.labels ?? {}, type: metric.type, help: metric.help, value: null, count: null, sum: null, buckets: null, updated_at: at }
          series.set(key, entry)
        }
        entry.help = metric.help
        if (at > entry.updated_at) entry.updated_at = at
        if ('value' in sample) entry.value = metric.type === 'counter' ? (entry.value ?? 0) + sample.value : sample.value
        else {
          entry.count = (entry.count ?? 0) + sample.count
          entry.sum = (entry.sum ?? 0) + sample.sum
          addBuckets((entry.buckets ??= []), sample.buckets)
        }
      }
    }
  }
  if (series.size === 0) return
  const same = sql`client_impact_metrics.type = excluded.type`
  await tx.execute(
    boundedInsertPerApplication({
      table: 'client_impact_metrics',
      rows: [...series.values()],
      key: ['name', 'labels_key'],
      rest: ['labels', 'type', 'help', 'value', 'count', 'sum', 'buckets', 'updated_at'],
      types: sql`name text, labels_key text, labels jsonb, type text, help text, value float8, count float8, sum float8, buckets jsonb, updated_at timestamptz`,
      max: MAX_IMPACT_SERIES,
      update: sql`
        type = excluded.type,
        help = excluded.help,
        value = case when ${same} and excluded.type = 'counter' then client_impact_metrics.value + excluded.value else excluded.value end,
        count = case when ${same} then client_impact_metrics.count + excluded.count else excluded.count end,
        sum = case when ${same} then client_impact_metrics.sum + excluded.sum else excluded.sum end,
        buckets = case when ${same} and excluded.type = 'histogram' then (
          select jsonb_agg(jsonb_build_object('le', b.le, 'count', b.count) order by b.bound)
          from (
            select e->'le' as le, (case when e->>'le' = '+Inf' then 'Infinity' else e->>'le' end)::float8 as bound, sum((e->>'count')::float8) as count
            from jsonb_array_elements(client_impact_metrics.buckets || excluded.buckets) e
            group by 1, 2
          ) b
        ) else excluded.buckets end,
        updated_at = greatest(client_impact_metrics.updated_at, excluded.updated_at)`,
    }),
  )
}
