import * as z from '../http/zod.js'
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.js'

/** The built-in roles a user can be given by name; ids 1-5 in the same order. */
export const ROLE_NAMES = ['Admin', 'Editor', 'Viewer', 'Owner', 'Member'] as const
export type RoleName = (typeof ROLE_NAMES)[number]

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
/** Control (Cc) and format (Cf: zero-width, bidirectional) characters: invisible in a list of users, so one name or address could pass for another. */
const INVISIBLE = /[\p{Cc}\p{Cf}]/u
export const hasInvisible = (value: string) => INVISIBLE.test(value)
/** A character outside ASCII that lower-cases into ASCII (the Kelvin sign into "k"): another mailbox, stored as someone else's. */
const foldsIntoAscii = (value: string) => [...value].some((c) => c.charCodeAt(0) > 0x7f && /[\x00-\x7f]/.test(c.toLowerCase()))
/**
 * Characters that show as nothing or as a blank in a list of users: default-ignorable code points (the Hangul fillers,
 * U+034F, variation selectors), Braille's blank pattern, and separators.
 */
const BLANK_LOOKING = /[\p{Default_Ignorable_Code_Point}\u2800\p{Z}]/u
/** Scripts whose letters pass for one another (Latin "a" and Cyrillic "а", Greek "ο" and Latin "o"). */
const CONFUSABLE_SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u, /\p{Script=Armenian}/u, /\p{Script=Cherokee}/u, /\p{Script=Coptic}/u]
/** Whether a part of an address (its local part, a domain label) mixes letters of two scripts that look alike. */
const mixesScripts = (part: string) => CONFUSABLE_SCRIPTS.filter((script) => script.test(part)).length > 1
/**
 * Whether an address is made to look like another: a blank-looking character, a letter that changes under
 * compatibility normalisation (full-width "ａ", ligatures, superscripts: NFKC makes them the plain letters), or a local
 * part or domain label mixing look-alike scripts. Unleash takes such addresses; refusing them keeps one user from
 * passing for another in every list, event and approval (docs/ARCHITECTURE.md).
 */
const looksLikeAnother = (value: string) => BLANK_LOOKING.test(value) || value.normalize('NFKC') !== value || value.split(/[@.]/).some(mixesScripts)
/**
 * Whether an e-mail address may be a user's, on every path a user or an address enters by (created by an admin, invite
 * sign-up, single sign-on, sign-in): its form, no invisible character, nothing that folds into ASCII when lower-cased,
 * nothing made to look like another address. Checked before lower-casing, so every path refuses the same addresses.
 */
export const isEmail = (value: string) => EMAIL.test(value) && !INVISIBLE.test(value) && !foldsIntoAscii(value) && !looksLikeAnother(value)

/** Why an address is refused, on every path. */
export const EMAIL_MESSAGE = 'email must be a valid e-mail address, without control, invisible or blank-looking characters, full-width letters or letters of look-alike scripts mixed'

export const PasswordSchema = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `password must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH, `password must be at most ${MAX_PASSWORD_LENGTH} characters`)

const RoleRef = z
  .union([z.number().int().min(0), z.enum(ROLE_NAMES)])
  .openapi({ description: 'A root role id (built in or custom), or a role name: Admin, Editor, Viewer, Owner, Member', example: 'Editor' })

// An empty string counts as absent, as in Unleash (the service checks "username or email" after).
const optionalText = (what: string, max: number) => visibleText(what, max).optional()

/** A name or username: trimmed, at most `max` characters, no control or format character. */
export const visibleText = (what: string, max: number) =>
  z.string().trim().max(max, `${what} must be at most ${max} characters`).refine((v) => !hasInvisible(v), `${what} must not contain control or invisible (format) characters`)

const optionalEmail = z
  .string()
  .trim()
  .max(254, 'email must be at most 254 characters')
  .refine((v) => v === '' || isEmail(v), EMAIL_MESSAGE)
  .toLowerCase()
  .optional()

export const CreateUserSchema = z
  .object({
    username: optionalText('username', 255).openapi({ description: 'Required when email is absent', example: 'hunter' }),
    email: optionalEmail.openapi({ description: 'Required when username is absent; stored lower-case', example: 'user@example.com' }),
    name: optionalText('name', 255).openapi({ example: 'Sam Seawright' }),
    password: PasswordSchema.optional().openapi({ description: `At least ${MIN_PASSWORD_LENGTH} characters. Without one, the user sets it through the invite link.` }),
    rootRole: RoleRef,
    sendEmail: z.boolean().optional().openapi({ description: 'Send a welcome e-mail with the invite link; default true' }),
  })
  .openapi('createUserSchema')

export const UpdateUserSchema = z
  .object({
    email: optionalEmail,
    name: optionalText('name', 255),
    rootRole: RoleRef.optional(),
  })
  .openapi('updateUserSchema')

export const ChangeUserPasswordSchema = z
  .object({
    password: PasswordSchema,
    oldPassword: z.string().max(MAX_PASSWORD_LENGTH).optional().openapi({ description: 'Your current password: required when changing your own password' }),
    confirmPassword: z.string().max(MAX_PASSWORD_LENGTH).optional().openapi({ description: 'The new password again; when given, it must equal `password`' }),
  })
  .openapi('passwordSchema')

const dateTimeText = z.string().openapi({ format: 'date-time' })

export const UserSchema = z
  .object({
    id: z.number().int(),
    isAPI: z.boolean().openapi({ deprecated: true }),
    name: z.string().nullable(),
    email: z.string().optional(),
    username: z.string().nullable(),
    imageUrl: z.string(),
    loginAttempts: z.number().int(),
    rootRole: z.union([z.number().int(), z.enum(ROLE_NAMES)]),
    seenAt: dateTimeText.nullable(),
    createdAt: dateTimeText,
    accountType: z.enum(['User', 'Service Account']),
    permissions: z.array(z.string()).openapi({ deprecated: true }),
    scimId: z.string().nullable(),
    ssoBound: z.boolean().optional().openapi({ description: 'Flagpost addition: whether the account is bound to a single sign-on identity (DELETE …/user-admin/{id}/sso forgets it)' }),
  })
  .openapi('userSchema')

export const CreatedUserSchema = UserSchema.extend({
  inviteLink: z.string().optional().openapi({ description: 'A single-use link (valid 7 days) to a page where the user sets a password; absent while password sign-in is switched off (the user signs in through single sign-on)' }),
  emailSent: z.boolean().openapi({ description: 'True only when an e-mail transport is configured and took the welcome e-mail' }),
}).openapi('createUserResponseSchema')

export const RoleSchema = z
  .object({ id: z.number().int(), type: z.string(), name: z.string(), description: z.string().nullable() })
  .openapi('roleSchema')

export const UsersSchema = z.object({ users: z.array(UserSchema), rootRoles: z.array(RoleSchema) }).openapi('usersSchema')

/** The longest text the user search takes, and the most users it answers. */
export const USER_SEARCH_MAX_QUERY = 100
export const USER_SEARCH_MAX_RESULTS = 20

export const UserSearchQuerySchema = z.object({
  q: z
    .string()
    .max(USER_SEARCH_MAX_QUERY, `q must be at most ${USER_SEARCH_MAX_QUERY} characters`)
    .optional()
    .openapi({ param: { name: 'q', in: 'query' }, description: 'Text found, ignoring case, in the name, username or e-mail; fewer than 2 characters find no one, as in Unleash' }),
})

export const UsersSearchSchema = z
  .array(
    z.object({
      id: z.number().int(),
      name: z.string().nullable(),
      username: z.string().nullable(),
      email: z.string().nullable(),
      imageUrl: z.string(),
    }),
  )
  .openapi('usersSearchSchema', { description: 'Users, by what names them only: never password data, sessions, roles or sign-in records' })
export type UsersSearch = z.infer<typeof UsersSearchSchema>

export const PermissionGrantSchema = z
  .object({ permission: z.string(), project: z.string().optional(), environment: z.string().optional() })
  .openapi('permissionSchema')

export const MeSchema = z
  .object({
    user: UserSchema,
    permissions: z.array(PermissionGrantSchema).openapi({ description: 'What the caller may do: root role permissions, then those of each project role' }),
    feedback: z.array(z.unknown()),
    splash: z.record(z.string(), z.boolean()),
  })
  .openapi('meSchema')

export const UserIdParam = z.object({
  id: z
    .string()
    .regex(/^\d{1,9}$/, 'id must be a user id (a positive integer)')
    .openapi({ param: { name: 'id', in: 'path' }, example: '1' }),
})

export type CreateUser = z.infer<typeof CreateUserSchema>
export type UpdateUser = z.infer<typeof UpdateUserSchema>
export type UserView = z.infer<typeof UserSchema>

/** How a request names a root role (users' and service accounts'). */
export { RoleRef }
