import { createRoute } from '@hono/zod-openapi'
import { clientAddressOf, limitKeyOf, networkLimitKey } from '../http/client-address.js'
import { createRouter, jsonContent, SECURITY_SCHEME } from '../http/openapi.js'
import { notFound } from '../core/errors.js'
import { pickErrors } from '../http/errors.js'
import { ClientApplicationSchema, ClientMetricsSchema } from '../metrics/schemas.js'
import { storeMetrics, storeRegistration } from '../metrics/ingest.js'
import { sdkPrincipal } from './auth.js'
import { ClientFeatureSchema, ClientFeaturesQuerySchema, ClientFeaturesSchema, clientFeatureNameParam, clientFeaturesDeltaSchema } from './schemas.js'
import { clientScopeOf, reporterOf } from './scope.js'
import { bareTag, deltaBody, heldRevisions } from './delta.js'
import { utf8Length } from './state.js'
import { clientPayload, etagMatches } from './service.js'
import { answerWithRequestId } from '../http/request-log.js'

const tags = ['Client']
const security = [{ [SECURITY_SCHEME]: [] }]

const getAllClientFeaturesRoute = createRoute({
  method: 'get',
  path: '/api/client/features',
  operationId: 'getAllClientFeatures',
  tags,
  security,
  summary: 'Get all flags (SDK)',
  description:
    'What server SDKs evaluate locally: every flag of the token’s projects that is not archived, for the token’s environment, with its enabled state, ' +
    'strategies in order (disabled strategies are left out, as Unleash does; so a flag whose strategies are all disabled has none, and an SDK treats it ' +
    'as on wherever the environment is on, exactly as against Unleash), variants, dependencies, impressionData and project, plus the segments those ' +
    'strategies use. Unleash’s filters narrow it: `project` (within the token’s projects), `namePrefix`, `tag=type:value` (any of them). Admin tokens are ' +
    'accepted and serve the `environment` parameter’s environment, else the first enabled one. SDKs that do not send `Unleash-Client-Spec` 4.2.0 or later ' +
    'get segment constraints copied into the strategies instead of `segments`. The `ETag` is a hash of the payload, so `If-None-Match` with it answers 304 with ' +
    'no body until something this token sees changes; the payload is built once per change and served from memory in between. A `namePrefix` payload is ' +
    'filtered from its scope’s in memory and kept; a token whose prefixes must be filtered again (more heavy prefixes than the payload cache holds) more ' +
    'than 32 MiB a minute gets 429 TooManyRequestsError with `Retry-After` (Unleash has no such limit).',
  request: { query: ClientFeaturesQuerySchema },
  responses: {
    200: {
      description: 'The flags',
      content: jsonContent(ClientFeaturesSchema),
      headers: { ETag: { schema: { type: 'string' }, description: 'Send it back in If-None-Match' } },
    },
    304: { description: 'Nothing changed since the ETag in If-None-Match' },
    ...pickErrors(400, 401, 403, 429),
  },
})

const getClientFeatureRoute = createRoute({
  method: 'get',
  path: '/api/client/features/{featureName}',
  operationId: 'getClientFeature',
  tags,
  security,
  summary: 'Get a single feature flag',
  description: 'The one flag of `GET /api/client/features` with this name (the same scope and filters); 404 when that payload does not have it.',
  request: { params: clientFeatureNameParam, query: ClientFeaturesQuerySchema },
  responses: { 200: { description: 'The flag', content: jsonContent(ClientFeatureSchema) }, ...pickErrors(400, 401, 403, 404, 429) },
})

const getClientDeltaRoute = createRoute({
  method: 'get',
  path: '/api/client/delta',
  operationId: 'getDelta',
  tags,
  security,
  summary: 'Get partial updates (SDK)',
  description:
    'What `GET /api/client/features` serves (the same token scope, filters and payload rules), as Unleash’s delta events for SDKs in polling-delta mode. ' +
    'Without `If-None-Match`, or with a tag this server no longer knows, one `hydration` event holds every flag and segment. With the `ETag` of an ' +
    'earlier answer, the events since: `feature-updated` (a flag new or changed), `feature-removed` (archived, deleted or no longer in scope), ' +
    '`segment-updated`, `segment-removed`; 304 when nothing changed. The ETag names the content the client holds (a hash, as for `/api/client/features`), ' +
    'never an event id, so a write that commits late is never skipped. Each event’s `eventId` is the newest event id of the answer’s revision. A server keeps ' +
    'the last few payloads of each scope to diff against; a client further behind, or one that asks another instance, is hydrated again.',
  request: { query: ClientFeaturesQuerySchema },
  responses: {
    200: {
      description: 'The events that bring the client up to date',
      content: jsonContent(clientFeaturesDeltaSchema()),
      headers: { ETag: { schema: { type: 'string' }, description: 'Send it back in If-None-Match' } },
    },
    304: { description: 'Nothing changed since the ETag in If-None-Match' },
    ...pickErrors(400, 401, 403, 429),
  },
})

const streamClientFeaturesRoute = createRoute({
  method: 'get',
  path: '/api/client/streaming',
  operationId: 'streamClientFeatures',
  tags,
  security,
  summary: 'Stream flag changes (SDK)',
  description:
    'Server-sent events for SDKs in streaming mode, with the scope and payload rules of `GET /api/client/delta`. A new connection gets ' +
    '`unleash-connected` with a `hydration` event; each change then arrives as `unleash-updated` with the delta events, within about a second of the ' +
    'write through any instance or isolate sharing the database (at once through the same Node server). Every event’s `id` names the payload the client then holds: a client ' +
    'reconnecting with it in `Last-Event-ID` gets only what changed since (`unleash-updated`, nothing when nothing did), or a hydration when the server ' +
    'no longer knows it. A `: keep-alive` comment every 15 seconds keeps the connection open. A stream ends when its token is deleted (before the next change is sent) or expires (within 15 seconds): the SDK reconnecting is then refused. Connections are limited per token, per client address and per ' +
    'server (on Workers, per Durable Object, one per scope): past them the answer is 429, on which SDKs poll instead. A deployment without streams (a worker ' +
    'without its SDK_STREAMS binding) answers 404, on which SDKs fall back to polling too.',
  request: { query: ClientFeaturesQuerySchema },
  responses: {
    200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
    ...pickErrors(400, 401, 403, 404, 429),
  },
})

const registerClientApplicationRoute = createRoute({
  method: 'post',
  path: '/api/client/register',
  operationId: 'registerClientApplication',
  tags,
  security,
  summary: 'Register a client SDK',
  description:
    'SDKs call this on start-up with appName, instanceId, sdkVersion, strategies, interval and started. Accepted with 202 once stored; the application and ' +
    'instance are recorded in the background, and an application seen for the first time writes `application-created` (attributed to the token).',
  request: { body: { required: true, content: jsonContent(ClientApplicationSchema) } },
  responses: { 202: { description: 'Accepted' }, ...pickErrors(400, 401, 403, 413, 415) },
})

const registerClientMetricsRoute = createRoute({
  method: 'post',
  path: '/api/client/metrics',
  operationId: 'registerClientMetrics',
  tags,
  security,
  summary: 'Register client usage metrics',
  description:
    'A bucket of per-flag yes/no counts and variant counts. Accepted with 202 once stored (one row, whatever the number of flags); folded in the background ' +
    'into hourly counts per flag, application and environment and into the flags’ lastSeenAt in the token’s environment. Flags that do not exist or are ' +
    'outside the token’s projects are ignored.',
  request: { body: { required: true, content: jsonContent(ClientMetricsSchema) } },
  responses: { 202: { description: 'Accepted' }, ...pickErrors(400, 401, 403, 413, 415) },
})

export const clientRoutes = createRouter()
  .openapi(getAllClientFeaturesRoute, async (c) => {
    const scope = await clientScopeOf(c, sdkPrincipal(c), c.req.valid('query'))
    const payload = await clientPayload(c, scope)
    if (etagMatches(c.req.header('if-none-match'), payload.etag)) return answerWithRequestId(c, 304, { etag: payload.etag })
    c.get('sdk').options.observePayload?.('/api/client/features', payload.body.byteLength)
    return c.body(payload.body as Uint8Array<ArrayBuffer>, 200, { ETag: payload.etag, 'Content-Type': 'application/json; charset=UTF-8' })
  })
  .openapi(getClientDeltaRoute, async (c) => {
    const scope = await clientScopeOf(c, sdkPrincipal(c), c.req.valid('query'))
    const payload = await clientPayload(c, scope)
    const held = heldRevisions(c.req.header('if-none-match'))
    if (held.includes(bareTag(payload.etag))) return answerWithRequestId(c, 304, { etag: payload.etag })
    const { json } = deltaBody(payload, held.find((tag) => payload.history.some((version) => bareTag(version.etag) === tag)) ?? held[0])
    c.get('sdk').options.observePayload?.('/api/client/delta', utf8Length(json))
    return c.body(json, 200, { ETag: payload.etag, 'Content-Type': 'application/json; charset=UTF-8' })
  })
  .openapi(streamClientFeaturesRoute, async (c) => {
    const streams = c.get('sdk').streams
    if (!streams) throw notFound('Streaming is not served by this deployment: poll /api/client/features or /api/client/delta')
    const principal = sdkPrincipal(c)
    const scope = await clientScopeOf(c, principal, c.req.valid('query'))
    return streams.open(c, scope, { token: `${principal.kind}:${principal.tokenId}`, tokenId: principal.tokenId, address: limitKeyOf(c), network: networkLimitKey(clientAddressOf(c) ?? '') })
  })
  .openapi(getClientFeatureRoute, async (c) => {
    const { featureName } = c.req.valid('param')
    const scope = await clientScopeOf(c, sdkPrincipal(c), c.req.valid('query'))
    const feature = (await clientPayload(c, scope)).byName.get(featureName)
    if (!feature) throw notFound(`Could not find feature flag ${featureName}`)
    return c.json(feature, 200)
  })
  .openapi(registerClientApplicationRoute, async (c) => {
    const body = c.req.valid('json')
    await storeRegistration(c.get('db'), c.get('caller').now, await reporterOf(c, sdkPrincipal(c), body.environment), body)
    c.get('sdk').aggregation.schedule(c)
    return c.body(null, 202)
  })
  .openapi(registerClientMetricsRoute, async (c) => {
    const body = c.req.valid('json')
    await storeMetrics(c.get('db'), c.get('caller').now, await reporterOf(c, sdkPrincipal(c), body.environment), body)
    c.get('sdk').aggregation.schedule(c)
    return c.body(null, 202)
  })
