import { evaluateWithStrategy, NO_STRATEGIES, type EvaluateOptions, type EvaluationContext, type PreparedFlag, type PreparedStrategy, type PreparedVariants, type VariantResult } from '../evaluation/index.js'

export type OfrepValue = boolean | string | number | object | null

/** One flag's answer, as OFREP's evaluationSuccess. */
export interface OfrepEvaluation {
  key: string
  value: OfrepValue
  reason: 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DISABLED' | 'DEFAULT'
  variant?: string
}

/**
 * A variant's payload as the value of its type: `number` as a number, `json` parsed, `string` and `csv` as text.
 * A number or JSON payload that does not parse (saved before they were checked) is its text.
 */
const MAX_PAYLOAD_DEPTH = 64

/** Whether JSON `text` opens more than `max` arrays or objects inside each other (strings skipped). */
function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // a backslash escapes the next character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

function payloadValue(payload: { type: string; value: string }): OfrepValue {
  if (payload.type === 'number') {
    const n = Number(payload.value)
    return payload.value.trim() !== '' && Number.isFinite(n) ? n : payload.value
  }
  if (payload.type === 'json') {
    // A payload nested deeper than any answer may be is answered as its text: parsed, it would overflow the stack
    // when the answer is written (JSON.stringify recurses).
    if (nestedDeeperThan(payload.value, MAX_PAYLOAD_DEPTH)) return payload.value
    try {
      return JSON.parse(payload.value) as OfrepValue
    } catch {
      return payload.value
    }
  }
  return payload.value
}

/** A percentage below 100 of a rollout strategy (flexibleRollout's `rollout`, the older gradual rollouts' `percentage`). */
function rollsOutPart(strategy: PreparedStrategy): boolean {
  const parameters = strategy.definition.parameters ?? {}
  const percentage = parameters.rollout ?? parameters.percentage
  return percentage !== undefined && Number(percentage) < 100
}

/** Whether `variant` came from this list: drawn by weight, or given by one of its overrides. */
const chose = (variants: PreparedVariants, variant: VariantResult) => variants.results.includes(variant) || variants.overrides.some((o) => o.result === variant)

/**
 * OFREP carries no type: a flag answers one value, and the provider holds it to the type the code asked for
 * (TYPE_MISMATCH, with the code's default, otherwise). A flag that is on with a variant that has a payload answers the
 * payload of its type, with the variant's name; any other flag answers whether it is on (boolean), with the variant's
 * name when one was chosen. Reasons: DISABLED when the flag is off in the environment, DEFAULT when it is on there but
 * no strategy (or dependency) lets this context in, SPLIT when a percentage decided (a rollout below 100 % let the
 * context in, or the variant was picked by weight among several; a variant's override naming this context is
 * TARGETING_MATCH, not a draw), STATIC when nothing about the context could have
 * changed the answer (no constraints, segments or dependencies, a full rollout), TARGETING_MATCH otherwise.
 */
export function evaluateOfrep(key: string, flag: PreparedFlag, context: EvaluationContext, options: EvaluateOptions): OfrepEvaluation {
  const { on, variant } = evaluateWithStrategy(flag, context, options)
  if (on === null) return { key, value: false, reason: flag.environmentEnabled ? 'DEFAULT' : 'DISABLED' }
  const strategy = on === NO_STRATEGIES ? null : on
  const variants = (variant.enabled && ((strategy?.variants && chose(strategy.variants, variant) && strategy.variants) || flag.variants)) || null
  // A variant an override gave (this user, by a context field) was targeted, not drawn: the weights did not decide.
  const overridden = variants !== null && variants.overrides.some((o) => o.result === variant)
  const split = (strategy !== null && rollsOutPart(strategy)) || (variants !== null && !overridden && variants.weights.filter((w) => w > 0).length > 1)
  const targetingStrategy = strategy !== null && (strategy.checks.length > 0 || (strategy.definition.name !== 'default' && !/rollout/i.test(strategy.definition.name)))
  const targeted = flag.hasDependencies || targetingStrategy || overridden
  const reason = split ? 'SPLIT' : targeted ? 'TARGETING_MATCH' : 'STATIC'
  if (!variant.enabled) return { key, value: true, reason }
  return { key, value: variant.payload ? payloadValue(variant.payload) : true, reason, variant: variant.name }
}
