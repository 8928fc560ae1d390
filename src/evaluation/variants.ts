import { fieldGetter, type FieldGetter } from './context-fields.js'
import { normalizedVariantValue } from './hashing.js'
import type { EvaluationContext, VariantDefinition, VariantResult } from './types.js'
import type { RegexMeter } from './regex.js'

/** The variant SDKs return when the flag is off (feature_enabled false) or on without a variant. */
export const DISABLED_VARIANT: VariantResult = Object.freeze({ name: 'disabled', enabled: false, feature_enabled: false })
export const DISABLED_VARIANT_FEATURE_ON: VariantResult = Object.freeze({ name: 'disabled', enabled: false, feature_enabled: true })

interface Override {
  get: FieldGetter
  values: Set<string>
  result: VariantResult
}

export interface PreparedVariants {
  readonly groupId: string
  readonly totalWeight: number
  readonly weights: readonly number[]
  /** Frozen result objects, shared by every evaluation. */
  readonly results: readonly VariantResult[]
  readonly overrides: readonly Override[]
  /** 'default': userId, sessionId, remoteAddress, else random; a field getter otherwise (random when the field is missing). */
  readonly stickiness: 'default' | FieldGetter
}

function resultOf(v: VariantDefinition): VariantResult {
  return Object.freeze(v.payload ? { name: v.name, payload: Object.freeze({ type: v.payload.type, value: v.payload.value }), enabled: true, feature_enabled: true } : { name: v.name, enabled: true, feature_enabled: true })
}

const userId = fieldGetter('userId')
const sessionId = fieldGetter('sessionId')
const remoteAddress = fieldGetter('remoteAddress')

/**
 * Prepares a list of variants (flag variants with the flag name as group, or a strategy's with its
 * groupId). The first variant's stickiness decides, else `fallbackStickiness`. Null for an empty list.
 */
export function prepareVariants(definitions: readonly VariantDefinition[] | null | undefined, groupId: string, fallbackStickiness = 'default'): PreparedVariants | null {
  if (!definitions || definitions.length === 0) return null
  const stickiness = definitions[0]!.stickiness || fallbackStickiness
  const overrides: Override[] = []
  for (const v of definitions) {
    for (const o of v.overrides ?? []) overrides.push({ get: fieldGetter(o.contextName), values: new Set(o.values), result: resultOf(v) })
  }
  const weights = definitions.map((v) => (Number.isFinite(v.weight) && v.weight > 0 ? v.weight : 0))
  return {
    groupId,
    totalWeight: weights.reduce((sum, w) => sum + w, 0),
    weights,
    results: definitions.map(resultOf),
    overrides,
    stickiness: stickiness === 'default' ? 'default' : fieldGetter(stickiness),
  }
}

/** The variant for the context, or null when the weights add up to nothing. */
export function selectVariant(variants: PreparedVariants, context: EvaluationContext, now: number, random: () => number, meter?: RegexMeter): VariantResult | null {
  const total = variants.totalWeight
  if (total <= 0) return null
  const overrides = variants.overrides
  meter?.charge(overrides.length + variants.weights.length)
  for (let i = 0; i < overrides.length; i++) {
    const o = overrides[i]!
    const value = o.get(context, now)
    if (value !== undefined && o.values.has(value)) return o.result
  }
  const seed = variants.stickiness === 'default'
    ? userId(context, now) ?? sessionId(context, now) ?? remoteAddress(context, now)
    : variants.stickiness(context, now)
  if (seed !== undefined) meter?.charge(variants.groupId.length + seed.length + 1)
  const target = seed === undefined ? Math.floor(random() * total) + 1 : normalizedVariantValue(seed, variants.groupId, total)
  const weights = variants.weights
  let counter = 0
  for (let i = 0; i < weights.length; i++) {
    const weight = weights[i]!
    if (weight === 0) continue
    counter += weight
    if (counter >= target) return variants.results[i]!
  }
  return null
}
