import * as z from '../http/zod.js'
import { PatSchema } from '../api-tokens/schemas.js'
import { RoleRef, RoleSchema } from '../users/schemas.js'

const name = z.string().trim().min(1, 'name must not be empty').max(255, 'name must be at most 255 characters')

export const CreateServiceAccountSchema = z
  .object({
    username: z
      .string()
      .trim()
      .min(1, 'username must not be empty')
      .max(255, 'username must be at most 255 characters')
      .openapi({ description: 'Unique among users and service accounts', example: 'deploy-bot' }),
    name: name.openapi({ example: 'Deploy bot' }),
    rootRole: RoleRef,
  })
  .openapi('createServiceAccountSchema')

export const UpdateServiceAccountSchema = z
  .object({
    name: name.optional(),
    rootRole: RoleRef.optional(),
  })
  .openapi('updateServiceAccountSchema')

export const ServiceAccountSchema = z
  .object({
    id: z.number().int(),
    name: z.string().nullable(),
    username: z.string(),
    rootRole: z.number().int().openapi({ description: 'The id of its root role' }),
    imageUrl: z.string(),
    createdAt: z.string().openapi({ format: 'date-time' }),
    seenAt: z.string().nullable().openapi({ format: 'date-time', description: 'Always null, as in Unleash: see its tokens’ `seenAt`' }),
    isAPI: z.boolean().openapi({ deprecated: true }),
    tokens: z.array(PatSchema).openapi({ description: 'Its tokens, oldest first, without their secrets' }),
  })
  .openapi('serviceAccountSchema')

export const ServiceAccountsSchema = z
  .object({ serviceAccounts: z.array(ServiceAccountSchema), rootRoles: z.array(RoleSchema) })
  .openapi('serviceAccountsSchema')

export const ServiceAccountIdParam = z.object({
  id: z
    .string()
    .regex(/^\d{1,9}$/, 'id must be a service account id (a positive integer)')
    .openapi({ param: { name: 'id', in: 'path' }, example: '7' }),
})

export const ServiceAccountTokenParams = ServiceAccountIdParam.extend({
  tokenId: z
    .string()
    .regex(/^\d{1,9}$/, 'tokenId must be a token id (a positive integer)')
    .openapi({ param: { name: 'tokenId', in: 'path' }, example: '12' }),
})

export type CreateServiceAccount = z.infer<typeof CreateServiceAccountSchema>
export type UpdateServiceAccount = z.infer<typeof UpdateServiceAccountSchema>
export type ServiceAccount = z.infer<typeof ServiceAccountSchema>
