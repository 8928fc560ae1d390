import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { tagUseCheck } from '../tags/routes.js'
import { Permission } from '../core/permissions.js'
import { tagTypeNameParam, TagTypeInputSchema, TagTypeSchema, TagTypesSchema, UpdateTagTypeSchema, ValidateTagTypeSchema } from './schemas.js'
import { createTagType, deleteTagType, getTagType, listTagTypes, updateTagType, validateTagType } from './store.js'

const tags = ['Tags']

const getTagTypesRoute = adminRoute({
  method: 'get',
  path: '/api/admin/tag-types',
  operationId: 'getTagTypes',
  tags,
  summary: 'Get all tag types',
  description: 'Every tag type, by name, the built-in `simple` among them. Any authenticated caller.',
  responses: { 200: { description: 'The tag types', content: jsonContent(TagTypesSchema) }, ...pickErrors(401, 403) },
})

const createTagTypeRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_TAG_TYPE },
  path: '/api/admin/tag-types',
  operationId: 'createTagType',
  tags,
  summary: 'Create a tag type',
  description:
    '`name`: 2 to 50 URL-friendly characters, trimmed; `description`, `icon` and `color` (`#RRGGBB`) optional. 409 NameExistsError when the name is taken. ' +
    'Needs CREATE_TAG_TYPE (admins only, as in Unleash). Emits `tag-type-created` (data: the tag type).',
  request: { body: { required: true, content: jsonContent(TagTypeInputSchema) } },
  responses: { 201: { description: 'The new tag type', content: jsonContent(TagTypeSchema) }, ...pickErrors(400, 401, 403, 409, 415) },
})

const validateTagTypeRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  path: '/api/admin/tag-types/validate',
  operationId: 'validateTagType',
  tags,
  summary: 'Validate a tag type',
  description: 'Checks a tag type as creating it would, without creating it: 400 for an invalid body, 409 NameExistsError when the name is taken. Writes nothing. Any authenticated caller, as in Unleash.',
  request: { body: { required: true, content: jsonContent(TagTypeInputSchema) } },
  responses: { 200: { description: 'The tag type is valid and its name free', content: jsonContent(ValidateTagTypeSchema) }, ...pickErrors(400, 401, 403, 409, 415) },
})

const getTagTypeRoute = adminRoute({
  method: 'get',
  path: '/api/admin/tag-types/{name}',
  operationId: 'getTagType',
  tags,
  summary: 'Get a tag type',
  description: 'The tag type; 404 when there is none of that name (Unleash documents no 404 here, but answers one).',
  request: { params: tagTypeNameParam },
  responses: { 200: { description: 'The tag type', content: jsonContent(TagTypeSchema) }, ...pickErrors(401, 403, 404) },
})

const updateTagTypeRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_TAG_TYPE },
  path: '/api/admin/tag-types/{name}',
  operationId: 'updateTagType',
  tags,
  summary: 'Update a tag type',
  description:
    'Sets `description`, `icon` and `color` (`#RRGGBB`); a field left out is kept. The name cannot change. 404 for an unknown tag type. ' +
    'Needs UPDATE_TAG_TYPE (admins only). Emits `tag-type-updated` (data and preData: the tag type after and before).',
  request: { params: tagTypeNameParam, body: { required: true, content: jsonContent(UpdateTagTypeSchema) } },
  responses: { 200: { description: 'The tag type was updated' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const deleteTagTypeRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.DELETE_TAG_TYPE },
  path: '/api/admin/tag-types/{name}',
  operationId: 'deleteTagType',
  tags,
  summary: 'Delete a tag type',
  description:
    'Deletes the tag type, every tag of that type, and removes those tags from every flag that has them, as Unleash does (its foreign keys cascade). ' +
    'Only `tag-type-deleted` is recorded (preData: the tag type), as in Unleash: no `tag-deleted` or `feature-untagged` per tag and flag. ' +
    'A tag-filtered SDK may lose flags with it: needs SKIP_CHANGE_REQUEST in every environment requiring change requests of every project with a flag losing a tag (admins have it). ' +
    '404 for an unknown tag type (Unleash answers 200). Needs DELETE_TAG_TYPE (admins only).',
  request: { params: tagTypeNameParam },
  responses: { 200: { description: 'The tag type was deleted' }, ...pickErrors(401, 403, 404) },
})

export const tagTypeRoutes = createRouter()
  .openapi(getTagTypesRoute, async (c) => c.json({ version: 1, tagTypes: await listTagTypes(c.var.db) }, 200))
  .openapi(validateTagTypeRoute, async (c) => c.json({ valid: true, tagType: await validateTagType(c.var.db, c.req.valid('json')) }, 200))
  .openapi(createTagTypeRoute, async (c) => c.json(await createTagType(c.var.db, c.var.caller, c.req.valid('json')), 201))
  .openapi(getTagTypeRoute, async (c) => c.json(await getTagType(c.var.db, c.req.valid('param').name), 200))
  .openapi(updateTagTypeRoute, async (c) => {
    await updateTagType(c.var.db, c.var.caller, c.req.valid('param').name, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(deleteTagTypeRoute, async (c) => {
    await deleteTagType(c.var.db, c.var.caller, c.req.valid('param').name, tagUseCheck(c))
    return c.body(null, 200)
  })
