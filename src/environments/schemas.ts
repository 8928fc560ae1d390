import * as z from '../http/zod.js'
import { pathSegmentName } from '../http/common-schemas.js'

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

/**
 * An environment's name: URL-friendly, without `*`, which API tokens' scopes use for every environment (Unleash takes
 * it; refused here so that no token meant for one environment reads as a token for all).
 */
export const environmentName = () => pathSegmentName('Environment name').refine((name) => !name.includes('*'), 'Environment name must not contain *: API tokens use * for every environment')

export const CreateEnvironmentSchema = z
  .object({
    name: environmentName(),
    type: z.string().trim().min(1).max(100).openapi({ description: 'e.g. development, test, preproduction, production' }),
    enabled: z.boolean().optional(),
    sortOrder: z.number().int().min(-2147483648).max(2147483647).optional(),
  })
  .openapi('createEnvironmentSchema')

export type CreateEnvironment = z.infer<typeof CreateEnvironmentSchema>
export type Environment = z.infer<typeof EnvironmentSchema>

export const environmentNameParam = z.object({ name: z.string().openapi({ param: { name: 'name', in: 'path' } }) })

export const UpdateEnvironmentSchema = z
  .object({
    type: z.string().trim().min(1).max(100).optional(),
    sortOrder: z.number().int().min(-2147483648).max(2147483647).optional(),
  })
  .openapi('updateEnvironmentSchema')

export const SortOrderSchema = z.record(z.string(), z.number().int().min(-2147483648).max(2147483647)).openapi('sortOrderSchema')

export const CloneEnvironmentSchema = z
  .object({
    name: environmentName(),
    type: z.string().trim().min(1).max(100),
    projects: z.array(z.string().min(1).max(100)).max(1000).optional().openapi({ description: 'The projects to clone it in (default: every project with the source environment)' }),
    clonePermissions: z.boolean().optional().openapi({ description: 'Accepted for compatibility: Flagpost has no environment-scoped custom roles to copy' }),
  })
  .openapi('cloneEnvironmentSchema')

export const EnvironmentProjectSchema = z
  .object({
    name: z.string(),
    type: z.string(),
    enabled: z.boolean(),
    protected: z.boolean(),
    sortOrder: z.number().int(),
    projectApiTokenCount: z.number().int(),
    projectEnabledToggleCount: z.number().int(),
    defaultStrategy: z.record(z.string(), z.unknown()).optional(),
    visible: z.boolean().openapi({ description: '`true` when the environment is enabled in the project' }),
  })
  .openapi('environmentProjectSchema')

export const EnvironmentsProjectSchema = z
  .object({ version: z.number().int(), environments: z.array(EnvironmentProjectSchema) })
  .openapi('environmentsProjectSchema')

export type UpdateEnvironment = z.infer<typeof UpdateEnvironmentSchema>
export type CloneEnvironment = z.infer<typeof CloneEnvironmentSchema>
export type EnvironmentProject = z.infer<typeof EnvironmentProjectSchema>
