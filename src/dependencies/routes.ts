import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { childParams, CreateDependencySchema, dependencyParams } from './schemas.js'
import { addDependency, removeDependencies, removeDependency } from './store.js'
import { requireDirectChangeAllowed } from '../change-requests/guard.js'

const tags = ['Dependencies']
const base = '/api/admin/projects/{projectId}/features/{child}/dependencies'

const addDependencyRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: base,
  operationId: 'addFeatureDependency',
  tags,
  summary: 'Add a dependency on a parent flag',
  description:
    'Makes the child flag (a live flag of the project, 404 otherwise) depend on `feature`: the child is only enabled where the parent is enabled ' +
    '(or disabled, with `enabled: false`) and, when `variants` are given, resolves to one of them. `variants` are only allowed with `enabled: true`. ' +
    'Refused with 400: a parent that does not exist, is archived or belongs to another project; the flag itself; a parent that has a parent; a child that has children ' +
    '(dependencies are one level deep). As in Unleash a flag has a single parent: a dependency on another parent replaces the current one, and re-adding the same parent ' +
    'replaces its `enabled` and `variants`. Needs UPDATE_FEATURE, and SKIP_CHANGE_REQUEST in every environment where the project requires change requests (403 otherwise: use an `addDependency` change request). Emits `feature-dependency-added` (data: the dependency; preData: the one it replaced, if any).',
  request: { params: childParams, body: { required: true, content: jsonContent(CreateDependencySchema) } },
  responses: { 200: { description: 'The dependency was added' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const removeDependencyRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: `${base}/{parent}`,
  operationId: 'deleteFeatureDependency',
  tags,
  summary: 'Remove a dependency on a parent flag',
  description: 'Needs UPDATE_FEATURE, and SKIP_CHANGE_REQUEST in every environment where the project requires change requests (403 otherwise: use a `deleteDependency` change request). 404 when the child is not a live flag of the project or does not depend on that parent. Emits `feature-dependency-removed` (preData: the dependency).',
  request: { params: dependencyParams },
  responses: { 200: { description: 'The dependency was removed' }, ...pickErrors(401, 403, 404) },
})

const removeDependenciesRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: base,
  operationId: 'deleteFeatureDependencies',
  tags,
  summary: 'Remove every dependency of a flag',
  description: 'Needs UPDATE_FEATURE, and SKIP_CHANGE_REQUEST in every environment where the project requires change requests (403 otherwise). 404 when the child is not a live flag of the project. Emits `feature-dependencies-removed` (preData: the dependencies) only when there was at least one.',
  request: { params: childParams },
  responses: { 200: { description: 'The flag has no dependencies any more' }, ...pickErrors(401, 403, 404) },
})

export const dependencyRoutes = createRouter()
  .openapi(addDependencyRoute, async (c) => {
    const { projectId, child } = c.req.valid('param')
    await requireDirectChangeAllowed(c, projectId)
    await addDependency(c.var.db, c.var.caller, projectId, child, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(removeDependencyRoute, async (c) => {
    const { projectId, child, parent } = c.req.valid('param')
    await requireDirectChangeAllowed(c, projectId)
    await removeDependency(c.var.db, c.var.caller, projectId, child, parent)
    return c.body(null, 200)
  })
  .openapi(removeDependenciesRoute, async (c) => {
    const { projectId, child } = c.req.valid('param')
    await requireDirectChangeAllowed(c, projectId)
    await removeDependencies(c.var.db, c.var.caller, projectId, child)
    return c.body(null, 200)
  })
