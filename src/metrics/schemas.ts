import * as z from '../http/zod.js'

const MAX_TOGGLES = 10_000

/** SDKs send `null` for some optional strings (the Node SDK's yggdrasilVersion): absent and null are both accepted. */
const optionalText = (max = 255) => z.string().max(max).nullish()

/** Unleash's dateSchema: an RFC 3339 date-time, or a UNIX timestamp (seconds; milliseconds when it is that large). */
export const DateValue = z
  .union([z.iso.datetime({ offset: true }), z.number().int().nonnegative()])
  .transform((value) => (typeof value === 'number' ? new Date(value > 100_000_000_000 ? value : value * 1000) : new Date(value)))
  .openapi({ description: 'An RFC 3339 date-time or a UNIX timestamp', example: '2026-01-01T12:00:00Z' })

export const count = z.number().int('counts must be whole numbers').min(0).max(Number.MAX_SAFE_INTEGER)

const sdkFields = {
  appName: z.string().trim().min(1, 'appName must not be empty').max(255),
  instanceId: optionalText(),
  sdkVersion: optionalText(),
  platformName: optionalText(),
  platformVersion: optionalText(),
  yggdrasilVersion: optionalText(),
  specVersion: optionalText(),
  sdkFlavor: optionalText(256),
  sdkFlavorVersion: optionalText(32),
  connectionId: optionalText(),
  environment: optionalText(100).openapi({ deprecated: true, description: 'Only read for admin tokens: a client token names its environment' }),
}

export const ClientApplicationSchema = z
  .object({
    ...sdkFields,
    interval: z.number().min(0),
    started: DateValue,
    strategies: z.array(z.string().max(255)).max(1000),
  })
  .openapi('clientApplicationSchema')

export type ClientApplication = z.infer<typeof ClientApplicationSchema>

/*
 * Impact metrics: the counters, gauges and histograms an app defines through its SDK (unleash-client 6.10+,
 * unleash-proxy-client 3.8+) and Edge forwards, each sample with labels. Bounded per report here, and per
 * application and environment where they are kept (aggregate.ts).
 */
export const MAX_IMPACT_METRICS = 100
const MAX_SAMPLES = 100
const MAX_LABELS = 20
const MAX_BUCKETS = 50

const impactLabels = z
  .record(z.string().min(1).max(100), z.union([z.string().max(200), z.number()]))
  .refine((labels) => Object.keys(labels).length <= MAX_LABELS, `a sample may have at most ${MAX_LABELS} labels`)
  .optional()
const impactName = { name: z.string().trim().min(1).max(200), help: z.string().max(1000) }

export const ImpactMetricSchema = z
  .discriminatedUnion('type', [
    z.object({ ...impactName, type: z.enum(['counter', 'gauge']), samples: z.array(z.object({ value: z.number(), labels: impactLabels })).max(MAX_SAMPLES) }),
    z.object({
      ...impactName,
      type: z.literal('histogram'),
      samples: z
        .array(
          z.object({
            count: z.number().min(0),
            sum: z.number(),
            buckets: z.array(z.object({ le: z.union([z.number(), z.literal('+Inf')]), count: z.number().min(0) })).max(MAX_BUCKETS),
            labels: impactLabels,
          }),
        )
        .max(MAX_SAMPLES),
    }),
  ])
  .openapi('impactMetricsSchema', { description: 'A counter, gauge or histogram an application defines, with its samples (each with its labels)' })

export type ImpactMetric = z.infer<typeof ImpactMetricSchema>

const impactMetricsField = z
  .array(ImpactMetricSchema)
  .max(MAX_IMPACT_METRICS)
  .optional()
  .openapi({ description: `The application's impact metrics (at most ${MAX_IMPACT_METRICS}); kept per application and environment` })

export const ClientMetricsSchema = z
  .object({
    ...sdkFields,
    impactMetrics: impactMetricsField,
    bucket: z
      .object({
        start: DateValue,
        stop: DateValue,
        toggles: z
          .record(
            z.string().min(1).max(255),
            z.object({
              yes: count.optional().default(0),
              no: count.optional().default(0),
              variants: z.record(z.string().min(1).max(255), count).nullish(),
            }),
          )
          .refine((toggles) => Object.keys(toggles).length <= MAX_TOGGLES, `a bucket may hold at most ${MAX_TOGGLES} flags`),
      })
      .nullish(),
  })
  .openapi('clientMetricsSchema')

export type ClientMetrics = z.infer<typeof ClientMetricsSchema>

/** The frontend SDK's registration; Unleash accepts and ignores it, Flagpost records the application. */
export const FrontendClientSchema = z
  .object({
    appName: z.string().trim().min(1, 'appName must not be empty').max(255),
    instanceId: optionalText(),
    sdkVersion: optionalText(),
    environment: optionalText(100),
    interval: z.number().min(0),
    started: DateValue,
    strategies: z.array(z.string().max(255)).max(1000),
  })
  .openapi('frontendApiClientSchema')

const ApplicationUsageSchema = z.object({ project: z.string(), environments: z.array(z.string()) }).openapi('applicationUsageSchema')

export const ApplicationSchema = z
  .object({
    appName: z.string(),
    sdkVersion: z.string().optional(),
    strategies: z.array(z.string()),
    description: z.string().optional(),
    url: z.string().optional(),
    color: z.string().optional(),
    icon: z.string().optional(),
    createdAt: z.string(),
    seenAt: z.string(),
    usage: z.array(ApplicationUsageSchema).openapi({ description: 'The projects whose flags the application reported metrics for, with the environments' }),
  })
  .openapi('applicationSchema')

export const ApplicationsSchema = z.object({ total: z.number().int(), applications: z.array(ApplicationSchema) }).openapi('applicationsSchema')

const SORTABLE = ['appName', 'createdAt', 'seenAt'] as const

export const ApplicationsQuerySchema = z.object({
  query: z.string().max(255).optional().openapi({ description: 'Only applications whose name contains this (case-insensitive)' }),
  offset: z.string().regex(/^\d{1,9}$/, 'offset must be a whole number from 0').optional(),
  limit: z.string().regex(/^\d{1,9}$/, 'limit must be a whole number from 0').optional(),
  sortBy: z.enum(SORTABLE).optional().openapi({ description: 'Default appName' }),
  sortOrder: z.enum(['asc', 'desc']).optional().openapi({ description: 'Default asc' }),
})

export type ApplicationsQuery = z.infer<typeof ApplicationsQuerySchema>

export const FeatureEnvironmentMetricsSchema = z
  .object({
    featureName: z.string(),
    appName: z.string().optional(),
    environment: z.string(),
    timestamp: z.string(),
    yes: z.number().int(),
    no: z.number().int(),
    variants: z.record(z.string(), z.number().int()),
  })
  .openapi('featureEnvironmentMetricsSchema')

export const FeatureUsageSchema = z
  .object({
    version: z.number().int(),
    maturity: z.string(),
    featureName: z.string(),
    lastHourUsage: z.array(FeatureEnvironmentMetricsSchema),
    totalUsage: z.array(z.object({ environment: z.string(), yes: z.number().int(), no: z.number().int() })),
    seenApplications: z.array(z.string()),
  })
  .openapi('featureUsageSchema')

export const FeatureMetricsSchema = z
  .object({ version: z.number().int(), maturity: z.string(), data: z.array(FeatureEnvironmentMetricsSchema) })
  .openapi('featureMetricsSchema')

export const featureNameParam = z.object({ name: z.string().min(1).max(255).openapi({ param: { name: 'name', in: 'path' } }) })

export const HoursBackQuerySchema = z.object({
  hoursBack: z
    .string()
    .regex(/^\d{1,4}$/, 'hoursBack must be a whole number')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 24 * 91, 'hoursBack must be from 1 to 2184 (91 days)')
    .optional()
    .openapi({ description: 'How many hours back, from 1 to 2184 (91 days); default 1. Up to 48 the rows are hourly, beyond one per UTC day' }),
})

export const appNameParam = z.object({ appName: z.string().min(1).max(255).openapi({ param: { name: 'appName', in: 'path' } }) })

const ImpactBucketSchema = z.object({ le: z.union([z.number(), z.literal('+Inf')]), count: z.number() })

export const ImpactMetricSeriesSchema = z
  .object({
    name: z.string(),
    help: z.string(),
    type: z.enum(['counter', 'gauge', 'histogram']),
    environment: z.string(),
    labels: z.record(z.string(), z.union([z.string(), z.number()])),
    value: z.number().optional().openapi({ description: 'Counters: the total reported; gauges: the last value' }),
    count: z.number().optional().openapi({ description: 'Histograms: the observations reported' }),
    sum: z.number().optional().openapi({ description: 'Histograms: the sum of the observations' }),
    buckets: z.array(ImpactBucketSchema).optional().openapi({ description: 'Histograms: observations at or below each upper bound, in bound order' }),
    updatedAt: z.string(),
  })
  .openapi('impactMetricSeriesSchema')

export const ApplicationImpactMetricsSchema = z
  .object({ appName: z.string(), impactMetrics: z.array(ImpactMetricSeriesSchema) })
  .openapi('applicationImpactMetricsSchema')

/** A function: only the OpenAPI document needs it, so the worker's bundle leaves it out with the responses. */
export const OutdatedSdksSchema = () =>
  z
  .object({ sdks: z.array(z.object({ sdkVersion: z.string(), applications: z.array(z.string()) })) })
  .openapi('outdatedSdksSchema', { description: 'SDK versions (`name:version`) older than the oldest Unleash 8.2 does not call outdated, each with the applications running it' })
