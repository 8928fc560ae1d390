import * as z from '../http/zod.js'
import { PARAMETER_TYPES } from './fit.js'

/** A definition's name: URL-friendly as Unleash asks, and a name a flag strategy may have (letters, digits, _ . -). */
export const strategyDefinitionName = z
  .string()
  .min(1, 'strategy name must not be empty')
  .max(100, 'strategy name must be at most 100 characters')
  .regex(/^[A-Za-z0-9_.-]+$/, 'strategy name may contain letters, digits and _ . - only')
  // A path segment of its routes: `.` or `..` would name no definition in a URL (never read, changed or deleted).
  .refine((name) => name !== '.' && name !== '..', 'strategy name must not be . or ..')

export const StrategyParameterInputSchema = z
  .object({
    name: z.string().min(1, 'a parameter name must not be empty').max(100).openapi({ description: 'The name of the parameter', example: 'percentage' }),
    type: z.enum(PARAMETER_TYPES).openapi({ description: 'The type of the parameter: what a flag strategy using it must give', example: 'percentage' }),
    description: z.string().max(1000).nullable().optional().openapi({ description: 'What the parameter does' }),
    required: z.boolean().optional().openapi({ description: 'Whether a flag strategy must give it (default false)' }),
  })
  .openapi('strategyParameterInputSchema')

/** A strategy type's parameters, each name once (the type's routes and the instance state's import). */
export const StrategyParametersInputSchema = z
  .array(StrategyParameterInputSchema)
  .max(100)
  .superRefine((list, ctx) => {
    const seen = new Set<string>()
    for (const [i, p] of list.entries()) {
      if (seen.has(p.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `parameter ${p.name} is listed twice` })
      seen.add(p.name)
    }
  })
const parameters = StrategyParametersInputSchema.openapi({ description: 'The parameters flag strategies of this type take' })

const fields = {
  title: z.string().max(100).nullable().optional().openapi({ description: 'The title of the strategy' }),
  description: z.string().max(1000).nullable().optional().openapi({ description: 'A description of the strategy type' }),
  parameters,
}

export const CreateStrategyDefinitionSchema = z
  .object({
    name: strategyDefinitionName.openapi({ description: 'The name of the strategy type (unique)', example: 'my-custom-strategy' }),
    ...fields,
    editable: z.boolean().optional().openapi({ description: 'Ignored, as in Unleash: a custom strategy is editable' }),
    deprecated: z.boolean().optional().openapi({ description: 'Ignored, as in Unleash: a new strategy is not deprecated' }),
  })
  .openapi('createStrategySchema')
export type CreateStrategyDefinition = z.infer<typeof CreateStrategyDefinitionSchema>

export const UpdateStrategyDefinitionSchema = z
  .object({ ...fields, name: z.string().optional().openapi({ description: 'Ignored: the path names the strategy' }) })
  .openapi('updateStrategySchema')
export type UpdateStrategyDefinition = z.infer<typeof UpdateStrategyDefinitionSchema>

export const StrategyParameterSchema = z.object({ name: z.string(), type: z.string(), description: z.string(), required: z.boolean() })

export const StrategyDefinitionSchema = z
  .object({
    title: z.string().nullable().optional(),
    name: z.string().openapi({ example: 'flexibleRollout' }),
    displayName: z.string().nullable().openapi({ description: 'A human friendly name (built-in strategies)' }),
    description: z.string().nullable(),
    editable: z.boolean().openapi({ description: 'false for the built-in strategies, which cannot be changed or deleted' }),
    deprecated: z.boolean(),
    parameters: z.array(StrategyParameterSchema),
  })
  .openapi('strategySchema')
export type StrategyDefinition = z.infer<typeof StrategyDefinitionSchema>

export const StrategyDefinitionsSchema = z
  .object({ version: z.literal(1), strategies: z.array(StrategyDefinitionSchema) })
  .openapi('strategiesSchema')

export const strategyNameParam = z.object({ name: z.string().openapi({ param: { name: 'name', in: 'path' } }) })
export const strategyNameParamForState = z.object({ strategyName: z.string().openapi({ param: { name: 'strategyName', in: 'path' } }) })
