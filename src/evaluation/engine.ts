import { prepareSegment, prepareStrategy, type PreparedSegment, type PreparedStrategy } from './strategies.js'
import type {
  DependencyDefinition,
  EvaluateOptions,
  Evaluation,
  EvaluationContext,
  FlagDefinition,
  RulesetDefinition,
  SegmentDefinition,
  VariantResult,
} from './types.js'
import { DISABLED_VARIANT, DISABLED_VARIANT_FEATURE_ON, prepareVariants, selectVariant, type PreparedVariants } from './variants.js'

export interface PreparedDependency {
  readonly definition: DependencyDefinition
  readonly expectEnabled: boolean
  /** The parent variants one of which is required; null when any will do. */
  readonly variants: ReadonlySet<string> | null
  /** Undefined when the parent does not exist. */
  parent: PreparedFlag | undefined
}

export interface PreparedFlag {
  readonly definition: FlagDefinition
  readonly name: string
  readonly environmentEnabled: boolean
  /** Every strategy in the stored order, disabled ones included (for the detailed evaluation). */
  readonly allStrategies: readonly { readonly strategy: PreparedStrategy; readonly disabled: boolean }[]
  /** The strategies that count. */
  readonly strategies: readonly PreparedStrategy[]
  readonly variants: PreparedVariants | null
  readonly dependencies: readonly PreparedDependency[]
  readonly hasDependencies: boolean
  /** Whether an evaluation needs the clock (its own constraints or its parents' use currentTime). */
  usesTime: boolean
}

export interface PreparedRuleset {
  readonly flags: ReadonlyMap<string, PreparedFlag>
  readonly segments: ReadonlyMap<number, PreparedSegment>
}

const EMPTY_CONTEXT: EvaluationContext = Object.freeze({})
const NO_OPTIONS: EvaluateOptions = Object.freeze({})

function prepareOne(definition: FlagDefinition, segments: ReadonlyMap<number, PreparedSegment>): PreparedFlag {
  const allStrategies = (definition.strategies ?? []).map((s) => ({ strategy: prepareStrategy(s, definition.name, segments), disabled: s.disabled === true }))
  const strategies = allStrategies.filter((s) => !s.disabled).map((s) => s.strategy)
  const dependencies = (definition.dependencies ?? []).map((d) => ({
    definition: d,
    expectEnabled: d.enabled !== false,
    variants: d.variants && d.variants.length > 0 ? new Set(d.variants) : null,
    parent: undefined,
  }))
  return {
    definition,
    name: definition.name,
    // Strategies that are all disabled leave no rule that could turn it on: the environment is off, as a
    // write leaving it so switches it off. (No strategies at all is the SDKs' "on for everyone".)
    environmentEnabled: definition.enabled === true && (allStrategies.length === 0 || strategies.length > 0),
    allStrategies,
    strategies,
    variants: prepareVariants(definition.variants, definition.name),
    dependencies,
    hasDependencies: dependencies.length > 0,
    usesTime: strategies.some((s) => s.usesTime),
  }
}

/**
 * Parses a whole environment once (constraint values into sets, numbers, versions, regexes, CIDR
 * ranges; segments shared; parents linked) so that evaluations allocate next to nothing.
 */
export function prepareRuleset(definition: RulesetDefinition): PreparedRuleset {
  const segments = new Map<number, PreparedSegment>()
  for (const s of definition.segments ?? []) segments.set(s.id, prepareSegment(s))
  const flags = new Map<string, PreparedFlag>()
  for (const f of definition.flags) flags.set(f.name, prepareOne(f, segments))
  for (const flag of flags.values()) {
    for (const d of flag.dependencies) {
      d.parent = flags.get(d.definition.feature)
      if (d.parent?.strategies.some((s) => s.usesTime)) flag.usesTime = true
    }
  }
  return { flags, segments }
}

/** Prepares one flag; `parents` are the flags it depends on (without them its dependencies fail). */
export function prepareFlag(flag: FlagDefinition, segments: readonly SegmentDefinition[] = [], parents: readonly FlagDefinition[] = []): PreparedFlag {
  return prepareRuleset({ flags: [...parents, flag], segments: [...segments] }).flags.get(flag.name)!
}

export function clockOf(flag: PreparedFlag, options: EvaluateOptions): number {
  if (!flag.usesTime) return 0
  const now = options.now
  return now === undefined ? Date.now() : typeof now === 'number' ? now : now.getTime()
}

/** The flag is on and has no strategies that count: the environment's switch decides alone. */
export const NO_STRATEGIES = Symbol('no strategies')

/** What visiting a strategy or a dependency costs in the meter's steps, besides its constraints and its hashing. */
export const VISIT_STEPS = 10

export function strategyIsOn(strategy: PreparedStrategy, context: EvaluationContext, now: number, options: EvaluateOptions): boolean {
  options.regexMeter?.charge(VISIT_STEPS)
  if (strategy.segmentMissing) return false
  const checks = strategy.checks
  for (let i = 0; i < checks.length; i++) if (!checks[i]!(context, now, options)) return false
  return strategy.activate(context, now, options)
}

/** The first strategy that is on, NO_STRATEGIES, or null when the flag is off. */
function firstOn(flag: PreparedFlag, context: EvaluationContext, now: number, options: EvaluateOptions): PreparedStrategy | typeof NO_STRATEGIES | null {
  options.regexMeter?.charge(1)
  if (!flag.environmentEnabled) return null
  if (flag.hasDependencies && !dependenciesHold(flag, context, now, options)) return null
  const strategies = flag.strategies
  if (strategies.length === 0) return NO_STRATEGIES
  for (let i = 0; i < strategies.length; i++) if (strategyIsOn(strategies[i]!, context, now, options)) return strategies[i]!
  return null
}

export function dependencyHolds(dependency: PreparedDependency, context: EvaluationContext, now: number, options: EvaluateOptions): boolean {
  const parent = dependency.parent
  // Only one level of dependencies: a parent that has parents of its own never satisfies.
  options.regexMeter?.charge(VISIT_STEPS)
  if (parent === undefined || parent.hasDependencies) return false
  const { on, variant } = parentOutcome(parent, context, now, options)
  if (!dependency.expectEnabled) return on === null
  if (dependency.variants === null) return on !== null
  const chosen = variant()
  return chosen.feature_enabled && dependency.variants.has(chosen.name)
}

interface ParentOutcome {
  on: PreparedStrategy | typeof NO_STRATEGIES | null
  variant: () => VariantResult
}

/**
 * A parent's evaluation, made once per request and context when the request has a meter: sixty flags depending on
 * one parent evaluate it once, not sixty times. The memo lives on the meter, which lives as long as the request.
 */
function parentOutcome(parent: PreparedFlag, context: EvaluationContext, now: number, options: EvaluateOptions): ParentOutcome {
  const meter = options.regexMeter
  const byFlag = meter?.evaluationsOf(context)
  let outcome = byFlag?.get(parent) as ParentOutcome | undefined
  if (outcome === undefined) {
    const on = firstOn(parent, context, now, options)
    let variant: VariantResult | undefined
    outcome = { on, variant: () => (variant ??= variantOf(parent, on, context, now, options)) }
    byFlag?.set(parent, outcome)
  }
  return outcome
}

function dependenciesHold(flag: PreparedFlag, context: EvaluationContext, now: number, options: EvaluateOptions): boolean {
  const dependencies = flag.dependencies
  for (let i = 0; i < dependencies.length; i++) if (!dependencyHolds(dependencies[i]!, context, now, options)) return false
  return true
}

/** The variant for a flag whose first strategy that is on is `on`: its strategy variants win over the flag's. */
export function variantOf(flag: PreparedFlag, on: PreparedStrategy | typeof NO_STRATEGIES | null, context: EvaluationContext, now: number, options: EvaluateOptions): VariantResult {
  if (on === null) return DISABLED_VARIANT
  const random = options.random ?? Math.random
  if (on !== NO_STRATEGIES && on.variants !== null) {
    const variant = selectVariant(on.variants, context, now, random, options.regexMeter)
    if (variant !== null) return variant
  }
  if (flag.variants === null) return DISABLED_VARIANT_FEATURE_ON
  return selectVariant(flag.variants, context, now, random, options.regexMeter) ?? DISABLED_VARIANT_FEATURE_ON
}

/** Whether the flag is on for the context; an unknown flag (undefined) is off. */
export function isEnabled(flag: PreparedFlag | undefined, context: EvaluationContext = EMPTY_CONTEXT, options: EvaluateOptions = NO_OPTIONS): boolean {
  if (flag === undefined) return false
  return firstOn(flag, context, clockOf(flag, options), options) !== null
}

/** The variant the SDKs' getVariant returns; the returned objects are frozen and shared. */
export function getVariant(flag: PreparedFlag | undefined, context: EvaluationContext = EMPTY_CONTEXT, options: EvaluateOptions = NO_OPTIONS): VariantResult {
  if (flag === undefined) return DISABLED_VARIANT
  const now = clockOf(flag, options)
  return variantOf(flag, firstOn(flag, context, now, options), context, now, options)
}

/** `evaluate` of a known flag, with the strategy that decided it (null: off; NO_STRATEGIES: on with none): OFREP's reasons. */
export function evaluateWithStrategy(flag: PreparedFlag, context: EvaluationContext, options: EvaluateOptions): Evaluation & { on: PreparedStrategy | typeof NO_STRATEGIES | null } {
  const now = clockOf(flag, options)
  const on = firstOn(flag, context, now, options)
  return { enabled: on !== null, variant: variantOf(flag, on, context, now, options), on }
}

/** isEnabled and getVariant in one pass. */
export function evaluate(flag: PreparedFlag | undefined, context: EvaluationContext = EMPTY_CONTEXT, options: EvaluateOptions = NO_OPTIONS): Evaluation {
  if (flag === undefined) return { enabled: false, variant: DISABLED_VARIANT }
  const now = clockOf(flag, options)
  const on = firstOn(flag, context, now, options)
  return { enabled: on !== null, variant: variantOf(flag, on, context, now, options) }
}
