import { getVariant, type DetailedOptions, type EvaluationContext, type PreparedFlag } from '../evaluation/index.js'

/*
 * The advanced playground evaluates the same flag for thousands of contexts, and most of them get
 * the same detailed answer (the same constraints pass, the same strategies are on, the same variant
 * comes out). A signature is a short string of exactly what decides that answer, computed with the
 * prepared tests and no allocation per constraint; the detailed evaluation and its JSON are then
 * made once per signature instead of once per context.
 */

type PreparedStrategyOf = PreparedFlag['allStrategies'][number]['strategy']

/** Appends the results that decide the strategies' detailed view: each constraint, each segment's constraints, each activation. */
function strategyBits(flag: PreparedFlag, context: EvaluationContext, now: number, options: DetailedOptions): string {
  let bits = ''
  const all = flag.allStrategies
  for (let i = 0; i < all.length; i++) {
    const { strategy, disabled } = all[i]!
    let pass = true
    const constraints = strategy.constraints
    for (let c = 0; c < constraints.length; c++) {
      const ok = constraints[c]!.test(context, now)
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
        const ok = segment.constraints[c]!.test(context, now)
        bits += ok ? '1' : '0'
        if (!ok) pass = false
      }
    }
    bits += pass && !disabled && !(strategy as PreparedStrategyOf).needsHost ? (strategy.activate(context, now, options) ? 'A' : 'a') : '-'
  }
  return bits
}

/**
 * What decides `evaluateDetailed(flag, context, options)`: equal signatures give equal detailed
 * evaluations, unless computing the signature drew a random number (a random rollout or random
 * stickiness): the caller watches `options.random` and does not share such evaluations. Every
 * strategy the detailed evaluation activates, and every variant it selects, is activated or
 * selected here too, so an evaluation that draws no random number here draws none there.
 */
export function signatureOf(flag: PreparedFlag, context: EvaluationContext, now: number, options: DetailedOptions): string {
  let signature = strategyBits(flag, context, now, options)
  const dependencies = flag.dependencies
  for (let i = 0; i < dependencies.length; i++) {
    const d = dependencies[i]!
    const parent = d.parent
    if (parent === undefined || parent.hasDependencies) continue
    signature += `|${strategyBits(parent, context, now, options)}`
    if (d.expectEnabled && d.variants !== null) signature += `:${getVariant(parent, context, options).name}`
  }
  // The variant the flag resolves to when it is on (the detailed view shows the disabled one otherwise).
  const variant = getVariant(flag, context, options)
  return `${signature}#${variant.feature_enabled ? variant.name : ''}`
}
