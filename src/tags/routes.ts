import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import type { AppContext } from '../http/context.js'
import { directChangeCheck } from '../change-requests/guard.js'
import { Permission, requirePermission } from '../core/permissions.js'
import { featureNameParam, featureTagParams, TagInputSchema, TagSchema, TagsSchema } from './schemas.js'
import { addTag, listTags, removeTag, type Authorize } from './store.js'

const tags = ['Features']

const listTagsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/features/{featureName}/tags',
  operationId: 'listTags',
  tags,
  summary: "Get a flag's tags",
  description: 'The tags of the flag (found by name alone, in any project), by type then value. 404 for an unknown or archived flag, and for a flag of a private project the caller may not read.',
  request: { params: featureNameParam },
  responses: { 200: { description: 'The tags', content: jsonContent(TagsSchema) }, ...pickErrors(401, 403, 404) },
})

const addTagRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, checkedBy: 'handler' },
  path: '/api/admin/features/{featureName}/tags',
  operationId: 'addTag',
  tags,
  summary: 'Add a tag to a flag',
  description:
    '`value` and `type` are trimmed and must then be 2 to 50 characters; `type` defaults to `simple`. Any tag type is accepted (there is no tag-type registry). ' +
    'Idempotent as in Unleash: adding a tag the flag already has answers 201 too, but only a real addition emits `feature-tagged` (data: the tag). ' +
    'Needs UPDATE_FEATURE in the flag\'s project. 404 for an unknown or archived flag.' +
    " A tag-filtered SDK gains or loses the flag with it: needs SKIP_CHANGE_REQUEST in every environment where the flag's project requires change requests (403 otherwise).",
  request: { params: featureNameParam, body: { required: true, content: jsonContent(TagInputSchema) } },
  responses: { 201: { description: 'The tag', content: jsonContent(TagSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const removeTagRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, checkedBy: 'handler' },
  path: '/api/admin/features/{featureName}/tags/{type}/{value}',
  operationId: 'removeTag',
  tags,
  summary: 'Remove a tag from a flag',
  description:
    "Emits `feature-untagged` (preData: the tag). Unlike Unleash, which answers 200 for a tag the flag does not have, this is a 404 so that a typo does not pass silently. " +
    "Needs UPDATE_FEATURE in the flag's project. 404 for an unknown or archived flag." +
    " A tag-filtered SDK gains or loses the flag with it: needs SKIP_CHANGE_REQUEST in every environment where the flag's project requires change requests (403 otherwise).",
  request: { params: featureTagParams },
  responses: { 200: { description: 'The tag was removed' }, ...pickErrors(401, 403, 404) },
})

// A tag-filtered SDK (`tag=` on the client API) gains or loses the flag with its tags, so tags follow the change-request rule.
const mayUpdateFeature = (c: AppContext): Authorize => {
  const directChangeAllowed = directChangeCheck(c)
  return async (db, project) => {
    requirePermission(c.var.principal, Permission.UPDATE_FEATURE, { project })
    await directChangeAllowed(db, project)
  }
}

export const tagRoutes = createRouter()
  .openapi(listTagsRoute, async (c) => c.json({ version: 1, tags: await listTags(c.var.db, c.req.valid('param').featureName) }, 200))
  .openapi(addTagRoute, async (c) => {
    const { featureName } = c.req.valid('param')
    const tag = await addTag(c.var.db, c.var.caller, featureName, c.req.valid('json'), mayUpdateFeature(c))
    return c.json(tag, 201)
  })
  .openapi(removeTagRoute, async (c) => {
    const { featureName, type, value } = c.req.valid('param')
    await removeTag(c.var.db, c.var.caller, featureName, { type, value }, mayUpdateFeature(c))
    return c.body(null, 200)
  })
