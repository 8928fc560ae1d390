import { and, eq } from 'drizzle-orm'
import { roles, settings } from '../../schema/index.js'
import type { Db } from '../db.js'
import { validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { SECRET_MASK, type OidcSettings, type OidcSettingsInput } from './schemas.js'

const OIDC = 'oidc'

/** What leaves the database: the secret masked. */
const masked = (stored: OidcSettings): OidcSettings => (stored.secret ? { ...stored, secret: SECRET_MASK } : stored)

/** What events say: the settings without the secret, only whether it changed. */
const forEvent = (stored: OidcSettings | undefined) => {
  if (!stored) return null
  const { secret: _secret, ...rest } = stored
  return rest
}

export async function getOidcSettings(db: Db): Promise<OidcSettings> {
  const [row] = await db.select().from(settings).where(eq(settings.name, OIDC))
  return row ? masked(row.content as OidcSettings) : { enabled: false }
}

/**
 * Replaces the OIDC settings. Empty strings count as not set; the masked secret keeps the stored one;
 * `defaultRootRoleId` must be a root role, and its name becomes `defaultRootRole`.
 * Emits `setting-created` the first time, `setting-updated` after, neither with the secret.
 */
export async function saveOidcSettings(db: Db, caller: Author, input: OidcSettingsInput): Promise<OidcSettings> {
  const { actor, now } = caller
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(settings).where(eq(settings.name, OIDC)).for('update')
    const before = row?.content as OidcSettings | undefined
    const next: OidcSettings = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== '' && value !== undefined))
    if (next.secret === SECRET_MASK) {
      if (before?.secret) next.secret = before.secret
      else delete next.secret
    }
    if (next.enabled === true && !next.secret) {
      throw validationError('secret is required when enabled is true: there is no stored secret to keep', [{ path: 'body.secret', message: 'required' }])
    }
    if (next.emailDomains) next.emailDomains = next.emailDomains.split(',').map((d) => d.trim().toLowerCase()).join(',')
    if (next.defaultRootRoleId !== undefined) {
      const [role] = await tx.select().from(roles).where(and(eq(roles.id, next.defaultRootRoleId), eq(roles.type, 'root')))
      if (!role) throw validationError(`defaultRootRoleId ${next.defaultRootRoleId} is not a root role`, [{ path: 'body.defaultRootRoleId', message: 'no root role has this id' }])
      next.defaultRootRole = role.name as OidcSettings['defaultRootRole']
    }
    await tx
      .insert(settings)
      .values({ name: OIDC, content: next, updatedAt: now })
      .onConflictDoUpdate({ target: settings.name, set: { content: next, updatedAt: now } })
    const data = { id: OIDC, ...forEvent(next), secretChanged: (next.secret ?? null) !== (before?.secret ?? null) }
    await recordEvents(tx, actor, now, [
      before ? { type: 'setting-updated', data, preData: { id: OIDC, ...forEvent(before) } } : { type: 'setting-created', data },
    ])
    return masked(next)
  })
}
