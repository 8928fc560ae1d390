import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { PersonalDashboardSchema } from './schemas.js'
import { personalDashboard } from './store.js'
import { hiddenProjectsOf } from '../projects/visibility.js'

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

export const dashboardRoutes = createRouter().openapi(getPersonalDashboard, async (c) => c.json(await personalDashboard(c.var.db, c.var.principal, await hiddenProjectsOf(c), c.var.caller.now), 200))
