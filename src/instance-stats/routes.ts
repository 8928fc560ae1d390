import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { instanceStats, statsCsv } from './store.js'

const tags = ['Instance Admin']



const statsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/instance-admin/statistics',
  operationId: 'getInstanceAdminStats',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Instance usage statistics',
  description:
    'What the instance holds and how it is used, for reporting: users (active in the last 7/30/60/90 days), flags, projects, roles, groups, environments, segments, strategies, ' +
    'applications seen, exports and imports, API tokens by type, production changes, yesterday’s metrics buckets, the largest strategy lists and constraints. Enterprise-only parts ' +
    '(SAML, SCIM, release templates and plans, Edge usage) are false or 0. Needs ADMIN.',
  // Inline: documentation only, left out of the worker bundle with the rest of `responses`.
  responses: {
    200: {
      description: 'The statistics',
      content: jsonContent(
        z
          .object({
            instanceId: z.string().openapi({ description: 'This instance: a UUID made at its first start' }),
            timestamp: z.string().nullable().openapi({ format: 'date-time' }),
            versionOSS: z.string(),
            versionEnterprise: z.string().optional(),
            users: z.number().int().min(0),
            readOnlyUsers: z.number().int().min(0).openapi({ description: 'Users whose root role is Viewer' }),
            serviceAccounts: z.number().int().min(0),
            activeUsers: z.object({ last7: z.number().int().min(0), last30: z.number().int().min(0), last60: z.number().int().min(0), last90: z.number().int().min(0) }),
            licensedUsers: z.number().int().min(0).openapi({ description: 'Users seen in the last 30 days, deleted ones included' }),
            productionChanges: z.object({ last30: z.number().int().min(0), last60: z.number().int().min(0), last90: z.number().int().min(0) }).openapi({ description: 'Events in environments of type production' }),
            previousDayMetricsBucketsCount: z.object({ enabledCount: z.number().int().min(0), variantCount: z.number().int().min(0) }),
            featureToggles: z.number().int().min(0),
            archivedFeatureToggles: z.number().int().min(0),
            projects: z.number().int().min(0),
            contextFields: z.number().int().min(0),
            roles: z.number().int().min(0),
            customRootRoles: z.number().int().min(0),
            customRootRolesInUse: z.number().int().min(0),
            groups: z.number().int().min(0),
            environments: z.number().int().min(0),
            segments: z.number().int().min(0),
            strategies: z.number().int().min(0),
            SAMLenabled: z.boolean(),
            OIDCenabled: z.boolean(),
            passwordAuthEnabled: z.boolean(),
            SCIMenabled: z.boolean(),
            clientApps: z.array(z.object({ range: z.enum(['allTime', '30d', '7d']), count: z.number().int() })),
            featureExports: z.number().int().min(0),
            featureImports: z.number().int().min(0),
            apiTokens: z.object({ admin: z.number().int().min(0), client: z.number().int().min(0), frontend: z.number().int().min(0) }),
            maxEnvironmentStrategies: z.number().int().min(0),
            maxConstraints: z.number().int().min(0),
            maxConstraintValues: z.number().int().min(0),
            releaseTemplates: z.number().int().min(0),
            releasePlans: z.number().int().min(0),
            edgeInstanceUsage: z.record(z.string(), z.number()),
            sum: z.string().openapi({ description: 'SHA-256 (hex) of the other fields, as JSON' }),
          })
          .openapi('instanceAdminStatsSchema'),
      ),
    },
    ...pickErrors(401, 403),
  },
})

const statsCsvRoute = adminRoute({
  method: 'get',
  path: '/api/admin/instance-admin/statistics/csv',
  operationId: 'getInstanceAdminStatsCsv',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Instance usage statistics as CSV',
  description: "GET /api/admin/instance-admin/statistics as CSV (Unleash's columns, one row; objects as JSON), a download. Needs ADMIN.",
  responses: { 200: { description: 'The statistics', content: { 'text/csv': { schema: z.string() } } }, ...pickErrors(401, 403) },
})

export const instanceStatsRoutes = createRouter()
  .openapi(statsRoute, async (c) => c.json(await instanceStats(c.var.db, c.var.caller.now, c.var.accounts.version ?? '0.1.0'), 200))
  .openapi(statsCsvRoute, async (c) => {
    const stats = await instanceStats(c.var.db, c.var.caller.now, c.var.accounts.version ?? '0.1.0')
    return c.body(statsCsv(stats), 200, { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': 'attachment; filename="unleash-stats.csv"' })
  })
