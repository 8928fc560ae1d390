import { NO_STRATEGIES, variantOf, type DetailedOptions, type EvaluationContext, type PreparedFlag } from '../evaluation/index.js'

/*
 * The advanced playground evaluates the same flag for thousands of contexts, and most of them get
 * the same detailed answer (the same constraints pass, the same strategies are on, the same variant
 * comes out). A signature is a short string of exactly what decides that answer, computed with the
 * prepared tests and no allocation per constraint; the detailed evaluation and its JSON are then
 * made once per signature instead of once per context.
 */

type PreparedStrategyOf = PreparedFlag['allStrategies'][number]['strategy']

interface StrategyBits {
  bits: string
  /** The first strategy on, as the detailed evaluation finds it (none needing the host): what its variant comes from. */
  firstOn: PreparedStrategyOf | typeof NO_STRATEGIES | null
}

/** The results that decide the strategies' detailed view: each constraint, each segment's constraints, each activation. */
function strategyBits(flag: PreparedFlag, context: EvaluationContext, now: number, options: DetailedOptions): StrategyBits {
  let bits = ''
  let firstOn: PreparedStrategyOf | null = null
  const all = flag.allStrategies
  for (let i = 0; i < all.length; i++) {
    const { strategy, disabled } = all[i]!
    let pass = true
    const constraints = strategy.constraints
    for (let c = 0; c < constraints.length; c++) {
      const ok = constraints[c]!.test(context, now, options)
      bits += ok ? '1' : '0'
      if (!ok) pass = false
    }
    const segments = strategy.segments
    for (let s = 0; s < segments.length; s++) {
      const segment = segments[s]
      if (segment === undefined) {
        pass = false
        continue
      }
      for (let c = 0; c < segment.constraints.length; c++) {
        const ok = segment.constraints[c]!.test(context, now, options)
        bits += ok ? '1' : '0'
        if (!ok) pass = false
      }
    }
    if (pass && !disabled && !(strategy as PreparedStrategyOf).needsHost) {
      const on = strategy.activate(context, now, options)
      bits += on ? 'A' : 'a'
      if (on && firstOn === null) firstOn = strategy
    } else bits += '-'
  }
  return { bits, firstOn: flag.strategies.length === 0 ? NO_STRATEGIES : firstOn }
}

/**
 * The variant the detailed evaluation shows when the flag is on, from the strategy `strategyBits`
 * found on (so no strategy is activated twice); none for a flag that is off in the environment.
 */
const variantName = (flag: PreparedFlag, on: StrategyBits['firstOn'], context: EvaluationContext, now: number, options: DetailedOptions): string => {
  if (!flag.environmentEnabled || on === null) return ''
  const variant = variantOf(flag, on, context, now, options)
  return variant.feature_enabled ? variant.name : ''
}

/**
 * What decides `evaluateDetailed(flag, context, options)`: equal signatures give equal detailed
 * evaluations, unless computing the signature drew a random number (a random rollout or random
 * stickiness): the caller watches `options.random` and does not share such evaluations. Every
 * strategy the detailed evaluation activates, and every variant it selects, is activated or
 * selected here too, so an evaluation that draws no random number here draws none there.
 */
export function signatureOf(flag: PreparedFlag, context: EvaluationContext, now: number, options: DetailedOptions): string {
  const own = strategyBits(flag, context, now, options)
  let signature = own.bits
  const dependencies = flag.dependencies
  for (let i = 0; i < dependencies.length; i++) {
    const d = dependencies[i]!
    const parent = d.parent
    if (parent === undefined || parent.hasDependencies) continue
    const bits = strategyBits(parent, context, now, options)
    signature += `|${bits.bits}`
    if (d.expectEnabled && d.variants !== null) signature += `:${variantName(parent, bits.firstOn, context, now, options)}`
  }
  // The variant the flag resolves to when it is on (the detailed view shows the disabled one otherwise).
  return `${signature}#${variantName(flag, own.firstOn, context, now, options)}`
}
