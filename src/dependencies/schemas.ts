import * as z from '../http/zod.js'

export const CreateDependencySchema = z
  .object({
    feature: z.string().min(1).max(100).openapi({ description: 'The name of the parent flag', example: 'parent_feature' }),
    enabled: z.boolean().optional().openapi({ description: 'Whether the parent must be enabled (default true) or disabled' }),
    variants: z
      .array(z.string().min(1).max(100))
      .max(100)
      .optional()
      .openapi({ description: 'Variants the parent must resolve to; only when `enabled` is true. Empty or absent: any variant' }),
  })
  .superRefine((d, ctx) => {
    if (d.enabled === false && d.variants && d.variants.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['variants'], message: 'variants can only be required of an enabled parent: leave them out when enabled is false' })
    }
  })
  .openapi('createDependentFeatureSchema')
export type CreateDependency = z.infer<typeof CreateDependencySchema>

export const childParams = z.object({
  projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' } }),
  child: z.string().openapi({ param: { name: 'child', in: 'path' } }),
})

export const dependencyParams = childParams.extend({
  parent: z.string().openapi({ param: { name: 'parent', in: 'path' } }),
})
