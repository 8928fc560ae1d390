import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { notFound } from '../core/errors.js'
import { pickErrors } from '../http/errors.js'
import { projectIdParam } from '../http/common-schemas.js'
import { Permission } from '../core/permissions.js'
import { BatchFeaturesSchema, ChangeProjectSchema, CloneFeatureSchema, CreateFeatureSchema, featureEnvironmentPathParams, ValidateArchiveFeaturesSchema, featurePathParams, FeatureSchema, PatchSchema, ProjectFeaturesSchema, type PatchOperation } from './schemas.js'
import { loadFeature, loadFeatures } from './read.js'
import { archiveFeature, createFeature, patchFeature, reviveFeature, setEnvironmentEnabled } from './store.js'
import { projectExists } from '../projects/store.js'
import { changesNothingSdksReceive, directChangeCheck, requireDirectChangeAllowed } from '../change-requests/guard.js'
import { requireNoBody } from '../http/request-guard.js'
import { cloneFeature } from './clone.js'
import { changeProject } from './move.js'
import { requireVisibleProject } from '../projects/visibility.js'
import { archiveFeatures, deleteFeature, deleteFeatures, reviveFeatures, validateArchive } from './archive.js'
import { requirePermission } from '../core/permissions.js'

const tags = ['Features']

/** SDKs receive a flag's type, stale and impressionData, and lose it when archived; only its description is theirs alone to ignore. */
const changesOnlyDescription = (operations: PatchOperation[]) =>
  operations.every((o) => o.op === 'test' || (o.path === '/description' && (o.op !== 'move' || o.from === '/description')))

const createFeatureRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/features',
  operationId: 'createFeature',
  tags,
  summary: 'Add a new feature flag',
  description:
    'Creates a flag, off in every environment of the project. The name is URL-friendly and unique across all projects and the archive (409). ' +
    "It must match the project's naming pattern and fit its flag limit (400). Emits `feature-created`.",
  request: { params: projectIdParam, body: { required: true, content: jsonContent(CreateFeatureSchema) } },
  responses: {
    201: { description: 'The new flag', content: jsonContent(FeatureSchema), headers: { location: { schema: { type: 'string' } } } },
    ...pickErrors(400, 401, 403, 404, 409, 415),
  },
})

const getFeatures = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/features',
  operationId: 'getFeatures',
  tags,
  summary: "Get a project's flags",
  description: 'Every flag of the project that is not archived, by name. 404 too for a private project the caller may not read (not a member, admin, admin token or root role other than Viewer): for them it does not exist, as in Unleash.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The flags', content: jsonContent(ProjectFeaturesSchema) }, ...pickErrors(401, 403, 404) },
})

const getFeature = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/features/{featureName}',
  operationId: 'getFeature',
  tags,
  summary: 'Get a feature flag',
  description: 'The whole flag, archived ones included (with `archived: true`). 404 for a flag of another project. 404 too for a private project the caller may not read (not a member, admin, admin token or root role other than Viewer): for them it does not exist, as in Unleash.',
  request: { params: featurePathParams },
  responses: { 200: { description: 'The flag', content: jsonContent(FeatureSchema) }, ...pickErrors(401, 403, 404) },
})

const patchFeatureRoute = adminRoute({
  method: 'patch',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/features/{featureName}',
  operationId: 'patchFeature',
  tags,
  summary: 'Modify a feature flag',
  description:
    'Applies an RFC 6902 JSON Patch to the flag: `description`, `type`, `stale`, `impressionData` and `archived` can change; `name` and `project` cannot; ' +
    'variants are changed with the variants operation. A patch that cannot be applied, or whose result is not a valid flag, changes nothing (400). ' +
    'Emits `feature-metadata-updated`, plus `feature-stale-on`/`-off`, `feature-type-updated` and `feature-archived` as they apply. ' +
    'Archiving a flag other live flags depend on is refused (400, nothing written), as the archive operation refuses it. ' +
    'SDKs receive type, stale and impressionData, and lose an archived flag: a patch touching anything but `description` needs SKIP_CHANGE_REQUEST in every environment where the project requires change requests (403 otherwise).',
  request: { params: featurePathParams, body: { required: true, content: jsonContent(PatchSchema) } },
  responses: { 200: { description: 'The updated flag', content: jsonContent(FeatureSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const archiveFeatureRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.DELETE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/features/{featureName}',
  operationId: 'archiveFeature',
  tags,
  summary: 'Archive a feature flag',
  description:
    'Moves the flag to the archive: no longer listed, evaluated or served to SDKs. Its name stays taken. Emits `feature-archived`. ' +
    'A flag other live flags depend on is refused (400, as Unleash): archive it with them (the bulk archive) or remove their dependency first. ' +
    'Needs SKIP_CHANGE_REQUEST in every environment where the project requires change requests (403 otherwise): archive it with an `archiveFeature` change request instead.',
  request: { params: featurePathParams },
  responses: { 202: { description: 'The flag was archived' }, ...pickErrors(400, 401, 403, 404) },
})

const reviveFeatureRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  // The flag's project is known only once it is read: a project Member may revive the project's flags.
  'x-permission': { name: Permission.UPDATE_FEATURE, checkedBy: 'handler' },
  path: '/api/admin/archive/revive/{featureName}',
  operationId: 'reviveFeature',
  tags: ['Archive'],
  summary: 'Revive an archived feature flag',
  description:
    'Brings the flag back from the archive with every environment off (each switch recorded as `feature-environment-disabled`). Emits `feature-revived`. ' +
    "A revived flag is served to SDKs again (a flag depending on it can change), so this needs SKIP_CHANGE_REQUEST in every environment where the flag's project requires change requests (403 otherwise).",
  request: { params: z.object({ featureName: z.string().openapi({ param: { name: 'featureName', in: 'path' } }) }) },
  responses: { 200: { description: 'The flag was revived' }, ...pickErrors(401, 403, 404) },
})

const batchBody = { body: { required: true, content: jsonContent(BatchFeaturesSchema) } }
const whatGoes =
  'Its strategies, environments, variants, tags, lifecycle, favorites and metrics go with it, and archived flags depending on it lose that dependency (`feature-dependency-removed`); its events stay in the log and its name is free again. ' +
  'Refused (409) for a live flag (archive it first, where Unleash does nothing), one a live flag depends on, or one an open change request changes.'

const deleteFeatureRoute = adminRoute({
  method: 'delete',
  // Only archived flags go, which SDKs no longer receive; one a live flag depends on is refused.
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.DELETE_FEATURE, checkedBy: 'handler' },
  path: '/api/admin/archive/{featureName}',
  operationId: 'deleteFeature',
  tags: ['Archive'],
  summary: 'Delete an archived feature flag',
  description: `Deletes the archived flag for good, with \`feature-deleted\`; needs DELETE_FEATURE in its project. ${whatGoes}`,
  request: { params: z.object({ featureName: z.string().openapi({ param: { name: 'featureName', in: 'path' } }) }) },
  responses: { 200: { description: 'The flag was deleted' }, ...pickErrors(401, 403, 404, 409) },
})

const deleteFeaturesRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.DELETE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/delete',
  operationId: 'deleteFeatures',
  tags: ['Archive'],
  summary: 'Delete archived feature flags',
  description: `Deletes the archived flags named, each with \`feature-deleted\`, all or nothing: a name that is no flag of the project is a 404. ${whatGoes}`,
  request: { params: projectIdParam, ...batchBody },
  responses: { 200: { description: 'The flags were deleted' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const archiveFeaturesRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.DELETE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/archive',
  operationId: 'archiveFeatures',
  tags,
  summary: 'Archive feature flags',
  description:
    'Archives the live flags named, each with `feature-archived`, all or nothing; archived ones are left as they are, and a name that is no flag of the project is a 404. ' +
    'A flag whose live children are not archived with it is refused (400; see the validate operation). ' +
    'Needs SKIP_CHANGE_REQUEST in every environment where the project requires change requests (403 otherwise).',
  request: { params: projectIdParam, ...batchBody },
  responses: { 202: { description: 'The flags were archived' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const validateArchiveRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.DELETE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/archive/validate',
  operationId: 'validateArchiveFeatures',
  tags,
  summary: 'Validate archiving feature flags',
  description: 'Writes nothing: answers which of the flags named have live children not archived with them, which archiving them refuses.',
  request: { params: projectIdParam, ...batchBody },
  responses: { 200: { description: 'What archiving would do', content: jsonContent(ValidateArchiveFeaturesSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const reviveFeaturesRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/revive',
  operationId: 'reviveFeatures',
  tags: ['Archive'],
  summary: 'Revive archived feature flags',
  description:
    'Revives the archived flags named, all or nothing, each with every environment off (`feature-revived`, and `feature-environment-disabled` for each environment switched off); live ones are left as they are, ' +
    'a name that is no flag of the project is a 404, and an archived project a 400. Needs SKIP_CHANGE_REQUEST in every environment where the project requires change requests (403 otherwise).',
  request: { params: projectIdParam, ...batchBody },
  responses: { 200: { description: 'The flags were revived' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const cloneFeatureRoute = adminRoute({
  method: 'post',
  // The copy is off in every environment, as a new flag is.
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/features/{featureName}/clone',
  operationId: 'cloneFeature',
  tags,
  summary: 'Clone a feature flag',
  description:
    "Copies a live flag of the project into it under a new name, checked as a new flag's (409 when taken; 400 against the naming pattern or the flag limit): type, description, impressionData, " +
    'each environment\'s strategies (`groupId` parameters become the new name unless `replaceGroupId` is false) and variants, and the dependencies on parents; every environment off, as in Unleash; tags, favorites and metrics are not copied. ' +
    'Emits `feature-created`, then `feature-strategy-add`, `feature-environment-variants-updated` and `feature-dependency-added` for what is copied.',
  request: { params: featurePathParams, body: { required: true, content: jsonContent(CloneFeatureSchema) } },
  responses: { 201: { description: 'The copy', content: jsonContent(FeatureSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const changeProjectRoute = adminRoute({
  method: 'post',
  // Project-scoped SDK tokens stop or start receiving it.
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/features/{featureName}/changeProject',
  operationId: 'changeProject',
  tags,
  summary: 'Move a feature flag to another project',
  description:
    'Moves a live flag of the project to `newProjectId`, with `feature-project-change` (`data`: oldProject and newProject). Needs UPDATE_FEATURE here and CREATE_FEATURE there, ' +
    'and SKIP_CHANGE_REQUEST wherever either project requires change requests (Unleash refuses any target requiring them). Refused with 400 against the target\'s naming pattern or flag limit, when it lacks an environment where the flag has strategies ' +
    "or a strategy names a segment or constrains a context field of this project (a project's own), with 409 when the flag has dependencies (they stay within a project) or an open change request changes it. It takes the target's environments: those it lacked are added, off, and those the target lacks (without strategies) are dropped.",
  request: { params: featurePathParams, body: { required: true, content: jsonContent(ChangeProjectSchema) } },
  responses: { 200: { description: 'The flag was moved' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const toggleRoute = (on: boolean) =>
  adminRoute({
    method: 'post',
    'x-change-requests': 'guarded',
    'x-permission': { name: Permission.UPDATE_FEATURE_ENVIRONMENT, project: 'projectId', environment: 'environment' },
    path: `/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/${on ? 'on' : 'off'}`,
    operationId: on ? 'toggleFeatureEnvironmentOn' : 'toggleFeatureEnvironmentOff',
    tags,
    summary: on ? 'Enable a feature flag in an environment' : 'Disable a feature flag in an environment',
    description: on
      ? 'Switches the flag on in the environment. With no enabled strategy there, it first adds the project environment\'s default strategy, or a 100% `flexibleRollout` grouped by the flag name. Emits `feature-environment-enabled` only when the state changes.' +
        ' Where the project requires change requests in the environment, this needs SKIP_CHANGE_REQUEST (403 otherwise): propose the change in a change request instead.'
      : 'Switches the flag off in the environment. Emits `feature-environment-disabled` only when the state changes. The operation takes no body: one that is not empty is a 400.' +
        ' Where the project requires change requests in the environment, this needs SKIP_CHANGE_REQUEST (403 otherwise): propose the change in a change request instead.',
    // No body, as in Unleash (one that is not empty is refused by the handler).
    request: { params: featureEnvironmentPathParams },
    responses: { 200: { description: 'The updated flag', content: jsonContent(FeatureSchema) }, ...pickErrors(400, 401, 403, 404) },
  })

export const flagRoutes = createRouter()
  .openapi(createFeatureRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    const feature = await createFeature(c.get('db'), c.get('caller'), projectId, c.req.valid('json'))
    return c.json(feature, 201, { Location: `/api/admin/projects/${encodeURIComponent(projectId)}/features/${encodeURIComponent(feature.name)}` })
  })
  .openapi(getFeatures, async (c) => {
    const { projectId } = c.req.valid('param')
    if (!(await projectExists(c.get('db'), projectId))) throw notFound(`Could not find project ${projectId}`)
    return c.json({ version: 1, features: await loadFeatures(c.get('db'), projectId, { principal: c.get('caller').key, now: c.get('caller').now }) }, 200)
  })
  .openapi(getFeature, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    const feature = await loadFeature(c.get('db'), featureName, { principal: c.get('caller').key, now: c.get('caller').now })
    if (!feature || feature.project !== projectId) throw notFound(`Could not find feature flag ${featureName} in project ${projectId}`)
    return c.json(feature, 200)
  })
  .openapi(patchFeatureRoute, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    const operations = c.req.valid('json')
    if (!changesOnlyDescription(operations)) await requireDirectChangeAllowed(c, projectId)
    else changesNothingSdksReceive(c)
    return c.json(await patchFeature(c.get('db'), c.get('caller'), { projectId, featureName, operations }, c.get('flagStates')), 200)
  })
  .openapi(archiveFeatureRoute, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    await requireDirectChangeAllowed(c, projectId)
    await archiveFeature(c.get('db'), c.get('caller'), projectId, featureName)
    return c.body(null, 202)
  })
  .openapi(reviveFeatureRoute, async (c) => {
    const { featureName } = c.req.valid('param')
    const changeCheck = directChangeCheck(c)
    await reviveFeature(c.get('db'), c.get('caller'), featureName, (tx, project) => {
      requirePermission(c.get('principal'), Permission.UPDATE_FEATURE, { project })
      return changeCheck(tx, project)
    })
    return c.body(null, 200)
  })
  .openapi(deleteFeatureRoute, async (c) => {
    await deleteFeature(c.get('db'), c.get('caller'), c.req.valid('param').featureName, (project) => requirePermission(c.get('principal'), Permission.DELETE_FEATURE, { project }))
    return c.body(null, 200)
  })
  .openapi(deleteFeaturesRoute, async (c) => {
    await deleteFeatures(c.get('db'), c.get('caller'), c.req.valid('param').projectId, c.req.valid('json').features)
    return c.body(null, 200)
  })
  .openapi(archiveFeaturesRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    await requireDirectChangeAllowed(c, projectId)
    await archiveFeatures(c.get('db'), c.get('caller'), projectId, c.req.valid('json').features)
    return c.body(null, 202)
  })
  .openapi(validateArchiveRoute, async (c) => c.json(await validateArchive(c.get('db'), c.req.valid('param').projectId, c.req.valid('json').features), 200))
  .openapi(reviveFeaturesRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    await requireDirectChangeAllowed(c, projectId)
    await reviveFeatures(c.get('db'), c.get('caller'), projectId, c.req.valid('json').features)
    return c.body(null, 200)
  })
  .openapi(cloneFeatureRoute, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    const feature = await cloneFeature(c.get('db'), c.get('caller'), projectId, featureName, c.req.valid('json'))
    return c.json(feature, 201, { Location: `/api/admin/projects/${encodeURIComponent(projectId)}/features/${encodeURIComponent(feature.name)}` })
  })
  .openapi(changeProjectRoute, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    const { newProjectId } = c.req.valid('json')
    await requireVisibleProject(c, newProjectId)
    requirePermission(c.get('principal'), Permission.CREATE_FEATURE, { project: newProjectId })
    await requireDirectChangeAllowed(c, projectId)
    await requireDirectChangeAllowed(c, newProjectId)
    await changeProject(c.get('db'), c.get('caller'), projectId, featureName, newProjectId)
    return c.body(null, 200)
  })
  .openapi(toggleRoute(true), async (c) => {
    const target = c.req.valid('param')
    await requireNoBody(c)
    await requireDirectChangeAllowed(c, target.projectId, target.environment)
    return c.json(await setEnvironmentEnabled(c.get('db'), c.get('caller'), { ...target, enabled: true }, c.get('flagStates')), 200)
  })
  .openapi(toggleRoute(false), async (c) => {
    const target = c.req.valid('param')
    await requireNoBody(c)
    await requireDirectChangeAllowed(c, target.projectId, target.environment)
    return c.json(await setEnvironmentEnabled(c.get('db'), c.get('caller'), { ...target, enabled: false }, c.get('flagStates')), 200)
  })
