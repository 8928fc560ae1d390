import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { providers } from './providers.js'
import { AddonIdParam, AddonInputSchema, AddonSchema, AddonsSchema, IntegrationEventsQuerySchema, IntegrationEventsSchema } from './schemas.js'
import { addonView, createAddon, deleteAddon, getAddon, listAddons, listIntegrationEvents, updateAddon } from './store.js'

const tags = ['Addons']
const configRules =
  'Webhook parameters: `url` (http or https; loopback, private and link-local IP addresses are refused unless FLAGPOST_ALLOW_PRIVATE_WEBHOOKS=true), `contentType` (default application/json), ' +
  '`authorization`, `bodyTemplate` (Mustache over `{ event }`), `customHeaders` (a JSON object of strings). The sensitive ones, `url` (a capability URL is its own secret), ' +
  '`authorization` and `customHeaders`, are stored and shown masked as `*****` in every response, event and delivery log; sending the mask back on an update keeps the stored value. ' +
  '`events` are event types; empty `projects`/`environments` mean all. Admin only.'

const getAddons = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/addons',
  operationId: 'getAddons',
  tags,
  summary: 'Get integrations and the providers',
  description: 'Every integration configuration, and the providers with their parameters. Admin only.',
  responses: { 200: { description: 'Integrations and providers', content: jsonContent(AddonsSchema) }, ...pickErrors(401, 403) },
})

const getAddonRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/addons/{id}',
  operationId: 'getAddon',
  tags,
  summary: 'Get an integration',
  request: { params: AddonIdParam },
  responses: { 200: { description: 'The integration', content: jsonContent(AddonSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const createAddonRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/addons',
  operationId: 'createAddon',
  tags,
  summary: 'Create an integration',
  description: `${configRules} Emits \`addon-config-created\` (sensitive parameters masked). Every matching event is delivered after its change commits, in the background.`,
  request: { body: { required: true, content: jsonContent(AddonInputSchema) } },
  responses: { 200: { description: 'The new integration', content: jsonContent(AddonSchema) }, ...pickErrors(400, 401, 403, 413, 415) },
})

const updateAddonRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/addons/{id}',
  operationId: 'updateAddon',
  tags,
  summary: 'Update an integration',
  description: `${configRules} The provider cannot change. Emits \`addon-config-updated\`.`,
  request: { params: AddonIdParam, body: { required: true, content: jsonContent(AddonInputSchema) } },
  responses: { 200: { description: 'The updated integration', content: jsonContent(AddonSchema) }, ...pickErrors(400, 401, 403, 404, 413, 415) },
})

const deleteAddonRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/addons/{id}',
  operationId: 'deleteAddon',
  tags,
  summary: 'Delete an integration',
  description: 'Deletes the configuration, its queued deliveries and its integration events. Emits `addon-config-deleted`.',
  request: { params: AddonIdParam },
  responses: { 200: { description: 'The integration was deleted' }, ...pickErrors(400, 401, 403, 404) },
})

const getIntegrationEvents = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/addons/{id}/events',
  operationId: 'getIntegrationEvents',
  tags,
  summary: 'What an integration did with events',
  description:
    'One integration event per delivery attempt, newest first: `success` (2xx), `failed` (another status, a timeout, an unreachable host) or `successWithErrors` (delivered, but e.g. some custom headers could not be sent). ' +
    'The newest 100 per integration are kept. `details` names what was sent, sensitive parameters (the URL) masked. `limit` default 50, at most 100; `offset` default 0. Admin only.',
  request: { params: AddonIdParam, query: IntegrationEventsQuerySchema },
  responses: { 200: { description: 'The integration events', content: jsonContent(IntegrationEventsSchema) }, ...pickErrors(400, 401, 403, 404) },
})

export const integrationRoutes = createRouter()
  .openapi(getAddons, async (c) => {
    return c.json({ addons: await listAddons(c.var.db), providers }, 200)
  })
  .openapi(getAddonRoute, async (c) => {
    return c.json(addonView(await getAddon(c.var.db, c.req.valid('param').id)), 200)
  })
  .openapi(createAddonRoute, async (c) => {
    return c.json(await createAddon(c.var.db, c.var.caller, c.req.valid('json'), c.var.delivery.allowPrivateTargets), 200)
  })
  .openapi(updateAddonRoute, async (c) => {
    return c.json(await updateAddon(c.var.db, c.var.caller, c.req.valid('param').id, c.req.valid('json'), c.var.delivery.allowPrivateTargets), 200)
  })
  .openapi(deleteAddonRoute, async (c) => {
    await deleteAddon(c.var.db, c.var.caller, c.req.valid('param').id)
    return c.body(null, 200)
  })
  .openapi(getIntegrationEvents, async (c) => {
    return c.json({ integrationEvents: await listIntegrationEvents(c.var.db, c.req.valid('param').id, c.req.valid('query')) }, 200)
  })
