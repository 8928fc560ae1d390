import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { featureEnvironmentPathParams } from '../flags/schemas.js'
import { requireDirectChangeAllowed } from '../change-requests/guard.js'
import { CreateStrategySchema, SetSortOrderSchema, StrategySchema, UpdateStrategySchema } from './schemas.js'
import { addFlagStrategy, deleteFlagStrategy, getStrategy, listStrategies, readTarget, setSortOrder, updateFlagStrategy } from './store.js'

const tags = ['Features']
const CHANGE_REQUEST_NOTE = ' Where the project requires change requests in the environment, this needs SKIP_CHANGE_REQUEST (403 otherwise): propose the change in a change request instead.'
const base = '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies'
const strategyParams = featureEnvironmentPathParams.extend({ strategyId: z.string().openapi({ param: { name: 'strategyId', in: 'path' } }) })

const getStrategies = adminRoute({
  method: 'get',
  path: base,
  operationId: 'getFeatureStrategies',
  tags,
  summary: "Get a flag's strategies in an environment",
  description: 'In evaluation order (sortOrder).',
  request: { params: featureEnvironmentPathParams },
  responses: { 200: { description: 'The strategies', content: jsonContent(z.array(StrategySchema)) }, ...pickErrors(401, 403, 404) },
})

const addStrategy = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.CREATE_FEATURE_STRATEGY, project: 'projectId', environment: 'environment' },
  path: base,
  operationId: 'addFeatureStrategy',
  tags,
  summary: 'Add a strategy to a flag in an environment',
  description:
    'Constraints are validated in full (operator, `values` or `value`, numbers, ISO dates, semantic versions, regular expressions, CIDR ranges); segments must exist and be global or of the flag\'s project; ' +
    'variants are checked and weighted like flag variants. Without a sortOrder the strategy goes last. Emits `feature-strategy-add`.' + CHANGE_REQUEST_NOTE,
  request: { params: featureEnvironmentPathParams, body: { required: true, content: jsonContent(CreateStrategySchema) } },
  responses: { 200: { description: 'The new strategy', content: jsonContent(StrategySchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const getStrategyRoute = adminRoute({
  method: 'get',
  path: `${base}/{strategyId}`,
  operationId: 'getFeatureStrategy',
  tags,
  summary: 'Get a strategy',
  request: { params: strategyParams },
  responses: { 200: { description: 'The strategy', content: jsonContent(StrategySchema) }, ...pickErrors(401, 403, 404) },
})

const updateStrategyRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE_STRATEGY, project: 'projectId', environment: 'environment' },
  path: `${base}/{strategyId}`,
  operationId: 'updateFeatureStrategy',
  tags,
  summary: 'Replace a strategy',
  description: 'Replaces the whole configuration (sortOrder kept unless given). Emits `feature-strategy-update` with the previous configuration as preData.' + CHANGE_REQUEST_NOTE,
  request: { params: strategyParams, body: { required: true, content: jsonContent(UpdateStrategySchema) } },
  responses: { 200: { description: 'The updated strategy', content: jsonContent(StrategySchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const deleteStrategyRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.DELETE_FEATURE_STRATEGY, project: 'projectId', environment: 'environment' },
  path: `${base}/{strategyId}`,
  operationId: 'deleteFeatureStrategy',
  tags,
  summary: 'Delete a strategy',
  description: 'Emits `feature-strategy-remove`. The environment keeps its enabled state.' + CHANGE_REQUEST_NOTE,
  request: { params: strategyParams },
  responses: { 200: { description: 'The strategy was deleted' }, ...pickErrors(401, 403, 404) },
})

const setSortOrderRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE_STRATEGY, project: 'projectId', environment: 'environment' },
  path: `${base}/set-sort-order`,
  operationId: 'setStrategySortOrder',
  tags,
  summary: 'Set the order of strategies',
  description: 'Each id must be a strategy of the flag in the environment (404 otherwise). Emits `strategy-order-changed`.' + CHANGE_REQUEST_NOTE,
  request: { params: featureEnvironmentPathParams, body: { required: true, content: jsonContent(SetSortOrderSchema) } },
  responses: { 200: { description: 'The strategies in their new order', content: jsonContent(z.array(StrategySchema)) }, ...pickErrors(400, 401, 403, 404, 415) },
})

export const strategyRoutes = createRouter()
  .openapi(getStrategies, async (c) => {
    const p = c.req.valid('param')
    const target = await readTarget(c.var.db, p)
    return c.json(await listStrategies(c.var.db, target.featureName, target.environment), 200)
  })
  .openapi(setSortOrderRoute, async (c) => {
    const p = c.req.valid('param')
    await requireDirectChangeAllowed(c, p.projectId, p.environment)
    const body = c.req.valid('json')
    return c.json(await setSortOrder(c.var.db, c.var.caller, p, body, c.var.flagStates), 200)
  })
  .openapi(addStrategy, async (c) => {
    const p = c.req.valid('param')
    await requireDirectChangeAllowed(c, p.projectId, p.environment)
    const body = c.req.valid('json')
    return c.json(await addFlagStrategy(c.var.db, c.var.caller, p, body, c.var.flagStates), 200)
  })
  .openapi(getStrategyRoute, async (c) => {
    const p = c.req.valid('param')
    return c.json(await getStrategy(c.var.db, await readTarget(c.var.db, p), p.strategyId), 200)
  })
  .openapi(updateStrategyRoute, async (c) => {
    const p = c.req.valid('param')
    await requireDirectChangeAllowed(c, p.projectId, p.environment)
    const body = c.req.valid('json')
    return c.json(await updateFlagStrategy(c.var.db, c.var.caller, p, body, c.var.flagStates), 200)
  })
  .openapi(deleteStrategyRoute, async (c) => {
    const p = c.req.valid('param')
    await requireDirectChangeAllowed(c, p.projectId, p.environment)
    await deleteFlagStrategy(c.var.db, c.var.caller, p, c.var.flagStates)
    return c.body(null, 200)
  })
