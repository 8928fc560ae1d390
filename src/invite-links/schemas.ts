import * as z from '../http/zod.js'
import { EMAIL_MESSAGE, emailSchema, PasswordSchema, RoleSchema, visibleText } from '../users/schemas.js'

const dateTime = z.string().openapi({ format: 'date-time' })
const instant = z.iso.datetime({ offset: true, message: 'must be a date-time such as 2030-01-31T12:00:00Z' })

export const InviteLinkCreateSchema = z
  .strictObject({
    name: visibleText('name', 255).refine((v) => v !== '', 'name must not be empty').openapi({ description: "The link's name, for the console", example: 'Invite the support team' }),
    expiresAt: instant.openapi({ description: 'When the link stops working: in the future; at most a month away (later dates are capped, as Unleash does)', format: 'date-time' }),
    role: z
      .union([z.number().int().positive(), z.string().trim().min(1).max(255)])
      .optional()
      .openapi({ description: 'The root role of the people who sign up with the link, by id or name; default Viewer (Unleash\'s)', example: 'Viewer' }),
  })
  .openapi('publicSignupTokenCreateSchema')

export const InviteLinkUpdateSchema = z
  .strictObject({
    expiresAt: instant.optional().openapi({ description: 'A new expiry: in the future; at most a month away (later dates are capped)', format: 'date-time' }),
    enabled: z.boolean().optional().openapi({ description: 'false: the link stops working (it can be enabled again)' }),
  })
  .refine((v) => v.expiresAt !== undefined || v.enabled !== undefined, 'give expiresAt, enabled or both')
  .openapi('publicSignupTokenUpdateSchema')

export const InviteLinkUserSchema = z
  .object({ id: z.number().int(), name: z.string().nullable(), email: z.string().nullable(), username: z.string().nullable(), createdAt: dateTime.openapi({ description: 'When they signed up' }) })
  .openapi('publicSignupTokenUserSchema')

export const InviteLinkSchema = z
  .object({
    secret: z.string().openapi({ description: 'The secret in full only in the answer that creates the link; elsewhere its first characters (enough to name it in PUT and GET)', example: '3f9a2c…' }),
    url: z.string().nullable().openapi({ description: 'The link to share, only in the answer that creates it (null elsewhere: the secret is stored hashed)' }),
    name: z.string(),
    enabled: z.boolean().openapi({ description: 'Whether the link works: false when disabled or expired' }),
    expiresAt: dateTime,
    createdAt: dateTime,
    createdBy: z.string().nullable(),
    users: z.array(InviteLinkUserSchema).nullable().openapi({ description: 'Who signed up with it' }),
    role: RoleSchema,
  })
  .openapi('publicSignupTokenSchema')

export const InviteLinksSchema = z.object({ tokens: z.array(InviteLinkSchema) }).openapi('publicSignupTokensSchema')

export const InviteLinkParam = z.object({
  token: z.string().min(1).max(200).openapi({ param: { name: 'token', in: 'path' }, description: 'The secret, in full or as listings show it', example: '3f9a2c…' }),
})

export const SignUpSchema = z
  .strictObject({
    email: emailSchema().refine((v) => v !== '', EMAIL_MESSAGE).openapi({ example: 'hunter@example.com' }),
    name: visibleText('name', 255).refine((v) => v !== '', 'name must not be empty').openapi({ example: 'Hunter Burgan' }),
    password: PasswordSchema,
    username: visibleText('username', 255).optional().openapi({ description: 'Optional; unique when given', example: 'hunter' }),
  })
  .openapi('createInvitedUserSchema')

export type InviteLinkCreate = z.infer<typeof InviteLinkCreateSchema>
export type InviteLinkUpdate = z.infer<typeof InviteLinkUpdateSchema>
export type SignUp = z.infer<typeof SignUpSchema>
