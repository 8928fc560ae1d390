import * as z from '../http/zod.js'
import { dateTime } from '../http/common-schemas.js'

export const ApiTokenSchema = z
  .object({
    secret: z.string().openapi({ description: 'The token. Only the create response holds it in full; listings show a masked form.' }),
    tokenName: z.string(),
    type: z.enum(['admin', 'client', 'frontend']),
    environment: z.string(),
    project: z.string(),
    projects: z.array(z.string()),
    expiresAt: z.string().nullable(),
    createdAt: z.string(),
    seenAt: z.string().nullable(),
    alias: z.string().nullable(),
  })
  .openapi('apiTokenSchema')

export const ApiTokensSchema = z.object({ tokens: z.array(ApiTokenSchema) }).openapi('apiTokensSchema')

export const CreateApiTokenSchema = z
  .object({
    tokenName: z.string().trim().min(1, 'tokenName must not be empty').max(100),
    type: z
      .string()
      .regex(/^(client|backend|frontend|admin)$/i, 'type must be one of client, backend, frontend, admin')
      .openapi({ description: '`backend` (or the older `client`), `frontend`, or `admin`; not case sensitive' }),
    environment: z.string().min(1).max(100).optional().openapi({ description: 'Default `development`; admin tokens are always `*`' }),
    project: z.string().min(1).max(100).optional(),
    projects: z.array(z.string().min(1).max(100)).min(1).max(1000).optional(),
    expiresAt: dateTime.optional(),
    secret: z
      .string()
      .max(400)
      .optional()
      .openapi({
        description: 'Flagpost: a client or frontend token’s secret, kept from Unleash (see the route)',
      }),
  })
  .refine((t) => !(t.project !== undefined && t.projects !== undefined), {
    message: 'project and projects are mutually exclusive: give one of them',
    path: ['projects'],
  })
  .openapi('createApiTokenSchema')

export const UpdateApiTokenSchema = z
  .object({ expiresAt: dateTime.openapi({ description: 'When the token stops working; a time already past expires it at once', example: '2030-01-01T00:00:00Z' }) })
  .openapi('updateApiTokenSchema')

export const TokenParam = z.object({ token: z.string().openapi({ param: { name: 'token', in: 'path' } }) })

export type CreateApiToken = z.infer<typeof CreateApiTokenSchema>

export const PatSchema = z
  .object({
    id: z.number().int(),
    secret: z.string().optional().openapi({ description: '`user:<secret>`: in the create response only', example: 'user:xyzrandomstring' }),
    description: z.string(),
    expiresAt: z.string().openapi({ format: 'date-time' }),
    createdAt: z.string().openapi({ format: 'date-time' }),
    seenAt: z.string().nullable().openapi({ format: 'date-time' }),
    userId: z.number().int(),
  })
  .openapi('patSchema')

export const CreatePatSchema = z
  .object({
    description: z.string().trim().min(1, 'description must not be empty').max(255),
    expiresAt: dateTime.openapi({ description: 'When the token stops working; must be in the future' }),
  })
  .openapi('createPatSchema')
