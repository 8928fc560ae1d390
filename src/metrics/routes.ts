import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { ApplicationImpactMetricsSchema, ApplicationsQuerySchema, ApplicationsSchema, appNameParam, OutdatedSdksSchema, FeatureMetricsSchema, FeatureUsageSchema, featureNameParam, HoursBackQuerySchema } from './schemas.js'
import { outdatedSdks } from './outdated-sdks.js'
import { applicationInstances, applicationOverview, deleteApplication, getApplication, saveApplication } from './applications.js'
import * as z from '../http/zod.js'
import { Permission } from '../core/permissions.js'
import { applicationImpactMetrics, featureMetricsRaw, featureUsage, listApplications } from './read.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import { isWebUrl } from './applications.js'
import { listUnknownFlags } from './unknown-flags.js'

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
  summary: 'Hourly or daily metrics of a feature flag',
  description:
    'The rows (per application and environment: yes, no and variant counts) recorded for the flag from `hoursBack` hours ago (default 1, at most 2184, 91 days) on, oldest first: ' +
    'one per hour up to 48 hours back, one per UTC day (`timestamp` its midnight) beyond. Hourly rows are kept 48 hours, then added to their day, kept 91 days. ' +
    '404 for a flag that does not exist or belongs to a private project the caller may not read.',
  request: { params: featureNameParam, query: HoursBackQuerySchema },
  responses: { 200: { description: 'The hourly or daily metrics', content: jsonContent(FeatureMetricsSchema) }, ...pickErrors(400, 401, 403, 404) },
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
  responses: { 200: { description: 'The outdated SDKs', content: jsonContent(OutdatedSdksSchema()) }, ...pickErrors(401, 403) },
})

const text = (max: number) => z.string().max(max)
/** An application's link, shown in the console: empty, or an http(s) URL (a `javascript:` or `data:` URL would run script when clicked). */
const ApplicationUrlSchema = text(1000).refine((value) => value === '' || isWebUrl(value), 'url must be an http or https URL (or empty)')
const CreateApplicationSchema = z
  .object({ strategies: z.array(text(200)).max(100).optional(), url: ApplicationUrlSchema.optional(), color: text(100).optional(), icon: text(200).optional() })
  .openapi('createApplicationSchema')
const SingleApplicationSchema = () =>
  z
  .object({
    appName: z.string(),
    sdkVersion: z.string().optional(),
    strategies: z.array(z.string()),
    description: z.string().optional(),
    url: z.string().optional(),
    color: z.string().optional(),
    icon: z.string().optional(),
    usage: z.array(z.object({ project: z.string(), environments: z.array(z.string()) })),
  })
  .openapi('singleApplicationSchema')
const ApplicationOverviewSchema = () =>
  z
  .object({
    projects: z.array(z.string()),
    featureCount: z.number(),
    environments: z.array(
      z
        .object({
          name: z.string(),
          instanceCount: z.number(),
          sdks: z.array(z.string()),
          frontendSdks: z.array(z.string()),
          backendSdks: z.array(z.string()),
          lastSeen: z.string().nullable(),
          issues: z.object({ missingFeatures: z.array(z.string()), outdatedSdks: z.array(z.string()) }).openapi('applicationEnvironmentIssuesSchema'),
        })
        .openapi('applicationOverviewEnvironmentSchema'),
    ),
    issues: z.object({ missingStrategies: z.array(z.string()) }).openapi('applicationOverviewIssuesSchema'),
  })
  .openapi('applicationOverviewSchema')
const InstancesSchema = () =>
  z
  .object({ instances: z.array(z.object({ instanceId: z.string(), sdkVersion: z.string().nullable(), clientIp: z.string().nullable(), lastSeen: z.string() })) })
  .openapi('applicationEnvironmentInstancesSchema')
const appPath = '/api/admin/metrics/applications/{appName}'
const usageNote = 'Its usage and projects are those whose flags it reported metrics for (in the 48 hours metrics are kept), private projects only for callers who may read them.'

const getApplicationRoute = adminRoute({
  method: 'get',
  path: appPath,
  operationId: 'getApplication',
  tags,
  summary: 'Get application data',
  description: `The application: the SDK it registered with, its strategies and how to show it. ${usageNote} 404 for an unknown application.`,
  request: { params: appNameParam },
  responses: { 200: { description: 'The application', content: jsonContent(SingleApplicationSchema()) }, ...pickErrors(401, 403, 404) },
})

const createApplicationRoute = adminRoute({
  method: 'post',
  path: appPath,
  operationId: 'createApplication',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Create an application to connect reported metrics',
  description:
    'Creates the application, or sets the details given (`strategies`, `url`, `color`, `icon`) of an existing one. `url` is empty or an http(s) URL (400 otherwise; Unleash takes any string). Needs ADMIN (Unleash: UPDATE_APPLICATION, an Admin\'s). Emits `application-created`.',
  request: { params: appNameParam, body: { required: true, content: jsonContent(CreateApplicationSchema) } },
  responses: { 202: { description: 'Saved' }, ...pickErrors(400, 401, 403, 415) },
})

const deleteApplicationRoute = adminRoute({
  method: 'delete',
  path: appPath,
  operationId: 'deleteApplication',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Delete an application',
  description:
    'Deletes the application and its instances (an SDK still running it registers it again); 200 for an unknown one too. Its flags\' metrics stay. Writes no event (as Unleash). Needs ADMIN (Unleash: DELETE_APPLICATION, an Admin\'s).',
  request: { params: appNameParam },
  responses: { 200: { description: 'Deleted' }, ...pickErrors(401, 403) },
})

const applicationOverviewRoute = adminRoute({
  method: 'get',
  path: `${appPath}/overview`,
  operationId: 'getApplicationOverview',
  tags,
  summary: 'Get application overview',
  description:
    `${usageNote} \`featureCount\` counts their flags it reported. Per environment: its running instances, their SDKs (frontend or backend, by the SDK's name), the last report and the outdated SDKs ` +
    '(as GET /api/admin/metrics/sdks/outdated); `missingFeatures` is empty (Flagpost keeps no metrics of flags that do not exist). `missingStrategies`: strategies of the flags it reported that it did not register. 404 for an unknown application.',
  request: { params: appNameParam },
  responses: { 200: { description: 'The overview', content: jsonContent(ApplicationOverviewSchema()) }, ...pickErrors(401, 403, 404) },
})

const applicationInstancesRoute = adminRoute({
  method: 'get',
  path: '/api/admin/metrics/instances/{appName}/environment/{environment}',
  operationId: 'getApplicationEnvironmentInstances',
  tags,
  summary: 'Get application environment instances',
  description: 'The application\'s running instances in the environment (at most 1,000, latest report first): id, SDK version, client address and last report. The client address is null unless the caller may read every project whose flags the application reported (an SDK of a private project shows its address only to those who may read it; Unleash shows it to all). 404 for an unknown application.',
  request: { params: appNameParam.extend({ environment: z.string().min(1).max(100).openapi({ param: { name: 'environment', in: 'path' } }) }) },
  responses: { 200: { description: 'The instances', content: jsonContent(InstancesSchema()) }, ...pickErrors(401, 403, 404) },
})

const UnknownFlagsSchema = () =>
  z
    .object({
      unknownFlags: z.array(
        z
          .object({
            name: z.string(),
            lastSeenAt: z.string().openapi({ format: 'date-time' }),
            lastEventAt: z.string().nullable().openapi({ format: 'date-time', description: 'The latest event naming the flag (one deleted since), in a project the caller may read' }),
            reports: z.array(z.object({ appName: z.string(), environments: z.array(z.object({ environment: z.string(), seenAt: z.string().openapi({ format: 'date-time' }) })) })),
          })
          .openapi('unknownFlagSchema'),
      ),
    })
    .openapi('unknownFlagsResponseSchema')

const getUnknownFlagsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/metrics/unknown-flags',
  operationId: 'getUnknownFlags',
  tags: ['Unknown Flags'],
  summary: 'Get latest reported unknown flag names',
  description:
    'The flag names SDKs reported in metrics over the last 24 hours that no flag has (live or archived), newest first, at most 1000, each with the applications and ' +
    'environments that reported it and when. Recorded when reports are folded, at most 100 names per application and environment (further new names are dropped until ' +
    'some age out); a name becomes a flag and drops out. Any admin-API caller may read it (as the applications list).',
  responses: { 200: { description: 'The unknown flags', content: jsonContent(UnknownFlagsSchema()) }, ...pickErrors(401, 403) },
})

export const metricsRoutes = createRouter()
  .openapi(getUnknownFlagsRoute, async (c) => c.json(await listUnknownFlags(c.var.db, c.var.caller.now, await hiddenProjectsOf(c)), 200))
  .openapi(getApplicationRoute, async (c) => c.json(await getApplication(c.var.db, c.req.valid('param').appName, await hiddenProjectsOf(c)), 200))
  .openapi(createApplicationRoute, async (c) => {
    await saveApplication(c.var.db, c.var.caller, c.req.valid('param').appName, c.req.valid('json'))
    return c.body(null, 202)
  })
  .openapi(deleteApplicationRoute, async (c) => {
    await deleteApplication(c.var.db, c.req.valid('param').appName)
    return c.body(null, 200)
  })
  .openapi(applicationOverviewRoute, async (c) => c.json(await applicationOverview(c.var.db, c.req.valid('param').appName, await hiddenProjectsOf(c)), 200))
  .openapi(applicationInstancesRoute, async (c) => {
    const { appName, environment } = c.req.valid('param')
    return c.json(await applicationInstances(c.var.db, appName, environment, await hiddenProjectsOf(c)), 200)
  })
  .openapi(getOutdatedSdksRoute, async (c) => c.json(await outdatedSdks(c.var.db), 200))
  .openapi(getApplicationsRoute, async (c) => c.json(await listApplications(c.var.db, c.req.valid('query'), await hiddenProjectsOf(c)), 200))
  .openapi(getApplicationImpactMetricsRoute, async (c) => c.json(await applicationImpactMetrics(c.var.db, c.req.valid('param').appName, await hiddenProjectsOf(c)), 200))
  .openapi(getFeatureUsageRoute, async (c) => c.json(await featureUsage(c.var.db, c.req.valid('param').name, c.var.caller.now), 200))
  .openapi(getFeatureMetricsRawRoute, async (c) =>
    c.json(await featureMetricsRaw(c.var.db, c.req.valid('param').name, c.req.valid('query').hoursBack ?? 1, c.var.caller.now), 200),
  )
