import { z } from '@hono/zod-openapi'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { projectIdParam } from '../http/common-schemas.js'
import { Permission } from '../core/permissions.js'
import { addAccess, projectAccess, removeUserAccess, setUserRoles } from './access.js'

const tags = ['Projects']
const ids = (what: string) => z.array(z.number().int().positive()).max(1000).openapi({ description: `${what} ids` })

const AddAccessSchema = z
  .object({ roles: ids('Project role').min(1, 'roles must name at least one role'), users: ids('User'), groups: ids('Group (Flagpost has no groups: leave it empty)').optional() })
  .openapi('projectAddAccessSchema')

const UserRolesSchema = z.object({ roles: ids('Project role') }).openapi('projectRolesSchema')

const ProjectAccessSchema = z
  .object({
    version: z.number().int(),
    roles: z.array(z.object({ id: z.number().int(), type: z.string(), name: z.string(), description: z.string().nullable() })),
    users: z.array(
      z.object({
        id: z.number().int(),
        name: z.string().nullable(),
        email: z.string().nullable(),
        username: z.string().nullable(),
        imageUrl: z.string(),
        roles: z.array(z.number().int()),
        addedAt: z.string().openapi({ format: 'date-time' }),
      }),
    ),
    groups: z.array(z.unknown()),
  })
  .openapi('projectAccessSchema')

const userRolesParams = projectIdParam.extend({
  userId: z.string().regex(/^\d{1,9}$/, 'userId must be a user id').openapi({ param: { name: 'userId', in: 'path' } }),
})

const writeRule = 'Needs UPDATE_PROJECT in the project (its Owners, Editors and Admins). 404 for an unknown project.'

const getAccessRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/access',
  operationId: 'getProjectAccess',
  tags,
  summary: 'Get who has which role in a project',
  description: 'The users with a role in the project (Owner, Member), with their role ids, and the project roles there are. 404 for an unknown project. 404 too for a private project the caller may not read (not a member, admin, admin token or root role other than Viewer): for them it does not exist, as in Unleash.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The project access', content: jsonContent(ProjectAccessSchema) }, ...pickErrors(401, 403, 404) },
})

const addAccessRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_PROJECT, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/access',
  operationId: 'addAccessToProject',
  tags,
  summary: 'Give users roles in a project',
  description:
    'Gives every user listed every role listed (project roles only: 4 Owner, 5 Member); roles a user already has are kept. ' +
    `400 for an unknown user or a role that is not a project role, or for groups. ${writeRule} Emits \`project-access-added\`.`,
  request: { params: projectIdParam, body: { required: true, content: jsonContent(AddAccessSchema) } },
  responses: { 200: { description: 'The roles were given' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const setUserRolesRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_PROJECT, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/users/{userId}/roles',
  operationId: 'setUserRoles',
  tags,
  summary: "Set a user's roles in a project",
  description: `Replaces the user's roles in the project (an empty list takes them all away). Taking the Owner role from the last owner is a 400. ${writeRule} Emits \`project-access-user-roles-updated\`.`,
  request: { params: userRolesParams, body: { required: true, content: jsonContent(UserRolesSchema) } },
  responses: { 200: { description: 'The roles were set' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const removeUserAccessRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_PROJECT, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/users/{userId}/roles',
  operationId: 'removeUserAccess',
  tags,
  summary: "Remove a user's access to a project",
  description: `Takes every role of the user in the project away; 404 when they have none. Removing the last owner is a 400. ${writeRule} Emits \`project-access-user-roles-deleted\`.`,
  request: { params: userRolesParams },
  responses: { 200: { description: 'The access was removed' }, ...pickErrors(400, 401, 403, 404) },
})

export const projectAccessRoutes = createRouter()
  .openapi(getAccessRoute, async (c) => c.json(await projectAccess(c.var.db, c.req.valid('param').projectId), 200))
  .openapi(addAccessRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    await addAccess(c.var.db, c.var.caller, projectId, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(setUserRolesRoute, async (c) => {
    const { projectId, userId } = c.req.valid('param')
    await setUserRoles(c.var.db, c.var.caller, projectId, Number(userId), c.req.valid('json').roles)
    return c.body(null, 200)
  })
  .openapi(removeUserAccessRoute, async (c) => {
    const { projectId, userId } = c.req.valid('param')
    await removeUserAccess(c.var.db, c.var.caller, projectId, Number(userId))
    return c.body(null, 200)
  })
