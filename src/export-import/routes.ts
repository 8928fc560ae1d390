import { adminRoute, createRouter, issuesToDetails, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import { nameExists, notFound } from '../core/errors.js'
import { RegexMeter } from '../evaluation/index.js'
import { protectedEnvironmentsCheck } from '../change-requests/guard.js'
import { requirePermission } from '../core/permissions.js'
import { ExportQuerySchema, ExportResultSchema, ImportTogglesSchema, ImportTogglesValidateSchema, ValidateImportBodySchema, type ImportToggles } from './schemas.js'

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
    'The flags selected, live and archived (`archived`) (by `tag`, a tag value of any type; else by `features`, names; else by `project`; else every flag), with their strategies (with segment ids), switch and variants in `environment`, ' +
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
    'flags living in other projects, archived or not (the project named only to those who may read it), names given twice, names against the naming pattern, the flag limit, segments with no namesake global or in the project, ' +
    'dependencies on anything but a live flag of the project (imported or held), on itself, on more than one flag or chained, and every object the routes would refuse: flag names (URL-friendly, not `.` or `..`) and types, tag types, tags, new context fields, context fields listed twice, strategies, variants, custom strategy parameters their definition refuses, constraint values not legal values of their context field; and live flags of the project the file says archived), ' +
    '`warnings` (custom strategy types, archived flags of the project left out, existing flags overwritten, dependencies of flags not imported (left out, as Unleash does), flags whose strategies with variants have no order given (kept in the file\'s order)) and `permissions` the caller lacks for it (including SKIP_CHANGE_REQUEST where the environment requires change requests, and in every environment requiring them where the import changes an existing flag\'s type or impressionData, or sets dependencies). ' +
    'A context field or archived flag of a private project the caller may not read is answered as an unknown name. ' +
    '404 for a project the caller may not see, or one without the environment. A document that does not fit importTogglesSchema is answered 200 with every problem in `errors` ' +
    '(the path and what is wrong, the path in affectedItems), never a 400 that would hide the rest; but a document over the document limits (1,000 flags, 10,000 strategies, 30,000 constraints, 150,000 constraint values) is a 400, counted before anything else. Records nothing.',
  request: { body: { required: true, content: jsonContent(ValidateImportBodySchema) } },
  responses: { 200: { description: 'The validation', content: jsonContent(ImportTogglesValidateSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const importRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: 'UPDATE_FEATURE', checkedBy: 'handler' },
  path: '/api/admin/features-batch/import',
  operationId: 'importToggles',
  tags,
  summary: 'Import feature flags into a project environment',
  description:
    'Applies `data` (an export) to `project` and `environment`, all or nothing. Refused with 400 (the ValidationError\'s `details` are validate\'s errors) when `/validate` reports an error, and with 403 when the caller lacks a permission validate lists ' +
    '(UPDATE_FEATURE always; CREATE_FEATURE, CREATE_TAG_TYPE, CREATE_CONTEXT_FIELD, DELETE_FEATURE_STRATEGY, CREATE_FEATURE_STRATEGY (also for the default strategy an enabled flag gets), UPDATE_FEATURE_ENVIRONMENT_VARIANTS, and UPDATE_FEATURE_ENVIRONMENT where it changes a switch (unlike Unleash, as the switch route), in the environment, as the import needs them). ' +
    'Each strategy is checked as `POST …/strategies` checks it (its schema: rollout, constraint values, semver, CIDR, REGEX; its type\'s parameters; legal values of context fields), else 400 naming where (Unleash writes them unchecked). ' +
    'Where the environment requires change requests the import is refused with 403 unless the caller may skip them (Unleash would open a change request instead); an import setting dependencies, or changing an existing flag\'s type or impressionData (which SDKs of every environment receive, as `PATCH …/features/{featureName}`), needs that in each environment of the project requiring them. ' +
    'Flags archived in the project are left out; a new flag the export says `archived` is created archived (unlike Unleash, which refuses it; needs DELETE_FEATURE). In one write: missing flags are created (type, description, impression data, stale from the export) and the project\'s are updated; their strategies in the environment are replaced, in the order of their `sortOrder` (else of the file) ' +
    '(segments mapped by name to the segment of that name, global or the project\'s), their switch set and their variants set where the export has some; an enabled flag left with no active strategy gets the default `flexibleRollout` 100%; ' +
    'their tags are replaced (missing tag types and tags created), missing context fields created, and the export\'s dependencies replace the children\'s (one parent, no chains, else 400). ' +
    'Records, as Unleash\'s import, `tag-type-created`, `context-field-created`, `feature-created` or `feature-metadata-updated` (with `feature-stale-on`/`-off` where stale changes), `feature-strategy-remove` (Unleash records none), `feature-strategy-add`, ' +
    '`feature-environment-variants-updated`, `feature-environment-enabled`/`-disabled` where the switch changes, `tag-created`, `feature-untagged`/`feature-tagged` for real changes (Unleash re-tags every tag), `feature-dependency-added`, `feature-link-removed`/`feature-link-added` where the links of a listed flag change (they become those of the import, as in Unleash), `feature-archived` for a flag created archived, then `features-imported`. ' +
    '409 for a context field whose name a private project\'s field holds. 404 for a project the caller may not see, or one without the environment. 400 first for a document over validate\'s document limits or with more strategies for one flag than the resource limit.',
  request: { body: { required: true, content: jsonContent(ImportTogglesSchema) } },
  responses: { 200: { description: 'The import was made' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

// The export's, the validation's and the import's code is loaded when first used: the worker's start-up leaves it out
// (scripts/build-worker.ts puts what only an `await import()` reaches in modules of its own).
const validation = () => import('./validate.js')

export const exportImportRoutes = createRouter()
  .openapi(exportRoute, async (c) => {
    const query = c.req.valid('json')
    const { exportFeatures } = await import('./export.js')
    const result = await exportFeatures(c.var.db, c.var.caller, await hiddenProjectsOf(c), query)
    if (query.downloadFile) c.header('Content-Disposition', `attachment; filename="export-${c.var.caller.now.toISOString().slice(0, 10)}.json"`)
    return c.json(result, 200)
  })
  .openapi(validateRoute, async (c) => {
    const body = c.req.valid('json')
    const hidden = await hiddenProjectsOf(c)
    if (hidden.includes(body.project)) throw notFound(`Could not find project ${body.project}`)
    const { readImportTarget, validateImport } = await validation()
    const parsed = ImportTogglesSchema.safeParse(body)
    if (!parsed.success) {
      // The 404s of an unknown project or environment come first, as for a well-formed document.
      const target = await readImportTarget(c.var.db, { project: body.project, environment: body.environment, data: { features: [], featureStrategies: [], featureEnvironments: [], contextFields: [], segments: [], tagTypes: [], featureTags: [], dependencies: [] } } as unknown as ImportToggles)
      if (!target.project) throw notFound(`Could not find project ${body.project}`)
      if (!target.environment) throw notFound(`Could not find environment ${body.environment} in project ${body.project}`)
      const errors = issuesToDetails(parsed.error, 'body').map((d) => ({ message: `${d.path}: ${d.message}`, affectedItems: [d.path] }))
      return c.json({ errors, warnings: [], permissions: [] }, 200)
    }
    const input = parsed.data
    return c.json(validateImport(c.var.principal, input, await readImportTarget(c.var.db, input), hidden, new RegexMeter(c.var.evaluationLimits.regexWorkBudget)), 200)
  })
  .openapi(importRoute, async (c) => {
    const input = c.req.valid('json')
    const hidden = await hiddenProjectsOf(c)
    if (hidden.includes(input.project)) throw notFound(`Could not find project ${input.project}`)
    requirePermission(c.var.principal, 'UPDATE_FEATURE', { project: input.project, environment: input.environment })
    const protectedIn = protectedEnvironmentsCheck(c)
    const [{ changeRequestEnvironmentsOf, foreignFieldsOf, missingPermissions, validateImport }, { importFeatures }] = await Promise.all([validation(), import('./import.js')])
    await importFeatures(c.var.db, c.var.caller, input, (state) => {
      // Permissions first: the naming pattern is matched only for a caller who may import, under the request's meter.
      // Its environment where it requires change requests; every protected one where the import changes what reaches
      // them all (an existing flag's type or impression data, as the flag's PATCH; dependencies, as their routes).
      protectedIn(changeRequestEnvironmentsOf(input, state).map((environment) => ({ project: input.project, environment })))
      for (const missing of missingPermissions(c.var.principal, input, state)) requirePermission(c.var.principal, missing, { project: input.project, environment: input.environment })
      // A field of a private project validate answers as unknown: the caller may create fields, whose route says the name is taken.
      const [taken] = foreignFieldsOf(input, state).filter((f) => hidden.includes(f.project))
      if (taken) throw nameExists(`A context field named ${taken.name} already exists`)
      return validateImport(c.var.principal, input, state, hidden, new RegexMeter(c.var.evaluationLimits.regexWorkBudget))
    })
    return c.body(null, 200)
  })
