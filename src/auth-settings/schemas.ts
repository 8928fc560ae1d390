import * as z from '../http/zod.js'
import { groupJsonPathError } from './group-json-path.js'

/** What responses show in place of the client secret; sent back, it keeps the stored secret. */
export const SECRET_MASK = '********'

export const ROOT_ROLE_NAMES = ['Viewer', 'Editor', 'Admin'] as const
export const SIGNING_ALGORITHMS = ['RS256', 'RS384', 'RS512'] as const

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i
/** Loopback hosts, where a provider run for development or tests may speak plain http. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])

/** https, or http to a loopback host (a provider on the same machine, for development and tests). */
export const isProviderUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.hostname !== '' && (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)))
  } catch {
    return false
  }
}

// Empty strings are accepted and mean "not set" (what forms send for an empty field).
const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`).optional()

const fields = {
  enabled: z.boolean().optional().openapi({ description: 'true: clientId and secret are required; false (or absent): every field is optional' }),
  discoverUrl: z
    .string()
    .trim()
    .max(2048)
    .refine((v) => v === '' || isProviderUrl(v), 'discoverUrl must be an https URL (plain http only to localhost, for development)')
    .optional()
    .openapi({ format: 'uri', example: 'https://accounts.example.com/.well-known/openid-configuration', description: 'The provider\'s discovery document, or its issuer URL (`/.well-known/openid-configuration` is added)' }),
  clientId: text(255).openapi({ description: 'The client id of the application' }),
  secret: z
    .string()
    .max(1024, 'secret must be at most 1024 characters')
    .optional()
    .openapi({ description: `The shared secret. Responses show \`${SECRET_MASK}\` in its place; sending that back keeps the stored secret.` }),
  autoCreate: z.boolean().optional().openapi({ description: 'Create users from the e-mail addresses in login tokens' }),
  enableSingleSignOut: z
    .boolean()
    .optional()
    .openapi({ description: "Signing out of a session made by single sign-on also ends the provider's session (RP-initiated logout), where the provider has an end_session_endpoint" }),
  emailVerifiedByProvider: z
    .boolean()
    .optional()
    .openapi({
      description:
        'The provider releases only e-mail addresses it verified: accept an ID token (or UserInfo) without the `email_verified` claim. Off (the default): ' +
        'a sign-in is refused unless `email_verified` is true. An `email_verified` of false is refused either way.',
    }),
  defaultRootRole: z.enum(ROOT_ROLE_NAMES).optional().openapi({ description: 'Root role of auto-created users' }),
  defaultRootRoleId: z.number().int().positive().optional().openapi({ description: 'Root role id of auto-created users; must exist; wins over defaultRootRole' }),
  emailDomains: z
    .string()
    .trim()
    .max(4000)
    .refine((v) => v === '' || v.split(',').every((d) => DOMAIN.test(d.trim())), 'emailDomains must be a comma-separated list of domains, e.g. example.com,example.org')
    .optional()
    .openapi({ description: 'Comma-separated approved e-mail domains: only e-mail addresses of these sign in with single sign-on (existing users too) and are auto-created', example: 'example.com,example.org' }),
  acrValues: z
    .string()
    .trim()
    .max(1000)
    .regex(/^([\x21-\x7e]+( [\x21-\x7e]+)*)?$/, 'acrValues must be space-separated values')
    .optional()
    .openapi({ description: 'Space-separated values requesting extra acr claim values' }),
  idTokenSigningAlgorithm: z.enum(SIGNING_ALGORITHMS).optional(),
  enableGroupSyncing: z
    .boolean()
    .optional()
    .openapi({ description: 'On each sign-in, make the user a member of the groups whose mappingsSSO hold one of the groups found at groupJsonPath (required then), and no longer of those it made them a member of that no longer match' }),
  groupJsonPath: text(255)
    .superRefine((value, ctx) => {
      const error = value ? groupJsonPathError(value) : undefined
      if (error) ctx.addIssue({ code: 'custom', message: `groupJsonPath must be a JSONPath (e.g. $.groups) or a claim's name: ${error}` })
    })
    .openapi({ description: "Where the user's groups are in the ID token's claims (else UserInfo's): a JSONPath (RFC 9535), or a claim's name", example: 'groups' }),
  addGroupsScope: z.boolean().optional().openapi({ description: 'Also request the groups scope at login' }),
}

export const OidcSettingsInputSchema = z
  .strictObject(fields)
  .superRefine((settings, ctx) => {
    if (settings.enabled !== true) return
    if (!settings.clientId) ctx.addIssue({ code: 'custom', path: ['clientId'], message: 'clientId is required when enabled is true' })
    if (!settings.secret) ctx.addIssue({ code: 'custom', path: ['secret'], message: 'secret is required when enabled is true' })
    if (settings.enableGroupSyncing === true && !settings.groupJsonPath) ctx.addIssue({ code: 'custom', path: ['groupJsonPath'], message: 'groupJsonPath is required when enableGroupSyncing is true' })
  })
  .openapi('oidcSettingsSchema')

export const OidcSettingsSchema = z.object(fields).openapi('oidcSettingsResponseSchema')

export type OidcSettingsInput = z.infer<typeof OidcSettingsInputSchema>
export type OidcSettings = z.infer<typeof OidcSettingsSchema>

/** Password sign-in (Unleash's `passwordAuthSchema`): `disabled` turns it off while OpenID Connect sign-in is enabled. */
export const PasswordAuthSchema = z
  .strictObject({ disabled: z.boolean().openapi({ description: 'true: password sign-in is refused (only while OpenID Connect sign-in is enabled)' }) })
  .openapi('passwordAuthSchema')

export type PasswordAuth = z.infer<typeof PasswordAuthSchema>
