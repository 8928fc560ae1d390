import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import type { AppContext } from '../http/context.js'
import { directChangeCheck } from '../change-requests/guard.js'
import { Permission, requirePermission } from '../core/permissions.js'
import { notFound, validationError } from '../core/errors.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import {
  CreateTagSchema,
  featureNameParam,
  featureTagParams,
  projectIdParam,
  tagParams,
  TagInputSchema,
  TagsBulkAddSchema,
  TagSchema,
  TagsSchema,
  tagTypeParam,
  TagWithVersionSchema,
  UpdateTagsSchema,
} from './schemas.js'
import { addTag, changeFlagTags, listTags, removeTag, type Authorize } from './store.js'
import { createTag, deleteTag, getRegisteredTag, listRegisteredTags, type TagUseCheck } from './registry.js'

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
    '`value` and `type` are trimmed and must then be 2 to 50 characters; `type` defaults to `simple`. The tag type must exist: 400 `Tag type \'x\' does not exist` otherwise, as in Unleash. ' +
    'A tag new to the registry (`GET /api/admin/tags`) is created with it, with `tag-created`, in the same write. ' +
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

const updateTagsRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, checkedBy: 'handler' },
  path: '/api/admin/features/{featureName}/tags',
  operationId: 'updateTags',
  tags,
  summary: "Add and remove a flag's tags",
  description:
    '`addedTags` are added, then `removedTags` removed (a tag in both ends up absent), all in one write: `feature-tagged` and `feature-untagged` for each real change, ' +
    '`tag-created` for each added tag new to the registry; an added tag of an unknown type is a 400 and nothing is written. Removing a tag the flag does not have is no change. ' +
    "Answers the flag's tags after the change. Needs UPDATE_FEATURE in the flag's project. 404 for an unknown or archived flag. " +
    "Needs SKIP_CHANGE_REQUEST in every environment where the flag's project requires change requests (403 otherwise).",
  request: { params: featureNameParam, body: { required: true, content: jsonContent(UpdateTagsSchema) } },
  responses: { 200: { description: "The flag's tags", content: jsonContent(TagsSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const bulkTagRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/tags',
  operationId: 'addTagToFeatures',
  tags: ['Tags'],
  summary: "Add and remove tags of a project's flags",
  description:
    '`tags.addedTags` are added to every flag of `features`, then `tags.removedTags` removed, in one write, all or nothing: events as for `PUT /api/admin/features/{featureName}/tags`. ' +
    'Every flag must be a live flag of the project: an unknown or archived flag, or one of a private project the caller may not read, is a 404; ' +
    "a flag of another project is a 400 (Unleash refuses it too). Needs UPDATE_FEATURE in the project, and SKIP_CHANGE_REQUEST in every environment where it requires change requests.",
  request: { params: projectIdParam, body: { required: true, content: jsonContent(TagsBulkAddSchema) } },
  responses: { 200: { description: 'The tags were changed' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const registry = ['Tags']

const getTagsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/tags',
  operationId: 'getTags',
  tags: registry,
  summary: 'Get all tags',
  description: 'Every tag, by type then value, whether or not a flag has it. Any authenticated caller.',
  responses: { 200: { description: 'The tags', content: jsonContent(TagsSchema) }, ...pickErrors(401, 403) },
})

const getTagsByTypeRoute = adminRoute({
  method: 'get',
  path: '/api/admin/tags/{type}',
  operationId: 'getTagsByType',
  tags: registry,
  summary: 'Get the tags of a type',
  description: 'The tags of the type, by value; an empty list for an unknown type, as in Unleash.',
  request: { params: tagTypeParam },
  responses: { 200: { description: 'The tags', content: jsonContent(TagsSchema) }, ...pickErrors(401, 403) },
})

const getTagRoute = adminRoute({
  method: 'get',
  path: '/api/admin/tags/{type}/{value}',
  operationId: 'getTag',
  tags: registry,
  summary: 'Get a tag',
  description: 'The tag; 404 when it does not exist.',
  request: { params: tagParams },
  responses: { 200: { description: 'The tag', content: jsonContent(TagWithVersionSchema) }, ...pickErrors(401, 403, 404) },
})

const createTagRoute = adminRoute({
  method: 'post',
  // A tag no flag has yet changes nothing an SDK receives.
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_FEATURE },
  path: '/api/admin/tags',
  operationId: 'createTag',
  tags: registry,
  summary: 'Create a tag',
  description:
    '`value` (trimmed) and `type`, 2 to 50 characters each. 409 NameExistsError when the tag exists; 400 when its type does not. ' +
    'Needs UPDATE_FEATURE (in every project: as in Unleash, whoever may tag flags). Emits `tag-created` (data: the tag).',
  request: { body: { required: true, content: jsonContent(CreateTagSchema) } },
  responses: { 201: { description: 'The new tag', content: jsonContent(TagWithVersionSchema) }, ...pickErrors(400, 401, 403, 409, 415) },
})

const deleteTagRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE },
  path: '/api/admin/tags/{type}/{value}',
  operationId: 'deleteTag',
  tags: registry,
  summary: 'Delete a tag',
  description:
    'Deletes the tag and removes it from every flag that has it, as Unleash does. Only `tag-deleted` is recorded (preData: the tag), as in Unleash: no `feature-untagged` per flag. ' +
    '404 for an unknown tag (Unleash answers 200). Needs UPDATE_FEATURE (in every project), and SKIP_CHANGE_REQUEST in every environment requiring change requests ' +
    'of every project with a flag that has the tag (a tag-filtered SDK loses the flag with it).',
  request: { params: tagParams },
  responses: { 200: { description: 'The tag was deleted' }, ...pickErrors(401, 403, 404) },
})

/** Removing tags from flags is a direct change to each flag's project: the change-request rule of each. */
export const tagUseCheck = (c: AppContext): TagUseCheck => {
  const allowed = directChangeCheck(c)
  return async (db, projects) => {
    for (const project of projects) await allowed(db, project)
  }
}

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
  .openapi(updateTagsRoute, async (c) => {
    const { featureName } = c.req.valid('param')
    const { addedTags, removedTags } = c.req.valid('json')
    const after = await changeFlagTags(c.var.db, c.var.caller, { features: [featureName], added: addedTags, removed: removedTags }, mayUpdateFeature(c))
    return c.json({ version: 1, tags: after.get(featureName) ?? [] }, 200)
  })
  .openapi(bulkTagRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    const { features, tags: change } = c.req.valid('json')
    const hidden = await hiddenProjectsOf(c)
    const inProject = ({ feature }: { feature: { name: string; project: string } }) => {
      if (feature.project === projectId) return
      if (hidden.includes(feature.project)) throw notFound(`Could not find feature flag ${feature.name}`)
      throw validationError(`Flag ${feature.name} belongs to project ${feature.project}, not ${projectId}: nothing was changed`, [{ path: 'body.features', message: `${feature.name} is not a flag of project ${projectId}` }])
    }
    await changeFlagTags(c.var.db, c.var.caller, { features, added: change.addedTags, removed: change.removedTags, inProject }, mayUpdateFeature(c))
    return c.body(null, 200)
  })
  .openapi(getTagsRoute, async (c) => c.json({ version: 1, tags: await listRegisteredTags(c.var.db) }, 200))
  .openapi(getTagsByTypeRoute, async (c) => c.json({ version: 1, tags: await listRegisteredTags(c.var.db, c.req.valid('param').type) }, 200))
  .openapi(getTagRoute, async (c) => c.json({ version: 1, tag: await getRegisteredTag(c.var.db, c.req.valid('param')) }, 200))
  .openapi(createTagRoute, async (c) => {
    const { type, value } = c.req.valid('json')
    return c.json({ version: 1, tag: await createTag(c.var.db, c.var.caller, { type, value }) }, 201)
  })
  .openapi(deleteTagRoute, async (c) => {
    await deleteTag(c.var.db, c.var.caller, c.req.valid('param'), tagUseCheck(c))
    return c.body(null, 200)
  })
