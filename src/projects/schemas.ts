import { z } from '@hono/zod-openapi'

export const PROJECT_MODES = ['open', 'protected', 'private'] as const

export const MIN_APPROVALS = 1
export const MAX_APPROVALS = 10

const ChangeRequestEnvironmentInput = z.object({
  name: z.string().min(1).max(100),
  requiredApprovals: z
    .number()
    .int()
    .optional()
    .openapi({ description: `Approvals needed before a change request can be applied; clamped to ${MIN_APPROVALS}..${MAX_APPROVALS}, default 1` }),
})

export const CreateProjectSchema = z
  .object({
    id: z
      .string()
      .max(100)
      .regex(/^[A-Za-z0-9_~.-]*$/, 'id may contain only letters, digits and _ ~ . -')
      .optional()
      .openapi({ deprecated: true, description: 'Generated from the name when absent or empty (lower-case, `-1`, `-2`… on collision)' }),
    name: z.string().max(100).regex(/^(?!\s*$).+/, 'name must contain at least one non-whitespace character'),
    description: z.string().max(10_000).nullable().optional(),
    mode: z.enum(PROJECT_MODES).optional().openapi({ description: 'Default `open`' }),
    defaultStickiness: z.string().min(1).max(100).optional().openapi({ description: 'Default `default`' }),
    environments: z
      .array(z.string().min(1).max(100))
      .min(1, 'environments must name at least one environment when given')
      .max(1000)
      .optional()
      .openapi({ description: 'When missing, every non-deprecated environment is enabled' }),
    changeRequestEnvironments: z
      .array(ChangeRequestEnvironmentInput)
      .max(1000)
      .optional()
      .openapi({ description: 'Environments with change requests enabled; they are added to the project even when not in `environments`' }),
  })
  .openapi('createProjectSchema')

export const ProjectCreatedSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    featureLimit: z.number().int().nullable(),
    mode: z.enum(PROJECT_MODES),
    defaultStickiness: z.string(),
    environments: z.array(z.string()),
    changeRequestEnvironments: z.array(z.object({ name: z.string(), requiredApprovals: z.number().int() })),
  })
  .openapi('projectCreatedSchema')

export const ProjectListItemSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    mode: z.enum(PROJECT_MODES),
    defaultStickiness: z.string(),
    featureLimit: z.number().int().nullable(),
    environments: z.array(z.string()),
    createdAt: z.string(),
    updatedAt: z.string().nullable(),
  })
  .openapi('projectSchema')

export const ProjectsSchema = z.object({ version: z.number().int(), projects: z.array(ProjectListItemSchema) }).openapi('projectsSchema')

export const AddProjectEnvironmentSchema = z
  .object({
    environment: z.string().min(1).max(100),
    changeRequestsEnabled: z.boolean().optional(),
  })
  .strict()
  .openapi('projectEnvironmentSchema')

export type CreateProject = z.infer<typeof CreateProjectSchema>
export type ProjectCreated = z.infer<typeof ProjectCreatedSchema>
export type AddProjectEnvironment = z.infer<typeof AddProjectEnvironmentSchema>
