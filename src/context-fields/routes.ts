import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import {
  contextFieldParam,
  ContextFieldSchema,
  ContextFieldsSchema,
  ContextFieldStrategiesSchema,
  CreateContextFieldSchema,
  legalValueParam,
  LegalValueSchema,
  NameSchema,
  UpdateContextFieldSchema,
} from './schemas.js'
import {
  createContextField,
  deleteContextField,
  deleteLegalValue,
  getContextField,
  listContextFields,
  putLegalValue,
  strategiesUsing,
  updateContextField,
  validateContextFieldName,
} from './store.js'

const tags = ['Context']
const legalValuesRule =
  'A field with legal values makes constraints on it (in flag strategies, project default strategies, segments and applied change requests) accept only those values (400 otherwise); a field without any accepts every value.'

const getContextFieldsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/context',
  operationId: 'getContextFields',
  tags,
  summary: 'Get all context fields',
  description:
    'Every context field, by `sortOrder`, then name, the built-in ones (environment, userId, appName, currentTime, sessionId) included. `usedInFeatures` and `usedInProjects` count the live (not archived) flags whose strategies constrain the field, and their projects; 0 when none (Unleash leaves them out then). ' +
    'Project-scoped context fields are not served. Open to every signed-in user and admin token.',
  responses: { 200: { description: 'The context fields', content: jsonContent(ContextFieldsSchema) }, ...pickErrors(401, 403) },
})

const getContextFieldRoute = adminRoute({
  method: 'get',
  path: '/api/admin/context/{contextField}',
  operationId: 'getContextField',
  tags,
  summary: 'Get a context field',
  description: 'The context field of that name (without usage counts, as in Unleash); 404 NotFoundError for an unknown one.',
  request: { params: contextFieldParam },
  responses: { 200: { description: 'The context field', content: jsonContent(ContextFieldSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const getStrategiesRoute = adminRoute({
  method: 'get',
  path: '/api/admin/context/{contextField}/strategies',
  operationId: 'getStrategiesByContextField',
  tags: ['Strategies'],
  summary: 'Get strategies that use a context field',
  description:
    'The strategies of live (not archived) flags with a constraint on the field, by flag, environment and sort order; an empty list for an unknown field, as in Unleash. ' +
    'Strategies of private projects the caller may not read are left out.',
  request: { params: contextFieldParam },
  responses: { 200: { description: 'The strategies', content: jsonContent(ContextFieldStrategiesSchema) }, ...pickErrors(400, 401, 403) },
})

const createContextFieldRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_CONTEXT_FIELD },
  path: '/api/admin/context',
  operationId: 'createContextField',
  tags,
  summary: 'Create a context field',
  description:
    'Creates a context field: `name` URL-friendly, 1 to 100 characters, and free (409 NameExistsError otherwise); `description` (up to 250 characters), `stickiness` (default false), `sortOrder` (default 0, as Unleash stores it), ' +
    '`legalValues` (each `value` 1 to 100 characters, unique, with an optional `description`). ' +
    `${legalValuesRule} Needs CREATE_CONTEXT_FIELD (Admin and Editor, as in Unleash). Emits \`context-field-created\`.`,
  request: { body: { required: true, content: jsonContent(CreateContextFieldSchema) } },
  responses: {
    201: { description: 'The new context field', content: jsonContent(ContextFieldSchema), headers: { location: { schema: { type: 'string' }, description: 'The location of the new context field' } } },
    ...pickErrors(400, 401, 403, 409, 415),
  },
})

const updateContextFieldRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_CONTEXT_FIELD },
  path: '/api/admin/context/{contextField}',
  operationId: 'updateContextField',
  tags,
  summary: 'Update a context field',
  description:
    'Replaces `stickiness` (false when absent) and `legalValues` (none when absent), as Unleash does; `description` and `sortOrder` are kept when absent (Unleash resets the sort order to 0 on every update). ' +
    'A `name` in the body is ignored: the path names the field. Legal values that constraints use may be removed, as in Unleash: those constraints keep working, and a later write of them must drop the value. ' +
    'Needs UPDATE_CONTEXT_FIELD. Answers 200 with no body, as Unleash does. Emits `context-field-updated` with the previous field as preData (none when nothing changes).',
  request: { params: contextFieldParam, body: { required: true, content: jsonContent(UpdateContextFieldSchema) } },
  responses: { 200: { description: 'The context field was updated' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const putLegalValueRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_CONTEXT_FIELD },
  path: '/api/admin/context/{contextField}/legal-values',
  operationId: 'updateContextFieldLegalValue',
  tags,
  summary: 'Add or update a legal value of a context field',
  description:
    'Adds the legal value, or replaces the description of the one with that `value`. Needs UPDATE_CONTEXT_FIELD. Answers 200 with no body. Emits `context-field-updated` (none when nothing changes).',
  request: { params: contextFieldParam, body: { required: true, content: jsonContent(LegalValueSchema) } },
  responses: { 200: { description: 'The legal value was written' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const deleteLegalValueRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_CONTEXT_FIELD },
  path: '/api/admin/context/{contextField}/legal-values/{legalValue}',
  operationId: 'deleteContextFieldLegalValue',
  tags,
  summary: 'Delete a legal value of a context field',
  description:
    'Removes the legal value. As in Unleash, it does not check whether constraints use it and does not change them: they keep evaluating as before, and a later write of them must drop the value. ' +
    'An unknown value changes nothing. Needs UPDATE_CONTEXT_FIELD. Answers 200 with no body. Emits `context-field-updated` when a value was removed.',
  request: { params: legalValueParam },
  responses: { 200: { description: 'The legal value is gone' }, ...pickErrors(400, 401, 403, 404, 409) },
})

const deleteContextFieldRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.DELETE_CONTEXT_FIELD },
  path: '/api/admin/context/{contextField}',
  operationId: 'deleteContextField',
  tags,
  summary: 'Delete a context field',
  description:
    'Deletes a context field no constraint uses. One used by a strategy of a live flag (archived flags do not count, as in Unleash), by a segment or by a project default strategy is a 409 ConflictError naming them ' +
    '(Unleash checks flag strategies only). Built-in fields may be deleted, as in Unleash. Needs DELETE_CONTEXT_FIELD. Answers 200 with no body. Emits `context-field-deleted` with the field as preData.',
  request: { params: contextFieldParam },
  responses: { 200: { description: 'The context field was deleted' }, ...pickErrors(400, 401, 403, 404, 409) },
})

const validateNameRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_CONTEXT_FIELD },
  path: '/api/admin/context/validate',
  operationId: 'validateContextFieldName',
  tags,
  summary: 'Validate a context field name',
  description:
    'Answers 200 when `name` could name a new context field: 400 ValidationError when it is not URL-friendly or not 1 to 100 characters, 409 NameExistsError when a field has it. Writes nothing. ' +
    'Needs UPDATE_CONTEXT_FIELD, as in Unleash.',
  request: { body: { required: true, content: jsonContent(NameSchema) } },
  responses: { 200: { description: 'The name is valid and free' }, ...pickErrors(400, 401, 403, 409, 415) },
})

export const contextFieldRoutes = createRouter()
  .openapi(getContextFieldsRoute, async (c) => c.json(await listContextFields(c.var.db), 200))
  .openapi(validateNameRoute, async (c) => {
    await validateContextFieldName(c.var.db, c.req.valid('json').name)
    return c.body(null, 200)
  })
  .openapi(getContextFieldRoute, async (c) => c.json(await getContextField(c.var.db, c.req.valid('param').contextField), 200))
  .openapi(getStrategiesRoute, async (c) => c.json(await strategiesUsing(c.var.db, c.req.valid('param').contextField, await hiddenProjectsOf(c)), 200))
  .openapi(createContextFieldRoute, async (c) => {
    const field = await createContextField(c.var.db, c.var.caller, c.req.valid('json'))
    return c.json(field, 201, { Location: `/api/admin/context/${field.name}` })
  })
  .openapi(updateContextFieldRoute, async (c) => {
    await updateContextField(c.var.db, c.var.caller, c.req.valid('param').contextField, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(putLegalValueRoute, async (c) => {
    await putLegalValue(c.var.db, c.var.caller, c.req.valid('param').contextField, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(deleteLegalValueRoute, async (c) => {
    const { contextField, legalValue } = c.req.valid('param')
    await deleteLegalValue(c.var.db, c.var.caller, contextField, legalValue)
    return c.body(null, 200)
  })
  .openapi(deleteContextFieldRoute, async (c) => {
    await deleteContextField(c.var.db, c.var.caller, c.req.valid('param').contextField)
    return c.body(null, 200)
  })
