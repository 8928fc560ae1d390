import * as z from '../http/zod.js'
import { LIFECYCLE_STAGES } from '../flags/schemas.js'

export { featurePathParams } from '../flags/schemas.js'

export const COMPLETED_STATUSES = ['kept', 'discarded'] as const

export const LifecycleStageSchema = z.object({
  stage: z.enum(LIFECYCLE_STAGES),
  enteredStageAt: z.string().openapi({ format: 'date-time' }),
  status: z.string().optional().openapi({ description: 'For the completed stage: kept or discarded' }),
})
export type LifecycleStage = z.infer<typeof LifecycleStageSchema>

export const FeatureLifecycleSchema = z.array(LifecycleStageSchema).openapi('featureLifecycleSchema')

export const CompleteSchema = z
  .object({
    status: z.enum(COMPLETED_STATUSES).openapi({ description: 'Whether the flag is kept in the code or discarded from it' }),
    statusValue: z.string().min(1).max(100).optional().openapi({ description: 'What was kept, e.g. the winning variant', example: 'variant1' }),
  })
  .strict()
  .openapi('featureLifecycleCompletedSchema')
export type Complete = z.infer<typeof CompleteSchema>
