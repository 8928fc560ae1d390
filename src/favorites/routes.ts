import { adminRoute, createRouter } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { principalKey } from '../core/principal.js'
import { featurePathParams, projectIdParam } from './schemas.js'
import { setFeatureFavorite, setProjectFavorite } from './store.js'

const tags = ['Features']
const ownership =
  'Favorites belong to the caller (the user, or the API token). Any authenticated admin-API caller may set its own; no other permission is needed. ' +
  'Idempotent: the call answers 200 whatever the previous state, and the event is written only when the state changes.'

const featureFavoriteRoute = (favorite: boolean) =>
  adminRoute({
    method: favorite ? 'post' : 'delete',
    'x-change-requests': 'no-sdk-effect',
    'x-permission': 'any-caller',
    path: '/api/admin/projects/{projectId}/features/{featureName}/favorites',
    operationId: favorite ? 'addFavoriteFeature' : 'removeFavoriteFeature',
    tags,
    summary: favorite ? 'Add a flag to your favorites' : 'Remove a flag from your favorites',
    description: `${ownership} 404 for a flag that is not a live flag of the project. Emits \`${favorite ? 'feature-favorited' : 'feature-unfavorited'}\`. The flag's \`favorite\` field shows the result.`,
    request: { params: featurePathParams },
    responses: { 200: { description: favorite ? 'The flag is a favorite' : 'The flag is not a favorite' }, ...pickErrors(401, 403, 404) },
  })

const projectFavoriteRoute = (favorite: boolean) =>
  adminRoute({
    method: favorite ? 'post' : 'delete',
    'x-change-requests': 'no-sdk-effect',
    'x-permission': 'any-caller',
    path: '/api/admin/projects/{projectId}/favorites',
    operationId: favorite ? 'addFavoriteProject' : 'removeFavoriteProject',
    tags,
    summary: favorite ? 'Add a project to your favorites' : 'Remove a project from your favorites',
    description: `${ownership} 404 for an unknown or archived project. Emits \`${favorite ? 'project-favorited' : 'project-unfavorited'}\`.`,
    request: { params: projectIdParam },
    responses: { 200: { description: favorite ? 'The project is a favorite' : 'The project is not a favorite' }, ...pickErrors(401, 403, 404) },
  })

export const favoriteRoutes = createRouter()
  .openapi(featureFavoriteRoute(true), async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    await setFeatureFavorite(c.var.db, c.var.caller, principalKey(c.var.principal), projectId, featureName, true)
    return c.body(null, 200)
  })
  .openapi(featureFavoriteRoute(false), async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    await setFeatureFavorite(c.var.db, c.var.caller, principalKey(c.var.principal), projectId, featureName, false)
    return c.body(null, 200)
  })
  .openapi(projectFavoriteRoute(true), async (c) => {
    await setProjectFavorite(c.var.db, c.var.caller, principalKey(c.var.principal), c.req.valid('param').projectId, true)
    return c.body(null, 200)
  })
  .openapi(projectFavoriteRoute(false), async (c) => {
    await setProjectFavorite(c.var.db, c.var.caller, principalKey(c.var.principal), c.req.valid('param').projectId, false)
    return c.body(null, 200)
  })
