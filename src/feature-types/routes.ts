import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { featureTypeIdParam, FeatureTypeSchema, FeatureTypesSchema, UpdateFeatureTypeLifetimeSchema } from './schemas.js'
import { listFeatureTypes, updateFeatureTypeLifetime } from './store.js'

const tags = ['Feature Types']

const getAllFeatureTypes = adminRoute({
  method: 'get',
  path: '/api/admin/feature-types',
  operationId: 'getAllFeatureTypes',
  tags,
  summary: 'Get all feature types',
  description: "Unleash's five flag types with their lifetimes in days (null: never potentially stale). Any authenticated caller.",
  responses: { 200: { description: 'The flag types', content: jsonContent(FeatureTypesSchema) }, ...pickErrors(401, 403) },
})

const updateLifetimeRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/feature-types/{id}/lifetime',
  operationId: 'updateFeatureTypeLifetime',
  tags,
  summary: 'Update feature type lifetime',
  description:
    'Sets how many days a flag of the type lives before the potentially-stale job marks it (0 or null: never). Admins only. 404 for an unknown type. ' +
    'As in Unleash, no event is recorded for it; the job (hourly on Node, on the cron on Workers) marks or clears the flags it affects, marking with `feature-potentially-stale-on`.',
  request: { params: featureTypeIdParam, body: { required: true, content: jsonContent(UpdateFeatureTypeLifetimeSchema) } },
  responses: { 200: { description: 'The flag type', content: jsonContent(FeatureTypeSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

export const featureTypeRoutes = createRouter()
  .openapi(getAllFeatureTypes, async (c) => c.json({ version: 1 as const, types: await listFeatureTypes(c.var.db) }, 200))
  .openapi(updateLifetimeRoute, async (c) => c.json(await updateFeatureTypeLifetime(c.var.db, c.req.valid('param').id, c.req.valid('json').lifetimeDays), 200))
