import * as z from '../http/zod.js'
import { pagingParam, pathSegmentName } from '../http/common-schemas.js'

const dateTimeText = z.string().openapi({ format: 'date-time' })
const idParam = (name: string, what: string) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `${name} must be ${what} id (a positive integer)`)
    .openapi({ param: { name, in: 'path' }, example: '1' })

export const SignalEndpointTokenSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    signalEndpointId: z.number().int(),
    createdAt: dateTimeText,
    createdByUserId: z.number().int().nullable(),
    token: z.string().optional().openapi({ description: 'The token itself: in the create response only (stored hashed, never shown again)' }),
  })
  .openapi('signalEndpointTokenSchema')

export const SignalEndpointSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    createdAt: dateTimeText,
    createdByUserId: z.number().int().nullable(),
    tokens: z.array(SignalEndpointTokenSchema.omit({ token: true })),
    url: z.string().optional().openapi({ description: 'Where to send signals: in the answers of creating and updating the endpoint, as in Unleash' }),
  })
  .openapi('signalEndpointSchema')

export const SignalEndpointsSchema = z.object({ signalEndpoints: z.array(SignalEndpointSchema) }).openapi('signalEndpointsSchema')

export const CreateSignalEndpointSchema = z
  .object({
    name: pathSegmentName('name').openapi({ description: 'URL-friendly: the end of the endpoint’s URL', example: 'grafana-alerts' }),
    description: z.string().max(1000, 'description must be at most 1000 characters').nullable().optional(),
    enabled: z.boolean().optional().openapi({ description: 'Default true; when updating, left out keeps it' }),
  })
  .openapi('createSignalEndpointSchema')

export const CreateSignalEndpointTokenSchema = z
  .object({ name: z.string().trim().min(1, 'name must not be empty').max(255, 'name must be at most 255 characters').openapi({ example: 'grafana' }) })
  .openapi('createSignalEndpointTokenSchema')

export const SignalEndpointTokensSchema = z.object({ signalEndpointTokens: z.array(SignalEndpointTokenSchema) }).openapi('signalEndpointTokensSchema')

const payload = z.unknown().openapi({ description: 'The JSON the signal was sent with' })

export const SignalEndpointSignalSchema = z
  .object({
    id: z.number().int(),
    source: z.literal('signal-endpoint'),
    sourceId: z.number().int(),
    createdAt: dateTimeText,
    payload,
    tokenName: z.string().nullable().openapi({ description: 'The token it was sent with (null once that token is deleted)' }),
  })
  .openapi('signalEndpointSignalSchema')

export const SignalEndpointSignalsSchema = z.object({ signalEndpointSignals: z.array(SignalEndpointSignalSchema) }).openapi('signalEndpointSignalsSchema')

export const SignalQuerySignalSchema = SignalEndpointSignalSchema.extend({
  sourceName: z.string().nullable(),
  sourceDescription: z.string().nullable(),
}).openapi('signalQuerySignalSchema')

export const SignalQueryResponseSchema = z.object({ signals: z.array(SignalQuerySignalSchema), total: z.number().int() }).openapi('signalQueryResponseSchema')

export const SignalEndpointIdParam = z.object({ id: idParam('id', 'a signal endpoint') })
export const SignalEndpointTokenParams = SignalEndpointIdParam.extend({ tokenId: idParam('tokenId', 'a token') })
export const SignalEndpointNameParam = z.object({ name: z.string().min(1).max(100).openapi({ param: { name: 'name', in: 'path' }, example: 'grafana-alerts' }) })

export const PageQuery = z.object({ limit: pagingParam('limit', 1000, 50), offset: pagingParam('offset', 1_000_000, 0) })

const dayFilter = (what: string) =>
  z
    .string()
    .regex(/^IS:\d{4}-\d{2}-\d{2}$/, `${what} must be IS:yyyy-MM-dd`)
    .refine((v) => !Number.isNaN(Date.parse(v.slice(3))), `${what} must be a real date`)
    .optional()
    .openapi({ description: `IS:yyyy-MM-dd (a day, UTC)`, example: 'IS:2026-06-01' })

export const SignalQuery = PageQuery.extend({ from: dayFilter('from'), to: dayFilter('to') })

export type SignalEndpoint = z.infer<typeof SignalEndpointSchema>
export type SignalEndpointToken = z.infer<typeof SignalEndpointTokenSchema>
export type CreateSignalEndpoint = z.infer<typeof CreateSignalEndpointSchema>
