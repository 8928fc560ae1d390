import {
  evaluateDetailed,
  prepareRuleset,
  shownSizeOf,
  type DetailedConstraint,
  type DetailedEvaluation,
  type DetailedResult,
  type DetailedSegment,
  type EvaluationContext,
  type PreparedFlag,
  type RegexMeter,
  type SegmentDefinition,
  type VariantResult,
} from '../evaluation/index.js'
import type { Variant } from '../variants/schemas.js'
import type { PlaygroundFlag } from './loader.js'

type StrategyResult = boolean | { evaluationStatus: 'incomplete' | 'unevaluated'; enabled: false | 'unknown' }

export interface PlaygroundStrategyResult {
  name: string
  title?: string
  id: string
  result: StrategyResult
  disabled: boolean
  segments: { id: number; name: string; result: boolean; constraints: DetailedConstraint[] }[]
  constraints: DetailedConstraint[]
  parameters: Record<string, string>
  links: { edit: string }
}

/** A flag's evaluation for one context, in the shape both playgrounds answer with. */
export interface EvaluatedFlag {
  strategies: { result: DetailedResult; data: PlaygroundStrategyResult[] }
  isEnabledInCurrentEnvironment: boolean
  isEnabled: boolean
  variant: VariantResult
  variants: Variant[]
  hasUnsatisfiedDependency: boolean
}

const UNEVALUATED: StrategyResult = Object.freeze({ evaluationStatus: 'unevaluated', enabled: false })
const INCOMPLETE_OFF: StrategyResult = Object.freeze({ evaluationStatus: 'incomplete', enabled: false })
const INCOMPLETE_UNKNOWN: StrategyResult = Object.freeze({ evaluationStatus: 'incomplete', enabled: 'unknown' })

const segmentView = (s: DetailedSegment) => ({ id: s.id, name: s.name ?? '', result: s.result, constraints: s.constraints })

export interface FlagEvaluator {
  name: string
  projectId: string
  /** The evaluation; its REGEX matching draws on `meter` (RegexWorkExceeded past it). */
  evaluate(context: EvaluationContext, now: Date, meter?: RegexMeter): EvaluatedFlag
  /**
   * The same evaluation as the advanced playground's response writes it after the context, UTF-8:
   * `,"projectId":…,"strategies":…,"variants":[…]}`. Every constraint is tested once, and the JSON is made once per
   * signature (what the evaluation shows) and shared, across requests too while the evaluators are kept (see
   * prepared-scopes.ts). Charged to `meter`: the evaluation's work, and the JSON's size when it is made (the answer's
   * size is bounded by the caller: see MAX_ANSWER_BYTES in service.ts).
   */
  fragment(context: EvaluationContext, now: Date, meter?: RegexMeter): Uint8Array
}

/**
 * Characters of definitions one matching step pays for when an evaluation's JSON is made (JSON.stringify and UTF-8:
 * about 3 ns a character, a matching step about 7 ns).
 */
const JSON_CHARS_PER_STEP = 2
/**
 * What decides how a detailed evaluation is shown: every strategy's, constraint's and segment's result, the flag's,
 * and its variant (the first strategy on, which the results show, and the variant's name decide its payload).
 */
function signatureOf(detail: DetailedEvaluation): string {
  let key = detail.enabled === true ? 'E' : detail.enabled === false ? 'e' : 'u'
  for (const s of detail.strategies) {
    key += s.result === true ? 'A' : s.result === false ? 'a' : '?'
    for (const c of s.constraints) key += c.result ? '1' : '0'
    for (const g of s.segments) {
      key += g.result ? 'S' : 's'
      for (const c of g.constraints) key += c.result ? '1' : '0'
    }
  }
  const v = detail.variant
  return `${key}#${v.enabled ? 1 : 0}${v.feature_enabled ? 1 : 0}${v.name}`
}

/** How many bytes of shared evaluations the evaluators of one preparation may still keep. */
export interface FragmentBudget {
  bytes: number
}

const encoder = new TextEncoder()
/** Signatures kept per flag: enough for any realistic spread of contexts, bounded for hostile ones. */
const MAX_CACHED_SIGNATURES = 4096

/**
 * Prepares one environment's flags once (constraints parsed, regexes compiled) and returns an
 * evaluator per flag, in the order given. Strategies only the SDK can evaluate (custom ones,
 * applicationHostname) are `incomplete`; disabled ones are listed as `unevaluated` and do not count.
 * The evaluators take the clock per call, so they can be kept and shared by requests; the shared
 * evaluations they keep are bounded by `budget` (every evaluator of the environment draws on it).
 */
export function prepareEnvironment(flags: PlaygroundFlag[], segments: SegmentDefinition[], environment: string, budget: FragmentBudget = { bytes: Infinity }): FlagEvaluator[] {
  const ruleset = prepareRuleset({ flags, segments })
  // Whether the signature of an evaluation drew a random number (random rollouts, random
  // stickiness): then its outcome is not a function of the signature and is not shared.
  // Evaluations are synchronous, so one flag serves interleaved requests.
  let random = false
  const draw = () => {
    random = true
    return Math.random()
  }
  const optionsAt = (now: Date, meter: RegexMeter | undefined) => ({ unknownStrategies: true, now, random: draw, ...(meter ? { regexMeter: meter } : {}) })
  return flags.map((flag): FlagEvaluator => {
    const prepared: PreparedFlag = ruleset.flags.get(flag.name)!
    const needsHost = prepared.allStrategies.map((s) => s.strategy.needsHost)
    // What does not depend on the context is built once and shared by every evaluation.
    const fixed = flag.strategies.map((s) => ({
      name: s.name,
      ...(s.title ? { title: s.title } : {}),
      id: s.id,
      disabled: s.disabled === true,
      parameters: s.parameters ?? {},
      links: { edit: `/projects/${encodeURIComponent(flag.projectId)}/features/${encodeURIComponent(flag.name)}/strategies/edit?environmentId=${encodeURIComponent(environment)}&strategyId=${encodeURIComponent(s.id)}` },
    }))
    const counting = flag.strategies.filter((s) => s.disabled !== true).length
    const fragments = new Map<string, Uint8Array>()
    let shown: number | undefined
    const view = (detail: DetailedEvaluation): EvaluatedFlag => {
      let anyOn = false
      let anyUnknown = false
      const data = detail.strategies.map((s, i): PlaygroundStrategyResult => {
        const base = fixed[i]!
        let result: StrategyResult
        if (s.disabled) result = UNEVALUATED
        else if (needsHost[i]) result = s.result === 'unknown' ? ((anyUnknown = true), INCOMPLETE_UNKNOWN) : INCOMPLETE_OFF
        else result = s.result === true ? ((anyOn = true), true) : false
        return {
          name: base.name,
          ...(base.title !== undefined ? { title: base.title } : {}),
          id: base.id,
          result,
          disabled: base.disabled,
          segments: s.segments.map(segmentView),
          constraints: s.constraints,
          parameters: base.parameters,
          links: base.links,
        }
      })
      return {
        // Strategies all disabled: nothing was evaluated, so the result is unknown (as in Unleash).
        strategies: { result: counting === 0 ? (data.length === 0 ? true : 'unknown') : anyOn ? true : anyUnknown ? 'unknown' : false, data },
        isEnabledInCurrentEnvironment: detail.environmentEnabled,
        isEnabled: detail.enabled === true,
        variant: detail.variant,
        variants: flag.variants,
        hasUnsatisfiedDependency: detail.dependencies.some((d) => d.satisfied === false),
      }
    }
    return {
      name: flag.name,
      projectId: flag.projectId,
      evaluate: (context, now, meter) => view(evaluateDetailed(prepared, context, optionsAt(now, meter))),
      fragment(context, now, meter) {
        random = false
        const detail = evaluateDetailed(prepared, context, { ...optionsAt(now, meter), answerCharged: true })
        // The signature holds every result, not the clock: what a shared evaluation shows does not depend on when it
        // was made, so requests at other times reuse it.
        const key = signatureOf(detail)
        let bytes = random ? undefined : fragments.get(key)
        if (bytes === undefined) {
          // Charged before it is made: the definitions the JSON repeats are most of its size.
          meter?.charge(Math.ceil((shown ??= shownSizeOf(prepared)) / JSON_CHARS_PER_STEP))
          const { hasUnsatisfiedDependency: _, ...evaluated } = view(detail)
          bytes = encoder.encode(`,${JSON.stringify({ projectId: flag.projectId, ...evaluated }).slice(1)}`)
          if (!random && fragments.size < MAX_CACHED_SIGNATURES && budget.bytes >= bytes.length) {
            fragments.set(key, bytes)
            budget.bytes -= bytes.length
          }
        }
        return bytes
      },
    }
  })
}
