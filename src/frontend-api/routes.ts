import { createRoute } from '@hono/zod-openapi'
import { clientAddressOf } from '../http/client-address.js'
import type { Context } from 'hono'
import { createRouter, jsonContent, SECURITY_SCHEME } from '../http/openapi.js'
import type { AppEnv } from '../http/context.js'
import { pickErrors } from '../http/errors.js'
import { sdkPrincipal } from '../client-api/auth.js'
import { environmentOf, reporterOf, tokenProjects } from '../client-api/scope.js'
import { storeMetrics, storeRegistration } from '../metrics/ingest.js'
import { ClientMetricsSchema, FrontendClientSchema } from '../metrics/schemas.js'
import { frontendContext } from './context.js'
import { checkContext } from '../http/evaluation-limits.js'
import { frontendToggles } from './evaluate.js'
import { FrontendPostSchema, FrontendQuerySchema, FrontendTogglesSchema } from './schemas.js'
import { etagMatches } from '../client-api/service.js'
import { sha256Hex } from '../client-api/sha256.js'
import { utf8Length } from '../client-api/state.js'
import { answerWithRequestId } from '../http/request-log.js'

const tags = ['Frontend API']
const security = [{ [SECURITY_SCHEME]: [] }]

const evaluationDescription =
  'Evaluates every flag of the frontend token’s projects in its environment for the context (with the same engine and the same payload server SDKs ' +
  'get) and returns the enabled ones, each with its variant and impressionData, as Unleash does. `remoteAddress` defaults to the caller’s address, ' +
  '`sessionId` to a random one, and `environment` is always the token’s. Fields other than the standard ones become properties. ' +
  'Client and admin tokens get 403. Browsers may call it from the origins in FLAGPOST_FRONTEND_CORS_ORIGINS (any by default). ' +
  'A context value longer than FLAGPOST_CONTEXT_VALUE_MAX_LENGTH (1,000 characters by default) is a 400 naming the field, and so is a context whose ' +
  'REGEX constraints would take more than FLAGPOST_REGEX_WORK_BUDGET matching steps (2,000,000 by default, far above any realistic use): a clear ' +
  'error rather than an answer evaluated on a cut value, or one that holds the server (Unleash sets neither limit).'

const getFrontendFeaturesRoute = createRoute({
  method: 'get',
  path: '/api/frontend',
  operationId: 'getFrontendFeatures',
  tags,
  security,
  summary: 'Retrieve enabled feature flags for the provided context.',
  description:
    `${evaluationDescription} Context values are query parameters, properties as \`properties[name]=value\`. The \`ETag\` is a hash of the answer ` +
    '(as Unleash’s, whose server tags every answer by its body), so it differs between contexts that get different flags or variants, and ' +
    '`If-None-Match` with it answers 304 with no body while this context still gets the same answer.',
  request: { query: FrontendQuerySchema },
  responses: {
    200: {
      description: 'The enabled flags',
      content: jsonContent(FrontendTogglesSchema),
      headers: { ETag: { schema: { type: 'string' }, description: 'A hash of this answer: send it back in If-None-Match' } },
    },
    304: { description: 'The answer for this context is the one the ETag in If-None-Match names' },
    ...pickErrors(400, 401, 403),
  },
})

const postFrontendFeaturesRoute = createRoute({
  method: 'post',
  path: '/api/frontend',
  operationId: 'getFrontendApiFeaturesWithPost',
  tags,
  security,
  summary: 'Retrieve enabled feature flags for the provided context, using POST.',
  description: `${evaluationDescription} The context is the body's \`context\` property. Nothing is written.`,
  request: { body: { required: false, content: jsonContent(FrontendPostSchema) } },
  responses: { 200: { description: 'The enabled flags', content: jsonContent(FrontendTogglesSchema) }, ...pickErrors(400, 401, 403, 413, 415) },
})

const frontendMetricsRoute = createRoute({
  method: 'post',
  path: '/api/frontend/client/metrics',
  operationId: 'registerFrontendMetrics',
  tags,
  security,
  summary: 'Register client usage metrics',
  description:
    'The frontend SDK’s yes/no and variant counts, handled like `POST /api/client/metrics` (stored with one insert, folded in the background) for the ' +
    'token’s environment and projects. Answers 200, as Unleash does.',
  request: { body: { required: true, content: jsonContent(ClientMetricsSchema) } },
  responses: { 200: { description: 'Accepted' }, ...pickErrors(400, 401, 403, 413, 415) },
})

const frontendRegisterRoute = createRoute({
  method: 'post',
  path: '/api/frontend/client/register',
  operationId: 'registerFrontendClient',
  tags,
  security,
  summary: 'Register a client SDK',
  description: 'Accepted with 200 as Unleash does; Flagpost also records the application and instance, like `POST /api/client/register`.',
  request: { body: { required: true, content: jsonContent(FrontendClientSchema) } },
  responses: { 200: { description: 'Accepted' }, ...pickErrors(400, 401, 403, 413, 415) },
})

async function answer(c: Context<AppEnv>, fields: Record<string, unknown>) {
  const principal = sdkPrincipal(c)
  const environment = await environmentOf(c, principal)
  const context = frontendContext(fields, { environment, remoteAddress: clientAddressOf(c) })
  checkContext(c, context)
  const now = c.get('caller').now
  const toggles = await frontendToggles(c, { environment, projects: tokenProjects(principal) }, context, now)
  c.header('Cache-Control', 'no-cache')
  return { toggles }
}

export const frontendRoutes = createRouter()
  .openapi(getFrontendFeaturesRoute, async (c) => {
    const body = JSON.stringify(await answer(c, c.req.valid('query')))
    const etag = `W/"${(await sha256Hex(body)).slice(0, 32)}"`
    // Cache-Control again: an answer made here does not take the headers set with c.header before it.
    if (etagMatches(c.req.header('if-none-match'), etag)) return answerWithRequestId(c, 304, { etag: etag, 'cache-control': 'no-cache' })
    c.get('sdk').options.observePayload?.('/api/frontend', utf8Length(body))
    return c.body(body, 200, { ETag: etag, 'Content-Type': 'application/json; charset=UTF-8' })
  })
  .openapi(postFrontendFeaturesRoute, async (c) => {
    const body = (c.req.valid('json') ?? {}) as Record<string, unknown>
    const context = body.context !== undefined && body.context !== null && typeof body.context === 'object' ? (body.context as Record<string, unknown>) : body
    return c.json(await answer(c, context), 200)
  })
  .openapi(frontendMetricsRoute, async (c) => {
    await storeMetrics(c.var.db, c.var.caller.now, await reporterOf(c, sdkPrincipal(c)), c.req.valid('json'))
    c.var.sdk.aggregation.schedule(c)
    return c.body(null, 200)
  })
  .openapi(frontendRegisterRoute, async (c) => {
    await storeRegistration(c.var.db, c.var.caller.now, await reporterOf(c, sdkPrincipal(c)), c.req.valid('json'))
    c.var.sdk.aggregation.schedule(c)
    return c.body(null, 200)
  })
