import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { projectIdParam } from '../http/common-schemas.js'
import { Permission } from '../core/permissions.js'
import { GroupUserSchema } from '../groups/schemas.js'
import { addAccess, addRole, addRoleAccess, changeRole, projectAccess, removeAccess, removeRole, setProjectAccess, setRoles, type Subject } from './access.js'

const tags = ['Projects']
const ids = (what: string) => z.array(z.number().int().positive()).max(1000).openapi({ description: `${what} ids` })

const AddAccessSchema = z
  .object({ roles: ids('Project role').min(1, 'roles must name at least one role'), users: ids('User'), groups: ids('Group').optional() })
  .openapi('projectAddAccessSchema')

const RolesSchema = z.object({ roles: ids('Project role') }).openapi('projectRolesSchema')

const AccessConfigurationSchema = z
  .object({
    roles: z
      .array(z.object({ id: z.number().int().positive(), users: ids('User').optional(), groups: ids('Group').optional() }))
      .max(100)
      .openapi({ description: 'Each role with the users and groups who are to hold it' }),
  })
  .openapi('projectAccessConfigurationSchema')

const RoleAccessSchema = z
  .object({
    users: z.array(z.object({ id: z.number().int().positive() })).max(1000),
    groups: z.array(z.object({ id: z.number().int().positive() })).max(1000),
  })
  .openapi('projectAccessModelSchema')

const ProjectAccessSchema = z
  .object({
    version: z.number().int(),
    roles: z.array(
      z.object({
        id: z.number().int(),
        type: z.string(),
        name: z.string(),
        description: z.string().nullable(),
        givable: z.boolean().openapi({ description: 'Flagpost: whether the caller may give this role in the project (every permission of it held there, or an admin)' }),
      }),
    ),
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
    groups: z.array(
      z
        .object({
          id: z.number().int(),
          name: z.string(),
          description: z.string().nullable(),
          mappingsSSO: z.array(z.string()),
          rootRole: z.number().int().nullable(),
          createdBy: z.string().nullable(),
          createdAt: z.string().openapi({ format: 'date-time' }),
          users: z.array(GroupUserSchema),
          roles: z.array(z.number().int()),
          addedAt: z.string().openapi({ format: 'date-time' }),
        })
        .openapi('groupWithProjectRoleSchema'),
    ),
  })
  .openapi('projectAccessSchema')

const idParam = (name: string, what: string) => z.string().regex(/^\d{1,9}$/, `${name} must be a ${what} id`).openapi({ param: { name, in: 'path' } })
const userParams = projectIdParam.extend({ userId: idParam('userId', 'user') })
const groupParams = projectIdParam.extend({ groupId: idParam('groupId', 'group') })
const userRoleParams = userParams.extend({ roleId: idParam('roleId', 'role') })
const groupRoleParams = groupParams.extend({ roleId: idParam('roleId', 'role') })
const roleParams = projectIdParam.extend({ roleId: idParam('roleId', 'role') })

const writeRule =
  'Needs UPDATE_PROJECT in the project (its Owners, Editors and Admins). Admins may give any project role; anyone else, the project’s Owners too, only a role whose ' +
  'every permission they hold in the project themselves, an environment’s permission in that environment or in every one (403 otherwise; Unleash lets Owners give any role, ' +
  'Flagpost does not, so that an Owner cannot give SKIP_CHANGE_REQUEST, which the Owner role lacks). A change that leaves no Owner where there was one is a 400. ' +
  'Takes effect on the holders’ next request. 404 for an unknown project.'
const roleRules = 'Roles are project roles, built in (4 Owner, 5 Member) or custom: 400 for another role, an unknown user or an unknown group.'
const legacy = 'Unleash’s route for one role, deprecated since its 5.5 (kept for its clients).'

const accessWrite = { 'x-change-requests': 'no-sdk-effect', 'x-permission': { name: Permission.UPDATE_PROJECT, project: 'projectId' }, tags } as const

const getAccessRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/access',
  operationId: 'getProjectAccess',
  tags,
  summary: 'Get who has which roles in a project',
  description:
    'The users and the groups (with their members) holding roles in the project, with their role ids, and the project roles there are (built in and custom). ' +
    '404 for an unknown project, and for a private project the caller may not read (not a member, directly or through a group, admin, admin token or root role other than Viewer): for them it does not exist, as in Unleash.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The project access', content: jsonContent(ProjectAccessSchema) }, ...pickErrors(401, 403, 404) },
})

const addAccessRoute = adminRoute({
  ...accessWrite,
  method: 'post',
  path: '/api/admin/projects/{projectId}/access',
  operationId: 'addAccessToProject',
  summary: 'Give users and groups roles in a project',
  description: `Gives every user and group listed every role listed; roles they already hold are kept. ${roleRules} ${writeRule} Emits \`project-access-added\` (data: each role with the user and group ids).`,
  request: { params: projectIdParam, body: { required: true, content: jsonContent(AddAccessSchema) } },
  responses: { 200: { description: 'The roles were given' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const setAccessRoute = adminRoute({
  ...accessWrite,
  method: 'put',
  path: '/api/admin/projects/{projectId}/access',
  operationId: 'setProjectAccess',
  summary: 'Set who has which roles in a project',
  description:
    `The project’s access becomes exactly the one given: each role with the users and groups to hold it; users and groups not listed lose their roles there. ${roleRules} ` +
    `${writeRule} Emits \`project-access-updated\` (data and preData: each role held, with its user and group ids).`,
  request: { params: projectIdParam, body: { required: true, content: jsonContent(AccessConfigurationSchema) } },
  responses: { 200: { description: 'The access was set' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const addRoleAccessRoute = adminRoute({
  ...accessWrite,
  method: 'post',
  path: '/api/admin/projects/{projectId}/role/{roleId}/access',
  operationId: 'addRoleAccessToProject',
  deprecated: true,
  summary: 'Give users and groups one role in a project',
  description: `Gives the users and groups listed the role. ${legacy} Use POST …/access. ${roleRules} ${writeRule} Emits \`project-access-added\` (data: \`roles\`: the role with the user and group ids, as Unleash wrote it).`,
  request: { params: roleParams, body: { required: true, content: jsonContent(RoleAccessSchema) } },
  responses: { 200: { description: 'The role was given' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const setRolesRoute = (kind: 'user' | 'group') =>
  adminRoute({
    ...accessWrite,
    method: 'put',
    path: kind === 'user' ? '/api/admin/projects/{projectId}/users/{userId}/roles' : '/api/admin/projects/{projectId}/groups/{groupId}/roles',
    operationId: kind === 'user' ? 'setRolesForUser' : 'setRolesForGroup',
    summary: `Set a ${kind}'s roles in a project`,
    description: `Replaces the ${kind}'s roles in the project (an empty list takes them all away). ${roleRules} ${writeRule} Emits \`project-access-${kind}-roles-updated\` (data and preData: the roles and the ${kind} id).`,
    request: { params: kind === 'user' ? userParams : groupParams, body: { required: true, content: jsonContent(RolesSchema) } },
    responses: { 200: { description: 'The roles were set' }, ...pickErrors(400, 401, 403, 404, 415) },
  })

const removeAccessRoute = (kind: 'user' | 'group') =>
  adminRoute({
    ...accessWrite,
    method: 'delete',
    path: kind === 'user' ? '/api/admin/projects/{projectId}/users/{userId}/roles' : '/api/admin/projects/{projectId}/groups/{groupId}/roles',
    operationId: kind === 'user' ? 'removeUserAccess' : 'removeGroupAccess',
    summary: `Remove a ${kind}'s access to a project`,
    description: `Takes every role of the ${kind} in the project away; 404 when they hold none. ${writeRule} Emits \`project-access-${kind}-roles-deleted\` (preData: the roles and the ${kind} id).`,
    request: { params: kind === 'user' ? userParams : groupParams },
    responses: { 200: { description: 'The access was removed' }, ...pickErrors(400, 401, 403, 404) },
  })

const oneRoleRoute = (kind: 'user' | 'group', method: 'post' | 'put' | 'delete') => {
  const [what, event] = {
    post: ['Gives the ' + kind + ' the role, keeping their others; 409 when they hold it already.', `project-${kind}-added\` (data`],
    put: ['Makes the role the ' + kind + '’s only role in the project; 404 when they hold none; nothing is written when it already is.', `project-${kind}-role-changed\` (data and preData`],
    delete: ['Takes the one role from the ' + kind + '; 404 when they do not hold it.', `project-${kind}-removed\` (preData`],
  }[method]
  return adminRoute({
    ...accessWrite,
    method,
    path: kind === 'user' ? '/api/admin/projects/{projectId}/users/{userId}/roles/{roleId}' : '/api/admin/projects/{projectId}/groups/{groupId}/roles/{roleId}',
    operationId: `${{ post: 'add', put: 'change', delete: 'remove' }[method]}${kind === 'user' ? 'User' : 'Group'}Role`,
    deprecated: true,
    summary: `${{ post: 'Give', put: 'Change to', delete: 'Take' }[method]} one role ${method === 'delete' ? 'from' : 'of'} a ${kind} in a project`,
    description: `${what} ${legacy} ${roleRules} ${writeRule} Emits \`${event}: the ${kind} id, the role id and name).`,
    request: { params: kind === 'user' ? userRoleParams : groupRoleParams },
    responses: { 200: { description: 'Done' }, ...pickErrors(400, 401, 403, 404, ...(method === 'post' ? ([409] as const) : [])) },
  })
}

// The path patterns allow at most 9 digits, so every id is a valid Postgres integer.
const subjectOf = (params: { userId: string } | { groupId: string }): Subject => ('userId' in params ? { kind: 'user', id: Number(params.userId) } : { kind: 'group', id: Number(params.groupId) })

export const projectAccessRoutes = createRouter()
  .openapi(getAccessRoute, async (c) => c.json(await projectAccess(c.var.db, c.req.valid('param').projectId, c.var.principal), 200))
  .openapi(addAccessRoute, async (c) => {
    await addAccess(c.var.db, c.var.caller, c.req.valid('param').projectId, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(setAccessRoute, async (c) => {
    await setProjectAccess(c.var.db, c.var.caller, c.req.valid('param').projectId, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(addRoleAccessRoute, async (c) => {
    const { projectId, roleId } = c.req.valid('param')
    await addRoleAccess(c.var.db, c.var.caller, projectId, Number(roleId), c.req.valid('json'))
    return c.body(null, 200)
  })

for (const kind of ['user', 'group'] as const) {
  projectAccessRoutes
    .openapi(setRolesRoute(kind), async (c) => {
      const params = c.req.valid('param')
      await setRoles(c.var.db, c.var.caller, params.projectId, subjectOf(params), c.req.valid('json').roles)
      return c.body(null, 200)
    })
    .openapi(removeAccessRoute(kind), async (c) => {
      const params = c.req.valid('param')
      await removeAccess(c.var.db, c.var.caller, params.projectId, subjectOf(params))
      return c.body(null, 200)
    })
    .openapi(oneRoleRoute(kind, 'post'), async (c) => {
      const params = c.req.valid('param')
      await addRole(c.var.db, c.var.caller, params.projectId, subjectOf(params), Number(params.roleId))
      return c.body(null, 200)
    })
    .openapi(oneRoleRoute(kind, 'put'), async (c) => {
      const params = c.req.valid('param')
      await changeRole(c.var.db, c.var.caller, params.projectId, subjectOf(params), Number(params.roleId))
      return c.body(null, 200)
    })
    .openapi(oneRoleRoute(kind, 'delete'), async (c) => {
      const params = c.req.valid('param')
      await removeRole(c.var.db, c.var.caller, params.projectId, subjectOf(params), Number(params.roleId))
      return c.body(null, 200)
    })
}
