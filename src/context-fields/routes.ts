import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { projectIdParam } from '../http/common-schemas.js'
import { Permission } from '../core/permissions.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import {
  contextFieldParam,
  ContextFieldSchema,
  ContextFieldsSchema,
  ContextFieldStrategiesSchema,
  CreateContextFieldSchema,
  IncludeQuerySchema,
  legalValueParam,
  LegalValueSchema,
  NameSchema,
  projectContextFieldParam,
  projectLegalValueParam,
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
const projectFieldsRule =
  "A project's own field is for that project alone: only its flags' strategies, its default strategies and its segments may constrain it (400 elsewhere, as a segment of another project), and its name is unique across global and project fields, as in Unleash."
/** What the routes under /api/admin/context say of a project's own fields. */
const globalScope =
  "Writes here change global fields only: a project's own field is a 404 here (change it under /api/admin/projects/{projectId}/context; Unleash's routes write both)."

const getContextFieldsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/context',
  operationId: 'getContextFields',
  tags,
  summary: 'Get all context fields',
  description:
    "Every global context field, by `sortOrder`, then name, the built-in ones (environment, userId, appName, currentTime, sessionId) included; with `include=project`, every project's own fields too (with `project`), but those of private projects the caller may not read, as in Unleash. " +
    '`usedInFeatures` and `usedInProjects` count the live (not archived) flags whose strategies constrain the field, and their projects; 0 when none (Unleash leaves them out then). Open to every signed-in user and admin token.',
  request: { query: IncludeQuerySchema },
  responses: { 200: { description: 'The context fields', content: jsonContent(ContextFieldsSchema) }, ...pickErrors(401, 403) },
})

const getContextFieldRoute = adminRoute({
  method: 'get',
  path: '/api/admin/context/{contextField}',
  operationId: 'getContextField',
  tags,
  summary: 'Get a context field',
  description:
    "The context field of that name (without usage counts, as in Unleash): a global one, or a project's own (with `project`) when the caller may read its project; 404 NotFoundError otherwise.",
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
    "Creates a global context field: `name` URL-friendly, 1 to 100 characters, and free (409 NameExistsError otherwise, a project's field's name included); `description` (up to 250 characters), `stickiness` (default false), `sortOrder` (default 0, as Unleash stores it), " +
    "`legalValues` (each `value` 1 to 100 characters, unique, with an optional `description`); `project` absent or null (a project's own field is created under /api/admin/projects/{projectId}/context). " +
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
    `${globalScope} Needs UPDATE_CONTEXT_FIELD. Answers 200 with no body, as Unleash does. Emits \`context-field-updated\` with the previous field as preData (none when nothing changes).`,
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
  description: `Adds the legal value, or replaces the description of the one with that \`value\`. ${globalScope} Needs UPDATE_CONTEXT_FIELD. Answers 200 with no body. Emits \`context-field-updated\` (none when nothing changes).`,
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
    `An unknown value changes nothing. ${globalScope} Needs UPDATE_CONTEXT_FIELD. Answers 200 with no body. Emits \`context-field-updated\` when a value was removed.`,
  request: { params: legalValueParam },
  responses: { 200: { description: 'The legal value is gone' }, ...pickErrors(400, 401, 403, 404, 409) },
})

const inUse =
  'A field used by a strategy of a live flag (archived flags do not count, as in Unleash), by a segment or by a project default strategy is a 409 ConflictError naming them (Unleash checks flag strategies only).'

const deleteContextFieldRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.DELETE_CONTEXT_FIELD },
  path: '/api/admin/context/{contextField}',
  operationId: 'deleteContextField',
  tags,
  summary: 'Delete a context field',
  description: `Deletes a global context field no constraint uses. ${inUse} Built-in fields may be deleted, as in Unleash. ${globalScope} Needs DELETE_CONTEXT_FIELD. Answers 200 with no body. Emits \`context-field-deleted\` with the field as preData.`,
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
    "Answers 200 when `name` could name a new context field: 400 ValidationError when it is not URL-friendly or not 1 to 100 characters, 409 NameExistsError when a field has it (a project's own included). Writes nothing. " +
    'Needs UPDATE_CONTEXT_FIELD, as in Unleash.',
  request: { body: { required: true, content: jsonContent(NameSchema) } },
  responses: { 200: { description: 'The name is valid and free' }, ...pickErrors(400, 401, 403, 409, 415) },
})

/*
 * A project's own context fields, under /api/admin/projects/{projectId}/context: Unleash's paths and operation ids. Its
 * writes need UPDATE_PROJECT_CONTEXT in the project (a project Owner, and Editors and Admins everywhere; Unleash also
 * takes the global permission of each write, which only those hold here). A private project's fields are a 404 to
 * those who may not read it (projectVisibility), and an archived project refuses the writes (404, as its other writes).
 */
const P = '/api/admin/projects/{projectId}/context'
const projectPermission = { name: Permission.UPDATE_PROJECT_CONTEXT, project: 'projectId' }
const projectOnly = "The project's own fields only: a global field or another project's is a 404 here."

const getProjectContextFieldsRoute = adminRoute({
  method: 'get',
  path: P,
  operationId: 'getContextFieldsForProject',
  tags,
  summary: "Get a project's context fields",
  description:
    "The project's own context fields (each with `project`), by `sortOrder`, then name; with `include=root`, the global fields too: those its constraints may use. " +
    "`usedInFeatures` and `usedInProjects` count the live flags whose strategies constrain the field (a project's field: its project's flags only). 404 for an unknown project, or a private one the caller may not read.",
  request: { params: projectIdParam, query: IncludeQuerySchema },
  responses: { 200: { description: 'The context fields', content: jsonContent(ContextFieldsSchema) }, ...pickErrors(401, 403, 404) },
})

const getProjectContextFieldRoute = adminRoute({
  method: 'get',
  path: `${P}/{contextField}`,
  operationId: 'getContextFieldForProject',
  tags,
  summary: "Get a project's context field",
  description: `The project's own field of that name (without usage counts). ${projectOnly}`,
  request: { params: projectContextFieldParam },
  responses: { 200: { description: 'The context field', content: jsonContent(ContextFieldSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const getProjectStrategiesRoute = adminRoute({
  method: 'get',
  path: `${P}/{contextField}/strategies`,
  operationId: 'getStrategiesByContextFieldForProject',
  tags: ['Strategies'],
  summary: 'Get strategies of the project that use a context field',
  description: "The strategies of the project's live flags with a constraint on the field, by flag, environment and sort order; an empty list for an unknown field, as in Unleash.",
  request: { params: projectContextFieldParam },
  responses: { 200: { description: 'The strategies', content: jsonContent(ContextFieldStrategiesSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const createProjectContextFieldRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': projectPermission,
  path: P,
  operationId: 'createContextFieldForProject',
  tags,
  summary: "Create a project's context field",
  description:
    "Creates a field of the project, with the body of the global creation (`project` absent, null or the path's). Its name must be free among global and project fields (409 NameExistsError), and used by no constraint outside the project (409 NameExistsError: those constraints would name a field they may not use). " +
    `${projectFieldsRule} ${legalValuesRule} 404 for an archived project. Needs UPDATE_PROJECT_CONTEXT in the project. Emits \`context-field-created\` with \`project\` set.`,
  request: { params: projectIdParam, body: { required: true, content: jsonContent(CreateContextFieldSchema) } },
  responses: {
    201: { description: 'The new context field', content: jsonContent(ContextFieldSchema), headers: { location: { schema: { type: 'string' }, description: 'The location of the new context field' } } },
    ...pickErrors(400, 401, 403, 404, 409, 415),
  },
})

const updateProjectContextFieldRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': projectPermission,
  path: `${P}/{contextField}`,
  operationId: 'updateContextFieldForProject',
  tags,
  summary: "Update a project's context field",
  description: `As the global update, for the project's own field. ${projectOnly} 404 for an archived project. Needs UPDATE_PROJECT_CONTEXT in the project. Emits \`context-field-updated\` with \`project\` set (none when nothing changes).`,
  request: { params: projectContextFieldParam, body: { required: true, content: jsonContent(UpdateContextFieldSchema) } },
  responses: { 200: { description: 'The context field was updated' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const putProjectLegalValueRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': projectPermission,
  path: `${P}/{contextField}/legal-values`,
  operationId: 'updateContextFieldLegalValueForProject',
  tags,
  summary: "Add or update a legal value of a project's context field",
  description: `As the global one, for the project's own field. ${projectOnly} Needs UPDATE_PROJECT_CONTEXT in the project. Emits \`context-field-updated\` with \`project\` set (none when nothing changes).`,
  request: { params: projectContextFieldParam, body: { required: true, content: jsonContent(LegalValueSchema) } },
  responses: { 200: { description: 'The legal value was written' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const deleteProjectLegalValueRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': projectPermission,
  path: `${P}/{contextField}/legal-values/{legalValue}`,
  operationId: 'deleteContextFieldLegalValueForProject',
  tags,
  summary: "Delete a legal value of a project's context field",
  description: `As the global one, for the project's own field. ${projectOnly} Needs UPDATE_PROJECT_CONTEXT in the project. Emits \`context-field-updated\` with \`project\` set when a value was removed.`,
  request: { params: projectLegalValueParam },
  responses: { 200: { description: 'The legal value is gone' }, ...pickErrors(400, 401, 403, 404, 409) },
})

const deleteProjectContextFieldRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': projectPermission,
  path: `${P}/{contextField}`,
  operationId: 'deleteContextFieldForProject',
  tags,
  summary: "Delete a project's context field",
  description: `Deletes the project's own field when none of the project's constraints uses it. ${inUse} ${projectOnly} Needs UPDATE_PROJECT_CONTEXT in the project. Emits \`context-field-deleted\` with \`project\` set.`,
  request: { params: projectContextFieldParam },
  responses: { 200: { description: 'The context field was deleted' }, ...pickErrors(400, 401, 403, 404, 409) },
})

const validateProjectNameRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': projectPermission,
  path: `${P}/validate`,
  operationId: 'validateContextFieldNameForProject',
  tags,
  summary: "Validate a name for a project's context field",
  description:
    'Answers 200 when `name` could name a new field of the project: 400 when it is not URL-friendly or not 1 to 100 characters, 409 NameExistsError when a field has it or a constraint outside the project uses it. Writes nothing. Needs UPDATE_PROJECT_CONTEXT in the project.',
  request: { params: projectIdParam, body: { required: true, content: jsonContent(NameSchema) } },
  responses: { 200: { description: 'The name is valid and free' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

export const contextFieldRoutes = createRouter()
  .openapi(getContextFieldsRoute, async (c) => c.json(await listContextFields(c.var.db, { project: null, include: c.req.valid('query').include, hidden: await hiddenProjectsOf(c) }), 200))
  .openapi(validateNameRoute, async (c) => {
    await validateContextFieldName(c.var.db, c.req.valid('json').name)
    return c.body(null, 200)
  })
  .openapi(getContextFieldRoute, async (c) => c.json(await getContextField(c.var.db, c.req.valid('param').contextField, null, await hiddenProjectsOf(c)), 200))
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
  .openapi(getProjectContextFieldsRoute, async (c) =>
    c.json(await listContextFields(c.var.db, { project: c.req.valid('param').projectId, include: c.req.valid('query').include, hidden: [] }), 200),
  )
  .openapi(validateProjectNameRoute, async (c) => {
    await validateContextFieldName(c.var.db, c.req.valid('json').name, c.req.valid('param').projectId)
    return c.body(null, 200)
  })
  .openapi(getProjectContextFieldRoute, async (c) => {
    const { projectId, contextField } = c.req.valid('param')
    return c.json(await getContextField(c.var.db, contextField, projectId), 200)
  })
  .openapi(getProjectStrategiesRoute, async (c) => {
    const { projectId, contextField } = c.req.valid('param')
    return c.json(await strategiesUsing(c.var.db, contextField, [], projectId), 200)
  })
  .openapi(createProjectContextFieldRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    const field = await createContextField(c.var.db, c.var.caller, c.req.valid('json'), projectId)
    return c.json(field, 201, { Location: `/api/admin/projects/${projectId}/context/${field.name}` })
  })
  .openapi(updateProjectContextFieldRoute, async (c) => {
    const { projectId, contextField } = c.req.valid('param')
    await updateContextField(c.var.db, c.var.caller, contextField, c.req.valid('json'), projectId)
    return c.body(null, 200)
  })
  .openapi(putProjectLegalValueRoute, async (c) => {
    const { projectId, contextField } = c.req.valid('param')
    await putLegalValue(c.var.db, c.var.caller, contextField, c.req.valid('json'), projectId)
    return c.body(null, 200)
  })
  .openapi(deleteProjectLegalValueRoute, async (c) => {
    const { projectId, contextField, legalValue } = c.req.valid('param')
    await deleteLegalValue(c.var.db, c.var.caller, contextField, legalValue, projectId)
    return c.body(null, 200)
  })
  .openapi(deleteProjectContextFieldRoute, async (c) => {
    const { projectId, contextField } = c.req.valid('param')
    await deleteContextField(c.var.db, c.var.caller, contextField, projectId)
    return c.body(null, 200)
  })
