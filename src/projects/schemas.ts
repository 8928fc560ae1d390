import * as z from '../http/zod.js'
import { compileWholeTextRegex, regexProblem, type CompiledRegex } from '../evaluation/index.js'
import { FeatureSchema } from '../flags/schemas.js'

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

/**
 * A project's id, as Unleash's names (what `encodeURIComponent` leaves unchanged) but without `*`, which API tokens'
 * scopes read as every project, and never `.` or `..`, which a URL resolves away. `min` 0: empty asks for one made
 * from the name.
 */
export const projectId = (min: number) =>
  z
    .string()
    .min(min, 'id must not be empty')
    .max(100)
    .regex(/^[A-Za-z0-9_~.!'()-]*$/, "id may contain only letters, digits and - _ . ! ~ ' ( )")
    .refine((id) => id !== '.' && id !== '..', 'id must not be . or ..')

export const CreateProjectSchema = z
  .object({
    id: projectId(0)
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
    archivedAt: z.string().nullable().openapi({ description: 'When the project was archived; null for a live one' }),
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

export const UpdateProjectSchema = z
  .object({
    name: z.string().max(100).regex(/^(?!\s*$).+/, 'name must contain at least one non-whitespace character'),
    description: z.string().max(10_000).nullable().optional(),
    mode: z.enum(PROJECT_MODES).optional(),
    defaultStickiness: z.string().min(1).max(100).optional(),
    featureLimit: z.number().int().min(0).max(2147483647).nullable().optional().openapi({ description: 'Maximum number of live flags; null: no limit' }),
    featureNaming: z
      .object({
        pattern: z.string().max(500).nullable(),
        example: z.string().max(500).nullable().optional(),
        description: z.string().max(1000).nullable().optional(),
      })
      .optional()
      .openapi({
        description:
          'A regular expression in RE2 syntax (as REGEX constraints; no delimiters, no flags; lookarounds and backreferences are refused) every new flag name must match in full, in linear time; the example must match it',
      }),
  })
  .superRefine((p, ctx) => {
    const naming = p.featureNaming
    if (!naming?.pattern) {
      if (naming?.example) ctx.addIssue({ code: 'custom', path: ['featureNaming', 'example'], message: 'an example needs a pattern' })
      return
    }
    // RE2 syntax in the linear-time matcher, as REGEX constraints: JavaScript's backtracking RegExp
    // would let a pattern like (a+)+$ hold the event loop for hours on one flag name.
    const problem = regexProblem(naming.pattern)
    if (problem !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['featureNaming', 'pattern'], message: `pattern ${naming.pattern} is not a valid regular expression (RE2 syntax): ${problem}` })
      return
    }
    const pattern: CompiledRegex = compileWholeTextRegex(naming.pattern)
    if (naming.example && !pattern.test(naming.example)) ctx.addIssue({ code: 'custom', path: ['featureNaming', 'example'], message: `example ${naming.example} does not match the pattern ${naming.pattern}` })
  })
  .openapi('updateProjectSchema')
export type UpdateProject = z.infer<typeof UpdateProjectSchema>

const windowStat = z.number()
/** What the deprecated overview and the overview without flags share. */
const overviewHead = {
  stats: z.object({
    avgTimeToProdCurrentWindow: windowStat,
    createdCurrentWindow: windowStat,
    createdPastWindow: windowStat,
    archivedCurrentWindow: windowStat,
    archivedPastWindow: windowStat,
    projectActivityCurrentWindow: windowStat,
    projectActivityPastWindow: windowStat,
    projectMembersAddedCurrentWindow: windowStat,
  }),
  version: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  defaultStickiness: z.string(),
  mode: z.enum(PROJECT_MODES),
  featureLimit: z.number().int().nullable(),
  featureNaming: z.object({ pattern: z.string().nullable(), example: z.string().nullable(), description: z.string().nullable() }),
  members: z.number().int(),
  health: z.number().int().min(0).max(100),
  environments: z.array(z.object({ environment: z.string(), changeRequestsEnabled: z.boolean(), defaultStrategy: z.record(z.string(), z.unknown()).optional() })),
}

export const ProjectOverviewSchema = z
  .object({
    ...overviewHead,
    features: z.array(FeatureSchema),
    updatedAt: z.string().nullable(),
    createdAt: z.string().nullable(),
    favorite: z.boolean(),
  })
  .openapi('projectOverviewSchema')

export const ProjectSummarySchema = z
  .object({
    ...overviewHead,
    technicalDebt: z.number().int().min(0).max(100).openapi({ description: '100 − health' }),
    featureTypeCounts: z.array(z.object({ type: z.string(), count: z.number().int() })).openapi({ description: 'Live flags per type' }),
    updatedAt: z.string().nullable(),
    archivedAt: z.string().nullable().openapi({ description: 'When the project was archived; null for a live one' }),
    createdAt: z.string().nullable(),
    favorite: z.boolean(),
    onboardingStatus: z
      .union([z.object({ status: z.enum(['onboarding-started', 'onboarded']) }), z.object({ status: z.literal('first-flag-created'), feature: z.string() })])
      .openapi({ description: '`onboarding-started` before its first flag, `first-flag-created` (naming it) until an SDK reports one of its flags, then `onboarded`' }),
  })
  .openapi('projectSummarySchema', { description: "A project's overview without its flags (Unleash's projectOverviewSchema); its flags are the flag search's" })
