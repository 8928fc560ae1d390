import {
  evaluateDetailed,
  prepareRuleset,
  type DetailedConstraint,
  type DetailedResult,
  type DetailedSegment,
  type EvaluationContext,
  type PreparedFlag,
  type SegmentDefinition,
  type VariantResult,
} from '../evaluation/index.js'
import type { Variant } from '../variants/schemas.js'
import type { PlaygroundFlag } from './loader.js'
import { signatureOf } from './signature.js'

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
  evaluate(context: EvaluationContext): EvaluatedFlag
  /**
   * The same evaluation as JSON members, UTF-8 (`"strategies":…,"variants":[…]`, no braces), for the
   * advanced playground's streamed response; made once per signature and shared.
   */
  fragment(context: EvaluationContext): Uint8Array
}

const encoder = new TextEncoder()
/** Signatures kept per flag: enough for any realistic spread of contexts, bounded for hostile ones. */
const MAX_CACHED_SIGNATURES = 4096

/**
 * Prepares one environment's flags once (constraints parsed, regexes compiled) and returns an
 * evaluator per flag, in the order given. Strategies only the SDK can evaluate (custom ones,
 * applicationHostname) are `incomplete`; disabled ones are listed as `unevaluated` and do not count.
 */
export function prepareEnvironment(flags: PlaygroundFlag[], segments: SegmentDefinition[], environment: string, now: Date): FlagEvaluator[] {
  const ruleset = prepareRuleset({ flags, segments })
  // Whether the signature of an evaluation drew a random number (random rollouts, random
  // stickiness): then its outcome is not a function of the signature and is not shared.
  let random = false
  const options = {
    unknownStrategies: true,
    now,
    random: () => {
      random = true
      return Math.random()
    },
  }
  const nowMs = now.getTime()
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
    const view = (context: EvaluationContext): EvaluatedFlag => {
      const detail = evaluateDetailed(prepared, context, options)
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
        strategies: { result: counting === 0 || anyOn ? true : anyUnknown ? 'unknown' : false, data },
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
      evaluate: view,
      fragment(context) {
        random = false
        const key = signatureOf(prepared, context, prepared.usesTime ? nowMs : 0, options)
        let bytes = random ? undefined : fragments.get(key)
        if (bytes === undefined) {
          const { hasUnsatisfiedDependency: _, ...shown } = view(context)
          bytes = encoder.encode(JSON.stringify(shown).slice(1, -1))
          if (!random && fragments.size < MAX_CACHED_SIGNATURES) fragments.set(key, bytes)
        }
        return bytes
      },
    }
  })
}
