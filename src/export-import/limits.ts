import { exceedsLimit, resourceLimits } from '../strategies/schemas.js'
import type { ImportToggles, ValidationItem } from './schemas.js'

/**
 * The resource limits the strategy and variant routes hold, on an import's flags: strategies in the one flag
 * environment imported into, constraints per strategy, values per constraint, segments per strategy. Each exceeded
 * limit is one error of validate (the import is refused while there is one), naming the flags.
 */
export function importLimitProblems(input: ImportToggles): ValidationItem[] {
  const limits = resourceLimits()
  const strategiesOf = new Map<string, number>()
  const over = { strategy: new Set<string>(), constraints: new Set<string>(), 'constraint values': new Set<string>(), 'strategy segments': new Set<string>() }
  for (const s of input.data.featureStrategies) {
    const flag = s.featureName ?? ''
    const held = (strategiesOf.get(flag) ?? 0) + 1
    strategiesOf.set(flag, held)
    if (held > limits.featureEnvironmentStrategies) over.strategy.add(flag)
    if ((s.constraints?.length ?? 0) > limits.constraints) over.constraints.add(flag)
    if ((s.constraints ?? []).some((c) => (c.values?.length ?? 0) > limits.constraintValues)) over['constraint values'].add(flag)
    if ((s.segments?.length ?? 0) > limits.strategySegments) over['strategy segments'].add(flag)
  }
  const limitOf = { strategy: limits.featureEnvironmentStrategies, constraints: limits.constraints, 'constraint values': limits.constraintValues, 'strategy segments': limits.strategySegments }
  return (Object.keys(over) as (keyof typeof over)[])
    .filter((resource) => over[resource].size > 0)
    .map((resource) => ({ message: `${exceedsLimit(resource, limitOf[resource])} These flags are over it:`, affectedItems: [...over[resource]] }))
}
