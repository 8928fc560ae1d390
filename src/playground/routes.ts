import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import {
  AdvancedPlaygroundRequestSchema,
  AdvancedPlaygroundResponseSchema,
  ChangeRequestPlaygroundRequestSchema,
  PlaygroundRequestSchema,
  PlaygroundResponseSchema,
} from './schemas.js'
import type { Context } from 'hono'
import type { AppEnv } from '../http/context.js'
import { advancedResponseStream, type AdvancedEvaluation } from './advanced-response.js'
import { createPreparedScopes } from './prepared-scopes.js'
import { advancedPlayground, basicPlayground, changeRequestPlayground, DEFAULT_MAX_EVALUATIONS, evaluationCharge, type PlaygroundCache } from './service.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import { checkContextValues } from '../http/evaluation-limits.js'
import { RegexMeter } from '../evaluation/index.js'
import { cleanContext, evaluatedValues } from './contexts.js'
import type { SdkContext } from './schemas.js'

/**
 * Refuses a context value longer than the limit (400) before anything is loaded: each comma-separated value on its
 * own where they are evaluated one by one.
 */
const checkContext = (c: Context, context: SdkContext, split: boolean) => checkContextValues(c, evaluatedValues(cleanContext(context), split))

const tags = ['Playground']
const evaluation =
  'Archived flags are not evaluated. Strategies only an SDK can evaluate (custom strategies, and applicationHostname, which depends on the host) are `{ evaluationStatus: "incomplete" }`, ' +
  "with `enabled: false` when their constraints or segments fail and `'unknown'` otherwise; disabled strategies are listed as `unevaluated` and do not count. " +
  "`strategies.result` is 'unknown' when no strategy is on and one is unknown; `isEnabled` is true only when the flag is on for sure. " +
  'The context is evaluated in the environment (`context.environment` defaults to it); custom top-level context fields are looked up like properties. Unknown environments or projects are a 400. ' +
  'Private projects the caller may not read (see `GET /api/admin/projects`) are left out of `*` and are unknown when named. ' +
  'A context value longer than FLAGPOST_CONTEXT_VALUE_MAX_LENGTH (1,000 characters by default; each comma-separated value on its own) is a 400 naming the field, ' +
  'and so is a request whose REGEX constraints would take more than FLAGPOST_REGEX_WORK_BUDGET matching steps (2,000,000 by default; each pattern is matched once per distinct value). ' +
  'The playgrounds make at most 150,000 evaluations a minute for one caller (a user or a token; unlike Unleash): past it, 429 TooManyRequestsError with `Retry-After`, before anything is evaluated.'
const combinations = (limit: string) =>
  'Every context field, properties included, may hold comma-separated values: every combination is evaluated, and each evaluated flag shows its combination (properties flattened in). ' +
  `More than ${limit} evaluations (environments × flags × combinations, no flag counting as one) is a 400, counted from the context before anything is built. Top-level context fields that are not strings are left out and listed in \`warnings.invalidContextProperties\`.`

const basicRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  path: '/api/admin/playground',
  operationId: 'getPlayground',
  tags,
  summary: 'Evaluate an Unleash context against an environment and projects',
  description: `Evaluates every flag of the projects (default all) in one environment for the context as given (no comma-separated combinations; use the advanced playground). ${evaluation} Writes nothing.`,
  request: { body: { required: true, content: jsonContent(PlaygroundRequestSchema) } },
  responses: { 200: { description: 'The flags and their evaluation', content: jsonContent(PlaygroundResponseSchema) }, ...pickErrors(400, 401, 403, 415, 429) },
})

/** Answers with the advanced playground's JSON written as it is evaluated (see advanced-response.ts): the document c.json would send. */
const streamJson = <Typed>(c: Context, result: AdvancedEvaluation): Typed =>
  c.body(advancedResponseStream(result), 200, { 'content-type': 'application/json' }) as unknown as Typed

/** The playground's routes, with the prepared scopes they keep: call once per app, so apps in one process keep their own. */
export function playgroundRoutes(options: { maxEvaluations?: number; evaluationsPerMinute?: number | undefined } = {}) {
  const limit = options.maxEvaluations ?? DEFAULT_MAX_EVALUATIONS
  const scopes = createPreparedScopes()
  const cacheOf = (c: Context<AppEnv>): PlaygroundCache => ({ scopes, shareInFlight: c.var.sdk.options.shareInFlight })
  const charges = evaluationCharge(options.evaluationsPerMinute)
  /** The caller's charge of evaluations (a 429 with Retry-After past its minute's). */
  const chargeOf = (c: Context<AppEnv>) => charges(c.var.caller.key, c.var.caller.now.getTime(), (retryAfter) => c.header('Retry-After', String(retryAfter)))
  const advancedRoute = adminRoute({
    method: 'post',
    'x-change-requests': 'no-sdk-effect',
    'x-permission': 'any-caller',
    path: '/api/admin/playground/advanced',
    operationId: 'getAdvancedPlayground',
    tags,
    summary: 'Batch evaluate an Unleash context against environments and projects',
    description: `${combinations(limit.toLocaleString('en'))} ${evaluation} Writes nothing.`,
    request: { body: { required: true, content: jsonContent(AdvancedPlaygroundRequestSchema) } },
    responses: { 200: { description: 'Per flag and environment, the evaluation of every combination', content: jsonContent(AdvancedPlaygroundResponseSchema) }, ...pickErrors(400, 401, 403, 415, 429) },
  })
  const changeRequestRoute = adminRoute({
    method: 'post',
    'x-change-requests': 'no-sdk-effect',
    'x-permission': 'any-caller',
    path: '/api/admin/playground/change-request/{id}',
    operationId: 'getChangeRequestPlayground',
    tags,
    summary: 'Evaluate a context against a change request preview',
    description:
      "Evaluates the flags of the change request's project in its environment as they would be once its pending changes are applied: the changes are applied in memory, " +
      'in order, to the current flags; nothing is written. A change request that is Applied, Rejected or Cancelled has no pending changes: the flags are evaluated as they are. ' +
      `A pending change that no longer applies (flag archived, strategy gone) is a 409, as applying it would be. 404 for an unknown change request, and for one of a private project the caller may not read. ${combinations(limit.toLocaleString('en'))} ${evaluation}`,
    request: {
      params: z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' }, description: 'The change request id' }) }),
      body: { required: true, content: jsonContent(ChangeRequestPlaygroundRequestSchema) },
    },
    responses: { 200: { description: 'Per flag, the evaluation of every combination in the environment', content: jsonContent(AdvancedPlaygroundResponseSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415, 429) },
  })

  return createRouter()
    .openapi(basicRoute, async (c) => {
      const input = c.req.valid('json')
      checkContext(c, input.context, false)
      return c.json(await basicPlayground(c.var.db, c.var.caller.now, cacheOf(c), await hiddenProjectsOf(c), input, new RegexMeter(c.var.evaluationLimits.regexWorkBudget), chargeOf(c)), 200)
    })
    .openapi(advancedRoute, async (c) => {
      const input = c.req.valid('json')
      checkContext(c, input.context, true)
      return streamJson(c, await advancedPlayground(c.var.db, c.var.caller.now, limit, cacheOf(c), await hiddenProjectsOf(c), input, new RegexMeter(c.var.evaluationLimits.regexWorkBudget, { memo: true }), chargeOf(c)))
    })
    .openapi(changeRequestRoute, async (c) => {
      const input = c.req.valid('json')
      checkContext(c, input.context, true)
      return streamJson(c, await changeRequestPlayground(c.var.db, c.var.caller.now, limit, await hiddenProjectsOf(c), c.req.valid('param').id, input, new RegexMeter(c.var.evaluationLimits.regexWorkBudget, { memo: true }), chargeOf(c)))
    })
}
