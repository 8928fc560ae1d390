import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { notFound } from '../core/errors.js'
import { Permission, requirePermission } from '../core/permissions.js'
import { featurePathParams } from '../flags/schemas.js'
import { loadFeature } from '../flags/read.js'
import { changesNothingSdksReceive, requireDirectChangeAllowed } from '../change-requests/guard.js'
import { FeatureVariantsSchema, VariantsInputSchema } from './schemas.js'
import { setEnvironmentVariants, toVariants } from './store.js'

const PushVariantsSchema = z
  .object({ variants: VariantsInputSchema.optional(), environments: z.array(z.string().min(1).max(100)).max(100).optional() })
  .openapi('pushVariantsSchema')

const overwriteOnEnvironmentsRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'guarded',
  // Each environment named needs it: checked for every one before anything is written.
  'x-permission': { name: Permission.UPDATE_FEATURE_ENVIRONMENT_VARIANTS, checkedBy: 'handler' },
  path: '/api/admin/projects/{projectId}/features/{featureName}/variants-batch',
  operationId: 'overwriteFeatureVariantsOnEnvironments',
  tags: ['Features'],
  summary: 'Set variants for multiple environments',
  description:
    'Replaces the variants of each environment named with `variants`, as replacing one environment\'s variants does (the same checks, one `feature-environment-variants-updated` per environment). ' +
    'Needs UPDATE_FEATURE_ENVIRONMENT_VARIANTS, and SKIP_CHANGE_REQUEST where the project requires change requests, in every environment named; an environment the flag lacks is a 404. All is checked before anything is written.',
  request: { params: featurePathParams, body: { required: true, content: jsonContent(PushVariantsSchema) } },
  responses: { 200: { description: 'The variants now set', content: jsonContent(FeatureVariantsSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

export const variantBatchRoutes = createRouter().openapi(overwriteOnEnvironmentsRoute, async (c) => {
  const { projectId, featureName } = c.req.valid('param')
  const body = c.req.valid('json')
  const environments = [...new Set(body.environments ?? [])]
  for (const environment of environments) requirePermission(c.var.principal, Permission.UPDATE_FEATURE_ENVIRONMENT_VARIANTS, { project: projectId, environment })
  const replace = body.variants ?? []
  let variants = toVariants(replace)
  const feature = await loadFeature(c.var.db, featureName, { principal: c.var.caller.key, now: c.var.caller.now }, false)
  if (!feature || feature.project !== projectId) throw notFound(`Could not find feature flag ${featureName} in project ${projectId}`)
  const missing = environments.find((e) => !feature.environments.some((fe) => fe.name === e))
  if (missing !== undefined) throw notFound(`Could not find environment ${missing} for feature flag ${featureName}`)
  for (const environment of environments) await requireDirectChangeAllowed(c, projectId, environment)
  // No environment named: nothing is written.
  if (environments.length === 0) changesNothingSdksReceive(c)
  for (const environment of environments) {
    variants = await setEnvironmentVariants(c.var.db, c.var.caller, { projectId, featureName, environment }, { replace }, c.var.flagStates)
  }
  return c.json({ version: 1, variants }, 200)
})
