import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { errorResponses, pickErrors } from '../http/errors.js'
import { protectedEnvironmentsCheck } from '../change-requests/guard.js'
import { exportState } from './export.js'
import { importState } from './import.js'
import { STATE_IMPORT_MAX_BYTES, StateExportQuerySchema, StateImportQuerySchema, StateImportResultSchema, StateImportSchema, StateSchema } from './schemas.js'

const tags = ['Import/Export']

export const STATE_IMPORT_PATH = '/api/admin/state/import'

const exportRoute = adminRoute({
  method: 'get',
  'x-permission': { name: 'ADMIN' },
  path: '/api/admin/state/export',
  operationId: 'export',
  tags,
  summary: 'Export the instance state',
  description:
    'A backup of the whole configuration, as Unleash’s state export (version 4, its field names): the live flags with their environments (switch, variants), strategies (constraints, parameters, variants) and ' +
    'the segments they use, their tags and dependencies; the custom strategy types (not the built-in ones), tag types and tags, live projects with their environments (change-request settings, ' +
    'default strategies), environments, segments and context fields. The query switches parts off (a part left out is absent, so importing the document with `drop` drops none of it). ' +
    'No secret and nothing about who may do what: API tokens, users, project members, integrations and settings are not exported. `download=true` answers the same body as an attachment. ' +
    'Admins only. Records nothing, as Unleash.',
  request: { query: StateExportQuerySchema },
  responses: { 200: { description: 'The state document', content: jsonContent(StateSchema) }, ...pickErrors(400, 401, 403) },
})

const importRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: 'ADMIN' },
  path: STATE_IMPORT_PATH,
  operationId: 'import',
  tags,
  summary: 'Import an instance state',
  description:
    `Restores a state document (Flagpost’s export, or Unleash 4 or 5’s, versions 2 to 4), all or nothing, in one transaction with its events; the body is at most ${STATE_IMPORT_MAX_BYTES / 1024 / 1024} MiB (413 beyond) ` +
    'and each list has a bound (400 beyond). Everything is checked first, with one 400 naming every problem and where: the rules of the routes that make each kind (names, legal values, ' +
    'strategy types and their parameters, variants, naming patterns and flag limits, one parent per flag and no chains), and every reference (a flag’s project and environments, a strategy’s segments, ' +
    'a flag tag’s flag and tag type, a dependency’s parent). Objects are known by name (a segment by its name: the document’s segment ids only link it). ' +
    '`keep` (default true, as Unleash) leaves an existing object as it is; without it, the document’s overwrites it (a flag with its whole configuration). An object already as the document says records nothing, ' +
    'so importing an export again changes nothing. `drop` first deletes, of each kind the document has (a key present, even empty), what it does not list, and then writes everything it lists; never dropped: ' +
    'the built-in strategy types, the `default` project, the tag type `simple`, protected environments and environments or projects API tokens are for, projects still holding flags or with open change requests, ' +
    'flags an open change request changes, and strategy types, segments and context fields still in use. Flag tags are only added without `drop`. Archived flags of the document are left out. ' +
    'Records `environment-import`, `project-import`, `strategy-import`, `tag-type-import`, `tag-import`, `segment-import`, `feature-import` (data and, when overwritten, preData: the flag with its configuration), ' +
    '`feature-tag-import`, `context-field-created`/`-updated`, and for drops one `drop-environments`, `drop-projects`, `drop-strategies`, `drop-tag-types`, `drop-tags`, `drop-features`, `drop-feature-tags` each ' +
    '(preData: what went), `segment-deleted` and `context-field-deleted` per object. Admins only; answers what was imported, left unchanged and dropped, by kind.',
  request: { query: StateImportQuerySchema, body: { required: true, content: jsonContent(StateImportSchema) } },
  responses: {
    202: { description: 'The import was made', content: jsonContent(StateImportResultSchema) },
    ...pickErrors(400, 401, 403, 409, 415),
    413: { ...errorResponses[413], description: `PayloadTooLargeError: the document is larger than ${STATE_IMPORT_MAX_BYTES / 1024 / 1024} MiB` },
  },
})

export const stateRoutes = createRouter()
  .openapi(exportRoute, async (c) => {
    const query = c.req.valid('query')
    const document = await exportState(c.var.db, query)
    if (query.download) c.header('Content-Disposition', `attachment; filename="flagpost-state-${c.var.caller.now.toISOString().slice(0, 19).replaceAll(':', '-')}.json"`)
    return c.json(document, 200)
  })
  .openapi(importRoute, async (c) => {
    const check = protectedEnvironmentsCheck(c)
    const result = await importState(c.var.db, c.var.caller, c.req.valid('json'), c.req.valid('query'), check)
    return c.json(result, 202)
  })
