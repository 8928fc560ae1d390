import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { instanceStats, statsCsv } from './store.js'

const tags = ['Instance Admin']
const count = z.number().int().min(0)

const InstanceAdminStatsSchema = z
  .object({
    instanceId: z.string().openapi({ description: 'This instance: a UUID made at its first start' }),
    timestamp: z.string().nullable().openapi({ format: 'date-time' }),
    versionOSS: z.string(),
    versionEnterprise: z.string().optional(),
    users: count,
    readOnlyUsers: count.openapi({ description: 'Users whose root role is Viewer' }),
    serviceAccounts: count,
    activeUsers: z.object({ last7: count, last30: count, last60: count, last90: count }),
    licensedUsers: count.openapi({ description: 'Users seen in the last 30 days, deleted ones included' }),
    productionChanges: z.object({ last30: count, last60: count, last90: count }).openapi({ description: 'Events in environments of type production' }),
    previousDayMetricsBucketsCount: z.object({ enabledCount: count, variantCount: count }),
    featureToggles: count,
    archivedFeatureToggles: count,
    projects: count,
    contextFields: count,
    roles: count,
    customRootRoles: count,
    customRootRolesInUse: count,
    groups: count,
    environments: count,
    segments: count,
    strategies: count,
    SAMLenabled: z.boolean(),
    OIDCenabled: z.boolean(),
    passwordAuthEnabled: z.boolean(),
    SCIMenabled: z.boolean(),
    clientApps: z.array(z.object({ range: z.enum(['allTime', '30d', '7d']), count })),
    featureExports: count,
    featureImports: count,
    apiTokens: z.object({ admin: count, client: count, frontend: count }),
    maxEnvironmentStrategies: count,
    maxConstraints: count,
    maxConstraintValues: count,
    releaseTemplates: count,
    releasePlans: count,
    edgeInstanceUsage: z.record(z.string(), z.number()),
    sum: z.string().openapi({ description: 'SHA-256 (hex) of the other fields, as JSON' }),
  })
  .openapi('instanceAdminStatsSchema')

const description =
  'What the instance holds and how it is used, for reporting: users (active in the last 7/30/60/90 days), flags, projects, roles, groups, environments, segments, strategies, ' +
  'applications seen, exports and imports, API tokens by type, production changes, yesterday’s metrics buckets, the largest strategy lists and constraints. Enterprise-only parts ' +
  '(SAML, SCIM, release templates and plans, Edge usage) are false or 0. Needs ADMIN.'

const statsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/instance-admin/statistics',
  operationId: 'getInstanceAdminStats',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Instance usage statistics',
  description,
  responses: { 200: { description: 'The statistics', content: jsonContent(InstanceAdminStatsSchema) }, ...pickErrors(401, 403) },
})

const statsCsvRoute = adminRoute({
  method: 'get',
  path: '/api/admin/instance-admin/statistics/csv',
  operationId: 'getInstanceAdminStatsCsv',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Instance usage statistics as CSV',
  description: `${description} As CSV (Unleash's columns, one row; objects as JSON), a download.`,
  responses: { 200: { description: 'The statistics', content: { 'text/csv': { schema: z.string() } } }, ...pickErrors(401, 403) },
})

export const instanceStatsRoutes = createRouter()
  .openapi(statsRoute, async (c) => c.json(await instanceStats(c.var.db, c.var.caller.now, c.var.accounts.version ?? '0.1.0'), 200))
  .openapi(statsCsvRoute, async (c) => {
    const stats = await instanceStats(c.var.db, c.var.caller.now, c.var.accounts.version ?? '0.1.0')
    return c.body(statsCsv(stats), 200, { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': 'attachment; filename="unleash-stats.csv"' })
  })
