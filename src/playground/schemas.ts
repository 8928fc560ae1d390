import * as z from '../http/zod.js'
import { ConstraintSchema, ParametersSchema } from '../strategies/schemas.js'
import { VariantSchema } from '../variants/schemas.js'

const commaSeparated = (what: string) => `${what}; comma-separated values are evaluated one by one (advanced playground)`

/** The Unleash context of the playground. Standard fields must be strings; other top-level fields may be anything. */
export const SdkContextSchema = z
  .object({
    appName: z.string().min(1, 'appName must not be empty').openapi({ description: commaSeparated('The application name (required)') }),
    currentTime: z.string().optional().openapi({ description: commaSeparated('An RFC 3339 date-time; defaults to the time of the request') }),
    environment: z.string().optional().openapi({ deprecated: true, description: 'Defaults to the environment being evaluated' }),
    properties: z.record(z.string(), z.string()).optional().openapi({ description: commaSeparated('Custom context fields') }),
    remoteAddress: z.string().optional(),
    sessionId: z.string().optional(),
    userId: z.string().optional(),
  })
  .loose()
  .superRefine((context, ctx) => {
    if (context.currentTime === undefined) return
    for (const value of context.currentTime.split(',').map((v) => v.trim()).filter((v) => v !== '')) {
      if (Number.isNaN(Date.parse(value))) ctx.addIssue({ code: 'custom', path: ['currentTime'], message: `currentTime must be an RFC 3339 date-time, got "${value}"` })
    }
  })
  .openapi('sdkContextSchema')
export type SdkContext = z.infer<typeof SdkContextSchema>

const projects = z
  .union([z.array(z.string().min(1).max(100)).max(1000), z.literal('*')])
  .optional()
  .openapi({ description: "The projects whose flags are evaluated: a list, or '*' (default) for all" })

export const PlaygroundRequestSchema = z
  .object({
    environment: z.string().min(1).max(100).openapi({ description: 'The environment to evaluate the flags in' }),
    projects,
    context: SdkContextSchema,
  })
  .openapi('playgroundRequestSchema')

export const AdvancedPlaygroundRequestSchema = z
  .object({
    environments: z
      .array(z.string().min(1).max(100).regex(/^[a-zA-Z0-9~_.-]+$/, 'environment names are URL-friendly'))
      .min(1, 'name at least one environment')
      .max(100)
      .openapi({ description: 'The environments to evaluate the flags in' }),
    projects,
    context: SdkContextSchema,
  })
  .openapi('advancedPlaygroundRequestSchema')

export const ChangeRequestPlaygroundRequestSchema = z.object({ context: SdkContextSchema }).openapi('changeRequestPlaygroundRequestSchema')

const PlaygroundConstraintSchema = ConstraintSchema.extend({ result: z.boolean() }).openapi('playgroundConstraintSchema')

const PlaygroundSegmentSchema = z
  .object({ id: z.number().int(), name: z.string(), result: z.boolean(), constraints: z.array(PlaygroundConstraintSchema) })
  .openapi('playgroundSegmentSchema')

const StrategyResultSchema = z.union([
  z.boolean(),
  z.object({
    evaluationStatus: z.enum(['incomplete', 'unevaluated']),
    enabled: z.union([z.literal(false), z.literal('unknown')]).openapi({ description: "false when failing constraints or segments prove the strategy off, else 'unknown'" }),
  }),
])

const PlaygroundStrategySchema = z
  .object({
    name: z.string(),
    title: z.string().optional(),
    id: z.string(),
    result: StrategyResultSchema.openapi({
      description:
        'true or false when the server evaluated the strategy; `{ evaluationStatus: "incomplete" }` for strategies only the SDK can evaluate (custom ones, applicationHostname); ' +
        '`{ evaluationStatus: "unevaluated", enabled: false }` for disabled strategies',
    }),
    disabled: z.boolean().nullable(),
    segments: z.array(PlaygroundSegmentSchema),
    constraints: z.array(PlaygroundConstraintSchema),
    parameters: ParametersSchema,
    links: z.object({ edit: z.string() }),
  })
  .openapi('playgroundStrategySchema')

const VariantResultSchema = z
  .object({
    name: z.string(),
    enabled: z.boolean(),
    payload: z.object({ type: z.string(), value: z.string() }).optional(),
    feature_enabled: z.boolean().optional(),
  })
  .nullable()

const strategiesField = z.object({
  result: z.union([z.boolean(), z.literal('unknown')]).openapi({ description: "'unknown' only when no strategy is on and one or more cannot be fully evaluated" }),
  data: z.array(PlaygroundStrategySchema),
})

const evaluatedFields = {
  name: z.string(),
  projectId: z.string(),
  strategies: strategiesField,
  isEnabledInCurrentEnvironment: z.boolean(),
  isEnabled: z.boolean().openapi({ description: "false unless the flag is on for sure (strategies.result 'unknown' counts as off, as in the SDKs)" }),
  variant: VariantResultSchema,
  variants: z.array(VariantSchema),
}

export const PlaygroundFeatureSchema = z.object({ ...evaluatedFields, hasUnsatisfiedDependency: z.boolean() }).openapi('playgroundFeatureSchema')

export const PlaygroundResponseSchema = z
  .object({ input: PlaygroundRequestSchema, features: z.array(PlaygroundFeatureSchema) })
  .openapi('playgroundResponseSchema')

const AdvancedEnvironmentFeatureSchema = z
  .object({
    ...evaluatedFields,
    environment: z.string(),
    context: z.record(z.string(), z.string()).openapi({ description: 'The context of this combination, properties flattened in' }),
  })
  .openapi('advancedPlaygroundEnvironmentFeatureSchema')

export const AdvancedPlaygroundResponseSchema = z
  .object({
    input: AdvancedPlaygroundRequestSchema,
    features: z.array(
      z
        .object({ name: z.string(), projectId: z.string(), environments: z.record(z.string(), z.array(AdvancedEnvironmentFeatureSchema)) })
        .openapi('advancedPlaygroundFeatureSchema'),
    ),
    warnings: z
      .object({ invalidContextProperties: z.array(z.string()).optional().openapi({ description: 'Top-level context fields of the wrong type, left out of the evaluation' }) })
      .optional(),
  })
  .openapi('advancedPlaygroundResponseSchema')
