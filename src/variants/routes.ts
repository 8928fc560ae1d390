import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission, requirePermission } from '../core/permissions.js'
import { featureEnvironmentPathParams, featurePathParams, PatchSchema } from '../flags/schemas.js'
import { requireDirectChangeAllowed } from '../change-requests/guard.js'
import { FeatureVariantsSchema, VariantsInputSchema } from './schemas.js'
import { getEnvironmentVariants, patchFeatureVariants, setEnvironmentVariants } from './store.js'

const tags = ['Features']
const CHANGE_REQUEST_NOTE = ' Where the project requires change requests in the environment, this needs SKIP_CHANGE_REQUEST (403 otherwise): propose the change in a change request instead.'
const variantRules =
  'Names unique and URL-friendly; weights whole numbers 0..1000; weightType `variable` (default) or `fix`; fix weights total at most 1000, and at least one variable variant when there are any; ' +
  'stickiness default `default`; payload json (valid JSON), csv, string or number (numeric); overrides `{ contextName, values }`. Variable variants share 1000 minus the fix total. The result is sorted by name.'

const patchVariants = adminRoute({
  method: 'patch',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE_VARIANTS, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/features/{featureName}/variants',
  operationId: 'patchFeatureVariants',
  tags,
  summary: "Patch a flag's variants (all environments)",
  description: `Applies an RFC 6902 patch to the flag's variants and stores the result in every environment. Unlike Unleash it is atomic: all environments or none. ${variantRules} Emits \`feature-variants-updated\` per environment. Needs, besides UPDATE_FEATURE_VARIANTS in the project (as Unleash), UPDATE_FEATURE_ENVIRONMENT_VARIANTS in every environment of the flag (as the per-environment routes; 403 naming the first lacking), and SKIP_CHANGE_REQUEST when an environment of the project requires change requests.`,
  request: { params: featurePathParams, body: { required: true, content: jsonContent(PatchSchema) } },
  responses: { 200: { description: 'The variants now set', content: jsonContent(FeatureVariantsSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const envPath = '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants'

const getEnvVariants = adminRoute({
  method: 'get',
  path: envPath,
  operationId: 'getEnvironmentFeatureVariants',
  tags,
  summary: "Get a flag's variants in an environment",
  request: { params: featureEnvironmentPathParams },
  responses: { 200: { description: 'The variants', content: jsonContent(FeatureVariantsSchema) }, ...pickErrors(401, 403, 404) },
})

const putEnvVariants = adminRoute({
  method: 'put',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE_ENVIRONMENT_VARIANTS, project: 'projectId', environment: 'environment' },
  path: envPath,
  operationId: 'overwriteEnvironmentFeatureVariants',
  tags,
  summary: "Replace a flag's variants in an environment",
  description: `${variantRules} Emits \`feature-environment-variants-updated\`.${CHANGE_REQUEST_NOTE}`,
  request: { params: featureEnvironmentPathParams, body: { required: true, content: jsonContent(VariantsInputSchema) } },
  responses: { 200: { description: 'The variants now set', content: jsonContent(FeatureVariantsSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const patchEnvVariants = adminRoute({
  method: 'patch',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE_ENVIRONMENT_VARIANTS, project: 'projectId', environment: 'environment' },
  path: envPath,
  operationId: 'patchEnvironmentsFeatureVariants',
  tags,
  summary: "Patch a flag's variants in an environment",
  description: `Applies an RFC 6902 patch to the environment's variants. ${variantRules} Emits \`feature-environment-variants-updated\`.${CHANGE_REQUEST_NOTE}`,
  request: { params: featureEnvironmentPathParams, body: { required: true, content: jsonContent(PatchSchema) } },
  responses: { 200: { description: 'The variants now set', content: jsonContent(FeatureVariantsSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

export const variantRoutes = createRouter()
  .openapi(patchVariants, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    await requireDirectChangeAllowed(c, projectId)
    // It writes every environment: each needs what PUT …/environments/{environment}/variants needs there.
    const mayWrite = (environments: string[]) => {
      for (const environment of environments) requirePermission(c.var.principal, Permission.UPDATE_FEATURE_ENVIRONMENT_VARIANTS, { project: projectId, environment })
    }
    const variants = await patchFeatureVariants(c.var.db, c.var.caller, projectId, featureName, c.req.valid('json'), c.var.flagStates, mayWrite)
    return c.json({ version: 1, variants }, 200)
  })
  .openapi(getEnvVariants, async (c) => {
    const p = c.req.valid('param')
    return c.json({ version: 1, variants: await getEnvironmentVariants(c.var.db, p.projectId, p.featureName, p.environment) }, 200)
  })
  .openapi(putEnvVariants, async (c) => {
    const p = c.req.valid('param')
    await requireDirectChangeAllowed(c, p.projectId, p.environment)
    const variants = await setEnvironmentVariants(c.var.db, c.var.caller, p, { replace: c.req.valid('json') }, c.var.flagStates)
    return c.json({ version: 1, variants }, 200)
  })
  .openapi(patchEnvVariants, async (c) => {
    const p = c.req.valid('param')
    await requireDirectChangeAllowed(c, p.projectId, p.environment)
    const variants = await setEnvironmentVariants(c.var.db, c.var.caller, p, { patch: c.req.valid('json') }, c.var.flagStates)
    return c.json({ version: 1, variants }, 200)
  })
