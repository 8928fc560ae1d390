import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { ApplicationImpactMetricsSchema, ApplicationsQuerySchema, ApplicationsSchema, appNameParam, OutdatedSdksSchema, FeatureMetricsSchema, FeatureUsageSchema, featureNameParam, HoursBackQuerySchema } from './schemas.js'
import { outdatedSdks } from './outdated-sdks.js'
import { applicationImpactMetrics, featureMetricsRaw, featureUsage, listApplications } from './read.js'
import { hiddenProjectsOf } from '../projects/visibility.js'

const tags = ['Metrics']

const getApplicationsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/metrics/applications',
  operationId: 'getApplications',
  tags,
  summary: 'Get all applications',
  description:
    'Every application (SDK `appName`) that registered or sent metrics, with the strategies it registered, its SDK version and `usage`: the projects ' +
    'whose flags it reported and in which environments (private projects only for callers who may read them). `query` filters by name (contains, case-insensitive); `sortBy` appName (default), createdAt or seenAt; ' +
    '`sortOrder` asc (default) or desc; `offset` and `limit` (default and at most 1000) page the list, `total` counts every match. ' +
    'Reports are folded in the background, so an application shows up a moment after its SDK reported.',
  request: { query: ApplicationsQuerySchema },
  responses: { 200: { description: 'The applications', content: jsonContent(ApplicationsSchema) }, ...pickErrors(400, 401, 403) },
})

const getApplicationImpactMetricsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/metrics/applications/{appName}/impact-metrics',
  operationId: 'getApplicationImpactMetrics',
  tags,
  summary: 'Impact metrics an application reported',
  description:
    'The counters, gauges and histograms the application’s SDKs (and Unleash Edge on their behalf) reported in `impactMetrics`, one entry per environment, ' +
    'metric name and set of labels, in that order: a counter’s total and a histogram’s count, sum and buckets add up every report, a gauge shows the last ' +
    'value. At most 1000 series per application and environment are kept (further new ones are dropped) and a series nobody reported for 7 days is deleted. ' +
    'Series labelled with a flag (`featureName`) of a private project the caller may not read are left out. ' +
    'Reports are folded in the background, so a report shows up a moment after it arrived. 404 for an application that never reported.',
  request: { params: appNameParam },
  responses: { 200: { description: 'The impact metrics', content: jsonContent(ApplicationImpactMetricsSchema) }, ...pickErrors(401, 403, 404) },
})

const getFeatureUsageRoute = adminRoute({
  method: 'get',
  path: '/api/admin/client-metrics/features/{name}',
  operationId: 'getFeatureUsageSummary',
  tags,
  summary: 'Last hour of usage and a list of applications that have reported seeing this feature flag',
  description:
    'Per environment, the yes/no counts (and variant counts) SDKs reported for the flag in the last hour (the current and the previous clock hour), the totals ' +
    'over the retention period (48 hours) and the applications that reported it. 404 for a flag that does not exist or belongs to a private project the caller may not read.',
  request: { params: featureNameParam },
  responses: { 200: { description: 'The usage summary', content: jsonContent(FeatureUsageSchema) }, ...pickErrors(401, 403, 404) },
})

const getFeatureMetricsRawRoute = adminRoute({
  method: 'get',
  path: '/api/admin/client-metrics/features/{name}/raw',
  operationId: 'getRawFeatureMetrics',
  tags,
  summary: 'Hourly metrics of a feature flag',
  description:
    'The hourly rows (per application and environment: yes, no and variant counts) recorded for the flag from `hoursBack` hours ago (default 1, at most 48) on, oldest first. ' +
    '404 for a flag that does not exist or belongs to a private project the caller may not read.',
  request: { params: featureNameParam, query: HoursBackQuerySchema },
  responses: { 200: { description: 'The hourly metrics', content: jsonContent(FeatureMetricsSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const getOutdatedSdksRoute = adminRoute({
  method: 'get',
  path: '/api/admin/metrics/sdks/outdated',
  operationId: 'getOutdatedSdks',
  tags,
  summary: 'Get outdated SDKs',
  description:
    'The SDK versions running instances registered (`sdkVersion`, `name:version`) that are older than the oldest Unleash 8.2 does not call outdated (e.g. unleash-client-node 5.3.2, unleash-node-sdk 6.6.0), ' +
    'each with the applications running it. SDKs Unleash keeps no minimum for are never outdated.',
  responses: { 200: { description: 'The outdated SDKs', content: jsonContent(OutdatedSdksSchema) }, ...pickErrors(401, 403) },
})

export const metricsRoutes = createRouter()
  .openapi(getOutdatedSdksRoute, async (c) => c.json(await outdatedSdks(c.var.db), 200))
  .openapi(getApplicationsRoute, async (c) => c.json(await listApplications(c.var.db, c.req.valid('query'), await hiddenProjectsOf(c)), 200))
  .openapi(getApplicationImpactMetricsRoute, async (c) => c.json(await applicationImpactMetrics(c.var.db, c.req.valid('param').appName, await hiddenProjectsOf(c)), 200))
  .openapi(getFeatureUsageRoute, async (c) => c.json(await featureUsage(c.var.db, c.req.valid('param').name, c.var.caller.now), 200))
  .openapi(getFeatureMetricsRawRoute, async (c) =>
    c.json(await featureMetricsRaw(c.var.db, c.req.valid('param').name, c.req.valid('query').hoursBack ?? 1, c.var.caller.now), 200),
  )
