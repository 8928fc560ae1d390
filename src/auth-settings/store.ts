import { and, eq, inArray, sql } from 'drizzle-orm'
import { roles, settings } from '../../schema/index.js'
import { queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { noAccess, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import type { NewEvent } from '../events/types.js'
import { SECRET_MASK, type OidcSettings, type OidcSettingsInput, type PasswordAuth } from './schemas.js'

const OIDC = 'oidc'
const PASSWORD = 'simple'

/** What leaves the database: the secret masked. */
const masked = (stored: OidcSettings): OidcSettings => (stored.secret ? { ...stored, secret: SECRET_MASK } : stored)

/** What events say: the settings without the secret, only whether it changed. */
const forEvent = (stored: OidcSettings | undefined) => {
  if (!stored) return null
  const { secret: _secret, ...rest } = stored
  return rest
}

/** The stored OIDC settings with the secret, for signing in only: never answered to anyone. */
export async function readOidcSettings(db: Db): Promise<OidcSettings> {
  const [row] = await db.select().from(settings).where(eq(settings.name, OIDC))
  return row ? (row.content as OidcSettings) : { enabled: false }
}

export async function getOidcSettings(db: Db): Promise<OidcSettings> {
  const [row] = await db.select().from(settings).where(eq(settings.name, OIDC))
  return row ? masked(row.content as OidcSettings) : { enabled: false }
}

/**
 * Replaces the OIDC settings. Empty strings count as not set; the masked secret keeps the stored one;
 * `defaultRootRoleId` must be a root role, and its name becomes `defaultRootRole`.
 * Emits `setting-created` the first time, `setting-updated` after, neither with the secret.
 * A read (the settings and the role named), then the change and its event in one statement, made only if the
 * settings are still as read (tried again from a fresh read otherwise).
 */
export async function saveOidcSettings(db: Db, caller: Author, input: OidcSettingsInput): Promise<OidcSettings> {
  const { actor, now } = caller
  const next: OidcSettings = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== '' && value !== undefined))
  const roleId = next.defaultRootRoleId
  return untilUnchanged('The OIDC settings', async () => {
    const [[row], [role]] = await together(db, [
      (q) => q.select({ content: settings.content, snapshot: rowText(settings) }).from(settings).where(eq(settings.name, OIDC)),
      (q) => (roleId === undefined ? Promise.resolve([]) : q.select({ name: roles.name }).from(roles).where(and(eq(roles.id, roleId), eq(roles.type, 'root')))),
    ])
    const before = row?.content as OidcSettings | undefined
    const stored = { ...next }
    if (stored.secret === SECRET_MASK) {
      if (before?.secret) stored.secret = before.secret
      else delete stored.secret
    }
    if (stored.enabled === true && !stored.secret) {
      throw validationError('secret is required when enabled is true: there is no stored secret to keep', [{ path: 'body.secret', message: 'required' }])
    }
    if (stored.emailDomains) stored.emailDomains = stored.emailDomains.split(',').map((d) => d.trim().toLowerCase()).join(',')
    if (roleId !== undefined) {
      if (!role) throw validationError(`defaultRootRoleId ${roleId} is not a root role`, [{ path: 'body.defaultRootRoleId', message: 'no root role has this id' }])
      stored.defaultRootRole = role.name as OidcSettings['defaultRootRole']
    }
    const change = row
      ? db.update(settings).set({ content: stored, updatedAt: now }).where(and(eq(settings.name, OIDC), sql`${rowText(settings)} = ${row.snapshot}`)).returning({ name: settings.name })
      : db.insert(settings).values({ name: OIDC, content: stored, updatedAt: now }).onConflictDoNothing().returning({ name: settings.name })
    const data = { id: OIDC, ...forEvent(stored), secretChanged: (stored.secret ?? null) !== (before?.secret ?? null) }
    const event: NewEvent = before ? { type: 'setting-updated', data, preData: { id: OIDC, ...forEvent(before) } } : { type: 'setting-created', data }
    const written = await recordEvents(db, actor, now, [event], { alongside: [change], guarded: true })
    return written > 0 ? masked(stored) : undefined
  })
}

/**
 * Resets the OIDC settings to none (`{ enabled: false }`), with `setting-deleted` carrying what was stored
 * (without the secret). Nothing stored: nothing to do, and no event. A read, then the deletion and its event in
 * one statement, made only if the settings are still as read.
 */
export async function resetOidcSettings(db: Db, caller: Author): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged('The OIDC settings', async () => {
    const [row] = await db.select({ content: settings.content, snapshot: rowText(settings) }).from(settings).where(eq(settings.name, OIDC))
    if (!row) return true
    const change = db.delete(settings).where(and(eq(settings.name, OIDC), sql`${rowText(settings)} = ${row.snapshot}`)).returning({ name: settings.name })
    const event: NewEvent = { type: 'setting-deleted', data: null, preData: { id: OIDC, ...forEvent(row.content as OidcSettings) } }
    const written = await recordEvents(db, actor, now, [event], { alongside: [change], guarded: true })
    return written > 0 || undefined
  })
}

/**
 * Whether password sign-in is refused: it is switched off (`disabled`) and OpenID Connect sign-in is enabled, so
 * turning single sign-on off (or resetting it) gives password sign-in back. SQL, so a sign-in reads it in its own
 * round trip; the deployment's escape hatch (FLAGPOST_ALLOW_PASSWORD_LOGIN) skips it.
 */
export const passwordSignInRefusedSql = sql<boolean>`(exists (select from ${settings} where ${settings.name} = ${PASSWORD} and ${settings.content}->>'disabled' = 'true')
  and exists (select from ${settings} where ${settings.name} = ${OIDC} and ${settings.content}->>'enabled' = 'true'))`

/**
 * Whether what sets a password (an invite link's sign-up, an invite or password-reset link) is refused: while password
 * sign-in is, unless the deployment forces it on (`passwordAlwaysAllowed`: FLAGPOST_ALLOW_PASSWORD_LOGIN). A query to
 * send with the caller's own reads (`together`), so it costs no round trip of its own.
 */
export const passwordLinksRefused = (q: Db, passwordAlwaysAllowed: boolean | undefined): Promise<{ refused: boolean }[]> =>
  passwordAlwaysAllowed ? Promise.resolve([{ refused: false }]) : queryRows<{ refused: boolean }>(q, sql`select ${passwordSignInRefusedSql} as refused`)

/** The 403 of what would set a password nobody could sign in with (see passwordLinksRefused). */
export const passwordLinksOff = () =>
  noAccess('Password sign-in is switched off on this instance, so a password set here could not be used: sign in with single sign-on (OpenID Connect) instead')

export async function getPasswordAuth(db: Db): Promise<PasswordAuth> {
  const [row] = await db.select().from(settings).where(eq(settings.name, PASSWORD))
  return { disabled: (row?.content as PasswordAuth | undefined)?.disabled === true }
}

/**
 * Switches password sign-in off or on. Switching it off needs OpenID Connect sign-in enabled (400 otherwise), so
 * an instance is never left without a way in; the deployment can still force it on (FLAGPOST_ALLOW_PASSWORD_LOGIN).
 * Emits `setting-created` the first time, then `setting-updated` (nothing when nothing changes). A read (both
 * settings), then the change and its event in one statement, made only while the setting is as read.
 */
export async function savePasswordAuth(db: Db, caller: Author, input: PasswordAuth): Promise<PasswordAuth> {
  const { actor, now } = caller
  return untilUnchanged('The password sign-in setting', async () => {
    const rows = await db.select({ name: settings.name, content: settings.content, snapshot: rowText(settings) }).from(settings).where(inArray(settings.name, [PASSWORD, OIDC]))
    const row = rows.find((r) => r.name === PASSWORD)
    const oidc = rows.find((r) => r.name === OIDC)?.content as OidcSettings | undefined
    if (input.disabled && oidc?.enabled !== true) {
      throw validationError('Enable OpenID Connect sign-in before you disable password sign-in: nobody could sign in otherwise', [{ path: 'body.disabled', message: 'OpenID Connect sign-in is not enabled' }])
    }
    const before = row ? { disabled: (row.content as PasswordAuth).disabled === true } : undefined
    if (before?.disabled === input.disabled) return before
    const stored: PasswordAuth = { disabled: input.disabled }
    const change = row
      ? db.update(settings).set({ content: stored, updatedAt: now }).where(and(eq(settings.name, PASSWORD), sql`${rowText(settings)} = ${row.snapshot}`)).returning({ name: settings.name })
      : db.insert(settings).values({ name: PASSWORD, content: stored, updatedAt: now }).onConflictDoNothing().returning({ name: settings.name })
    const event: NewEvent = before ? { type: 'setting-updated', data: { id: PASSWORD, ...stored }, preData: { id: PASSWORD, ...before } } : { type: 'setting-created', data: { id: PASSWORD, ...stored } }
    const written = await recordEvents(db, actor, now, [event], { alongside: [change], guarded: true })
    return written > 0 ? stored : undefined
  })
}

/** Where a browser starts OpenID Connect sign-in (served by src/sso). */
export const OIDC_LOGIN_PATH = '/auth/oidc/login'

/** Whether stored OIDC settings can sign anyone in: enabled, with a provider, a client id and a secret. */
export const oidcUsable = (s: OidcSettings) => s.enabled === true && !!s.discoverUrl && !!s.clientId && !!s.secret

/**
 * How a browser may sign in, as Unleash's 401 says it (`type`, `path`, `defaultHidden`, `options`): with a password
 * (hidden while it is switched off) and, when OpenID Connect sign-in is usable, through the provider. One read.
 */
export async function signInOptions(db: Db, passwordAlwaysAllowed: boolean) {
  const rows = await db.select({ name: settings.name, content: settings.content }).from(settings).where(inArray(settings.name, [PASSWORD, OIDC]))
  const oidc = rows.find((r) => r.name === OIDC)?.content as OidcSettings | undefined
  const password = rows.find((r) => r.name === PASSWORD)?.content as PasswordAuth | undefined
  const sso = oidc !== undefined && oidcUsable(oidc)
  return {
    type: 'password',
    path: '/auth/simple/login',
    defaultHidden: !passwordAlwaysAllowed && sso && password?.disabled === true,
    options: sso ? [{ type: 'oidc', message: 'Sign in with OpenID Connect', path: OIDC_LOGIN_PATH }] : [],
  }
}
