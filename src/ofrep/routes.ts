import { createRoute } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import { RegexMeter } from '../evaluation/index.js'
import { notFound } from '../core/errors.js'
import { createRouter, jsonContent, SECURITY_SCHEME } from '../http/openapi.js'
import type { AppEnv } from '../http/context.js'
import { pickErrors } from '../http/errors.js'
import { clientAddressOf } from '../http/client-address.js'
import { checkContext } from '../http/evaluation-limits.js'
import { sdkPrincipal } from '../client-api/auth.js'
import { environmentOf, tokenProjects } from '../client-api/scope.js'
import { clientPayload, etagMatches } from '../client-api/service.js'
import { sha256Hex } from '../client-api/sha256.js'
import { frontendContext } from '../frontend-api/context.js'
import { rulesetOf } from '../frontend-api/evaluate.js'
import * as z from '../http/zod.js'
import { evaluateOfrep, type OfrepEvaluation } from './evaluate.js'
import { answerWithRequestId } from '../http/request-log.js'

const tags = ['OpenFeature (OFREP)']
const security = [{ [SECURITY_SCHEME]: [] }]

const RequestSchema = z
  .object({
    context: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .openapi({ description: 'OpenFeature’s evaluation context: `targetingKey` is the userId (unless `userId` is given), the fields of Unleash’s context are its fields, any other is a property' }),
  })
  .catchall(z.unknown())
  .openapi('ofrepEvaluationRequest')

// The response schemas are made when the OpenAPI document is (the worker's bundle leaves the responses out, so these too).
let evaluationSchema: z.ZodType | undefined
const EvaluationSchema = () =>
  (evaluationSchema ??= z
    .object({
      key: z.string(),
      value: z.union([z.boolean(), z.string(), z.number(), z.record(z.string(), z.unknown()), z.array(z.unknown()), z.null()]),
      reason: z.enum(['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DISABLED', 'DEFAULT']),
      variant: z.string().optional(),
    })
    .openapi('ofrepEvaluationSuccess'))

let failureSchema: z.ZodType | undefined
const failure = (description: string) => ({
  description: `${description}: OFREP’s \`{ key, errorCode, errorDetails }\` with Flagpost’s \`{ id, name, message }\``,
  content: jsonContent(
    (failureSchema ??= z.object({ key: z.string().optional(), errorCode: z.string(), errorDetails: z.string(), id: z.string(), name: z.string(), message: z.string() }).openapi('ofrepEvaluationFailure')),
  ),
})

const accessDescription =
  'Takes a client token or a frontend token (`Authorization: <token>` or `Bearer <token>`), and evaluates the flags of its projects in its environment with the ' +
  'payload and engine of `/api/client` and `/api/frontend`. A frontend token sees what `/api/frontend` shows: the flags on for this context, any other is ' +
  'FLAG_NOT_FOUND. Admin tokens and personal access tokens get 403. The context is held to FLAGPOST_CONTEXT_VALUE_MAX_LENGTH and the evaluation work ' +
  'budget as on `/api/frontend` (400 INVALID_CONTEXT past them); a body that is not JSON is 400 PARSE_ERROR. A flag answers one value: the payload of ' +
  'the chosen variant (`number` as a number, `json` parsed, `string` and `csv` as text) when it is on with one, else whether it is on. Browsers may call it ' +
  'from the frontend API\'s origins (FLAGPOST_FRONTEND_CORS_ORIGINS, or those an admin stored through ui-config).'

const evaluateFlagRoute = createRoute({
  method: 'post',
  path: '/ofrep/v1/evaluate/flags/{key}',
  operationId: 'evaluateFlag',
  tags,
  security,
  summary: 'OFREP single flag evaluation',
  description: `${accessDescription} A flag the token cannot see is FLAG_NOT_FOUND, exactly as one that does not exist.`,
  request: { params: z.object({ key: z.string() }), body: { required: false, content: jsonContent(RequestSchema) } },
  responses: {
    200: { description: 'The flag’s value for the context', content: jsonContent(EvaluationSchema()) },
    400: failure('INVALID_CONTEXT or PARSE_ERROR'),
    404: failure('FLAG_NOT_FOUND'),
    ...pickErrors(401, 403, 413, 415),
  },
})

const evaluateFlagsRoute = createRoute({
  method: 'post',
  path: '/ofrep/v1/evaluate/flags',
  operationId: 'evaluateFlagsBulk',
  tags,
  security,
  summary: 'OFREP bulk flag evaluation',
  description:
    `${accessDescription} The \`ETag\` is a hash of the answer, so \`If-None-Match\` with it answers 304 with no body while this context still gets the same ` +
    'values (as `GET /api/frontend`). Only an ETag matches: `If-None-Match: *` names no answer on this POST and gets the answer (RFC 9110 keeps `*`\'s 304 to GET).',
  request: { body: { required: false, content: jsonContent(RequestSchema) } },
  responses: {
    200: {
      description: 'Every flag’s value for the context',
      content: jsonContent(z.object({ flags: z.array(EvaluationSchema()) }).openapi('ofrepBulkEvaluationSuccess')),
      headers: { ETag: { schema: { type: 'string' }, description: 'A hash of this answer: send it back in If-None-Match' } },
    },
    304: { description: 'The answer for this context is the one the ETag in If-None-Match names' },
    400: failure('INVALID_CONTEXT or PARSE_ERROR'),
    ...pickErrors(401, 403, 413, 415),
  },
})

const configurationRoute = createRoute({
  method: 'get',
  path: '/ofrep/v1/configuration',
  operationId: 'getConfiguration',
  tags,
  security,
  summary: 'OFREP provider configuration',
  description:
    'What a provider may read before it evaluates: the name of this flag service, that it may poll (the bulk endpoint answers 304 for its ETag while ' +
    'nothing changed; no shorter interval than `minPollingIntervalMs`) and the value types a flag may answer. Takes the tokens the evaluation takes (a ' +
    'client or frontend token; admin tokens and personal access tokens get 403), and tells nothing of the flags.',
  responses: {
    200: {
      description: 'The configuration',
      content: jsonContent(
        z
          .object({
            name: z.string(),
            capabilities: z.object({
              cacheInvalidation: z.object({ polling: z.object({ enabled: z.boolean(), minPollingIntervalMs: z.number() }) }),
              flagEvaluation: z.object({ supportedTypes: z.array(z.string()) }),
            }),
          })
          .openapi('ofrepConfiguration'),
      ),
    },
    ...pickErrors(401, 403),
  },
})

/** The shortest polling interval a provider is told to use: an unchanged poll is cheap (a 304), but not free. */
const MIN_POLLING_INTERVAL_MS = 1000

/**
 * OpenFeature's context as Unleash's: `targetingKey` is the userId unless one is given; strings, numbers and booleans
 * count (as text), other values (objects, arrays, null) are left out. Frontend tokens get /api/frontend's defaults
 * (the caller's address, a random sessionId); a server calls for its users, so a client token gets none.
 */
function unleashContext(c: Context<AppEnv>, given: Record<string, unknown>, environment: string, frontend: boolean) {
  const fields: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(given)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[name] = value
    else if (name === 'properties') fields[name] = value
  }
  if (fields.targetingKey !== undefined) {
    fields.userId ??= fields.targetingKey
    delete fields.targetingKey
  }
  return frontendContext(fields, frontend ? { environment, remoteAddress: clientAddressOf(c) } : { environment, randomSessionId: false })
}

/**
 * The evaluator of a request: the token's scope, the request's context, one work budget. `answer(name)` is undefined
 * for a flag outside the scope, and for a frontend token's flag that is off for the context (as /api/frontend hides it).
 */
async function evaluatorOf(c: Context<AppEnv>, given: Record<string, unknown> | null | undefined) {
  const principal = sdkPrincipal(c)
  const frontend = principal.kind === 'frontend-token'
  const environment = await environmentOf(c, principal)
  const context = unleashContext(c, given ?? {}, environment, frontend)
  checkContext(c, context)
  const { ruleset, flags } = rulesetOf(await clientPayload(c, { environment, projects: tokenProjects(principal), inlineSegmentConstraints: false }))
  const options = { now: c.var.caller.now, regexMeter: new RegexMeter(c.var.evaluationLimits.regexWorkBudget) }
  c.header('Cache-Control', 'no-cache')
  const answer = (name: string): OfrepEvaluation | undefined => {
    const flag = ruleset.flags.get(name)
    const evaluation = flag && evaluateOfrep(name, flag, context, options)
    return evaluation && (!frontend || (evaluation.reason !== 'DISABLED' && evaluation.reason !== 'DEFAULT')) ? evaluation : undefined
  }
  return { names: flags.map((f) => f.name), answer }
}

const FLAG_PATH = /^\/ofrep\/v1\/evaluate\/flags\/([^/]+)$/

/**
 * OFREP's providers read an error's `errorCode` (and `key`): every 400 and 404 of an evaluation gets them next to the
 * one error contract's fields. A body that is not JSON is PARSE_ERROR, any other 400 (a context value too long, the work
 * budget spent, a context that is not an object) INVALID_CONTEXT. 401 and 403 stay as they are: the providers read the status.
 */
export const ofrepErrors: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next()
  const status = c.res.status
  if (c.req.method !== 'POST' || (status !== 400 && status !== 404)) return
  const body = (await c.res.clone().json()) as { message?: string }
  const key = FLAG_PATH.exec(c.req.path)?.[1]
  const errorCode = status === 404 ? 'FLAG_NOT_FOUND' : body.message?.startsWith('Malformed JSON') ? 'PARSE_ERROR' : 'INVALID_CONTEXT'
  c.res = new Response(JSON.stringify({ ...(key !== undefined ? { key: decodeURIComponent(key) } : {}), errorCode, errorDetails: body.message ?? errorCode, ...body }), {
    status,
    headers: { 'content-type': 'application/json; charset=UTF-8' },
  })
}

export const ofrepRoutes = createRouter()
  .openapi(configurationRoute, (c) => {
    sdkPrincipal(c)
    return c.json(
      {
        name: 'Flagpost',
        capabilities: {
          cacheInvalidation: { polling: { enabled: true, minPollingIntervalMs: MIN_POLLING_INTERVAL_MS } },
          flagEvaluation: { supportedTypes: ['boolean', 'string', 'integer', 'float', 'object'] },
        },
      },
      200,
    )
  })
  .openapi(evaluateFlagRoute, async (c) => {
    const { key } = c.req.valid('param')
    const answer = (await evaluatorOf(c, c.req.valid('json')?.context)).answer(key)
    if (!answer) throw notFound(`No flag named ${key} for this token (its projects and environment)`)
    return c.json(answer, 200)
  })
  .openapi(evaluateFlagsRoute, async (c) => {
    const { names, answer } = await evaluatorOf(c, c.req.valid('json')?.context)
    const body = JSON.stringify({ flags: names.map(answer).filter((a) => a !== undefined) })
    const etag = `W/"${(await sha256Hex(body)).slice(0, 32)}"`
    // Cache-Control again (see evaluatorOf): an answer made here does not take the headers set with c.header before it.
    if (etagMatches(c.req.header('if-none-match'), etag, 'POST')) return answerWithRequestId(c, 304, { etag: etag, 'cache-control': 'no-cache' })
    return c.body(body, 200, { ETag: etag, 'Content-Type': 'application/json; charset=UTF-8' })
  })
