import type { RegexMeter } from './regex.js'
/**
 * The engine's input: one environment's view of the flags, as the server stores it (see
 * strategies/schemas.ts, variants/schemas.ts) and as Unleash's client API serves it. Every field the
 * client API may leave out is optional; the stored shapes fit these types as they are.
 */

/** A constraint operator; names the engine does not know make the constraint false. */
export type Operator =
  | 'NOT_IN' | 'IN' | 'STR_ENDS_WITH' | 'STR_STARTS_WITH' | 'STR_CONTAINS'
  | 'NUM_EQ' | 'NUM_GT' | 'NUM_GTE' | 'NUM_LT' | 'NUM_LTE'
  | 'DATE_AFTER' | 'DATE_BEFORE' | 'SEMVER_EQ' | 'SEMVER_GT' | 'SEMVER_GTE' | 'SEMVER_LT' | 'SEMVER_LTE'
  | 'REGEX' | 'IN_CIDR'
  | (string & {})

export interface ConstraintDefinition {
  contextName: string
  operator: Operator
  /** For NOT_IN, IN, STR_*, IN_CIDR. */
  values?: string[] | null
  /** For NUM_*, DATE_*, SEMVER_*, REGEX. */
  value?: string | null
  caseInsensitive?: boolean | null
  inverted?: boolean | null
}

export interface PayloadDefinition {
  type: string
  value: string
}

export interface OverrideDefinition {
  contextName: string
  values: string[]
}

export interface VariantDefinition {
  name: string
  /** Weights are relative: a variant's share is its weight over the sum of all weights. */
  weight: number
  weightType?: string | null
  stickiness?: string | null
  payload?: PayloadDefinition | null
  overrides?: OverrideDefinition[] | null
}

export interface StrategyDefinition {
  id?: string | null
  name: string
  title?: string | null
  /** Disabled strategies never count; SDKs never see them. */
  disabled?: boolean | null
  parameters?: Record<string, string> | null
  constraints?: ConstraintDefinition[] | null
  segments?: number[] | null
  variants?: VariantDefinition[] | null
}

export interface DependencyDefinition {
  feature: string
  /** Default true: the parent must be enabled; false: it must be disabled. */
  enabled?: boolean | null
  /** When non-empty (and enabled is not false), the parent's variant must be one of these. */
  variants?: string[] | null
}

export interface FlagDefinition {
  name: string
  /** Whether the flag is enabled in this environment. */
  enabled: boolean
  strategies?: StrategyDefinition[] | null
  variants?: VariantDefinition[] | null
  dependencies?: DependencyDefinition[] | null
}

export interface SegmentDefinition {
  id: number
  name?: string | null
  constraints?: ConstraintDefinition[] | null
}

/** Everything needed to evaluate a set of flags: the flags and the segments their strategies use. */
export interface RulesetDefinition {
  flags: FlagDefinition[]
  segments?: SegmentDefinition[]
}

/** The Unleash context. A constraint's contextName is looked up in the standard fields first, then in properties. */
export interface EvaluationContext {
  appName?: string
  environment?: string
  userId?: string
  sessionId?: string
  remoteAddress?: string
  /** Defaults to the `now` of the evaluation options, or the time of the call. */
  currentTime?: string | Date
  properties?: Record<string, string | null | undefined>
}

export interface EvaluateOptions {
  /** The time constraints on currentTime compare to when the context has none (default: the time of the call). */
  now?: number | Date
  /** The host name the applicationHostname strategy compares to; without it that strategy is off. */
  hostname?: string
  /** A number in [0, 1) for random rollouts and random stickiness (default Math.random). */
  random?: () => number
  /**
   * The request's budget for REGEX matching: a match past it throws RegexWorkExceeded. Without one, matching is
   * unbounded (for callers whose patterns and texts are both their own).
   */
  regexMeter?: RegexMeter
}

export interface VariantResult {
  name: string
  payload?: PayloadDefinition
  enabled: boolean
  feature_enabled: boolean
}

export interface Evaluation {
  enabled: boolean
  variant: VariantResult
}

export type DetailedResult = boolean | 'unknown'

export interface DetailedOptions extends EvaluateOptions {
  /**
   * Report strategies the server cannot fully evaluate (custom strategy names, applicationHostname)
   * as 'unknown' instead of evaluating them: their constraints and segments still can make them false.
   */
  unknownStrategies?: boolean
  /**
   * The caller charges the answer it writes from the detail itself (the advanced playground charges each distinct
   * evaluation's JSON once, by its size: see shownSizeOf): the detail then charges only what it builds, a few steps a
   * constraint, not the size of the definitions it refers to.
   */
  answerCharged?: boolean
}

export type DetailedConstraint = ConstraintDefinition & { result: boolean }

export interface DetailedSegment {
  id: number
  name?: string
  /** False when the segment does not exist: then the strategy is false too. */
  found: boolean
  result: boolean
  constraints: DetailedConstraint[]
}

export interface DetailedStrategy {
  id: string | null
  name: string
  title?: string
  parameters: Record<string, string>
  /** Disabled strategies are listed with result false and do not count. */
  disabled: boolean
  result: DetailedResult
  constraints: DetailedConstraint[]
  segments: DetailedSegment[]
  /** The strategy's own variants, if any: they win when this is the first strategy that is on. */
  variants: VariantDefinition[]
}

export interface DetailedDependency {
  feature: string
  enabled: boolean
  variants: string[]
  /** False when the parent is missing, has parents of its own, or is not in the expected state. */
  satisfied: DetailedResult
}

export interface DetailedEvaluation {
  name: string
  /** 'unknown' only with unknownStrategies: no strategy is on, but one that cannot be evaluated might be. */
  enabled: DetailedResult
  environmentEnabled: boolean
  dependencies: DetailedDependency[]
  strategies: DetailedStrategy[]
  /** The variant the SDKs would return when enabled is true; the disabled variant otherwise. */
  variant: VariantResult
}
