import {
  evaluateDetailed,
  prepareRuleset,
  shownSizeOf,
  type DetailedConstraint,
  type DetailedEvaluation,
  type DetailedOptions,
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

const resultCode = (result: DetailedResult) => (result === true ? 1 : result === false ? 0 : 2)
/** Past it a signature's number would lose bits (a double holds 53): the signature is then signatureOf's text. */
const MAX_SIGNATURE_NUMBER = 2 ** 50

/**
 * signatureOf's results as one number (its variant aside), where they fit: a flag's evaluations all list the same
 * strategies, constraints and segments, so the results alone, in order, tell its evaluations apart. A constraint's
 * result is read as which of its prepared constraint's two details was picked (reading `result` off the details,
 * copies of every definition, saw as many shapes as there are definitions: the costliest line of the playground).
 * -1 when they do not fit.
 */
function signatureNumber(flag: PreparedFlag, detail: DetailedEvaluation): number {
  let key = 4 + resultCode(detail.enabled)
  const strategies = detail.strategies
  for (let i = 0; i < strategies.length; i++) {
    const s = strategies[i]!
    const prepared = flag.allStrategies[i]!.strategy
    key = key * 4 + resultCode(s.result)
    const constraints = s.constraints
    for (let j = 0; j < constraints.length; j++) key = key * 2 + (constraints[j] === prepared.constraints[j]!.shown![1] ? 1 : 0)
    for (let k = 0; k < s.segments.length; k++) {
      const g = s.segments[k]!
      const segment = prepared.segments[k]
      key = key * 2 + (g.result ? 1 : 0)
      if (segment !== undefined) for (let m = 0; m < g.constraints.length; m++) key = key * 2 + (g.constraints[m] === segment.constraints[m]!.shown![1] ? 1 : 0)
    }
    if (key >= MAX_SIGNATURE_NUMBER) return -1
  }
  return key
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
  // The advanced playground asks every evaluator for thousands of evaluations with one clock and one meter: their
  // options are made once for them (two objects per evaluation showed in profiles); the last ones wait for the next request.
  let fragmentOptions: DetailedOptions = {}
  const fragmentOptionsAt = (now: Date, meter: RegexMeter | undefined): DetailedOptions => {
    if (fragmentOptions.now !== now || fragmentOptions.regexMeter !== meter) fragmentOptions = { ...optionsAt(now, meter), answerCharged: true }
    return fragmentOptions
  }
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
    const byVariant = new Map<VariantResult, Map<number, Uint8Array>>()
    let cached = 0
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
        const detail = evaluateDetailed(prepared, context, fragmentOptionsAt(now, meter))
        // The signature holds every result, not the clock: what a shared evaluation shows does not depend on when it
        // was made, so requests at other times reuse it.
        // By number and variant where the results fit in a number (the variants are shared objects: which one is the
        // name and payload shown); else by signatureOf's text.
        const number = random ? -1 : signatureNumber(prepared, detail)
        let byNumber: Map<number, Uint8Array> | undefined
        let key: string | undefined
        let bytes: Uint8Array | undefined
        if (random) bytes = undefined
        else if (number >= 0) {
          byNumber = byVariant.get(detail.variant)
          bytes = byNumber?.get(number)
        } else bytes = fragments.get((key = signatureOf(detail)))
        if (bytes === undefined) {
          // Charged before it is made: the definitions the JSON repeats are most of its size.
          meter?.charge(Math.ceil((shown ??= shownSizeOf(prepared)) / JSON_CHARS_PER_STEP))
          const { hasUnsatisfiedDependency: _, ...evaluated } = view(detail)
          bytes = encoder.encode(`,${JSON.stringify({ projectId: flag.projectId, ...evaluated }).slice(1)}`)
          if (!random && cached < MAX_CACHED_SIGNATURES && budget.bytes >= bytes.length) {
            if (key !== undefined) fragments.set(key, bytes)
            else {
              if (byNumber === undefined) byVariant.set(detail.variant, (byNumber = new Map()))
              byNumber.set(number, bytes)
            }
            cached++
            budget.bytes -= bytes.length
          }
        }
        return bytes
      },
    }
  })
}
