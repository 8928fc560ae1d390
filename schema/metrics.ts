import { bigint, bigserial, boolean, doublePrecision, index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { environments } from './environments.js'
import { features } from './features.js'

/**
 * What SDKs report (`POST /api/client/register`, `/api/client/metrics` and the frontend ones), one row
 * per request, appended on the request's path and nothing else there. The aggregator consumes the rows
 * (deletes them in the transaction that folds them into the tables below), so this is an inbox, not a log.
 */
export const clientMetricsInbox = pgTable('client_metrics_inbox', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }).notNull(),
  // 'register' or 'metrics'.
  kind: text('kind').notNull(),
  appName: text('app_name').notNull(),
  instanceId: text('instance_id'),
  environment: text('environment').notNull(),
  // The reporting token's projects (`*` for all): metrics count only for flags in them.
  projects: text('projects').array().notNull(),
  tokenName: text('token_name').notNull(),
  // Reported with a frontend token (public: it ships in browsers), whose new applications are bounded.
  fromFrontend: boolean('from_frontend').notNull().default(false),
  clientIp: text('client_ip'),
  // The request body as validated: the bucket for metrics, sdkVersion/strategies/interval/started for registrations.
  payload: jsonb('payload').notNull(),
})

/** Applications (SDK `appName`s) seen through registrations or metrics. */
export const clientApplications = pgTable('client_applications', {
  appName: text('app_name').primaryKey(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  createdBy: text('created_by').notNull(),
  seenAt: timestamp('seen_at', { withTimezone: true, mode: 'date' }).notNull(),
  sdkVersion: text('sdk_version'),
  // The strategies the SDK registered with; null until it registers.
  strategies: jsonb('strategies'),
  description: text('description'),
  url: text('url'),
  color: text('color'),
  icon: text('icon'),
})

/** One running SDK instance of an application, per environment. */
export const clientInstances = pgTable(
  'client_instances',
  {
    appName: text('app_name')
      .notNull()
      .references(() => clientApplications.appName, { onDelete: 'cascade' }),
    instanceId: text('instance_id').notNull(),
    environment: text('environment').notNull(),
    sdkVersion: text('sdk_version'),
    clientIp: text('client_ip'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastSeen: timestamp('last_seen', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.appName, t.instanceId, t.environment] })],
)

/*
 * The metrics tables by hour and by day share their columns but the time's (`timestamp`, `date`): each table gets its
 * own column builders from these functions (drizzle binds a builder to one table).
 */
/** The flag, application and environment a count is of (a count goes with its flag or environment). */
const flagCountKey = () => ({
  featureName: text('feature_name')
    .notNull()
    .references(() => features.name, { onDelete: 'cascade' }),
  appName: text('app_name').notNull(),
  environment: text('environment')
    .notNull()
    .references(() => environments.name, { onDelete: 'cascade' }),
})
const yesNo = () => ({ yes: bigint('yes', { mode: 'number' }).notNull(), no: bigint('no', { mode: 'number' }).notNull() })
const variantCount = () => ({ variant: text('variant').notNull(), count: bigint('count', { mode: 'number' }).notNull() })

/** Yes/no counts per flag, application, environment and hour (the hour the SDK's bucket started in). */
export const clientMetricsHourly = pgTable(
  'client_metrics_hourly',
  { ...flagCountKey(), timestamp: timestamp('timestamp', { withTimezone: true, mode: 'date' }).notNull(), ...yesNo() },
  (t) => [
    primaryKey({ columns: [t.featureName, t.appName, t.environment, t.timestamp] }),
    index('client_metrics_hourly_timestamp_idx').on(t.timestamp),
    index('client_metrics_hourly_app_idx').on(t.appName),
  ],
)

/** How often each variant was returned, per flag, application, environment and hour. */
export const clientMetricsVariantsHourly = pgTable(
  'client_metrics_variants_hourly',
  { ...flagCountKey(), timestamp: timestamp('timestamp', { withTimezone: true, mode: 'date' }).notNull(), ...variantCount() },
  (t) => [
    primaryKey({ columns: [t.featureName, t.appName, t.environment, t.timestamp, t.variant] }),
    index('client_metrics_variants_hourly_timestamp_idx').on(t.timestamp),
  ],
)

/**
 * Impact metrics SDKs report (counters, gauges, histograms an application defines), one row per series: an
 * application, environment, metric name and set of labels. Counters and histograms add up what each report
 * counted since the last; a gauge keeps the last value. Bounded per application and environment (aggregate.ts).
 */
export const clientImpactMetrics = pgTable(
  'client_impact_metrics',
  {
    appName: text('app_name')
      .notNull()
      .references(() => clientApplications.appName, { onDelete: 'cascade' }),
    environment: text('environment').notNull(),
    name: text('name').notNull(),
    // The labels as `name=value` pairs in name order: the series' identity.
    labelsKey: text('labels_key').notNull(),
    labels: jsonb('labels').notNull(),
    // 'counter', 'gauge' or 'histogram'.
    type: text('type').notNull(),
    help: text('help').notNull(),
    // Counters: the total; gauges: the last value; null for histograms.
    value: doublePrecision('value'),
    // Histograms: observations, their sum, and cumulative counts per upper bound (`le`, '+Inf' last).
    count: doublePrecision('count'),
    sum: doublePrecision('sum'),
    buckets: jsonb('buckets'),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.appName, t.environment, t.name, t.labelsKey] }), index('client_impact_metrics_updated_at_idx').on(t.updatedAt)],
)

/**
 * Yes/no counts per flag, application, environment and UTC day, for the hours older than the hourly retention: the
 * pruning adds each hourly row it deletes to its day here (so a day is split between the two tables while it is younger
 * than 48 hours, and each hour is counted once). Kept 91 days (Unleash's longest `hoursBack`).
 */
export const clientMetricsDaily = pgTable(
  'client_metrics_daily',
  { ...flagCountKey(), date: timestamp('date', { withTimezone: true, mode: 'date' }).notNull(), ...yesNo() },
  (t) => [primaryKey({ columns: [t.featureName, t.appName, t.environment, t.date] }), index('client_metrics_daily_date_idx').on(t.date)],
)

/** Variant counts per flag, application, environment and UTC day, filled as `client_metrics_daily` is. */
export const clientMetricsVariantsDaily = pgTable(
  'client_metrics_variants_daily',
  { ...flagCountKey(), date: timestamp('date', { withTimezone: true, mode: 'date' }).notNull(), ...variantCount() },
  (t) => [primaryKey({ columns: [t.featureName, t.appName, t.environment, t.date, t.variant] }), index('client_metrics_variants_daily_date_idx').on(t.date)],
)

/**
 * Flags SDKs report in metrics that do not exist, per application and environment, with when last reported. Bounded
 * per application and environment and pruned after a day (aggregate.ts).
 */
export const unknownFlags = pgTable(
  'unknown_flags',
  {
    name: text('name').notNull(),
    appName: text('app_name').notNull(),
    environment: text('environment').notNull(),
    seenAt: timestamp('seen_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.name, t.appName, t.environment] }), index('unknown_flags_seen_at_idx').on(t.seenAt), index('unknown_flags_app_env_idx').on(t.appName, t.environment)],
)
