import * as z from '../http/zod.js'
import { projectIdParam } from '../http/common-schemas.js'

/** A name Unleash calls URL-friendly: 1 to 100 characters that `encodeURIComponent` leaves as they are, and not `.` or `..`. */
export const contextFieldName = z
  .string()
  .min(1, 'context field name must not be empty')
  .max(100, 'context field name must be at most 100 characters')
  .refine((name) => encodeURIComponent(name) === name && name !== '.' && name !== '..', 'context field name must be URL friendly (letters, digits and - _ . ! ~ * \' ( ) only)')

export const LegalValueSchema = z
  .object({
    value: z.string().min(1, 'a legal value must not be empty').max(100, 'a legal value must be at most 100 characters').openapi({ description: 'The valid value', example: 'gold' }),
    description: z.string().max(1000).nullable().optional().openapi({ description: 'Describes this specific legal value', example: 'Paying customers' }),
  })
  .strict()
  .openapi('legalValueSchema')
export type LegalValue = z.infer<typeof LegalValueSchema>

/** A field's legal values, each value once (the field's routes and the instance state's import). */
export const LegalValuesSchema = z
  .array(LegalValueSchema)
  .max(1000)
  .nullable()
  .optional()
  .superRefine((list, ctx) => {
    const seen = new Set<string>()
    for (const [i, v] of (list ?? []).entries()) {
      if (seen.has(v.value)) ctx.addIssue({ code: 'custom', path: [i, 'value'], message: `legal value "${v.value}" is listed twice` })
      seen.add(v.value)
    }
  })
const legalValues = LegalValuesSchema.openapi({ description: 'The values constraints on this field may use; empty or absent: any value' })

const fieldSettings = {
  description: z.string().max(250, 'description must be at most 250 characters').nullable().optional().openapi({ description: 'A description of the context field' }),
  stickiness: z.boolean().optional().openapi({ description: '`true` if this field is offered for custom stickiness (flexible rollouts, variants); default false' }),
  sortOrder: z.number().int().min(-2147483648).max(2147483647).optional().openapi({ description: 'Where the field is listed: by sortOrder, then name' }),
  legalValues,
  project: z
    .string()
    .nullable()
    .optional()
    .openapi({
      description:
        "The project of a project's own field: absent, null or the path's project under /api/admin/projects/{projectId}/context (400 otherwise); absent or null under /api/admin/context, whose fields are global",
      example: 'my-project',
    }),
}

export const CreateContextFieldSchema = z
  .object({ name: contextFieldName.openapi({ example: 'subscriptionTier' }), ...fieldSettings })
  .openapi('createContextFieldSchema')
export type CreateContextField = z.infer<typeof CreateContextFieldSchema>

export const UpdateContextFieldSchema = z
  .object({ name: z.string().optional().openapi({ description: 'Ignored: the path names the field' }), ...fieldSettings })
  .openapi('updateContextFieldSchema')
export type UpdateContextField = z.infer<typeof UpdateContextFieldSchema>

export const ContextFieldSchema = z
  .object({
    name: z.string().openapi({ example: 'userId' }),
    description: z.string().nullable(),
    stickiness: z.boolean(),
    sortOrder: z.number().int(),
    createdAt: z.string().nullable().openapi({ format: 'date-time' }),
    legalValues: z.array(LegalValueSchema),
    usedInFeatures: z.number().int().optional().openapi({ description: 'In the list only: how many live (not archived) flags have a strategy with a constraint on the field' }),
    usedInProjects: z.number().int().optional().openapi({ description: 'In the list only: how many projects those flags belong to' }),
    project: z.string().optional().openapi({ description: "The project of a project's own field; absent for a global field", example: 'my-project' }),
  })
  .openapi('contextFieldSchema')
export type ContextField = z.infer<typeof ContextFieldSchema>

export const ContextFieldsSchema = z.array(ContextFieldSchema).openapi('contextFieldsSchema')

export const NameSchema = z.object({ name: contextFieldName.openapi({ example: 'betaUser' }) }).openapi('nameSchema')

export const ContextFieldStrategiesSchema = z
  .object({
    strategies: z.array(
      z.object({
        id: z.string(),
        featureName: z.string(),
        projectId: z.string(),
        environment: z.string(),
        strategyName: z.string(),
      }),
    ),
  })
  .openapi('contextFieldStrategiesSchema')

export const contextFieldParam = z.object({
  contextField: z.string().min(1).max(100).openapi({ param: { name: 'contextField', in: 'path' }, example: 'userId' }),
})

export const projectContextFieldParam = projectIdParam.extend(contextFieldParam.shape)

/** `include` of the lists, as Unleash's: `project` adds the visible projects' fields to the global list, `root` the global fields to a project's. */
export const IncludeQuerySchema = z.object({
  include: z
    .string()
    .optional()
    .openapi({
      description:
        "`project` on the global list adds every project's own fields (of the projects the caller may read); `root` on a project's list adds the global fields. Any other value changes nothing, as in Unleash (the match ignores case).",
      example: 'project',
    }),
})

export const legalValueParam = contextFieldParam.extend({
  legalValue: z.string().min(1).max(100).openapi({ param: { name: 'legalValue', in: 'path' }, example: 'gold' }),
})

export const projectLegalValueParam = projectIdParam.extend(legalValueParam.shape)
