import { z } from '@hono/zod-openapi'
import { urlFriendlyName } from '../http/common-schemas.js'

export const EnvironmentSchema = z
  .object({
    name: z.string(),
    type: z.string(),
    enabled: z.boolean().openapi({ description: '`false` marks the environment deprecated: kept, but not offered to new projects' }),
    protected: z.boolean(),
    sortOrder: z.number().int(),
    projectCount: z.number().int().nullable(),
    apiTokenCount: z.number().int().nullable(),
  })
  .openapi('environmentSchema')

export const EnvironmentsSchema = z
  .object({ version: z.number().int(), environments: z.array(EnvironmentSchema) })
  .openapi('environmentsSchema')

export const CreateEnvironmentSchema = z
  .object({
    name: urlFriendlyName('Environment name'),
    type: z.string().trim().min(1).max(100).openapi({ description: 'e.g. development, test, preproduction, production' }),
    enabled: z.boolean().optional(),
    sortOrder: z.number().int().min(-2147483648).max(2147483647).optional(),
  })
  .openapi('createEnvironmentSchema')

export type CreateEnvironment = z.infer<typeof CreateEnvironmentSchema>
export type Environment = z.infer<typeof EnvironmentSchema>
