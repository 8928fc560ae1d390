import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { PersonalDashboardSchema } from './schemas.js'
import { personalDashboard, personalDashboardProject } from './store.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import { projectIdParam } from '../http/common-schemas.js'
import * as z from '../http/zod.js'

const getPersonalDashboard = adminRoute({
  method: 'get',
  path: '/api/admin/personal-dashboard',
  operationId: 'getPersonalDashboard',
  tags: ['Projects'],
  summary: 'Get personal dashboard',
  description:
    'For the caller: `admins` (active users with the Admin root role), `projectOwners` (owners of the projects the caller can see: ' +
    'all for admins, admin tokens and root roles other than Viewer, else those that are not private and the private ones the caller has a role in; ' +
    'users holding Owner there and the members of groups holding it, each once, as users: unlike Unleash, which leaves group owners out of this list), ' +
    '`projects` (live projects the caller can read where the caller has a role or that they favorited, with health as in the project overview, members and live flags) and `flags` (live flags ' +
    'of projects the caller can read that the caller created or favorited, newest first, at most 100). A caller that is not a user (an admin API token) gets empty `projects` and `flags`. ' +
    'Any signed-in caller may read it.',
  responses: { 200: { description: 'The dashboard', content: jsonContent(PersonalDashboardSchema) }, ...pickErrors(401, 403) },
})

const ProjectDetailsSchema = () => {
  const count = z.number().int().min(0)
  return z
    .object({
      owners: z.array(
        z.union([
          z.object({ ownerType: z.enum(['user']), name: z.string(), imageUrl: z.string().nullable(), email: z.string().nullable() }),
          z.object({ ownerType: z.enum(['group']), name: z.string() }),
          z.object({ ownerType: z.enum(['system']) }),
        ]),
      ),
      roles: z.array(z.object({ id: z.number().int(), name: z.string(), type: z.enum(['custom', 'project']) })),
      latestEvents: z.array(z.object({ id: z.number().int(), summary: z.string().nullable(), createdBy: z.string(), createdByImageUrl: z.string(), createdAt: z.string().openapi({ format: 'date-time' }) })),
      onboardingStatus: z.union([z.object({ status: z.enum(['onboarding-started', 'sdk-connected', 'onboarded']) }), z.object({ status: z.enum(['first-flag-created']), feature: z.string() })]),
      insights: z.object({
        avgHealthCurrentWindow: count.nullable(),
        avgHealthPastWindow: count.nullable(),
        totalFlags: count,
        activeFlags: count,
        staleFlags: count,
        potentiallyStaleFlags: count,
        health: count,
        technicalDebt: count.max(100),
      }),
    })
    .openapi('personalDashboardProjectDetailsSchema')
}

const getPersonalDashboardProject = adminRoute({
  method: 'get',
  path: '/api/admin/personal-dashboard/{projectId}',
  operationId: 'getPersonalDashboardProjectDetails',
  tags: ['Projects'],
  summary: 'Get personal project details',
  description:
    'For one live project: `owners` (users, then groups, holding Owner there; `[{ ownerType: system }]` when none), the caller\'s `roles` there (their own and their groups\'; none for an API token), ' +
    'its 10 latest events (`summary` null), its onboarding status (as the project overview\'s) and its live flags counted by staleness with health and technical debt ' +
    '(the windows\' average health is null: Flagpost keeps no history of it). Any signed-in caller who may read the project; 404 for an unknown or archived project, and for a private one the caller may not read.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The project details', content: jsonContent(ProjectDetailsSchema()) }, ...pickErrors(401, 403, 404) },
})

export const dashboardRoutes = createRouter()
  .openapi(getPersonalDashboard, async (c) => c.json(await personalDashboard(c.var.db, c.var.principal, await hiddenProjectsOf(c), c.var.caller.now), 200))
  .openapi(getPersonalDashboardProject, async (c) => c.json(await personalDashboardProject(c.var.db, c.var.principal, c.req.valid('param').projectId, c.var.caller.now), 200))
