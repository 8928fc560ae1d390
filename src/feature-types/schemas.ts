import * as z from '../http/zod.js'

export const FeatureTypeSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    lifetimeDays: z.number().int().min(0).nullable().openapi({ description: 'Days before a flag of this type is potentially stale; null: never' }),
  })
  .openapi('featureTypeSchema')
export type FeatureType = z.infer<typeof FeatureTypeSchema>

export const FeatureTypesSchema = z.object({ version: z.literal(1), types: z.array(FeatureTypeSchema) }).openapi('featureTypesSchema')

export const UpdateFeatureTypeLifetimeSchema = z
  .object({
    lifetimeDays: z.number().int('lifetimeDays must be a whole number').min(0, 'lifetimeDays must be 0 or more').max(2_147_483_647).nullable().openapi({ description: '0 or null: never potentially stale' }),
  })
  .openapi('updateFeatureTypeLifetimeSchema')

export const featureTypeIdParam = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' }, example: 'release' }) })
