import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import { notFound } from '../core/errors.js'
import { exportFeatures } from './export.js'
import { readImportTarget, validateImport } from './validate.js'
import { ExportQuerySchema, ExportResultSchema, ImportTogglesSchema, ImportTogglesValidateSchema } from './schemas.js'

const tags = ['Import/Export']

const exportRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  // As in Unleash, any caller may export: they get only the flags they may see.
  'x-permission': 'any-caller',
  path: '/api/admin/features-batch/export',
  operationId: 'exportFeatures',
  tags,
  summary: 'Export feature flags from an environment',
  description:
    'The live flags selected (by `tag`, a tag value of any type; else by `features`, names; else by `project`; else every flag), with their strategies (with segment ids), switch and variants in `environment`, ' +
    'their tags and the tag types used, the segments and context fields their strategies and variants use, and their dependencies. Flags of private projects the caller may not read are left out, as unknown names are. ' +
    '`downloadFile` answers the same body as an attachment. 404 for an unknown environment. Records `features-exported` with the export as its data.',
  request: { body: { required: true, content: jsonContent(ExportQuerySchema) } },
  responses: { 200: { description: 'The export', content: jsonContent(ExportResultSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const validateRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  // A check that writes nothing: it answers which permissions the import would need that the caller lacks.
  'x-permission': 'any-caller',
  path: '/api/admin/features-batch/validate',
  operationId: 'validateImport',
  tags,
  summary: 'Validate feature import data',
  description:
    'What importing `data` (an export) into `project` and `environment` would meet, in Unleash\'s messages: `errors` (the import is refused while there is one: undefined strategy types, context fields lacking legal values the export uses, ' +
    'flags living in other projects, names given twice, names against the naming pattern, the flag limit, segments with no namesake global or in the project, dependencies on flags neither imported nor in the project), ' +
    '`warnings` (custom strategy types, archived flags left out, existing flags overwritten) and `permissions` the caller lacks for it (including SKIP_CHANGE_REQUEST where the environment requires change requests). ' +
    '404 for a project the caller may not see, or one without the environment. Records nothing.',
  request: { body: { required: true, content: jsonContent(ImportTogglesSchema) } },
  responses: { 200: { description: 'The validation', content: jsonContent(ImportTogglesValidateSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

export const exportImportRoutes = createRouter()
  .openapi(exportRoute, async (c) => {
    const query = c.req.valid('json')
    const result = await exportFeatures(c.var.db, c.var.caller, await hiddenProjectsOf(c), query)
    if (query.downloadFile) c.header('Content-Disposition', `attachment; filename="export-${c.var.caller.now.toISOString().slice(0, 10)}.json"`)
    return c.json(result, 200)
  })
  .openapi(validateRoute, async (c) => {
    const input = c.req.valid('json')
    if ((await hiddenProjectsOf(c)).includes(input.project)) throw notFound(`Could not find project ${input.project}`)
    return c.json(validateImport(c.var.principal, input, await readImportTarget(c.var.db, input)), 200)
  })
