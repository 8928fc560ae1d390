import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { OidcSettingsInputSchema, OidcSettingsSchema, SECRET_MASK } from './schemas.js'
import { getOidcSettings, resetOidcSettings, saveOidcSettings } from './store.js'

const tags = ['Auth']
const path = '/api/admin/auth/oidc/settings'

const getRoute = adminRoute({
  method: 'get',
  path,
  operationId: 'getOidcSettings',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Get OIDC settings',
  description: `The stored OpenID Connect settings (\`{ "enabled": false }\` before any are saved), with the secret shown as \`${SECRET_MASK}\`. Needs the Admin root role.`,
  responses: { 200: { description: 'The OIDC settings', content: jsonContent(OidcSettingsSchema) }, ...pickErrors(401, 403) },
})

const setRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  path,
  operationId: 'setOidcSettings',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Set OIDC settings',
  description:
    'Replaces the settings. Two forms: with `enabled: true`, `clientId` and `secret` are required; with `enabled: false` (or absent) every field is optional. ' +
    '`discoverUrl` must be an https URL, `idTokenSigningAlgorithm` RS256, RS384 or RS512, `defaultRootRole` Viewer, Editor or Admin, ' +
    '`defaultRootRoleId` an existing root role (it wins over `defaultRootRole`, which is set to its name), `emailDomains` a comma-separated list of domains ' +
    '(stored lower-case), `acrValues` space-separated values. Empty strings mean "not set". Any other field or type is a 400; a body that is not JSON a 415. ' +
    `The secret is never returned: responses show \`${SECRET_MASK}\`, and sending \`${SECRET_MASK}\` back keeps the stored secret. ` +
    'Needs the Admin root role. Emits `setting-created` the first time, then `setting-updated`; their data holds the settings without the secret (and `secretChanged`).',
  request: { body: { required: true, content: jsonContent(OidcSettingsInputSchema) } },
  responses: { 200: { description: 'The stored settings', content: jsonContent(OidcSettingsSchema) }, ...pickErrors(400, 401, 403, 415) },
})

const resetRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  path,
  operationId: 'resetOidcSettings',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Reset OIDC settings',
  description:
    'Removes the stored settings, secret included: the settings read `{ "enabled": false }` again. Answers 204, also when none were stored (then nothing is recorded). ' +
    'Needs the Admin root role. Emits `setting-deleted` with the removed settings, without the secret, as preData.',
  responses: { 204: { description: 'The settings were reset' }, ...pickErrors(401, 403) },
})

export const authSettingsRoutes = createRouter()
  .openapi(getRoute, async (c) => c.json(await getOidcSettings(c.var.db), 200))
  .openapi(setRoute, async (c) => c.json(await saveOidcSettings(c.var.db, c.var.caller, c.req.valid('json')), 200))
  .openapi(resetRoute, async (c) => {
    await resetOidcSettings(c.var.db, c.var.caller)
    return c.body(null, 204)
  })
