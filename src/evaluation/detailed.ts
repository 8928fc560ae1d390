import type { PreparedConstraint } from './constraints.js'
import { clockOf, NO_STRATEGIES, variantOf, VISIT_STEPS, type PreparedDependency, type PreparedFlag } from './engine.js'
import type { PreparedSegment, PreparedStrategy } from './strategies.js'
import type {
  DetailedConstraint,
  DetailedDependency,
  DetailedEvaluation,
  DetailedOptions,
  DetailedResult,
  DetailedSegment,
  DetailedStrategy,
  EvaluationContext,
} from './types.js'
import { DISABLED_VARIANT } from './variants.js'

/*
 * The playground's view: every constraint, segment and strategy with its own result. Kept apart from
 * the fast path in engine.ts (which stops at the first false constraint and allocates nothing); both
 * share the prepared constraints and strategies, so their answers cannot drift apart.
 */

const NO_OPTIONS: DetailedOptions = Object.freeze({})

/**
 * Each constraint's detail: its definition with its result, one of two frozen objects made once per prepared constraint
 * (copying every definition for every evaluation was most of the advanced playground's time).
 */
function constraintResults(constraints: readonly PreparedConstraint[], context: EvaluationContext, now: number, options: DetailedOptions): DetailedConstraint[] {
  const results = new Array<DetailedConstraint>(constraints.length)
  let held = true
  for (let i = 0; i < constraints.length; i++) {
    const c = constraints[i]!
    const shown = (c.shown ??= [Object.freeze({ ...c.definition, result: false }), Object.freeze({ ...c.definition, result: true })])
    const result = c.test(context, now, options)
    if (!result) held = false
    results[i] = shown[result ? 1 : 0]
  }
  allHeld = held
  return results
}

/**
 * Whether every constraint of the last constraintResults held. Reading `result` back off the details was a fifth of the
 * advanced playground's time: they are copies of every definition, so the read sees as many shapes as there are.
 */
let allHeld = true

function segmentResult(id: number, segment: PreparedSegment | undefined, context: EvaluationContext, now: number, options: DetailedOptions): DetailedSegment {
  if (segment === undefined) return { id, found: false, result: false, constraints: [] }
  // A segment's constraints are copied into the answer under every strategy that uses it: charged each time, as a
  // strategy's own are (five segments of a thousand constraints under 450 strategies made a 351 MB answer).
  options.regexMeter?.charge(VISIT_STEPS + segment.constraints.length * DETAIL_STEPS + (options.answerCharged ? 0 : segmentShownSize(segment)))
  const constraints = constraintResults(segment.constraints, context, now, options)
  return {
    id,
    ...(segment.definition.name ? { name: segment.definition.name } : {}),
    found: true,
    result: allHeld,
    constraints,
  }
}

const segmentShownSizes = new WeakMap<PreparedSegment, number>()
/** The characters a segment's detail repeats from its definition (its name and constraints). */
function segmentShownSize(segment: PreparedSegment): number {
  let size = segmentShownSizes.get(segment)
  if (size === undefined) {
    size = JSON.stringify([segment.definition.name, segment.constraints.map((c) => c.definition)]).length
    segmentShownSizes.set(segment, size)
  }
  return size
}

const shownSizes = new WeakMap<PreparedStrategy, number>()
/** The characters a strategy's detail repeats from its definition (parameters, constraint values, variants): the answer's size. */
function shownSize(strategy: PreparedStrategy): number {
  let size = shownSizes.get(strategy)
  if (size === undefined) {
    const d = strategy.definition
    size = JSON.stringify([d.parameters, d.constraints, d.variants, d.title]).length
    shownSizes.set(strategy, size)
  }
  return size
}

/** What the detail takes per constraint beyond its test (its detail picked and listed, its result in the signature), in matching steps. */
const DETAIL_STEPS = 6

/**
 * The characters a detailed evaluation of the flag repeats from its definitions (every strategy's, and every segment's
 * under each strategy that uses it): what the JSON of its answer costs to write, the flag's name and results aside.
 */
export function shownSizeOf(flag: PreparedFlag): number {
  let size = 0
  for (const { strategy } of flag.allStrategies) {
    size += VISIT_STEPS + shownSize(strategy)
    for (const segment of strategy.segments) if (segment !== undefined) size += VISIT_STEPS + segmentShownSize(segment)
  }
  return size
}

function strategyResult(strategy: PreparedStrategy, disabled: boolean, context: EvaluationContext, now: number, options: DetailedOptions): DetailedStrategy {
  // What the detail builds (its arrays, a constraint's detail picked), and the definition it copies into the answer: its
  // size is work too, and bounds the answer (unless the caller charges the answer itself).
  options.regexMeter?.charge(VISIT_STEPS + strategy.constraints.length * DETAIL_STEPS + (options.answerCharged ? 0 : shownSize(strategy)))
  const definition = strategy.definition
  const constraints = constraintResults(strategy.constraints, context, now, options)
  let held = allHeld
  let segments: DetailedSegment[] = NO_SEGMENTS
  if (strategy.segments.length > 0) {
    const ids = definition.segments ?? []
    segments = strategy.segments.map((s, i) => segmentResult(ids[i]!, s, context, now, options))
    held &&= segments.every((s) => s.result)
  }
  let result: DetailedResult = false
  if (!disabled && held) {
    result = options.unknownStrategies === true && strategy.needsHost ? 'unknown' : strategy.activate(context, now, options)
  }
  // The definition's parameters and variants are shown as they are (frozen once, shared by every evaluation): a copy
  // per evaluation was a fifth of the advanced playground's time at 15,000 evaluations.
  const shown = (strategy.shown ??= {
    parameters: Object.freeze({ ...(definition.parameters ?? {}) }) as Record<string, string>,
    variants: Object.freeze([...(definition.variants ?? [])]) as DetailedStrategy['variants'],
  })
  const id = definition.id ?? null
  return definition.title
    ? { id, name: definition.name, title: definition.title, parameters: shown.parameters, disabled, result, constraints, segments, variants: shown.variants }
    : { id, name: definition.name, parameters: shown.parameters, disabled, result, constraints, segments, variants: shown.variants }
}

const NO_SEGMENTS: DetailedSegment[] = Object.freeze([]) as unknown as DetailedSegment[]
const NO_DEPENDENCIES: DetailedDependency[] = Object.freeze([]) as unknown as DetailedDependency[]

interface StrategiesOutcome {
  strategies: DetailedStrategy[]
  /** The strategies' verdict, dependencies and the environment switch aside. */
  enabled: DetailedResult
  firstOn: PreparedStrategy | typeof NO_STRATEGIES | null
}

function strategiesOutcome(flag: PreparedFlag, context: EvaluationContext, now: number, options: DetailedOptions): StrategiesOutcome {
  const strategies: DetailedStrategy[] = []
  let firstOn: PreparedStrategy | null = null
  let unknown = false
  for (const { strategy, disabled } of flag.allStrategies) {
    const detail = strategyResult(strategy, disabled, context, now, options)
    strategies.push(detail)
    if (detail.result === true && firstOn === null) firstOn = strategy
    if (detail.result === 'unknown') unknown = true
  }
  if (flag.strategies.length === 0) return { strategies, enabled: true, firstOn: NO_STRATEGIES }
  return { strategies, enabled: firstOn !== null ? true : unknown ? 'unknown' : false, firstOn }
}

function dependencyResult(dependency: PreparedDependency, context: EvaluationContext, now: number, options: DetailedOptions): DetailedDependency {
  const definition = {
    feature: dependency.definition.feature,
    enabled: dependency.expectEnabled,
    variants: [...(dependency.definition.variants ?? [])],
  }
  const parent = dependency.parent
  options.regexMeter?.charge(VISIT_STEPS)
  if (parent === undefined || parent.hasDependencies) return { ...definition, satisfied: false }
  const outcome = parent.environmentEnabled ? strategiesOutcome(parent, context, now, options) : { enabled: false as const, firstOn: null, strategies: [] }
  let satisfied: DetailedResult
  if (outcome.enabled === 'unknown') satisfied = 'unknown'
  else if (!dependency.expectEnabled) satisfied = !outcome.enabled
  else if (dependency.variants === null || !outcome.enabled) satisfied = outcome.enabled
  else {
    const variant = variantOf(parent, outcome.firstOn, context, now, options)
    satisfied = variant.feature_enabled && dependency.variants.has(variant.name)
  }
  return { ...definition, satisfied }
}

/**
 * Evaluates a flag showing its work: per strategy its result and the result of each of its
 * constraints and segments, and the dependencies. With `unknownStrategies`, strategies the server
 * cannot evaluate (custom ones, applicationHostname) are 'unknown' unless a constraint or segment
 * already rules them out, and the flag is 'unknown' when nothing else turns it on.
 */
export function evaluateDetailed(flag: PreparedFlag, context: EvaluationContext = {}, options: DetailedOptions = NO_OPTIONS): DetailedEvaluation {
  const now = clockOf(flag, options)
  const dependencies = flag.dependencies.length === 0 ? NO_DEPENDENCIES : flag.dependencies.map((d) => dependencyResult(d, context, now, options))
  const outcome = strategiesOutcome(flag, context, now, options)
  let enabled: DetailedResult = outcome.enabled
  if (!flag.environmentEnabled || dependencies.some((d) => d.satisfied === false)) enabled = false
  else if (enabled !== false && dependencies.some((d) => d.satisfied === 'unknown')) enabled = 'unknown'
  return {
    name: flag.name,
    enabled,
    environmentEnabled: flag.environmentEnabled,
    dependencies,
    strategies: outcome.strategies,
    variant: enabled === true ? variantOf(flag, outcome.firstOn, context, now, options) : DISABLED_VARIANT,
  }
}
