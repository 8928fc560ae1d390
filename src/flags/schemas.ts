import * as z from '../http/zod.js'
import { pathSegmentName } from '../http/common-schemas.js'
import { StrategySchema } from '../strategies/schemas.js'
import { VariantSchema } from '../variants/schemas.js'

export const FLAG_TYPES = ['release', 'experiment', 'operational', 'kill-switch', 'permission', 'sunset'] as const
export type FlagType = (typeof FLAG_TYPES)[number]
/** The check of a flag's type wherever one is written (creation, patch, state restore, import). */
export const FlagTypeSchema = z.enum(FLAG_TYPES)
/** The check of a flag's name wherever a flag is created (route, copy, state restore, import): a segment of its routes' paths. */
export const flagName = (what = 'Flag name') => pathSegmentName(what)

export const LIFECYCLE_STAGES = ['initial', 'pre-live', 'live', 'completed', 'archived'] as const

export const TagInputSchema = z
  .object({
    value: z.string().trim().min(2, 'tag value must be 2 to 50 characters').max(50, 'tag value must be 2 to 50 characters'),
    type: z.string().trim().min(2, 'tag type must be 2 to 50 characters').max(50, 'tag type must be 2 to 50 characters').optional().openapi({ description: 'Default `simple`' }),
  })
  .openapi('tagSchema')

export const TagSchema = z.object({ value: z.string(), type: z.string() })

export const CreateFeatureSchema = z
  .object({
    name: flagName(),
    type: FlagTypeSchema.optional().openapi({ description: 'Default `release`' }),
    description: z.string().max(10_000).nullable().optional(),
    impressionData: z.boolean().optional(),
    tags: z.array(TagInputSchema).max(100).optional(),
  })
  .openapi('createFeatureSchema')
export type CreateFeature = z.infer<typeof CreateFeatureSchema>

const UserRefSchema = z.object({ id: z.number().int(), name: z.string(), imageUrl: z.string() })

export const FeatureEnvironmentSchema = z
  .object({
    name: z.string(),
    featureName: z.string(),
    environment: z.string(),
    type: z.string(),
    enabled: z.boolean(),
    sortOrder: z.number().int(),
    variantCount: z.number().int(),
    strategies: z.array(StrategySchema),
    variants: z.array(VariantSchema),
    lastSeenAt: z.string().nullable(),
    hasStrategies: z.boolean(),
    hasEnabledStrategies: z.boolean(),
  })
  .openapi('featureEnvironmentSchema')

export const DependencySchema = z.object({ feature: z.string(), enabled: z.boolean(), variants: z.array(z.string()) })

export const FeatureSchema = z
  .object({
    name: z.string(),
    type: z.enum(FLAG_TYPES),
    description: z.string().nullable(),
    archived: z.boolean(),
    project: z.string(),
    enabled: z.boolean().openapi({ description: 'true when the flag is enabled in at least one environment' }),
    stale: z.boolean(),
    potentiallyStale: z.boolean().openapi({ description: "Marked by the potentially-stale job: older than its type's lifetime (GET /api/admin/feature-types) while not marked stale" }),
    favorite: z.boolean(),
    impressionData: z.boolean(),
    createdAt: z.string().nullable(),
    createdBy: UserRefSchema,
    archivedAt: z.string().nullable(),
    lastSeenAt: z.string().nullable().openapi({ deprecated: true }),
    environments: z.array(FeatureEnvironmentSchema),
    variants: z.array(VariantSchema).openapi({ deprecated: true, description: 'The variants of the first environment' }),
    tags: z.array(TagSchema),
    children: z.array(z.string()),
    lifecycle: z.object({ stage: z.enum(LIFECYCLE_STAGES), enteredStageAt: z.string() }),
    dependencies: z.array(DependencySchema),
    collaborators: z.object({ users: z.array(UserRefSchema) }),
    links: z
      .array(z.object({ id: z.string(), url: z.string(), title: z.string().nullable() }))
      .optional()
      .openapi({ description: "The flag's links, oldest first" }),
  })
  .openapi('featureSchema')
export type Feature = z.infer<typeof FeatureSchema>

export const ProjectFeaturesSchema = z.object({ version: z.number().int(), features: z.array(FeatureSchema) }).openapi('projectFeaturesSchema')

export const PatchOperationSchema = z
  .object({
    op: z.enum(['add', 'remove', 'replace', 'copy', 'move', 'test']),
    path: z.string().max(1000),
    from: z.string().max(1000).optional(),
    value: z.unknown().optional(),
  })
  .superRefine((o, ctx) => {
    if ((o.op === 'copy' || o.op === 'move') && o.from === undefined) ctx.addIssue({ code: 'custom', path: ['from'], message: `${o.op} needs from` })
    if ((o.op === 'add' || o.op === 'replace' || o.op === 'test') && !('value' in o)) ctx.addIssue({ code: 'custom', path: ['value'], message: `${o.op} needs value` })
  })
  .openapi('patchSchema')
export const PatchSchema = z.array(PatchOperationSchema).max(1000).openapi('patchesSchema')
export type PatchOperation = z.infer<typeof PatchOperationSchema>

export const featurePathParams = z.object({
  projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' } }),
  featureName: z.string().openapi({ param: { name: 'featureName', in: 'path' } }),
})
export const featureEnvironmentPathParams = featurePathParams.extend({
  environment: z.string().openapi({ param: { name: 'environment', in: 'path' } }),
})

export const BatchFeaturesSchema = z
  .object({ features: z.array(z.string().min(1).max(100)).max(1000).openapi({ description: 'Names of feature flags', example: ['my-feature-4', 'my-feature-5'] }) })
  .openapi('batchFeaturesSchema')

export const ValidateArchiveFeaturesSchema = z
  .object({
    parentsWithChildFeatures: z.array(z.string()).openapi({ description: 'Flags named whose live children are not archived with them (archiving them is refused)' }),
    hasDeletedDependencies: z.boolean().openapi({ description: 'Whether archiving deletes dependencies: never in Flagpost, where an archived flag keeps them' }),
  })
  .openapi('validateArchiveFeaturesSchema')

export const CloneFeatureSchema = z
  .object({
    name: flagName('Name of the copy'),
    replaceGroupId: z.boolean().optional().openapi({ description: "Whether the copy's strategies group by its own name (`groupId` parameters replaced). Default true" }),
  })
  .openapi('cloneFeatureSchema')

export const ChangeProjectSchema = z.object({ newProjectId: z.string().min(1).max(100).openapi({ description: 'The project to move the flag to' }) }).openapi('changeProjectSchema')
