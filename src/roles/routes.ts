import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { AdminPermissionsSchema, CreateRoleSchema, ProjectRoleUsageSchema, RoleIdParam, RolesWithVersionSchema, RoleWithPermissionsSchema, RoleWithVersionSchema, ValidateRoleSchema } from './schemas.js'
import { createRole, deleteRole, getRole, listPermissions, listRoles, roleProjectUsage, updateRole, validateRole } from './store.js'

const tags = ['Roles']
const adminOnly = 'Needs the Admin root role (permission ADMIN).'
const takesEffect = 'Takes effect on the holders’ next request through this instance (and within `FLAGPOST_PRINCIPAL_TTL_SECONDS` through others).'
const permissionRules =
  '`permissions`: each by `name` (or `id`, its number in `GET /api/admin/permissions`), an environment permission with the one `environment` it holds in ' +
  '(absent, null or empty: every environment). A custom root role (`root-custom`) holds root permissions; a custom project role (`custom`) project and environment ones. ' +
  '400 for an unknown permission or environment, or one the role’s type may not hold.'

const getPermissionsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/permissions',
  operationId: 'getPermissions',
  tags,
  summary: 'Get every permission',
  description:
    'Every permission Flagpost checks, with its number, display name and type: root permissions (instance-wide), project permissions, and the ' +
    'environment permissions once for each environment. What custom roles are made of. Any authenticated caller.',
  responses: { 200: { description: 'The permissions', content: jsonContent(AdminPermissionsSchema) }, ...pickErrors(401, 403) },
})

const getRolesRoute = adminRoute({
  method: 'get',
  path: '/api/admin/roles',
  operationId: 'getRoles',
  tags,
  summary: 'Get every role',
  description: 'The built-in roles (root: Admin, Editor, Viewer; project: Owner, Member) and the custom ones (root-custom, custom), by id. Any authenticated caller.',
  responses: { 200: { description: 'The roles', content: jsonContent(RolesWithVersionSchema) }, ...pickErrors(401, 403) },
})

const getRoleRoute = adminRoute({
  method: 'get',
  path: '/api/admin/roles/{roleId}',
  operationId: 'getRoleById',
  tags,
  summary: 'Get a role and its permissions',
  description: 'A built-in role lists the permissions Flagpost grants it (in every environment); a custom role those it was given. 404 for an unknown id. Any authenticated caller.',
  request: { params: RoleIdParam },
  responses: { 200: { description: 'The role', content: jsonContent(RoleWithPermissionsSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const createRoleRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/roles',
  operationId: 'createRole',
  tags,
  summary: 'Create a custom role',
  description:
    '`name` (unique: 409 NameExistsError when taken), `description`, `type` (`custom`, the default, or `root-custom`). ' +
    `${permissionRules} Answers the role under \`roles\`, as Unleash. ${adminOnly} Emits \`role-created\` (data: the role and its permissions).`,
  request: { body: { required: true, content: jsonContent(CreateRoleSchema) } },
  responses: {
    201: { description: 'The role was created', headers: { location: { schema: { type: 'string' }, description: 'The location of the new role' } }, content: jsonContent(RoleWithVersionSchema) },
    ...pickErrors(400, 401, 403, 409, 415),
  },
})

const validateRoleRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/roles/validate',
  operationId: 'validateRole',
  tags,
  summary: 'Validate a custom role',
  description: `Checks a role as creating it would, without creating it: 409 NameExistsError when the name is taken, 400 for invalid permissions (their kind is checked when \`type\` is given). Writes nothing. ${adminOnly}`,
  request: { body: { required: true, content: jsonContent(ValidateRoleSchema) } },
  responses: { 200: { description: 'The role is valid and its name free' }, ...pickErrors(400, 401, 403, 409, 415) },
})

const updateRoleRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/roles/{roleId}',
  operationId: 'updateRole',
  tags,
  summary: 'Update a custom role',
  description:
    'Sets the name (409 when another role has it) and description (absent: empty), the type when `type` is given (absent: kept, where Unleash would make it `custom`), ' +
    'and, when `permissions` is given, the permissions (absent: kept, and checked against a new type: 400 when they do not fit it). ' +
    `${permissionRules} A new type, as Unleash allows, only while nobody holds the role: 409 ConflictError saying where (a root role of users, service accounts, groups or invite links cannot become a project role, nor a project role held in projects a root role); ` +
    'deleted users whose root role becomes a project role get Viewer. 403 for a built-in role (they cannot be changed, as in Unleash), 404 for an unknown one. ' +
    `${takesEffect} ${adminOnly} Emits \`role-updated\` (data and preData: the role, its type and its permissions).`,
  request: { params: RoleIdParam, body: { required: true, content: jsonContent(CreateRoleSchema) } },
  responses: { 200: { description: 'The role was updated', content: jsonContent(RoleWithVersionSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const deleteRoleRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/roles/{roleId}',
  operationId: 'deleteRole',
  tags,
  summary: 'Delete a custom role',
  description:
    '409 ConflictError while the role is held (as root role by a user, service account, group or usable invite link, or in a project by a user or group), saying where (the invite links by name). ' +
    'An invite link that gives the role but can no longer be used (switched off, or expired at the time of the request) does not hold it: it is moved to the Viewer role with the deletion, ' +
    'with `public-signup-token-updated` (an invite link\'s role cannot be changed otherwise). ' +
    `403 for a built-in role, 404 for an unknown one. ${adminOnly} Emits \`role-deleted\` (preData: the role and its permissions).`,
  request: { params: RoleIdParam },
  responses: { 200: { description: 'The role was deleted' }, ...pickErrors(400, 401, 403, 404, 409) },
})

const roleProjectAccessRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/projects/roles/{roleId}/access',
  operationId: 'getRoleProjectAccess',
  tags,
  summary: 'Get the projects a role is held in',
  description: `For each project where users, service accounts or groups hold the role: how many of each (users without the service accounts). 404 for an unknown role. ${adminOnly}`,
  request: { params: RoleIdParam },
  responses: { 200: { description: 'Where the role is held', content: jsonContent(ProjectRoleUsageSchema) }, ...pickErrors(400, 401, 403, 404) },
})

// The path pattern allows at most 9 digits, so the number is always a valid Postgres integer.
const roleId = (id: string) => Number(id)

export const roleRoutes = createRouter()
  .openapi(getPermissionsRoute, async (c) => c.json(await listPermissions(c.var.db), 200))
  .openapi(getRolesRoute, async (c) => c.json(await listRoles(c.var.db), 200))
  .openapi(validateRoleRoute, async (c) => {
    await validateRole(c.var.db, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(getRoleRoute, async (c) => c.json(await getRole(c.var.db, roleId(c.req.valid('param').roleId)), 200))
  .openapi(createRoleRoute, async (c) => {
    const created = await createRole(c.var.db, c.var.caller, c.req.valid('json'))
    return c.json(created, 201, { Location: `/api/admin/roles/${created.roles.id}` })
  })
  .openapi(updateRoleRoute, async (c) => c.json(await updateRole(c.var.db, c.var.caller, roleId(c.req.valid('param').roleId), c.req.valid('json')), 200))
  .openapi(deleteRoleRoute, async (c) => {
    await deleteRole(c.var.db, c.var.caller, roleId(c.req.valid('param').roleId))
    return c.body(null, 200)
  })
  .openapi(roleProjectAccessRoute, async (c) => c.json(await roleProjectUsage(c.var.db, roleId(c.req.valid('param').roleId)), 200))
