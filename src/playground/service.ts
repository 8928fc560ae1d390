import { pendingChanges } from '../change-requests/store.js'
import type { Db } from '../db.js'
import type { EvaluationContext } from '../evaluation/index.js'
import { validationError } from '../http/errors.js'
import { cleanContext, combinationCount, contextCombinations, type PlaygroundContext } from './contexts.js'
import type { AdvancedEvaluation } from './advanced-response.js'
import { prepareEnvironment } from './evaluate.js'
import { loadDefaultStrategy, loadPlaygroundData, type PlaygroundData } from './loader.js'
import { applyChangesInMemory } from './preview.js'
import type { SdkContext } from './schemas.js'

/** Unleash's default cap on environments × flags × context combinations of one advanced evaluation. */
export const DEFAULT_MAX_EVALUATIONS = 15_000

type Projects = '*' | string[]

function checkScope(data: PlaygroundData) {
  const problems = [
    ...data.unknownEnvironments.map((name) => ({ path: 'body.environments', message: `environment ${name} does not exist` })),
    ...data.unknownProjects.map((id) => ({ path: 'body.projects', message: `project ${id} does not exist` })),
  ]
  if (problems.length > 0) throw validationError(`Unknown ${problems.map((p) => p.message.split(' does')[0]).join(', ')}`, problems)
}

/** The context the engine sees in an environment: the environment being evaluated unless the context names one. */
const inEnvironment = (context: EvaluationContext, environment: string): EvaluationContext => (context.environment ? context : { ...context, environment })

/** `POST /api/admin/playground`: one environment, the context as it is (no combinations). */
export async function basicPlayground(db: Db, now: Date, input: { environment: string; projects?: Projects | undefined; context: SdkContext }) {
  const projects = input.projects ?? '*'
  const data = await loadPlaygroundData(db, { projects, environments: [input.environment] })
  checkScope(data)
  const [context] = contextCombinations(cleanContext(input.context), false)
  const evaluation = inEnvironment(context!.evaluation, input.environment)
  const env = data.environments[0]!
  return {
    input: { ...input, projects },
    features: prepareEnvironment(env.flags, data.segments, env.name, now).map((flag) => {
      const result = flag.evaluate(evaluation)
      return { name: flag.name, projectId: flag.projectId, ...result }
    }),
  }
}

/**
 * Prepares the evaluation of every flag in every environment for every combination of the
 * context's comma-separated values; the evaluations themselves run as the response is streamed.
 */
function prepareCombinations(data: PlaygroundData, context: PlaygroundContext, now: Date, maxEvaluations: number) {
  const flagCount = data.environments[0]?.flags.length ?? 0
  const combinations = combinationCount(context)
  const total = data.environments.length * flagCount * combinations
  if (total > maxEvaluations) {
    throw validationError(
      `Rejecting evaluation as it would generate ${total} combinations exceeding ${maxEvaluations} limit. ` +
        `Please reduce the number of selected environments (${data.environments.length}), features (${flagCount}) or context field combinations (${combinations}).`,
    )
  }
  return {
    environments: data.environments.map((env) => ({ name: env.name, flags: prepareEnvironment(env.flags, data.segments, env.name, now) })),
    contexts: contextCombinations(context).map((c) => ({ evaluations: data.environments.map((env) => inEnvironment(c.evaluation, env.name)), shown: c.shown })),
    ...(context.invalid.length > 0 ? { warnings: { invalidContextProperties: context.invalid } } : {}),
  }
}

/** `POST /api/admin/playground/advanced`. */
export async function advancedPlayground(db: Db, now: Date, maxEvaluations: number, input: { environments: string[]; projects?: Projects | undefined; context: SdkContext }): Promise<AdvancedEvaluation> {
  const projects = input.projects ?? '*'
  const data = await loadPlaygroundData(db, { projects, environments: input.environments })
  checkScope(data)
  return { input: { ...input, projects }, ...prepareCombinations(data, cleanContext(input.context), now, maxEvaluations) }
}

/**
 * Operation 9: the change request's project and environment with its pending changes applied in
 * memory, evaluated as the advanced playground does. Nothing is written.
 */
export async function changeRequestPlayground(db: Db, now: Date, maxEvaluations: number, id: string, input: { context: SdkContext }): Promise<AdvancedEvaluation> {
  const changeRequest = await pendingChanges(db, id)
  const [data, defaultStrategy] = await Promise.all([
    loadPlaygroundData(db, {
      projects: [changeRequest.project],
      environments: [changeRequest.environment],
      segmentIds: changeRequest.changes.flatMap((c) => (Array.isArray(c.payload.segments) ? c.payload.segments.map(Number) : [])),
    }),
    loadDefaultStrategy(db, changeRequest.project, changeRequest.environment),
  ])
  const env = data.environments[0]!
  const preview: PlaygroundData = { ...data, environments: [{ name: env.name, flags: applyChangesInMemory(env.flags, changeRequest.changes, defaultStrategy) }] }
  return {
    input: { environments: [changeRequest.environment], projects: [changeRequest.project], context: input.context },
    ...prepareCombinations(preview, cleanContext(input.context), now, maxEvaluations),
  }
}
