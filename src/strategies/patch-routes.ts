import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent, zodValidationError } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { featureEnvironmentPathParams, PatchSchema, type PatchOperation } from '../flags/schemas.js'
import { applyJsonPatch } from '../flags/store.js'
import { requireDirectChangeAllowed } from '../change-requests/guard.js'
import type { AppContext } from '../http/context.js'
import { ConstraintInputSchema, constraintWarnings, normalizeConstraint, StrategySchema, UpdateStrategySchema, type Strategy, type StrategyInput } from './schemas.js'
import { checkLegalValues } from '../context-fields/legal-values.js'
import { getStrategy, readTarget, updateFlagStrategy } from './store.js'

const strategyParams = featureEnvironmentPathParams.extend({ strategyId: z.string().openapi({ param: { name: 'strategyId', in: 'path' } }) })

/**
 * A change computed from a strategy as it is, written as its PUT writes it (same checks, event and change-request
 * rule): the JSON Patch of a strategy and the change of its segments.
 */
export async function rewriteStrategy(c: AppContext, p: { projectId: string; featureName: string; environment: string; strategyId: string }, change: (current: Strategy) => StrategyInput) {
  await requireDirectChangeAllowed(c, p.projectId, p.environment)
  const current = await getStrategy(c.var.db, await readTarget(c.var.db, p), p.strategyId)
  return updateFlagStrategy(c.var.db, c.var.caller, p, change(current), c.var.flagStates)
}

function patched(current: Strategy, operations: PatchOperation[]): StrategyInput {
  const { id: _id, featureName: _featureName, ...editable } = current
  const result = UpdateStrategySchema.safeParse(applyJsonPatch(editable, operations))
  if (!result.success) throw zodValidationError(result.error, 'patched strategy')
  return result.data
}

const patchFeatureStrategyRoute = adminRoute({
  method: 'patch',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE_STRATEGY, project: 'projectId', environment: 'environment' },
  path: '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}',
  operationId: 'patchFeatureStrategy',
  tags: ['Features'],
  summary: 'Change specific properties of a strategy',
  description:
    'Applies an RFC 6902 JSON Patch to the strategy (`id` and `featureName` are not part of it) and writes the result as replacing the strategy does: the same checks (400 when the result is not a valid strategy), ' +
    '`feature-strategy-update`, and, where the project requires change requests in the environment, SKIP_CHANGE_REQUEST (403 otherwise).',
  request: { params: strategyParams, body: { required: true, content: jsonContent(PatchSchema) } },
  responses: { 200: { description: 'The updated strategy', content: jsonContent(StrategySchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const validateConstraintRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  path: '/api/admin/constraints/validate',
  operationId: 'validateConstraint',
  tags: ['Features'],
  summary: 'Validate constraint',
  description:
    "Writes nothing: 204 when a strategy could use the constraint (the operator's values well formed, as a strategy's constraints are checked), 400 otherwise, or when its context field has legal values the constraint does not keep to, " +
    "or is a project's own field (a project's fields are checked where its strategies are).",
  request: { body: { required: true, content: jsonContent(ConstraintInputSchema) } },
  responses: {
    200: {
      description:
        'The constraint is valid, but the SDKs will not read it as written: a REGEX pattern that is not RE2 syntax never matches, an IN_CIDR entry that is no address or range is skipped (Unleash 8.2 accepts both and answers 204)',
      content: jsonContent(z.object({ warnings: z.array(z.string()) }).openapi('constraintWarningsSchema')),
    },
    204: { description: 'The constraint is valid' },
    ...pickErrors(400, 401, 403, 415),
  },
})

export const strategyPatchRoutes = createRouter()
  .openapi(patchFeatureStrategyRoute, async (c) => {
    const operations = c.req.valid('json')
    return c.json(await rewriteStrategy(c, c.req.valid('param'), (current) => patched(current, operations)), 200)
  })
  .openapi(validateConstraintRoute, async (c) => {
    const constraint = c.req.valid('json')
    await checkLegalValues(c.var.db, [normalizeConstraint(constraint)], null, 'body')
    const warnings = constraintWarnings(constraint)
    return warnings.length > 0 ? c.json({ warnings }, 200) : c.body(null, 204)
  })
