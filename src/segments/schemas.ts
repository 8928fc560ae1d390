import * as z from '../http/zod.js'
import { ConstraintSchema, SegmentConstraintsSchema } from '../strategies/schemas.js'

export const UpsertSegmentSchema = z
  .object({
    name: z.string().trim().min(1, 'segment name must not be empty').max(100, 'segment name must be at most 100 characters').openapi({ example: 'beta-users' }),
    description: z.string().max(10_000).nullable().optional().openapi({ description: 'On update, left as it was when absent' }),
    project: z.string().min(1).max(100).nullable().optional().openapi({ description: 'The project the segment belongs to; absent or null: a global segment' }),
    constraints: SegmentConstraintsSchema,
  })
  .openapi('upsertSegmentSchema')
export type UpsertSegment = z.infer<typeof UpsertSegmentSchema>

export const SegmentSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    project: z.string().nullable(),
    constraints: z.array(ConstraintSchema),
    createdAt: z.string(),
    createdBy: z.string().nullable(),
    usedInFeatures: z.number().int().openapi({ description: 'How many flags (archived ones included) have a strategy using the segment' }),
    usedInProjects: z.number().int().openapi({ description: 'How many projects those flags belong to' }),
  })
  .openapi('adminSegmentSchema')
export type Segment = z.infer<typeof SegmentSchema>

export const SegmentsSchema = z.object({ segments: z.array(SegmentSchema) }).openapi('segmentsSchema')

export const segmentIdParam = z.object({
  id: z
    .string()
    .regex(/^\d{1,10}$/, 'segment id must be a positive integer')
    .refine((id) => Number(id) >= 1 && Number(id) <= 2_147_483_647, 'segment id must be from 1 to 2147483647')
    .openapi({ param: { name: 'id', in: 'path' }, example: '1' }),
})

/**
 * Optional narrowing of the segment list, a Flagpost addition for pickers (Unleash's route has no query parameters and
 * lists every segment; without these the answer is the same): a name fragment, the segments usable in a project, given
 * ids, and a bound.
 */
export const SegmentListQuery = z.object({
  query: z.string().max(100).optional().openapi({ description: 'Only segments whose name contains this text (any case)' }),
  project: z.string().min(1).max(100).optional().openapi({ description: "Only segments usable in this project: global ones and the project's own" }),
  id: z
    .string()
    .regex(/^\d{1,10}(,\d{1,10}){0,99}$/, 'id must be up to 100 segment ids separated by commas')
    .optional()
    .openapi({ description: 'Only these segments (ids separated by commas, at most 100)', example: '1,2' }),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, 'limit must be a whole number from 1 to 1000')
    .refine((v) => Number(v) >= 1 && Number(v) <= 1000, 'limit must be a whole number from 1 to 1000')
    .optional()
    .openapi({ description: 'At most this many segments (1 to 1000), by name' }),
})
export type SegmentFilter = { query?: string; project?: string; ids?: number[]; limit?: number }
