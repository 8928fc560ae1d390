import * as z from '../http/zod.js'
import { urlFriendlyName } from '../http/common-schemas.js'

export const PAYLOAD_TYPES = ['json', 'csv', 'string', 'number'] as const

export const PayloadSchema = z
  .object({
    type: z.enum(PAYLOAD_TYPES),
    value: z.string().max(100_000),
  })
  .superRefine((payload, ctx) => {
    if (payload.type === 'json') {
      try {
        JSON.parse(payload.value)
      } catch {
        ctx.addIssue({ code: 'custom', path: ['value'], message: 'a json payload must hold valid JSON' })
      }
    }
    if (payload.type === 'number' && (payload.value.trim() === '' || !Number.isFinite(Number(payload.value)))) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: 'a number payload must hold a number' })
    }
  })
  .openapi('payloadSchema')

export const OverrideSchema = z
  .object({
    contextName: z.string().min(1).max(100),
    values: z.array(z.string().max(1000)).max(10_000),
  })
  .openapi('overrideSchema')

const weight = z.number().int('weight must be an integer').min(0).max(1000, 'weight must be at most 1000')

/** A flag (environment) variant as clients send it: weightType and stickiness may be left out. */
export const VariantInputSchema = z
  .object({
    name: urlFriendlyName('Variant name'),
    weight: weight.optional().openapi({ description: 'Required for `fix` variants; `variable` weights are computed' }),
    weightType: z.enum(['variable', 'fix']).optional(),
    stickiness: z.string().min(1).max(100).optional(),
    payload: PayloadSchema.optional(),
    overrides: z.array(OverrideSchema).max(100).optional(),
  })
  .openapi('variantSchema')

/**
 * A strategy variant: every field but the payload is required, as in the interface spec. Overrides are not in
 * Unleash's schema, but Unleash 8.2 keeps them (its schema is open) and the SDKs honour them.
 */
export const StrategyVariantInputSchema = z
  .object({
    name: urlFriendlyName('Variant name'),
    weight,
    weightType: z.enum(['variable', 'fix']),
    stickiness: z.string().min(1).max(100),
    payload: PayloadSchema.optional(),
    overrides: z.array(OverrideSchema).max(100).optional(),
  })
  .openapi('createStrategyVariantSchema')

export const VariantsInputSchema = z.array(VariantInputSchema).max(100)

export const VariantSchema = z
  .object({
    name: z.string(),
    weight: z.number().int(),
    weightType: z.enum(['variable', 'fix']),
    stickiness: z.string(),
    payload: z.object({ type: z.enum(PAYLOAD_TYPES), value: z.string() }).optional(),
    overrides: z.array(OverrideSchema).optional(),
  })
  .openapi('featureVariantSchema')

export const FeatureVariantsSchema = z
  .object({ version: z.number().int(), variants: z.array(VariantSchema) })
  .openapi('featureVariantsSchema')

export type VariantInput = z.infer<typeof VariantInputSchema>
export type Variant = z.infer<typeof VariantSchema>
