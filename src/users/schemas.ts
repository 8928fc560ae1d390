import * as z from '../http/zod.js'
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.js'

/** The built-in roles a user can be given by name; ids 1-5 in the same order. */
export const ROLE_NAMES = ['Admin', 'Editor', 'Viewer', 'Owner', 'Member'] as const
export type RoleName = (typeof ROLE_NAMES)[number]

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
/** Control (Cc) and format (Cf: zero-width, bidirectional) characters: invisible in a list of users, so one name or address could pass for another. */
const INVISIBLE = /[\p{Cc}\p{Cf}]/u
export const hasInvisible = (value: string) => INVISIBLE.test(value)
/** A character outside ASCII that lower-cases or composes into ASCII (the Kelvin sign into "k", "K"): another mailbox, stored as someone else's. */
const foldsIntoAscii = (value: string) => [...value].some((c) => c.charCodeAt(0) > 0x7f && (/[\x00-\x7f]/.test(c.toLowerCase()) || /^[\x00-\x7f]*$/.test(c.normalize('NFC'))))
/**
 * Characters that show as nothing or as a blank in a list of users: default-ignorable code points (the Hangul fillers,
 * U+034F, variation selectors), Braille's blank pattern, and separators.
 */
const BLANK_LOOKING = /[\p{Default_Ignorable_Code_Point}\u2800\p{Z}]/u
/**
 * The scripts an address's letters may come from: Unicode's scripts recommended for identifiers (UTS #39). A script of
 * limited use (Cherokee, Coptic, Lisu, Canadian Syllabics, Tifinagh…) is refused: several have letters made to pass
 * for Latin ones ("ꓑ", "ᑭ", "ⵏ").
 */
const SCRIPTS = 'Latin Cyrillic Greek Armenian Georgian Hebrew Arabic Thaana Ethiopic Devanagari Bengali Gurmukhi Gujarati Oriya Tamil Telugu Kannada Malayalam Sinhala Thai Lao Tibetan Myanmar Khmer Han Hiragana Katakana Bopomofo Hangul'.split(' ')
const scriptOf = new Map(SCRIPTS.map((name) => [name, new RegExp(`\\p{Script=${name}}`, 'u')]))
/** Digits, punctuation and combining marks: part of every script. */
const NEUTRAL = /[\p{Script=Common}\p{Script=Inherited}]/u
/** Punctuation and symbols outside ASCII ("‐" for "-", "․" for "."), but Japanese's middle dot. */
const FOREIGN_MARK = /(?![\x00-\x7f\u30fb])[\p{P}\p{S}]/u
/**
 * Latin letters that pass for plain ones: phonetics (IPA, small capitals, the extension blocks: "ɑ" for "a", "ᴘ" for
 * "p"), click letters ("ǀ" for "l"), dotless "ı" and a few more of Latin Extended-B.
 */
const PHONETIC_LATIN = /[\u0250-\u02af\u0237\u1d00-\u1dbf\ua720-\ua7ff\uab30-\uab6f\u01c0-\u01c3\u0131\u0185\u01bd\u023c\u0242]/u
/** Lower-case letters of other scripts that look like Latin ones (Cyrillic "а", "р", "е"; Greek "ο", "χ"; Armenian "օ"). */
const LATIN_LOOKING = /[асԁеһіјӏорԛѕԝхуүѵꙇαορνυικγϲϳηχօսցհոզ]/u
/** Chinese and Japanese characters that pass for Latin letters or punctuation beside them ("〇" for "o", "一" for "-"). */
const CJK_LATIN_LOOKING = /[\u3007\u4e00\u4e28\u4e36\u4e3f\u30fc\u30fb\u53e3\u5de5\u4e8c\u5341\u535c\u30a8\u30ed\u30cb\u30cf\u30c8\u30ce]/u
/** Scripts written with Han: Japanese's kana, Chinese's Bopomofo, Korean's Hangul; each mixes with Han and Latin, not with another. */
const WITH_HAN = new Set(['Han', 'Kana', 'Bopomofo', 'Hangul'])

/** The scripts of a part's letters (Hiragana and Katakana as Kana); undefined when one is not recommended. */
function scriptsOf(part: string): Set<string> | undefined {
  const found = new Set<string>()
  for (const ch of part) {
    if (NEUTRAL.test(ch)) continue
    const script = [...scriptOf].find(([, pattern]) => pattern.test(ch))?.[0]
    if (script === undefined) return undefined
    found.add(script === 'Hiragana' || script === 'Katakana' ? 'Kana' : script)
  }
  return found
}

/** Whether a part's scripts mix as no writing does (UTS #39 "highly restrictive"): one script, or Latin with Han and one of kana, Bopomofo, Hangul. */
function mixes(scripts: Set<string>): boolean {
  const others = [...scripts].filter((s) => !WITH_HAN.has(s))
  const beside = [...scripts].filter((s) => WITH_HAN.has(s) && s !== 'Han')
  if (others.length > 1 || beside.length > 1) return true
  return others.length === 1 && others[0] !== 'Latin' && others.length + beside.length + (scripts.has('Han') ? 1 : 0) > 1
}

/**
 * Whether a part of an address (its local part, a domain label) is made to pass for a Latin one: letters of a script
 * not recommended, Latin letters that pass for others, a combining mark left on a Latin letter after composition
 * ("o̸" beside "ø"), scripts mixed as no writing mixes them, Chinese or Japanese characters that look Latin beside
 * Latin letters, or a part of another script whose every letter looks Latin ("аре" for "ape", the label "со" for "co").
 */
function passesForLatin(part: string): boolean {
  const scripts = scriptsOf(part)
  if (scripts === undefined || PHONETIC_LATIN.test(part) || mixes(scripts)) return true
  if (scripts.has('Latin') && (/\p{M}/u.test(part) || CJK_LATIN_LOOKING.test(part))) return true
  const letters = [...part.toLowerCase()].filter((ch) => !NEUTRAL.test(ch))
  return !scripts.has('Latin') && letters.length > 0 && letters.every((ch) => LATIN_LOOKING.test(ch))
}

/**
 * Whether an address is made to look like another: a blank-looking character, a letter that changes under
 * compatibility normalisation (full-width "ａ", ligatures, superscripts: NFKC makes them the plain letters), punctuation
 * from outside ASCII, or a local part or domain label that passes for a Latin one. Unleash takes such addresses;
 * refusing them keeps one user from passing for another in every list, event and approval (docs/ARCHITECTURE.md).
 * `value` is in NFC (a decomposed "é" is the same address as a composed one).
 */
function looksLikeAnother(value: string): boolean {
  if (BLANK_LOOKING.test(value) || value.normalize('NFKC') !== value || FOREIGN_MARK.test(value)) return true
  const at = value.lastIndexOf('@')
  return [value.slice(0, at), ...value.slice(at + 1).split('.')].some(passesForLatin)
}
/** The form of an e-mail address only (something@domain.tld): how sign-in tells an address from a username. */
export const hasEmailForm = (value: string) => EMAIL.test(value)
/** An address as it is stored and looked up: composed (NFC), lower-case. */
export const normalEmail = (value: string) => value.normalize('NFC').toLowerCase().normalize('NFC')
/**
 * Whether an e-mail address may be a user's, on every path a user or an address enters by (created by an admin, invite
 * sign-up, single sign-on): its form, no invisible character, nothing that folds into ASCII when lower-cased, nothing
 * made to look like another address. Checked before lower-casing, so every path refuses the same addresses.
 */
export const isEmail = (value: string) => {
  const composed = value.normalize('NFC')
  return EMAIL.test(composed) && !INVISIBLE.test(value) && !foldsIntoAscii(value) && !looksLikeAnother(composed)
}

/** Why an address is refused, on every path. */
export const EMAIL_MESSAGE =
  'email must be a valid e-mail address, without control, invisible or blank-looking characters, full-width letters, punctuation from outside ASCII, or letters that pass for Latin ones (mixed scripts, look-alike letters)'

/** An e-mail address a user may have (see isEmail), stored composed and lower-case. */
export const emailSchema = () =>
  z
    .string()
    .trim()
    .max(254, 'email must be at most 254 characters')
    .refine((v) => v === '' || isEmail(v), EMAIL_MESSAGE)
    .transform(normalEmail)

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

const optionalEmail = emailSchema().optional()

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
    feedback: z
      .array(z.object({ userId: z.number().int(), feedbackId: z.string(), neverShow: z.boolean(), given: z.string().nullable() }))
      .openapi({ description: "The caller's feedback prompts (POST /api/admin/feedback); empty for an API token" }),
    splash: z.record(z.string(), z.boolean()).openapi({ description: 'The splash screens the caller has seen (POST /api/admin/splash/{id}), by id' }),
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
