import { createRoute } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { publicBaseUrl } from '../users/accounts.js'
import type { AppEnv } from '../http/context.js'
import {
  CreateSignalEndpointSchema,
  CreateSignalEndpointTokenSchema,
  PageQuery,
  SignalEndpointIdParam,
  SignalEndpointNameParam,
  SignalEndpointSchema,
  SignalEndpointSignalsSchema,
  SignalEndpointsSchema,
  SignalEndpointTokenParams,
  SignalEndpointTokenSchema,
  SignalEndpointTokensSchema,
  SignalQuery,
  SignalQueryResponseSchema,
  type SignalEndpoint,
} from './schemas.js'
import {
  createSignalEndpoint,
  createSignalEndpointToken,
  deleteSignalEndpoint,
  deleteSignalEndpointToken,
  listEndpointSignals,
  listSignalEndpoints,
  listSignalEndpointTokens,
  MAX_SIGNAL_ENDPOINTS,
  MAX_TOKENS_PER_ENDPOINT,
  querySignals,
  renameSignalEndpointToken,
  switchSignalEndpoint,
  updateSignalEndpoint,
} from './store.js'
import { MAX_SIGNAL_BYTES, signalPayload, storeSignal, KEPT_PER_ENDPOINT } from './incoming.js'

/** The security scheme of `POST /api/signal-endpoint/{name}`: one of the endpoint's tokens. */
export const SIGNAL_SECURITY_SCHEME = 'signalEndpointToken'

const tags = ['Signals']
const ADMIN_ONLY = ' Needs ADMIN, as in Unleash.'
const endpoints = '/api/admin/signal-endpoints'
const endpointPath = `${endpoints}/{id}`

const listRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: endpoints,
  operationId: 'getSignalEndpoints',
  tags,
  summary: 'Get signal endpoints',
  description: `Every signal endpoint, by id, with its tokens (never the tokens themselves).${ADMIN_ONLY}`,
  responses: { 200: { description: 'The signal endpoints', content: jsonContent(SignalEndpointsSchema) }, ...pickErrors(401, 403) },
})

const createEndpointRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: endpoints,
  operationId: 'createSignalEndpoint',
  tags,
  summary: 'Create a signal endpoint',
  description:
    'An endpoint other systems send signals to: `POST /api/signal-endpoint/{name}` with one of its tokens (create them with `POST …/{id}/tokens`). ' +
    `\`url\` is that address. A taken name is a 409; an instance has at most ${MAX_SIGNAL_ENDPOINTS} endpoints (400 past it).${ADMIN_ONLY} Emits \`signal-endpoint-created\`.`,
  request: { body: { required: true, content: jsonContent(CreateSignalEndpointSchema) } },
  responses: { 201: { description: 'The signal endpoint', content: jsonContent(SignalEndpointSchema) }, ...pickErrors(400, 401, 403, 409, 415) },
})

const updateEndpointRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: endpointPath,
  operationId: 'updateSignalEndpoint',
  tags,
  summary: 'Update a signal endpoint',
  description: `Sets its name (its URL changes with it) and description, and \`enabled\` when given. A taken name is a 409, an unknown endpoint a 404.${ADMIN_ONLY} Emits \`signal-endpoint-updated\`.`,
  request: { params: SignalEndpointIdParam, body: { required: true, content: jsonContent(CreateSignalEndpointSchema) } },
  responses: { 200: { description: 'The signal endpoint', content: jsonContent(SignalEndpointSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const switchRoute = (enabled: boolean) =>
  adminRoute({
    method: 'post',
    'x-change-requests': 'no-sdk-effect',
    'x-permission': { name: Permission.ADMIN },
    path: `${endpointPath}/${enabled ? 'on' : 'off'}`,
    operationId: enabled ? 'enableSignalEndpoint' : 'disableSignalEndpoint',
    tags,
    summary: enabled ? 'Enable a signal endpoint' : 'Disable a signal endpoint',
    description: `${enabled ? 'It takes signals again' : 'It refuses signals (404) until enabled again'}. 404 for an unknown endpoint.${ADMIN_ONLY} Emits \`signal-endpoint-updated\` when it changes.`,
    request: { params: SignalEndpointIdParam },
    responses: { 200: { description: 'The signal endpoint', content: jsonContent(SignalEndpointSchema) }, ...pickErrors(400, 401, 403, 404) },
  })
const onRoute = switchRoute(true)
const offRoute = switchRoute(false)

const deleteEndpointRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: endpointPath,
  operationId: 'deleteSignalEndpoint',
  tags,
  summary: 'Delete a signal endpoint',
  description: `Its tokens stop working and its signals go with it. Refused (409) while action sets listen to it; 404 for an unknown endpoint.${ADMIN_ONLY} Emits \`signal-endpoint-deleted\`.`,
  request: { params: SignalEndpointIdParam },
  responses: { 200: { description: 'The signal endpoint was deleted' }, ...pickErrors(400, 401, 403, 404, 409) },
})

const listTokensRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: `${endpointPath}/tokens`,
  operationId: 'getSignalEndpointTokens',
  tags,
  summary: "Get a signal endpoint's tokens",
  description: `Oldest first, never the tokens themselves. 404 for an unknown endpoint.${ADMIN_ONLY}`,
  request: { params: SignalEndpointIdParam },
  responses: { 200: { description: 'The tokens', content: jsonContent(SignalEndpointTokensSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const createTokenRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: `${endpointPath}/tokens`,
  operationId: 'createSignalEndpointToken',
  tags,
  summary: 'Create a signal endpoint token',
  description:
    `A token the endpoint accepts, only for it: \`token\` is in this answer only (stored as a SHA-256, never shown again, never in events). It authenticates nothing else (the admin API refuses it). ` +
    `An endpoint has at most ${MAX_TOKENS_PER_ENDPOINT} tokens (400 past it); 404 for an unknown endpoint.${ADMIN_ONLY} Emits \`signal-endpoint-token-created\`.`,
  request: { params: SignalEndpointIdParam, body: { required: true, content: jsonContent(CreateSignalEndpointTokenSchema) } },
  responses: { 201: { description: 'The token, with the token itself', content: jsonContent(SignalEndpointTokenSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const renameTokenRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: `${endpointPath}/tokens/{tokenId}`,
  operationId: 'updateSignalEndpointToken',
  tags,
  summary: 'Rename a signal endpoint token',
  description: `404 for an unknown token or one of another endpoint.${ADMIN_ONLY} Emits \`signal-endpoint-token-updated\` when the name changes.`,
  request: { params: SignalEndpointTokenParams, body: { required: true, content: jsonContent(CreateSignalEndpointTokenSchema) } },
  responses: { 200: { description: 'The token', content: jsonContent(SignalEndpointTokenSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const deleteTokenRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: `${endpointPath}/tokens/{tokenId}`,
  operationId: 'deleteSignalEndpointToken',
  tags,
  summary: 'Delete a signal endpoint token',
  description: `It stops working at once. 404 for an unknown token or one of another endpoint.${ADMIN_ONLY} Emits \`signal-endpoint-token-deleted\`.`,
  request: { params: SignalEndpointTokenParams },
  responses: { 200: { description: 'The token was deleted' }, ...pickErrors(400, 401, 403, 404) },
})

const endpointSignalsRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: `${endpointPath}/signals`,
  operationId: 'getSignalEndpointSignals',
  tags,
  summary: "Get a signal endpoint's signals",
  description: `Newest first, with their payloads and the name of the token each came with (the newest ${KEPT_PER_ENDPOINT} are kept). 404 for an unknown endpoint.${ADMIN_ONLY}`,
  request: { params: SignalEndpointIdParam, query: PageQuery },
  responses: { 200: { description: 'The signals', content: jsonContent(SignalEndpointSignalsSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const signalsRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/signals',
  operationId: 'getSignals',
  tags,
  summary: 'Search signals',
  description: `Every endpoint's signals, newest first, created from the day \`from\` to the day \`to\` (UTC, both included), with the total of those matching.${ADMIN_ONLY}`,
  request: { query: SignalQuery },
  responses: { 200: { description: 'The signals', content: jsonContent(SignalQueryResponseSchema) }, ...pickErrors(400, 401, 403) },
})

const callRoute = createRoute({
  method: 'post',
  path: '/api/signal-endpoint/{name}',
  operationId: 'callSignalEndpoint',
  tags,
  summary: 'Send a signal',
  description:
    `Stores the body (any JSON, at most ${MAX_SIGNAL_BYTES / 1024} KiB: 413 past it; none is \`{}\`) as a signal of the endpoint, with the token it came with, in \`Authorization\` (\`Bearer <token>\`): ` +
    "only a token of this endpoint (401 for any other credential, an API or personal access token included); 404 when the endpoint is switched off. " +
    'The enabled action sets listening to the endpoint whose filters match the payload run after the answer, as their service account (see the action sets of a project). ' +
    'Limited to 60 signals a minute per client address and endpoint by default (`FLAGPOST_SIGNAL_RATE_LIMIT`) (429 with `Retry-After` past it). Signals are not audit events: they are listed by `GET /api/admin/signal-endpoints/{id}/signals`.',
  request: { params: SignalEndpointNameParam },
  security: [{ [SIGNAL_SECURITY_SCHEME]: [] }],
  responses: { 200: { description: 'The signal was stored' }, ...pickErrors(400, 401, 404, 413, 415, 429) },
})

const withUrl = (c: Context<AppEnv>, endpoint: SignalEndpoint): SignalEndpoint => ({ ...endpoint, url: `${publicBaseUrl(c)}/api/signal-endpoint/${endpoint.name}` })

export const signalRoutes = createRouter()
  .openapi(listRoute, async (c) => c.json({ signalEndpoints: await listSignalEndpoints(c.var.db) }, 200))
  .openapi(createEndpointRoute, async (c) => c.json(withUrl(c, await createSignalEndpoint(c.var.db, c.var.caller, c.req.valid('json'))), 201))
  .openapi(updateEndpointRoute, async (c) => c.json(withUrl(c, await updateSignalEndpoint(c.var.db, c.var.caller, Number(c.req.valid('param').id), c.req.valid('json'))), 200))
  .openapi(onRoute, async (c) => c.json(await switchSignalEndpoint(c.var.db, c.var.caller, Number(c.req.valid('param').id), true), 200))
  .openapi(offRoute, async (c) => c.json(await switchSignalEndpoint(c.var.db, c.var.caller, Number(c.req.valid('param').id), false), 200))
  .openapi(deleteEndpointRoute, async (c) => {
    await deleteSignalEndpoint(c.var.db, c.var.caller, Number(c.req.valid('param').id))
    return c.body(null, 200)
  })
  .openapi(listTokensRoute, async (c) => c.json({ signalEndpointTokens: await listSignalEndpointTokens(c.var.db, Number(c.req.valid('param').id)) }, 200))
  .openapi(createTokenRoute, async (c) => c.json(await createSignalEndpointToken(c.var.db, c.var.caller, Number(c.req.valid('param').id), c.req.valid('json').name), 201))
  .openapi(renameTokenRoute, async (c) => {
    const { id, tokenId } = c.req.valid('param')
    return c.json(await renameSignalEndpointToken(c.var.db, c.var.caller, Number(id), Number(tokenId), c.req.valid('json').name), 200)
  })
  .openapi(deleteTokenRoute, async (c) => {
    const { id, tokenId } = c.req.valid('param')
    await deleteSignalEndpointToken(c.var.db, c.var.caller, Number(id), Number(tokenId))
    return c.body(null, 200)
  })
  .openapi(endpointSignalsRoute, async (c) => c.json({ signalEndpointSignals: await listEndpointSignals(c.var.db, Number(c.req.valid('param').id), c.req.valid('query')) }, 200))
  .openapi(signalsRoute, async (c) => c.json(await querySignals(c.var.db, c.req.valid('query')), 200))
  .openapi(callRoute, async (c) => {
    const { runs } = await storeSignal(c.var.db, c.var.signalSender, await signalPayload(c), c.var.clock())
    if (runs > 0) c.var.actionRuns.schedule(c)
    return c.body(null, 200)
  })
