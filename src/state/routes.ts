import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { errorResponses, pickErrors } from '../http/errors.js'
import { protectedEnvironmentsCheck } from '../change-requests/guard.js'
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
    'The whole configuration as Unleash’s state document (version 4): live flags with their environments, strategies, segments, tags and dependencies; custom strategy types, tag types, tags, ' +
    'live projects with their environments, environments, segments and context fields. The query leaves parts out (absent, so that an import with `drop` drops none of them); `download=true` answers a file. ' +
    'No API tokens, users, members, integrations or settings. Admins only; records nothing, as Unleash.',
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
    `Restores a state document (Flagpost’s, or Unleash 4 or 5’s: versions 2 to 4) in one transaction with its events; at most ${STATE_IMPORT_MAX_BYTES / 1024 / 1024} MiB (413), each list bounded, and 150,000 constraints and 500,000 values in all (400, counted first). ` +
    'Checked first against the rules of the routes that make each kind (a deprecated strategy type only where the document lists it) and every reference, with one 400 naming every problem. Objects are known by name (a segment too). ' +
    '`keep` (default true) leaves existing objects as they are; `keep=false` overwrites them (a flag with the parts of its configuration the document has). An object already so records nothing. ' +
    '`drop` first deletes, of each kind the document has, what it does not list; never the built-in strategy types, the `default` project, the tag type `simple`, protected environments, environments and projects API tokens are for, ' +
    'projects holding flags or open change requests, flags open change requests change, or what is in use. Flag tags are only added without `drop`; an archived flag of the document the instance lacks is made archived with its metadata and archivedAt (no configuration), one it has is left as it is. ' +
    'Records an `*-import` event per object (`feature-import` with the flag’s configuration; preData what it overwrote), context fields’ `context-field-created`/`-updated`, one `drop-*` event per kind dropped, ' +
    'and `segment-deleted`/`context-field-deleted` per one dropped. Admins only; answers what was imported, unchanged and dropped, by kind.',
  request: { query: StateImportQuerySchema, body: { required: true, content: jsonContent(StateImportSchema) } },
  responses: {
    202: { description: 'The import was made', content: jsonContent(StateImportResultSchema) },
    ...pickErrors(400, 401, 403, 409, 415),
    413: { ...errorResponses[413], description: `PayloadTooLargeError: the document is larger than ${STATE_IMPORT_MAX_BYTES / 1024 / 1024} MiB` },
  },
})

// The export's and the import's code is loaded when first used: the worker's start-up leaves it out
// (scripts/build-worker.ts puts what only an `await import()` reaches in modules of its own).
export const stateRoutes = createRouter()
  .openapi(exportRoute, async (c) => {
    const query = c.req.valid('query')
    const { exportState } = await import('./export.js')
    const document = await exportState(c.var.db, query)
    if (query.download) c.header('Content-Disposition', `attachment; filename="flagpost-state-${c.var.caller.now.toISOString().slice(0, 19).replaceAll(':', '-')}.json"`)
    return c.json(document, 200)
  })
  .openapi(importRoute, async (c) => {
    const check = protectedEnvironmentsCheck(c)
    const { importState } = await import('./import.js')
    const result = await importState(c.var.db, c.var.caller, c.req.valid('json'), c.req.valid('query'), check)
    return c.json(result, 202)
  })
