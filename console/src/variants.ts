import type { Schemas } from './api/client'

export type Variant = Schemas['featureVariantSchema']
export type PayloadType = NonNullable<Variant['payload']>['type']
export const PAYLOAD_TYPES: PayloadType[] = ['string', 'json', 'csv', 'number']
export const TOTAL_WEIGHT = 1000

export interface VariantDraft {
  name: string
  weightType: 'variable' | 'fix'
  /** Out of 1000; only what the user typed for a fixed variant, computed for variable ones. */
  weight: number
  stickiness: string
  payloadType: PayloadType | ''
  payloadValue: string
  overrides: { contextName: string; values: string[] }[]
}

export const newVariant = (name = ''): VariantDraft => ({ name, weightType: 'variable', weight: 0, stickiness: 'default', payloadType: '', payloadValue: '', overrides: [] })

export function fromApiVariant(v: Variant): VariantDraft {
  return {
    name: v.name,
    weightType: v.weightType,
    weight: v.weight,
    stickiness: v.stickiness,
    payloadType: v.payload?.type ?? '',
    payloadValue: v.payload?.value ?? '',
    overrides: (v.overrides ?? []).map((o) => ({ contextName: o.contextName, values: [...o.values] })),
  }
}

/**
 * The weights as the server gives them (src/variants/weights.ts): fixed variants keep theirs, variable ones
 * share what is left by integer division, the first ones taking the remainder.
 */
export function withWeights(variants: VariantDraft[]): VariantDraft[] {
  const fixTotal = variants.filter((v) => v.weightType === 'fix').reduce((sum, v) => sum + v.weight, 0)
  const variableCount = variants.filter((v) => v.weightType === 'variable').length
  const left = Math.max(0, TOTAL_WEIGHT - fixTotal)
  const share = variableCount > 0 ? Math.floor(left / variableCount) : 0
  let remainder = variableCount > 0 ? left % variableCount : 0
  return variants.map((v) => {
    if (v.weightType === 'fix') return v
    const weight = share + (remainder > 0 ? 1 : 0)
    remainder = Math.max(0, remainder - 1)
    return { ...v, weight }
  })
}

const URL_FRIENDLY = /^[a-zA-Z0-9~_.-]+$/

/** What the server would refuse in the list, as it says it; empty when it would accept it. */
export function variantProblems(variants: VariantDraft[]): string[] {
  const problems: string[] = []
  const seen = new Set<string>()
  for (const v of variants) {
    const name = v.name || '(unnamed)'
    if (!v.name) problems.push('every variant needs a name')
    else if (!URL_FRIENDLY.test(v.name)) problems.push(`variant name ${v.name} must be URL-friendly (letters, digits, ~ _ . -)`)
    if (v.name && seen.has(v.name)) problems.push(`variant name ${v.name} is used twice`)
    seen.add(v.name)
    if (v.weightType === 'fix' && (!Number.isInteger(v.weight) || v.weight < 0 || v.weight > TOTAL_WEIGHT)) problems.push(`${name}: a fixed weight is between 0% and 100%`)
    const payload = payloadProblem(v)
    if (payload) problems.push(`${name}: ${payload}`)
    for (const o of v.overrides) if (!o.contextName) problems.push(`${name}: an override needs a context field`)
  }
  const fixTotal = variants.filter((v) => v.weightType === 'fix').reduce((sum, v) => sum + v.weight, 0)
  if (fixTotal > TOTAL_WEIGHT) problems.push(`the fixed weights add up to ${percent(fixTotal)}, more than 100%`)
  if (variants.length > 0 && !variants.some((v) => v.weightType === 'variable')) problems.push('there must be at least one variable variant')
  return problems
}

export function payloadProblem(v: Pick<VariantDraft, 'payloadType' | 'payloadValue'>): string | undefined {
  if (v.payloadType === 'json') {
    try {
      JSON.parse(v.payloadValue)
    } catch {
      return 'a json payload must hold valid JSON'
    }
  }
  if (v.payloadType === 'number' && (v.payloadValue.trim() === '' || !Number.isFinite(Number(v.payloadValue)))) return 'a number payload must hold a number'
  return undefined
}

export const percent = (weight: number) => `${(weight / 10).toLocaleString('en', { maximumFractionDigits: 1 })}%`

/** A variant as the API takes it: every field, weights computed (strategy variants need them all). */
export function toApiVariant(v: VariantDraft, withOverrides = true): Variant {
  return {
    name: v.name,
    weight: v.weight,
    weightType: v.weightType,
    stickiness: v.stickiness || 'default',
    ...(v.payloadType ? { payload: { type: v.payloadType, value: v.payloadValue } } : {}),
    ...(withOverrides && v.overrides.length > 0 ? { overrides: v.overrides } : {}),
  }
}
