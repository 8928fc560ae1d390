import * as z from '../http/zod.js'
import { count, DateValue, ImpactMetricSchema, MAX_IMPACT_METRICS } from '../metrics/schemas.js'

const MAX_TOKENS = 1000
const MAX_APPLICATIONS = 1000
const MAX_METRICS = 10_000

export const TokenStringListSchema = z
  .object({
    tokens: z
      .array(z.string().max(1000))
      .max(MAX_TOKENS)
      .openapi({ description: `Tokens that we want to get access information about (at most ${MAX_TOKENS})`, example: ['default:development.randomstring'] }),
  })
  .openapi('tokenStringListSchema')

export const EdgeTokenSchema = z
  .object({
    token: z.string().openapi({ description: 'The token as it was sent' }),
    type: z.enum(['client', 'admin', 'frontend', 'backend']).openapi({ description: 'The token’s type' }),
    projects: z.array(z.string()).openapi({ description: 'The projects the token has access to; [`*`] for all' }),
    environment: z.string().openapi({ description: 'The environment the token has access to' }),
  })
  .openapi('edgeTokenSchema')

export const ValidatedEdgeTokensSchema = z.object({ tokens: z.array(EdgeTokenSchema) }).openapi('validatedEdgeTokensSchema')

// Edge's own types leave unset fields null rather than out: both are accepted where a field is optional.
const optionalText = (max = 255) => z.string().max(max).nullish()

export const BulkRegistrationSchema = z
  .object({
    appName: z.string().trim().min(1, 'appName must not be empty').max(255),
    instanceId: optionalText(),
    environment: optionalText(100),
    connectVia: z.array(z.object({ appName: z.string().max(255), instanceId: z.string().max(255) })).max(20).nullish(),
    interval: z.number().min(0).nullish(),
    started: DateValue.nullish(),
    strategies: z.array(z.string().max(255)).max(1000).nullish(),
    projects: z.array(z.string().max(255)).max(1000).nullish(),
    sdkVersion: optionalText(),
    sdkType: z.enum(['frontend', 'backend']).nullish(),
    sdkFlavor: optionalText(256),
    sdkFlavorVersion: optionalText(32),
    platformName: optionalText(),
    platformVersion: optionalText(),
  })
  .openapi('bulkRegistrationSchema')

export type BulkRegistration = z.infer<typeof BulkRegistrationSchema>

export const ClientMetricsEnvSchema = z
  .object({
    featureName: z.string().min(1).max(255),
    appName: z.string().trim().min(1, 'appName must not be empty').max(255),
    environment: z.string().min(1).max(100),
    timestamp: DateValue.optional(),
    yes: count.optional().default(0),
    no: count.optional().default(0),
    variants: z.record(z.string().min(1).max(255), count).nullish(),
  })
  .openapi('clientMetricsEnvSchema')

export type ClientMetricsEnv = z.infer<typeof ClientMetricsEnvSchema>

export const BulkMetricsSchema = z
  .object({
    applications: z.array(BulkRegistrationSchema).max(MAX_APPLICATIONS),
    metrics: z.array(ClientMetricsEnvSchema).max(MAX_METRICS),
    impactMetrics: z.array(ImpactMetricSchema).max(MAX_IMPACT_METRICS).optional(),
    seenTokens: z.array(z.string().max(1000)).max(MAX_TOKENS).optional(),
  })
  .openapi('bulkMetricsSchema')

export type BulkMetrics = z.infer<typeof BulkMetricsSchema>
