import * as z from '../http/zod.js'
import { pagingParam } from '../http/common-schemas.js'
import { EVENT_TYPES } from './types.js'

export const EventSchema = z
  .object({
    id: z.number().int().min(1),
    createdAt: z.string(),
    type: z.enum(EVENT_TYPES),
    createdBy: z.string(),
    createdByUserId: z.number().int().nullable(),
    environment: z.string().nullable(),
    project: z.string().nullable(),
    featureName: z.string().nullable(),
    data: z.record(z.string(), z.unknown()).nullable(),
    preData: z.record(z.string(), z.unknown()).nullable(),
    tags: z.array(z.object({ type: z.string(), value: z.string() })).nullable(),
    label: z.string().nullable(),
    summary: z.string().nullable(),
  })
  .openapi('eventSchema')

export const FeatureEventsSchema = z
  .object({ version: z.number().int().min(1), toggleName: z.string(), events: z.array(EventSchema), totalEvents: z.number().int() })
  .openapi('featureEventsSchema')

export const EventSearchResponseSchema = z.object({ events: z.array(EventSchema), total: z.number().int() }).openapi('eventSearchResponseSchema')

const FILTER = /^(IS|IS_ANY_OF):(.*?)(,([a-zA-Z0-9_]+))*$/
const DATE_FILTER = /^(IS):\d{4}-\d{2}-\d{2}$/
const filter = (what: string) =>
  z
    .string()
    .regex(FILTER, `${what} must be IS:<value> or IS_ANY_OF:<value>,<value>,...`)
    .optional()
    .openapi({ description: `Filter by ${what}: \`IS:<value>\` or \`IS_ANY_OF:<v1>,<v2>,...\`` })
const day = (what: string) =>
  z
    .string()
    .regex(DATE_FILTER, `${what} must be IS:yyyy-MM-dd`)
    .refine((v) => !Number.isNaN(Date.parse(`${v.slice(3)}T00:00:00Z`)), `${what} must be a real date (IS:yyyy-MM-dd)`)
    .optional()
    .openapi({ description: `\`IS:yyyy-MM-dd\` (UTC); ${what === 'to' ? 'the whole day is included' : 'from the start of the day'}` })
export const MAX_PAGE = 1000

export const EventSearchQuerySchema = z.object({
  query: z.string().max(200).optional().openapi({ description: 'Free text matched case-insensitively inside data, preData and tags' }),
  feature: filter('feature'),
  project: filter('project'),
  type: filter('type'),
  createdBy: filter('createdBy').openapi({ description: 'By user id (digits) or by name (the token name for changes made with a token)' }),
  from: day('from'),
  to: day('to'),
  offset: pagingParam('offset', 1_000_000_000, 0),
  limit: pagingParam('limit', MAX_PAGE, 50),
})
export type EventSearchQuery = z.infer<typeof EventSearchQuerySchema>

export const FeatureEventsQuerySchema = z.object({
  offset: pagingParam('offset', 1_000_000_000, 0),
  limit: pagingParam('limit', MAX_PAGE, 50),
})
