import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { projectIdParam } from '../http/common-schemas.js'
import { Permission } from '../core/permissions.js'
import { protectedEnvironmentsCheck } from '../change-requests/guard.js'
import { requireVisibleProject } from '../projects/visibility.js'
import {
  CloneEnvironmentSchema,
  CreateEnvironmentSchema,
  environmentNameParam,
  EnvironmentSchema,
  EnvironmentsProjectSchema,
  EnvironmentsSchema,
  SortOrderSchema,
  UpdateEnvironmentSchema,
} from './schemas.js'
import { cloneEnvironment } from './clone.js'
import { createEnvironment, deleteEnvironment, getEnvironment, listEnvironments, projectEnvironmentsOf, setEnvironmentEnabled, setSortOrder, updateEnvironment } from './store.js'

const getAllEnvironments = adminRoute({
  method: 'get',
  path: '/api/admin/environments',
  operationId: 'getAllEnvironments',
  tags: ['Environments'],
  summary: 'Get all environments',
  description: 'Every environment, deprecated ones included (`enabled: false`), ordered by sortOrder, then name.',
  responses: {
    200: { description: 'The environments', content: jsonContent(EnvironmentsSchema) },
    ...pickErrors(401, 403),
  },
})

const createEnvironmentRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_ENVIRONMENT },
  path: '/api/admin/environments',
  operationId: 'createEnvironment',
  tags: ['Environments'],
  summary: 'Create an environment',
  description: 'Creates an environment (admin only). Projects do not get it automatically: add it per project. Emits `environment-created`.',
  request: { body: { required: true, content: jsonContent(CreateEnvironmentSchema) } },
  responses: {
    201: { description: 'The new environment', content: jsonContent(EnvironmentSchema) },
    ...pickErrors(400, 401, 403, 409, 415),
  },
})

const getEnvironmentRoute = adminRoute({
  method: 'get',
  path: '/api/admin/environments/{name}',
  operationId: 'getEnvironment',
  tags: ['Environments'],
  summary: 'Get an environment',
  description: 'The environment with its project and API token counts. 404 for an unknown name.',
  request: { params: environmentNameParam },
  responses: { 200: { description: 'The environment', content: jsonContent(EnvironmentSchema) }, ...pickErrors(401, 403, 404) },
})

const getProjectEnvironments = adminRoute({
  method: 'get',
  path: '/api/admin/environments/project/{projectId}',
  operationId: 'getProjectEnvironments',
  tags: ['Environments'],
  summary: 'Get the environments available to a project',
  description:
    'Every environment, `visible` where the project has it, with the project’s client and frontend tokens and enabled flags in it and its default strategy there. 404 for an unknown project or one the caller may not read.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The environments', content: jsonContent(EnvironmentsProjectSchema) }, ...pickErrors(401, 403, 404) },
})

const updateEnvironmentRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_ENVIRONMENT },
  path: '/api/admin/environments/{name}',
  operationId: 'updateEnvironment',
  tags: ['Environments'],
  summary: 'Update an environment',
  description: 'Sets its type and sortOrder (fields left out keep their value). 404 for an unknown name, 400 for a protected environment. Emits `environment-updated` when something changes.',
  request: { params: environmentNameParam, body: { required: true, content: jsonContent(UpdateEnvironmentSchema) } },
  responses: { 200: { description: 'The environment as updated', content: jsonContent(EnvironmentSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const sortOrderRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/environments/sort-order',
  operationId: 'updateSortOrder',
  tags: ['Environments'],
  summary: 'Update environment sort orders',
  description: 'Sets the sort order of each environment named (`{ name: sortOrder }`); others keep theirs. 404 naming unknown environments (nothing changes). Emits `environment-updated` per environment whose order changes.',
  request: { body: { required: true, content: jsonContent(SortOrderSchema) } },
  responses: { 200: { description: 'The sort orders were set' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const toggleRoute = (state: 'on' | 'off') =>
  adminRoute({
    method: 'post',
    'x-change-requests': 'no-sdk-effect',
    'x-permission': { name: Permission.ADMIN },
    path: `/api/admin/environments/{name}/${state}`,
    operationId: state === 'on' ? 'toggleEnvironmentOn' : 'toggleEnvironmentOff',
    tags: ['Environments'],
    summary: state === 'on' ? 'Enable an environment (undeprecate)' : 'Disable an environment (deprecate)',
    description:
      (state === 'on' ? 'Offers the environment to new projects again.' : 'Deprecates the environment: new projects no longer get it by default.') +
      ' As in Unleash, projects that have it keep it, and SDKs and tokens of it are served as before. Emits `environment-updated` when the state changes. 404 for an unknown name.',
    request: { params: environmentNameParam },
    responses: { 204: { description: 'The environment is ' + (state === 'on' ? 'enabled' : 'disabled') }, ...pickErrors(401, 403, 404) },
  })

const deleteEnvironmentRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.DELETE_ENVIRONMENT },
  path: '/api/admin/environments/{name}',
  operationId: 'removeEnvironment',
  tags: ['Environments'],
  summary: 'Delete an environment',
  description:
    'Deletes it with the flags’ configuration in it (switches, strategies, variants), the projects’ settings of it and its API tokens (each with `api-token-deleted`: they stop working at once). ' +
    '400 for a protected environment or the only environment of a project; 404 for an unknown name. Where a project requires change requests in it, needs SKIP_CHANGE_REQUEST there. Emits `environment-deleted`.',
  request: { params: environmentNameParam },
  responses: { 200: { description: 'The environment was deleted' }, ...pickErrors(400, 401, 403, 404) },
})

const cloneEnvironmentRoute = adminRoute({
  method: 'post',
  // A new environment: no SDK token of it exists yet.
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_ENVIRONMENT },
  path: '/api/admin/environments/{name}/clone',
  operationId: 'cloneEnvironment',
  tags: ['Environments'],
  summary: 'Clone an environment',
  description:
    'A new environment copying the source’s in the projects named (default: every project with it): the project’s settings there (default strategy, change requests) and each flag’s switch, variants and strategies with their segments. ' +
    '404 for an unknown source, 409 for a taken name, 400 for a project unknown or without the source. Emits `environment-created`, then `project-environment-added`, `feature-strategy-add`, `feature-environment-variants-updated` and `feature-environment-enabled` for what is copied.',
  request: { params: environmentNameParam, body: { required: true, content: jsonContent(CloneEnvironmentSchema) } },
  responses: { 200: { description: 'The new environment', content: jsonContent(EnvironmentSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

export const environmentRoutes = createRouter()
  .openapi(getAllEnvironments, async (c) => c.json({ version: 1, environments: await listEnvironments(c.var.db) }, 200))
  .openapi(createEnvironmentRoute, async (c) => {
    const environment = await createEnvironment(c.var.db, c.var.caller, c.req.valid('json'))
    return c.json(environment, 201, { Location: `/api/admin/environments/${encodeURIComponent(environment.name)}` })
  })
  .openapi(sortOrderRoute, async (c) => {
    await setSortOrder(c.var.db, c.var.caller, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(getProjectEnvironments, async (c) => {
    const { projectId } = c.req.valid('param')
    await requireVisibleProject(c, projectId)
    return c.json({ version: 1, environments: await projectEnvironmentsOf(c.var.db, projectId) }, 200)
  })
  .openapi(getEnvironmentRoute, async (c) => c.json(await getEnvironment(c.var.db, c.req.valid('param').name), 200))
  .openapi(updateEnvironmentRoute, async (c) => c.json(await updateEnvironment(c.var.db, c.var.caller, c.req.valid('param').name, c.req.valid('json')), 200))
  .openapi(toggleRoute('on'), async (c) => {
    await setEnvironmentEnabled(c.var.db, c.var.caller, c.req.valid('param').name, true)
    return c.body(null, 204)
  })
  .openapi(toggleRoute('off'), async (c) => {
    await setEnvironmentEnabled(c.var.db, c.var.caller, c.req.valid('param').name, false)
    return c.body(null, 204)
  })
  .openapi(cloneEnvironmentRoute, async (c) => c.json(await cloneEnvironment(c.var.db, c.var.caller, c.req.valid('param').name, c.req.valid('json')), 200))
  .openapi(deleteEnvironmentRoute, async (c) => {
    await deleteEnvironment(c.var.db, c.var.caller, c.req.valid('param').name, protectedEnvironmentsCheck(c))
    return c.body(null, 200)
  })

