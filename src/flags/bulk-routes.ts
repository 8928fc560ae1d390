import * as z from '../http/zod.js'
import { and, eq, inArray } from 'drizzle-orm'
import { adminRoute, createRouter, jsonContent, zodValidationError } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { projectIdParam } from '../http/common-schemas.js'
import { nameExists, notFound } from '../core/errors.js'
import { Permission } from '../core/permissions.js'
import type { AppContext } from '../http/context.js'
import { features, projects } from '../../schema/index.js'
import { changesNothingSdksReceive, requireDirectChangeAllowed } from '../change-requests/guard.js'
import { requireVisibleProject } from '../projects/visibility.js'
import { FeatureEnvironmentSchema, FeatureSchema, featureEnvironmentPathParams, featurePathParams, FLAG_TYPES, flagName, type PatchOperation } from './schemas.js'
import { loadFeature } from './read.js'
import { checkNamingPattern, patchFeature, setEnvironmentEnabled } from './store.js'

const tags = ['Features']
const names = z.array(z.string().min(1).max(100)).max(1000)

const BulkToggleSchema = z.object({ features: names.openapi({ description: 'Names of flags of the project' }) }).openapi('bulkToggleFeaturesSchema')
const BatchStaleSchema = z.object({ features: names, stale: z.boolean() }).openapi('batchStaleSchema')
const UpdateFeatureSchema = z
  .object({
    description: z.string().max(10_000).optional(),
    type: z.enum(FLAG_TYPES).optional(),
    stale: z.boolean().optional(),
    archived: z.boolean().optional(),
    impressionData: z.boolean().optional(),
  })
  .openapi('updateFeatureSchema')
const ValidateFeatureSchema = z.object({ name: z.string().max(1000), projectId: z.string().max(100).nullable().optional() }).openapi('validateFeatureSchema')

/** The flags named, all of project `projectId` (404 before anything is written otherwise), each once. */
async function requireProjectFlags(c: AppContext, projectId: string, requested: string[]): Promise<string[]> {
  const unique = [...new Set(requested)]
  if (unique.length === 0) return unique
  const found = await c.var.db.select({ name: features.name }).from(features).where(and(eq(features.project, projectId), inArray(features.name, unique)))
  const known = new Set(found.map((f) => f.name))
  const missing = unique.find((n) => !known.has(n))
  if (missing !== undefined) throw notFound(`Could not find feature flag ${missing} in project ${projectId}`)
  return unique
}

const bulkToggleRoute = (on: boolean) =>
  adminRoute({
    method: 'post',
    'x-change-requests': 'guarded',
    'x-permission': { name: Permission.UPDATE_FEATURE_ENVIRONMENT, project: 'projectId', environment: 'environment' },
    path: `/api/admin/projects/{projectId}/bulk_features/environments/{environment}/${on ? 'on' : 'off'}`,
    operationId: on ? 'bulkToggleFeaturesEnvironmentOn' : 'bulkToggleFeaturesEnvironmentOff',
    tags,
    summary: on ? 'Bulk enable a list of features' : 'Bulk disable a list of features',
    description:
      `Switches each flag named ${on ? 'on' : 'off'} in the environment, exactly as its own ${on ? 'on' : 'off'} operation does (same checks and events, one transaction per flag). ` +
      'A name that is no flag of the project is a 404 before anything is switched. Where the project requires change requests in the environment this needs SKIP_CHANGE_REQUEST (403 otherwise, as Unleash): nothing is switched directly.',
    request: {
      params: projectIdParam.extend({ environment: z.string().openapi({ param: { name: 'environment', in: 'path' } }) }),
      body: { required: true, content: jsonContent(BulkToggleSchema) },
    },
    responses: { 200: { description: 'The flags were switched' }, ...pickErrors(400, 401, 403, 404, 415) },
  })

const updateFeatureRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/features/{featureName}',
  operationId: 'updateFeature',
  tags,
  summary: 'Update a feature flag',
  description:
    'Only the properties sent change; the rest are left as they are. The same write as the JSON Patch of the flag (`replace` of each property sent), with its events and change-request rule: ' +
    'anything but `description` needs SKIP_CHANGE_REQUEST wherever the project requires change requests.',
  request: { params: featurePathParams, body: { required: true, content: jsonContent(UpdateFeatureSchema) } },
  responses: { 200: { description: 'The updated flag', content: jsonContent(FeatureSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const staleFeaturesRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/stale',
  operationId: 'staleFeatures',
  tags,
  summary: 'Mark features as stale / not stale',
  description:
    'Marks each flag named stale (or not), as the JSON Patch of `/stale` does (`feature-stale-on`/`-off`); names that are no flag of the project are ignored, as in Unleash. ' +
    'SDKs receive `stale`: needs SKIP_CHANGE_REQUEST wherever the project requires change requests.',
  request: { params: projectIdParam, body: { required: true, content: jsonContent(BatchStaleSchema) } },
  responses: { 202: { description: 'The flags were marked' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const getFeatureEnvironmentRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}',
  operationId: 'getFeatureEnvironment',
  tags,
  summary: 'Get a feature environment',
  description: "The flag's state in one environment: enabled, strategies and variants. 404 for an unknown flag or environment, and for a private project the caller may not read.",
  request: { params: featureEnvironmentPathParams },
  responses: { 200: { description: 'The flag in the environment', content: jsonContent(FeatureEnvironmentSchema) }, ...pickErrors(401, 403, 404) },
})

const validateFeatureRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  path: '/api/admin/features/validate',
  operationId: 'validateFeature',
  tags,
  summary: 'Validate a feature flag name',
  description:
    'Writes nothing. 200 when the name is URL-friendly, unused (in every project and the archive: 409 otherwise) and, with `projectId`, matches that project\'s naming pattern (400 otherwise). ' +
    'A project the caller may not read is a 404, as an unknown one.',
  request: { body: { required: true, content: jsonContent(ValidateFeatureSchema) } },
  responses: { 200: { description: 'The name is free and valid' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

export const flagBulkRoutes = createRouter()
  .openapi(bulkToggleRoute(true), async (c) => {
    await bulkToggle(c, c.req.valid('param'), c.req.valid('json').features, true)
    return c.body(null, 200)
  })
  .openapi(bulkToggleRoute(false), async (c) => {
    await bulkToggle(c, c.req.valid('param'), c.req.valid('json').features, false)
    return c.body(null, 200)
  })
  .openapi(updateFeatureRoute, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    const body = c.req.valid('json')
    const operations: PatchOperation[] = Object.entries(body)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => ({ op: 'replace', path: `/${key}`, value }))
    if (operations.some((o) => o.path !== '/description')) await requireDirectChangeAllowed(c, projectId)
    else changesNothingSdksReceive(c)
    return c.json(await patchFeature(c.var.db, c.var.caller, { projectId, featureName, operations }, c.var.flagStates), 200)
  })
  .openapi(staleFeaturesRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    const { features: requested, stale } = c.req.valid('json')
    await requireDirectChangeAllowed(c, projectId)
    const unique = [...new Set(requested)]
    const found = unique.length === 0 ? [] : await c.var.db.select({ name: features.name }).from(features).where(and(eq(features.project, projectId), inArray(features.name, unique)))
    for (const { name } of found) {
      await patchFeature(c.var.db, c.var.caller, { projectId, featureName: name, operations: [{ op: 'replace', path: '/stale', value: stale }] }, c.var.flagStates)
    }
    return c.body(null, 202)
  })
  .openapi(getFeatureEnvironmentRoute, async (c) => {
    const { projectId, featureName, environment } = c.req.valid('param')
    const feature = await loadFeature(c.var.db, featureName, { principal: c.var.caller.key, now: c.var.caller.now })
    if (!feature || feature.project !== projectId) throw notFound(`Could not find feature flag ${featureName} in project ${projectId}`)
    const env = feature.environments.find((e) => e.name === environment)
    if (!env) throw notFound(`Could not find environment ${environment} for feature flag ${featureName}`)
    return c.json(env, 200)
  })
  .openapi(validateFeatureRoute, async (c) => {
    const { name, projectId } = c.req.valid('json')
    const parsed = flagName().safeParse(name)
    if (!parsed.success) throw zodValidationError(parsed.error, 'body.name')
    const [taken] = await c.var.db.select({ name: features.name }).from(features).where(eq(features.name, name))
    if (taken) throw nameExists(`A feature flag named ${name} already exists (flag names are unique across projects and the archive)`)
    if (projectId) {
      await requireVisibleProject(c, projectId)
      const [project] = await c.var.db.select().from(projects).where(eq(projects.id, projectId))
      if (!project) throw notFound(`Could not find project ${projectId}`)
      checkNamingPattern(name, project)
    }
    return c.body(null, 200)
  })

async function bulkToggle(c: AppContext, target: { projectId: string; environment: string }, requested: string[], enabled: boolean) {
  await requireDirectChangeAllowed(c, target.projectId, target.environment)
  for (const featureName of await requireProjectFlags(c, target.projectId, requested)) {
    await setEnvironmentEnabled(c.var.db, c.var.caller, { ...target, featureName, enabled }, c.var.flagStates)
  }
}
