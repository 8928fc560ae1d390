import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { projectIdParam } from '../http/common-schemas.js'
import { principalKey } from '../core/principal.js'
import { ProjectOverviewSchema } from './schemas.js'
import { flagCreators, healthReport, projectApplications, projectDora, projectInsights, projectStatus, requireProject } from './insights.js'
import { outdatedSdks } from '../metrics/outdated-sdks.js'
import { OutdatedSdksSchema } from '../metrics/schemas.js'

const tags = ['Projects']
const hidden = '404 for an unknown project, and for a private project the caller may not read (as Unleash answers an unknown one).'

const FlagCreatorsSchema = () =>
  z.array(z.object({ id: z.number().int(), name: z.string() })).openapi('projectFlagCreatorsSchema')
const HealthReportSchema = () =>
  ProjectOverviewSchema.extend({
  technicalDebt: z.number().min(0).max(100),
  potentiallyStaleCount: z.number(),
  activeCount: z.number(),
  staleCount: z.number(),
}).openapi('healthReportSchema')
const stage = z.object({ averageDays: z.number().nullable(), currentFlags: z.number().int() })
const ProjectStatusSchema = () =>
  z
  .object({
    activityCountByDate: z.array(z.object({ date: z.string(), count: z.number().int() })).openapi('projectActivitySchema'),
    resources: z.object({ apiTokens: z.number().int(), members: z.number().int(), segments: z.number().int() }),
    health: z.object({ current: z.number().int() }),
    technicalDebt: z.object({ current: z.number().int() }),
    lifecycleSummary: z.object({ initial: stage, preLive: stage, live: stage, completed: stage, archived: stage }),
    staleFlags: z.object({ total: z.number().int() }),
  })
  .openapi('projectStatusSchema')
const DoraSchema = () =>
  z
  .object({ projectAverage: z.number().optional(), features: z.array(z.object({ name: z.string(), timeToProduction: z.number() }).openapi('doraFeaturesSchema')) })
  .openapi('projectDoraMetricsSchema')
const ProjectApplicationsSchema = () =>
  z
  .object({
    total: z.number().int(),
    applications: z.array(
      z
        .object({ name: z.string(), environments: z.array(z.string()), instances: z.array(z.string()), sdks: z.array(z.object({ name: z.string(), versions: z.array(z.string()) }).openapi('projectApplicationSdkSchema')) })
        .openapi('projectApplicationSchema'),
    ),
  })
  .openapi('projectApplicationsSchema')
const text = (name: string) => z.string().max(200).optional().openapi({ param: { name, in: 'query' } })
const ProjectApplicationsQuery = z.object({ query: text('query'), offset: text('offset'), limit: text('limit'), sortBy: text('sortBy'), sortOrder: text('sortOrder') })

const flagCreatorsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/flag-creators',
  operationId: 'getProjectFlagCreators',
  tags,
  summary: 'Get the users who created flags in a project',
  description: `Every user (not deleted) who created a flag of the project, live or archived: id and name (else username, else e-mail). ${hidden}`,
  request: { params: projectIdParam },
  responses: { 200: { description: 'The flag creators', content: jsonContent(FlagCreatorsSchema()) }, ...pickErrors(401, 403, 404) },
})

const healthReportRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/health-report',
  operationId: 'getProjectHealthReport',
  tags,
  summary: 'Get a health report for a project',
  description:
    'The deprecated project overview (GET /api/admin/projects/{projectId}: the project and its live flags) with `technicalDebt` (100 − health) and its live flags counted as ' +
    `stale, potentially stale and active (neither). ${hidden} 404 for an archived project too.`,
  request: { params: projectIdParam },
  responses: { 200: { description: 'The health report', content: jsonContent(HealthReportSchema()) }, ...pickErrors(401, 403, 404) },
})

const statusRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/status',
  operationId: 'getProjectStatus',
  tags,
  summary: 'Get project status',
  description:
    'The project\'s events per day (UTC) over the last year, its API tokens (those naming it, not `*`), members (directly or through a group) and segments, ' +
    'its health and technical debt (100 − health), its flags per lifecycle stage (archived flags in `archived`) with the average days flags spent in each stage they have left (null when none has), ' +
    `and its stale live flags. ${hidden}`,
  request: { params: projectIdParam },
  responses: { 200: { description: 'The project status', content: jsonContent(ProjectStatusSchema()) }, ...pickErrors(401, 403, 404) },
})

const doraRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/dora',
  operationId: 'getProjectDora',
  tags,
  summary: 'Get an overview of project DORA metrics',
  description:
    'Lead time to production: for each live flag enabled at least once in a production-type environment, the days (one decimal) from its creation to its first enabling there; ' +
    `\`projectAverage\` their mean (0 when none). ${hidden}`,
  request: { params: projectIdParam },
  responses: { 200: { description: 'The DORA metrics', content: jsonContent(DoraSchema()) }, ...pickErrors(401, 403, 404) },
})

const applicationsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/applications',
  operationId: 'getProjectApplications',
  tags,
  summary: 'Get a list of all applications for a project',
  description:
    'The applications whose SDKs reported metrics for the project\'s flags (in the 48 hours metrics are kept), with the environments they reported them in, their running instances there and ' +
    'their SDKs (name and versions, from `sdkVersion` `name:version`). `query` keeps names containing it (ignoring case); sorted by name (`sortOrder` asc or desc); ' +
    `\`offset\` and \`limit\` (default 50, at most 1000) page them, \`total\` counts every match. ${hidden}`,
  request: { params: projectIdParam, query: ProjectApplicationsQuery },
  responses: { 200: { description: 'The applications', content: jsonContent(ProjectApplicationsSchema()) }, ...pickErrors(400, 401, 403, 404) },
})

const outdatedRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/sdks/outdated',
  operationId: 'getOutdatedProjectSdks',
  tags,
  summary: 'Get outdated project SDKs',
  description: `The outdated SDK versions (see GET /api/admin/metrics/sdks/outdated) run by applications that reported the project's flags, each with those applications. ${hidden}`,
  request: { params: projectIdParam },
  responses: { 200: { description: 'The outdated SDKs', content: jsonContent(OutdatedSdksSchema()) }, ...pickErrors(401, 403, 404) },
})

const ProjectInsightsSchema = () => {
  const counts = { activeCount: z.number(), potentiallyStaleCount: z.number(), staleCount: z.number() }
  return z
    .object({
      stats: ProjectOverviewSchema.shape.stats.openapi('projectStatsSchema'),
      health: z.object({ rating: z.number().int(), ...counts }).openapi({ deprecated: true }),
      technicalDebt: z.object({ rating: z.number().int().min(0).max(100), ...counts }),
      leadTime: DoraSchema(),
      featureTypeCounts: z.array(z.object({ type: z.string(), count: z.number() }).openapi('featureTypeCountSchema')),
      members: z.object({ currentMembers: z.number(), change: z.number() }),
    })
    .openapi('projectInsightsSchema')
}

const insightsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/insights',
  operationId: 'getProjectInsights',
  tags,
  summary: 'Get an overview of a project insights',
  description:
    'The project overview\'s statistics (30-day windows), its health (`rating`, deprecated) and technical debt (100 − health) with its live flags counted as active, potentially stale and stale, ' +
    'lead time to production (as GET /api/admin/projects/{projectId}/dora), live flags per type, and its members (directly or through a group) with `change` the members added in the last 30 days. ' +
    hidden,
  request: { params: projectIdParam },
  responses: { 200: { description: 'The project insights', content: jsonContent(ProjectInsightsSchema()) }, ...pickErrors(401, 403, 404) },
})

export const projectInsightRoutes = createRouter()
  .openapi(insightsRoute, async (c) => c.json(await projectInsights(c.var.db, c.req.valid('param').projectId, c.var.clock()), 200))
  .openapi(flagCreatorsRoute, async (c) => c.json(await flagCreators(c.var.db, c.req.valid('param').projectId), 200))
  .openapi(healthReportRoute, async (c) => c.json(await healthReport(c.var.db, c.req.valid('param').projectId, principalKey(c.var.principal), c.var.clock()), 200))
  .openapi(statusRoute, async (c) => c.json(await projectStatus(c.var.db, c.req.valid('param').projectId, c.var.clock()), 200))
  .openapi(doraRoute, async (c) => c.json(await projectDora(c.var.db, c.req.valid('param').projectId), 200))
  .openapi(applicationsRoute, async (c) => c.json(await projectApplications(c.var.db, c.req.valid('param').projectId, c.req.valid('query')), 200))
  .openapi(outdatedRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    await requireProject(c.var.db, projectId)
    return c.json(await outdatedSdks(c.var.db, projectId), 200)
  })
