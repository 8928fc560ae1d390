import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { CreateEnvironmentSchema, EnvironmentSchema, EnvironmentsSchema } from './schemas.js'
import { createEnvironment, listEnvironments } from './store.js'

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

export const environmentRoutes = createRouter()
  .openapi(getAllEnvironments, async (c) => c.json({ version: 1, environments: await listEnvironments(c.var.db) }, 200))
  .openapi(createEnvironmentRoute, async (c) => {
    const environment = await createEnvironment(c.var.db, c.var.caller, c.req.valid('json'))
    return c.json(environment, 201, { Location: `/api/admin/environments/${encodeURIComponent(environment.name)}` })
  })
