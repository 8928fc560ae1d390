import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import {
  CreateStrategyDefinitionSchema,
  StrategyDefinitionSchema,
  StrategyDefinitionsSchema,
  strategyNameParam,
  strategyNameParamForState,
  UpdateStrategyDefinitionSchema,
} from './schemas.js'
import { createStrategyDefinition, deleteStrategyDefinition, getStrategyDefinition, listStrategyDefinitions, setDeprecated, updateStrategyDefinition } from './store.js'

const tags = ['Strategies']
const base = '/api/admin/strategies'
const parameterRule =
  'A flag strategy of a custom type must give its required parameters (non-empty), a `number` one a number, a `percentage` one a whole number 0 to 100, a `boolean` one true or false (`string` and `list`, a comma-separated string, take any text).'

const listRoute = adminRoute({
  method: 'get',
  path: base,
  operationId: 'getAllStrategies',
  tags,
  summary: 'Get all strategy types',
  description:
    'The built-in strategy types (`editable: false`) and the custom ones, by sort order then name. Flag strategies, default strategies and change requests may only use a defined type, and not a deprecated one for a new use. ' +
    'Open to every signed-in user and admin token.',
  responses: { 200: { description: 'The strategy types', content: jsonContent(StrategyDefinitionsSchema) }, ...pickErrors(401, 403) },
})

const getRoute = adminRoute({
  method: 'get',
  path: `${base}/{name}`,
  operationId: 'getStrategy',
  tags,
  summary: 'Get a strategy type',
  description: 'The strategy type of that name; 404 NotFoundError for an unknown one.',
  request: { params: strategyNameParam },
  responses: { 200: { description: 'The strategy type', content: jsonContent(StrategyDefinitionSchema) }, ...pickErrors(401, 403, 404) },
})

const createRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_STRATEGY },
  path: base,
  operationId: 'createStrategy',
  tags,
  summary: 'Create a custom strategy type',
  description:
    '`name` 1 to 100 letters, digits, `_ . -` and free (409 NameExistsError otherwise); `parameters` each with a unique `name`, a `type` (string, percentage, list, number, boolean), `description` and `required`. ' +
    `${parameterRule} Needs CREATE_STRATEGY (Admin and Editor, as in Unleash). Emits \`strategy-created\`.`,
  request: { body: { required: true, content: jsonContent(CreateStrategyDefinitionSchema) } },
  responses: {
    201: { description: 'The new strategy type', content: jsonContent(StrategyDefinitionSchema), headers: { location: { schema: { type: 'string' }, description: 'The location of the new strategy type' } } },
    ...pickErrors(400, 401, 403, 409, 415),
  },
})

const updateRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_STRATEGY },
  path: `${base}/{name}`,
  operationId: 'updateStrategy',
  tags,
  summary: 'Update a custom strategy type',
  description:
    'Replaces `parameters`; `title` and `description` are kept when absent. Flag strategies already using the type are not checked again (a later write of them is). A built-in type cannot be changed (400; Unleash answers 500). ' +
    'Needs UPDATE_STRATEGY. Answers 200 with no body. Emits `strategy-updated` with the previous type as preData (none when nothing changes).',
  request: { params: strategyNameParam, body: { required: true, content: jsonContent(UpdateStrategyDefinitionSchema) } },
  responses: { 200: { description: 'The strategy type was updated' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const deleteRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.DELETE_STRATEGY },
  path: `${base}/{name}`,
  operationId: 'removeStrategy',
  tags,
  summary: 'Delete a custom strategy type',
  description:
    'Deletes a custom strategy type nothing uses: one used by a strategy of a live flag or by a project default strategy is a 409 ConflictError naming them (Unleash does not check); a built-in one a 400. ' +
    'Needs DELETE_STRATEGY. Answers 200 with no body. Emits `strategy-deleted` with the type as preData.',
  request: { params: strategyNameParam },
  responses: { 200: { description: 'The strategy type was deleted' }, ...pickErrors(400, 401, 403, 404, 409) },
})

const deprecateRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_STRATEGY },
  path: `${base}/{strategyName}/deprecate`,
  operationId: 'deprecateStrategy',
  tags,
  summary: 'Deprecate a strategy type',
  description:
    'A deprecated type cannot be given to a flag strategy, default strategy or change request any more; strategies already using it keep working and may be updated. Built-in types too, as in Unleash. ' +
    'Needs UPDATE_STRATEGY. Emits `strategy-deprecated` (none when it already was).',
  request: { params: strategyNameParamForState },
  responses: { 200: { description: 'The strategy type is deprecated' }, ...pickErrors(401, 403, 404, 409) },
})

const reactivateRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_STRATEGY },
  path: `${base}/{strategyName}/reactivate`,
  operationId: 'reactivateStrategy',
  tags,
  summary: 'Reactivate a strategy type',
  description: 'Marks a deprecated type as not deprecated; nothing changes for one that was not. Needs UPDATE_STRATEGY. Emits `strategy-reactivated` (none when nothing changes).',
  request: { params: strategyNameParamForState },
  responses: { 200: { description: 'The strategy type is not deprecated' }, ...pickErrors(401, 403, 404, 409) },
})

export const strategyDefinitionRoutes = createRouter()
  .openapi(listRoute, async (c) => c.json(await listStrategyDefinitions(c.var.db), 200))
  .openapi(getRoute, async (c) => c.json(await getStrategyDefinition(c.var.db, c.req.valid('param').name), 200))
  .openapi(createRoute, async (c) => {
    const definition = await createStrategyDefinition(c.var.db, c.var.caller, c.req.valid('json'))
    return c.json(definition, 201, { Location: `${base}/${definition.name}` })
  })
  .openapi(updateRoute, async (c) => {
    await updateStrategyDefinition(c.var.db, c.var.caller, c.req.valid('param').name, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(deleteRoute, async (c) => {
    await deleteStrategyDefinition(c.var.db, c.var.caller, c.req.valid('param').name)
    return c.body(null, 200)
  })
  .openapi(deprecateRoute, async (c) => {
    await setDeprecated(c.var.db, c.var.caller, c.req.valid('param').strategyName, true)
    return c.body(null, 200)
  })
  .openapi(reactivateRoute, async (c) => {
    await setDeprecated(c.var.db, c.var.caller, c.req.valid('param').strategyName, false)
    return c.body(null, 200)
  })
