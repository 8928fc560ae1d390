import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { OidcSettingsInputSchema, OidcSettingsSchema, PasswordAuthSchema, SECRET_MASK } from './schemas.js'
import { getOidcSettings, getPasswordAuth, resetOidcSettings, saveOidcSettings, savePasswordAuth } from './store.js'

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
    '(stored lower-case), `acrValues` space-separated values, `groupJsonPath` a JSONPath (RFC 9535, e.g. `$.groups`) or a claim\'s name (required with ' +
    '`enableGroupSyncing` when enabled): how group sync and single sign-out work is told with GET /auth/oidc/callback and POST /logout. Empty strings mean "not set". Any other field or type is a 400; a body that is not JSON a 415. ' +
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

const passwordPath = '/api/admin/auth/simple/settings'

const getPasswordRoute = adminRoute({
  method: 'get',
  path: passwordPath,
  operationId: 'getSimpleSettings',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Get password sign-in settings',
  description:
    'Whether password sign-in is switched off (`{ "disabled": false }` until it is). It is refused only while OpenID Connect sign-in is enabled; ' +
    'a deployment started with FLAGPOST_ALLOW_PASSWORD_LOGIN=true accepts passwords whatever this says. Needs the Admin root role.',
  responses: { 200: { description: 'The password sign-in settings', content: jsonContent(PasswordAuthSchema) }, ...pickErrors(401, 403) },
})

const setPasswordRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  path: passwordPath,
  operationId: 'setSimpleSettings',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Switch password sign-in off or on',
  description:
    '`{ "disabled": true }` refuses password sign-in (POST /auth/simple/login answers 401 saying so, and the sign-in page offers single sign-on only); ' +
    'it needs OpenID Connect sign-in enabled (400 otherwise), and turning OpenID Connect off gives password sign-in back. ' +
    'If single sign-on stops working, admin API tokens still work, and starting the deployment with FLAGPOST_ALLOW_PASSWORD_LOGIN=true accepts passwords again. ' +
    'Needs the Admin root role. Emits `setting-created` the first time, then `setting-updated` (nothing when nothing changes).',
  request: { body: { required: true, content: jsonContent(PasswordAuthSchema) } },
  responses: { 200: { description: 'The stored settings', content: jsonContent(PasswordAuthSchema) }, ...pickErrors(400, 401, 403, 415) },
})

export const authSettingsRoutes = createRouter()
  .openapi(getRoute, async (c) => c.json(await getOidcSettings(c.var.db), 200))
  .openapi(setRoute, async (c) => c.json(await saveOidcSettings(c.var.db, c.var.caller, c.req.valid('json')), 200))
  .openapi(resetRoute, async (c) => {
    await resetOidcSettings(c.var.db, c.var.caller)
    return c.body(null, 204)
  })
  .openapi(getPasswordRoute, async (c) => c.json(await getPasswordAuth(c.var.db), 200))
  .openapi(setPasswordRoute, async (c) => c.json(await savePasswordAuth(c.var.db, c.var.caller, c.req.valid('json')), 200))
