import { pendingChanges } from '../change-requests/store.js'
import type { Db } from '../db.js'
import type { EvaluationContext, RegexMeter } from '../evaluation/index.js'
import { ApiError, notFound, validationError } from '../core/errors.js'
import { Lru } from '../core/lru.js'
import { cleanContext, combinationCount, contextCombinations, type PlaygroundContext } from './contexts.js'
import { responseEnvironment, type AdvancedEvaluation } from './advanced-response.js'
import { prepareEnvironment } from './evaluate.js'
import { loadPlaygroundData } from './loader.js'
import { preparedScope, type PreparedScope, type PreparedScopes } from './prepared-scopes.js'
import { applyChangesInMemory } from './preview.js'
import type { SdkContext } from './schemas.js'

/** Unleash's default cap on environments × flags × context combinations of one advanced evaluation. */
export const DEFAULT_MAX_EVALUATIONS = 15_000

type Projects = '*' | string[]

function checkScope(scope: { unknownEnvironments: string[]; unknownProjects: string[] }) {
  const problems = [
    ...scope.unknownEnvironments.map((name) => ({ path: 'body.environments', message: `environment ${name} does not exist` })),
    ...scope.unknownProjects.map((id) => ({ path: 'body.projects', message: `project ${id} does not exist` })),
  ]
  if (problems.length > 0) throw validationError(`Unknown ${problems.map((p) => p.message.split(' does')[0]).join(', ')}`, problems)
}

/** The context the engine sees in an environment: the environment being evaluated unless the context names one. */
const inEnvironment = (context: EvaluationContext, environment: string): EvaluationContext => (context.environment ? context : { ...context, environment })

/** Where the playground keeps prepared scopes (one per app), and whether a request may wait on another's preparation. */
export interface PlaygroundCache {
  scopes: PreparedScopes
  shareInFlight: boolean
}

/**
 * A prepared scope as a caller who may not read the `hidden` projects sees it: their flags are left out, and naming
 * one is naming an unknown project. Prepared scopes are shared by every caller, so this is applied to each request.
 */
function visibleScope(scope: PreparedScope, requested: Projects, hidden: readonly string[]): PreparedScope {
  if (hidden.length === 0) return scope
  const named = requested === '*' ? [] : requested.filter((id) => hidden.includes(id))
  return {
    ...scope,
    unknownProjects: [...new Set([...scope.unknownProjects, ...named])],
    environments: scope.environments.map((env) => {
      const keep = env.flags.map((flag) => !hidden.includes(flag.projectId))
      const kept = <T>(list: T[]) => list.filter((_, i) => keep[i])
      return { ...env, flags: kept(env.flags), headers: kept(env.headers), openings: kept(env.openings) }
    }),
  }
}

/** `POST /api/admin/playground`: one environment, the context as it is (no combinations). `hidden`: projects the caller may not read. */
export async function basicPlayground(
  db: Db,
  now: Date,
  cache: PlaygroundCache,
  hidden: readonly string[],
  input: { environment: string; projects?: Projects | undefined; context: SdkContext },
  meter?: RegexMeter,
  charge: ChargeEvaluations = () => {},
) {
  const projects = input.projects ?? '*'
  const scope = visibleScope(await preparedScope(cache.scopes, db, { projects, environments: [input.environment] }, cache.shareInFlight), projects, hidden)
  checkScope(scope)
  charge(scope.environments[0]?.flags.length ?? 0)
  const [context] = contextCombinations(cleanContext(input.context), false)
  const evaluation = inEnvironment(context!.evaluation, input.environment)
  return {
    input: { ...input, projects },
    features: scope.environments[0]!.flags.map((flag) => {
      const result = flag.evaluate(evaluation, now, meter)
      return { name: flag.name, projectId: flag.projectId, ...result }
    }),
  }
}

/** Takes the evaluations a playground request is about to make, before any is made (routes.ts charges them to the caller). */
export type ChargeEvaluations = (evaluations: number) => void

/**
 * Evaluations one caller (a user, a token) may have the playgrounds make in a minute: ten advanced requests at Unleash's
 * limit of 15,000. An evaluation with its share of the answer costs about 3 µs of CPU, so about half a second a minute.
 */
export const EVALUATIONS_PER_MINUTE = 150_000
const EVALUATIONS_WINDOW_MS = 60_000

/** FLAGPOST_PLAYGROUND_EVALUATIONS_PER_MINUTE: the playgrounds' evaluations per caller and minute; unset: 150,000; 0: no limit. */
export function playgroundEvaluationsPerMinute(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0) throw new Error(`FLAGPOST_PLAYGROUND_EVALUATIONS_PER_MINUTE must be a whole number, got "${value}"`)
  return n
}

/**
 * The playgrounds' charge: per caller (`key`), the evaluations of the current minute. Past EVALUATIONS_PER_MINUTE a
 * request is refused before it evaluates anything: 429 TooManyRequestsError with the seconds to wait. At most 10,000
 * callers are remembered (tokens and users are made by admins).
 */
export function evaluationCharge(perMinute = EVALUATIONS_PER_MINUTE) {
  if (perMinute === 0) return (): ChargeEvaluations => () => {}
  const windows = new Lru<string, { used: number; since: number }>({ maxEntries: 10_000 })
  return (key: string, now: number, onRefused: (retryAfter: number) => void): ChargeEvaluations =>
    (evaluations) => {
      let window = windows.get(key)
      if (!window || now - window.since >= EVALUATIONS_WINDOW_MS) windows.set(key, (window = { used: 0, since: now }))
      if (window.used > 0 && window.used + evaluations > perMinute) {
        const retryAfter = Math.max(1, Math.ceil((window.since + EVALUATIONS_WINDOW_MS - now) / 1000))
        onRefused(retryAfter)
        throw new ApiError(
          'TooManyRequestsError',
          `This request would make ${evaluations} evaluations, past the ${perMinute} the playgrounds make for one caller in a minute (${window.used} made): try again in ${retryAfter} seconds`,
        )
      }
      window.used += evaluations
    }
}

const counted = (n: number) => (n <= Number.MAX_SAFE_INTEGER ? String(n) : `more than ${Number.MAX_SAFE_INTEGER}`)

/**
 * Unleash's limit on one advanced evaluation (environments × flags × context combinations), checked
 * before anything is built or evaluated. Every combination is built even when the projects hold no
 * flags, so none (or no environment) counts as one: 2^25 combinations of an empty project would
 * otherwise pass as 0 evaluations and exhaust the process's memory.
 */
function checkEvaluationCount(environmentCount: number, flagCount: number, combinations: number, maxEvaluations: number) {
  const total = Math.max(environmentCount, 1) * Math.max(flagCount, 1) * combinations
  if (total > maxEvaluations) {
    throw validationError(
      `Rejecting evaluation as it would generate ${counted(total)} combinations exceeding ${maxEvaluations} limit. ` +
        `Please reduce the number of selected environments (${environmentCount}), features (${flagCount}) or context field combinations (${counted(combinations)}).`,
    )
  }
}

/**
 * The most bytes of JSON one advanced playground answer may hold: what Unleash's limit of 15,000 evaluations makes of
 * realistic flags (15,000 evaluations of flags with 3 constraints: 16 MB), twice over. Past it the answer is made of
 * large definitions shown many times (20 flags of 20 KB for 100 combinations: 40 MB; unbounded before, 1 GB and more),
 * which costs 3–4 ns a byte to write and compress: refused, where Unleash has no such limit.
 */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024

const encoder = new TextEncoder()

/**
 * Every flag in every environment for every combination of the context's comma-separated values, evaluated before
 * anything is answered: past the request's budget, or past MAX_ANSWER_BYTES, this throws (a 400), never a response cut
 * short. Each evaluation tests its constraints once and yields the bytes the response writes for it (shared by equal
 * evaluations: see FlagEvaluator.fragment), kept in the order the response is written, flag by flag, environment by
 * environment.
 */
function combinationsOf(environments: AdvancedEvaluation['environments'], context: PlaygroundContext, now: Date, meter: RegexMeter | undefined): Omit<AdvancedEvaluation, 'input'> {
  const contexts = contextCombinations(context).map((c) => ({ evaluations: environments.map((env) => inEnvironment(c.evaluation, env.name)), shown: encoder.encode(JSON.stringify(c.shown)) }))
  const flagCount = environments[0]?.flags.length ?? 0
  const evaluations: Uint8Array[] = new Array(flagCount * environments.length * contexts.length)
  let at = 0
  let bytes = 0
  for (let f = 0; f < flagCount; f++) {
    for (let e = 0; e < environments.length; e++) {
      const env = environments[e]!
      const flag = env.flags[f]!
      for (let c = 0; c < contexts.length; c++) {
        const evaluation = (evaluations[at++] = flag.fragment(contexts[c]!.evaluations[e]!, now, meter))
        bytes += env.openings[f]!.length + contexts[c]!.shown.length + evaluation.length + 1
      }
      if (bytes > MAX_ANSWER_BYTES) {
        throw validationError(
          `Rejecting evaluation as its answer would be more than ${MAX_ANSWER_BYTES} bytes (${MAX_ANSWER_BYTES / 1024 / 1024} MiB) of JSON. ` +
            'Please reduce the number of selected environments, features or context field combinations.',
        )
      }
    }
  }
  return {
    environments,
    shown: contexts.map((c) => c.shown),
    evaluations,
    ...(context.invalid.length > 0 ? { warnings: { invalidContextProperties: context.invalid } } : {}),
  }
}

/** `POST /api/admin/playground/advanced`. */
export async function advancedPlayground(
  db: Db,
  now: Date,
  maxEvaluations: number,
  cache: PlaygroundCache,
  hidden: readonly string[],
  input: { environments: string[]; projects?: Projects | undefined; context: SdkContext },
  meter?: RegexMeter,
  charge: ChargeEvaluations = () => {},
): Promise<AdvancedEvaluation> {
  const projects = input.projects ?? '*'
  const context = cleanContext(input.context)
  const combinations = combinationCount(context)
  // The context alone can be over the limit: refused before the flags are even loaded.
  checkEvaluationCount(input.environments.length, 0, combinations, maxEvaluations)
  const scope = visibleScope(await preparedScope(cache.scopes, db, { projects, environments: input.environments }, cache.shareInFlight), projects, hidden)
  checkScope(scope)
  checkEvaluationCount(scope.environments.length, scope.environments[0]?.flags.length ?? 0, combinations, maxEvaluations)
  charge(scope.environments.length * (scope.environments[0]?.flags.length ?? 0) * combinations)
  return { input: { ...input, projects }, ...combinationsOf(scope.environments, context, now, meter) }
}

/**
 * POST /api/admin/playground/change-request/{id}: the change request's project and environment with its pending changes applied in
 * memory, evaluated as the advanced playground does. Nothing is written (and nothing is kept: the
 * preview is prepared for this request only).
 */
export async function changeRequestPlayground(
  db: Db,
  now: Date,
  maxEvaluations: number,
  hidden: readonly string[],
  id: string,
  input: { context: SdkContext },
  meter?: RegexMeter,
  charge: ChargeEvaluations = () => {},
): Promise<AdvancedEvaluation> {
  const context = cleanContext(input.context)
  const combinations = combinationCount(context)
  checkEvaluationCount(1, 0, combinations, maxEvaluations)
  const changeRequest = await pendingChanges(db, id)
  // A change request of a project the caller may not read does not exist for them.
  if (hidden.includes(changeRequest.project)) throw notFound(`Could not find change request ${id}`)
  const data = await loadPlaygroundData(db, {
    projects: [changeRequest.project],
    environments: [changeRequest.environment],
    segmentIds: changeRequest.changes.flatMap((c) => (Array.isArray(c.payload.segments) ? c.payload.segments.map(Number) : [])),
    defaultStrategyOf: { projectId: changeRequest.project, environment: changeRequest.environment },
  })
  const env = data.environments[0]!
  const flags = applyChangesInMemory(env.flags, changeRequest.changes, data.defaultStrategy)
  checkEvaluationCount(1, flags.length, combinations, maxEvaluations)
  charge(flags.length * combinations)
  return {
    input: { environments: [changeRequest.environment], projects: [changeRequest.project], context: input.context },
    ...combinationsOf([responseEnvironment(env.name, prepareEnvironment(flags, data.segments, env.name))], context, now, meter),
  }
}
