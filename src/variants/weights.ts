import { validationError, type ErrorDetail } from '../core/errors.js'
import type { Variant, VariantInput } from './schemas.js'

export const TOTAL_WEIGHT = 1000

/**
 * Checks a variant list as a whole and gives every variant its weight: `fix` variants keep theirs,
 * `variable` ones share what is left (integer division, the first ones take the remainder), so the
 * weights add up to 1000. Throws 400 ValidationError naming every problem.
 */
export function normalizeVariants(inputs: VariantInput[], options: { sortByName: boolean; path?: string }): Variant[] {
  const path = options.path ?? 'body'
  const problems: ErrorDetail[] = []
  const seen = new Set<string>()
  for (const [i, v] of inputs.entries()) {
    if (seen.has(v.name)) problems.push({ path: `${path}.${i}.name`, message: `variant name ${v.name} is used twice` })
    seen.add(v.name)
    if ((v.weightType ?? 'variable') === 'fix' && v.weight === undefined) problems.push({ path: `${path}.${i}.weight`, message: 'a fix variant needs a weight' })
  }
  const ordered = options.sortByName ? [...inputs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) : inputs
  const fixTotal = ordered.filter((v) => v.weightType === 'fix').reduce((sum, v) => sum + (v.weight ?? 0), 0)
  const variableCount = ordered.filter((v) => (v.weightType ?? 'variable') === 'variable').length
  if (fixTotal > TOTAL_WEIGHT) problems.push({ path, message: `the fix weights add up to ${fixTotal}, more than ${TOTAL_WEIGHT}` })
  if (ordered.length > 0 && variableCount === 0) problems.push({ path, message: 'there must be at least one variable variant' })
  if (problems.length > 0) throw validationError(`Invalid variants: ${problems.map((p) => p.message).join('; ')}`, problems)

  const share = variableCount > 0 ? Math.floor((TOTAL_WEIGHT - fixTotal) / variableCount) : 0
  let remainder = variableCount > 0 ? (TOTAL_WEIGHT - fixTotal) % variableCount : 0
  return ordered.map((v) => {
    const weightType = v.weightType ?? 'variable'
    let weight = v.weight ?? 0
    if (weightType === 'variable') {
      weight = share + (remainder > 0 ? 1 : 0)
      remainder = Math.max(0, remainder - 1)
    }
    return {
      name: v.name,
      weight,
      weightType,
      stickiness: v.stickiness ?? 'default',
      ...(v.payload ? { payload: v.payload } : {}),
      ...(v.overrides ? { overrides: v.overrides } : {}),
    }
  })
}
