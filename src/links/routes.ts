import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { LinkSchema, linkIdPathParams, linkPathParams, MAX_LINK_TITLE_LENGTH, MAX_LINK_URL_LENGTH } from './schemas.js'
import { addLink, removeLink, updateLink } from './store.js'

const tags = ['Features']
const base = '/api/admin/projects/{projectId}/features/{featureName}/link'
const rules =
  `Needs UPDATE_FEATURE in the project. Links are metadata: SDKs never see them, so change requests do not apply (as in Unleash). 404 when the flag is not a live flag of the project. ` +
  `The URL is http or https (https:// is assumed without a scheme; credentials, a leading www. and a trailing slash are dropped, as Unleash does), at most ${MAX_LINK_URL_LENGTH} characters; ` +
  `the title at most ${MAX_LINK_TITLE_LENGTH}. The flag's links are its GET's \`links\`.`

const createLinkRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: base,
  operationId: 'createFeatureLink',
  tags,
  summary: 'Create a feature link',
  description: `Adds a link to the flag. At most 10 per flag (403 beyond, as Unleash). ${rules} Emits \`feature-link-added\` (data: url and title).`,
  request: { params: linkPathParams, body: { required: true, content: jsonContent(LinkSchema) } },
  responses: { 204: { description: 'The link was added' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const updateLinkRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: `${base}/{linkId}`,
  operationId: 'updateFeatureLink',
  tags,
  summary: 'Update a feature link',
  description: `Replaces the URL and title of a link of the flag (404 for a link of another flag). ${rules} Emits \`feature-link-updated\` (data and preData: url and title).`,
  request: { params: linkIdPathParams, body: { required: true, content: jsonContent(LinkSchema) } },
  responses: { 204: { description: 'The link was updated' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const deleteLinkRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_FEATURE, project: 'projectId' },
  path: `${base}/{linkId}`,
  operationId: 'deleteFeatureLink',
  tags,
  summary: 'Delete a feature link',
  description: 'Removes a link of the flag (404 for a link of another flag). Needs UPDATE_FEATURE in the project; no change request applies. Emits `feature-link-removed` (preData: url and title).',
  request: { params: linkIdPathParams },
  responses: { 204: { description: 'The link was removed' }, ...pickErrors(401, 403, 404) },
})

export const linkRoutes = createRouter()
  .openapi(createLinkRoute, async (c) => {
    const { projectId, featureName } = c.req.valid('param')
    await addLink(c.var.db, c.var.caller, projectId, featureName, c.req.valid('json'))
    return c.body(null, 204)
  })
  .openapi(updateLinkRoute, async (c) => {
    const { projectId, featureName, linkId } = c.req.valid('param')
    await updateLink(c.var.db, c.var.caller, projectId, featureName, linkId, c.req.valid('json'))
    return c.body(null, 204)
  })
  .openapi(deleteLinkRoute, async (c) => {
    const { projectId, featureName, linkId } = c.req.valid('param')
    await removeLink(c.var.db, c.var.caller, projectId, featureName, linkId)
    return c.body(null, 204)
  })
