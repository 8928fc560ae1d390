import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { CompleteSchema, FeatureLifecycleSchema, featurePathParams } from './schemas.js'
import { completeFeature, getLifecycle, uncompleteFeature } from './store.js'

const tags = ['Features']
const base = '/api/admin/projects/{projectId}/features/{featureName}/lifecycle'

const getLifecycleRoute = adminRoute({
  method: 'get',
  path: base,
  operationId: 'getFeatureLifecycle',
  tags,
  summary: "Get a flag's lifecycle",
  description:
    'The stages the flag entered (initial, pre-live, live, completed, archived), oldest first; the last is its current stage. `status` is given for the completed stage. ' +
    'Archived flags are included. 404 for a flag that is not in the project. 404 too for a private project the caller may not read (not a member, admin, admin token or root role other than Viewer): for them it does not exist, as in Unleash.',
  request: { params: featurePathParams },
  responses: { 200: { description: 'The lifecycle stages', content: jsonContent(FeatureLifecycleSchema) }, ...pickErrors(401, 403, 404) },
})

const completeRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: `${base}/complete`,
  operationId: 'complete',
  tags,
  summary: 'Mark a flag completed',
  description:
    'Moves a live flag of the project to the `completed` stage from whatever stage it is in, with `status` kept or discarded and an optional `statusValue` ' +
    '(e.g. the variant that was kept). Completing a completed flag again replaces its status. Needs UPDATE_FEATURE. ' +
    'Emits `feature-completed` (data: the new stage with its status; preData: the previous stage).',
  request: { params: featurePathParams, body: { required: true, content: jsonContent(CompleteSchema) } },
  responses: { 200: { description: 'The flag is completed' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const uncompleteRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: `${base}/uncomplete`,
  operationId: 'uncomplete',
  tags,
  summary: 'Take a flag out of the completed stage',
  description:
    'Removes the completed stage, so the flag is back in the stage it was in before completion. 400 when the flag is not completed. Needs UPDATE_FEATURE. ' +
    'Emits `feature-uncompleted` (data: the stage it is back in; preData: the completed stage with its status).',
  request: { params: featurePathParams },
  responses: { 200: { description: 'The flag is no longer completed' }, ...pickErrors(400, 401, 403, 404) },
})

export const lifecycleRoutes = createRouter()
  .openapi(getLifecycleRoute, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    return c.json(await getLifecycle(c.var.db, projectId, featureName), 200)
  })
  .openapi(completeRoute, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    await completeFeature(c.var.db, c.var.caller, projectId, featureName, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(uncompleteRoute, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    await uncompleteFeature(c.var.db, c.var.caller, projectId, featureName)
    return c.body(null, 200)
  })
