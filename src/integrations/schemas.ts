import * as z from '../http/zod.js'
import { pagingParam } from '../http/common-schemas.js'
import { EVENT_TYPES } from '../events/types.js'
import { EventSchema } from '../events/schemas.js'

export const AddonInputSchema = z
  .object({
    provider: z.string().min(1).max(100).openapi({ description: 'One of the providers listed by GET /api/admin/addons (now: webhook)' }),
    description: z.string().max(1000).nullable().optional(),
    enabled: z.boolean(),
    parameters: z.record(z.string().max(100), z.string().max(100_000)),
    events: z.array(z.enum(EVENT_TYPES)).min(1, 'events must name at least one event type').max(200),
    projects: z.array(z.string().min(1).max(100)).max(1000).optional().openapi({ description: 'Empty or absent: every project' }),
    environments: z.array(z.string().min(1).max(100)).max(1000).optional().openapi({ description: 'Empty or absent: every environment' }),
  })
  .openapi('addonCreateUpdateSchema')
export type AddonInput = z.infer<typeof AddonInputSchema>

export const AddonSchema = z
  .object({
    id: z.number().int().min(1),
    provider: z.string(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    parameters: z.record(z.string(), z.string()),
    events: z.array(z.string()),
    projects: z.array(z.string()),
    environments: z.array(z.string()),
  })
  .openapi('addonSchema')

const ProviderSchema = z
  .object({
    name: z.string(),
    displayName: z.string(),
    description: z.string(),
    documentationUrl: z.string(),
    parameters: z.array(
      z.object({ name: z.string(), displayName: z.string(), type: z.string(), description: z.string(), placeholder: z.string().optional(), required: z.boolean(), sensitive: z.boolean() }),
    ),
    events: z.array(z.string()),
  })
  .openapi('addonTypeSchema')

export const AddonsSchema = z.object({ addons: z.array(AddonSchema), providers: z.array(ProviderSchema) }).openapi('addonsSchema')

export const IntegrationEventSchema = z
  .object({
    id: z.string().regex(/^[0-9]+$/),
    integrationId: z.number().int(),
    createdAt: z.string(),
    state: z.enum(['success', 'failed', 'successWithErrors']),
    stateDetails: z.string(),
    event: EventSchema,
    details: z.record(z.string(), z.unknown()),
  })
  .openapi('integrationEventSchema')

export const IntegrationEventsSchema = z.object({ integrationEvents: z.array(IntegrationEventSchema) }).openapi('integrationEventsSchema')

export const AddonIdParam = z.object({
  id: z
    .string()
    .regex(/^\d{1,9}$/, 'id must be a whole number')
    .transform(Number)
    .openapi({ param: { name: 'id', in: 'path' }, type: 'string' }),
})

export const MAX_INTEGRATION_EVENTS_PAGE = 100
export const IntegrationEventsQuerySchema = z.object({
  limit: pagingParam('limit', MAX_INTEGRATION_EVENTS_PAGE, 50),
  offset: pagingParam('offset', 1_000_000_000, 0),
})
