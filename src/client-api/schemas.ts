import * as z from '../http/zod.js'
import { ConstraintSchema } from '../strategies/schemas.js'
import { VariantSchema } from '../variants/schemas.js'

const oneOrMany = z.union([z.string(), z.array(z.string())])

export const ClientFeaturesQuerySchema = z.object({
  project: oneOrMany.optional().openapi({ description: 'Only flags of these projects (repeatable); within the token’s projects' }),
  namePrefix: z.string().max(255).optional().openapi({ description: 'Only flags whose name starts with this' }),
  tag: oneOrMany.optional().openapi({ description: 'Only flags with any of these tags, each `type:value` (repeatable)' }),
  environment: z.string().max(100).optional().openapi({ description: 'Admin tokens only (deprecated in Unleash): the environment to serve' }),
})

export type ClientFeaturesQuery = z.infer<typeof ClientFeaturesQuerySchema>

const ClientStrategySchema = z
  .object({
    name: z.string(),
    constraints: z.array(ConstraintSchema),
    parameters: z.record(z.string(), z.string()),
    variants: z.array(VariantSchema.omit({ overrides: true })),
    segments: z.array(z.number().int()).optional(),
  })
  .openapi('clientFeatureStrategySchema')

export const ClientFeatureSchema = z
  .object({
    name: z.string(),
    type: z.string(),
    enabled: z.boolean(),
    stale: z.boolean(),
    impressionData: z.boolean(),
    project: z.string(),
    strategies: z.array(ClientStrategySchema),
    variants: z.array(VariantSchema),
    dependencies: z.array(z.object({ feature: z.string(), enabled: z.boolean(), variants: z.array(z.string()).optional() })).optional(),
  })
  .openapi('clientFeatureSchema')

export const ClientFeaturesSchema = z
  .object({
    version: z.number().int(),
    features: z.array(ClientFeatureSchema),
    segments: z.array(z.object({ id: z.number().int(), name: z.string(), constraints: z.array(ConstraintSchema) }).openapi('clientSegmentSchema')).optional(),
    query: z
      .object({
        environment: z.string(),
        project: z.array(z.string()).optional(),
        namePrefix: z.string().optional(),
        tag: z.array(z.array(z.string())).optional(),
        inlineSegmentConstraints: z.boolean(),
      })
      .openapi('clientFeaturesQuerySchema'),
    meta: z.object({ revisionId: z.number().int(), etag: z.string(), queryHash: z.string() }),
  })
  .openapi('clientFeaturesSchema')

export const clientFeatureNameParam = z.object({ featureName: z.string().openapi({ param: { name: 'featureName', in: 'path' } }) })

/**
 * The delta's answer: Unleash's events. A function, called only from the route's documented responses, so that the
 * worker's bundle (which leaves responses out) does not carry it.
 */
export function clientFeaturesDeltaSchema() {
  const SegmentSchema = z.object({ id: z.number().int(), name: z.string(), constraints: z.array(ConstraintSchema) })
  const eventId = z.number().int().openapi({ description: 'The newest event id of the revision the answer was built at' })
  return z
    .object({
      events: z.array(
        z.discriminatedUnion('type', [
          z.object({ eventId, type: z.literal('hydration'), features: z.array(ClientFeatureSchema), segments: z.array(SegmentSchema) }),
          z.object({ eventId, type: z.literal('feature-updated'), feature: ClientFeatureSchema }),
          z.object({ eventId, type: z.literal('feature-removed'), featureName: z.string(), project: z.string() }),
          z.object({ eventId, type: z.literal('segment-updated'), segment: SegmentSchema }),
          z.object({ eventId, type: z.literal('segment-removed'), segmentId: z.number().int() }),
        ]),
      ),
    })
    .openapi('clientFeaturesDeltaSchema')
}
