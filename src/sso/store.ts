import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import { roles, users } from '../../schema/index.js'
import { batch, untilUnchanged, type Db } from '../db.js'
import { SYSTEM_ACTOR } from '../core/principal.js'
import { recordEvents } from '../events/store.js'
import { userEventData } from '../users/store.js'
import { newSession, newSessionForNewUser } from '../auth/sessions.js'
import type { OidcSettings } from '../auth-settings/schemas.js'
import { SignInRefused, type ProviderIdentity } from './oidc.js'

type UserRow = typeof users.$inferSelect

/** The root role of auto-created users when the settings name none: Unleash's (Editor). */
const DEFAULT_ROOT_ROLE = 'Editor'

/** Whether `email` is of one of the settings' domains (the part after the last `@`, exactly); no list: any. */
export function domainAllowed(settings: OidcSettings, email: string): boolean {
  const domains = (settings.emailDomains ?? '').split(',').map((d) => d.trim().toLowerCase()).filter(Boolean)
  return domains.length === 0 || domains.includes(email.slice(email.lastIndexOf('@') + 1).toLowerCase())
}

/**
 * Signs in the person the provider vouched for, as Unleash does: the user with that e-mail (any case) gets a new
 * session, as after a password; an unknown one is created first (`user-created`, by the system) with the settings'
 * default root role when `autoCreate` is on and the e-mail's domain is listed in `emailDomains` (the list restricts
 * creation only: existing users sign in from any domain), and refused with a message otherwise. An e-mail the
 * provider marks unverified is refused. Existing: a read, then one batch; created: a read (the role and the id), then
 * one statement with the user, its event and the session, tried again from a fresh read if the e-mail was taken since.
 */
export async function signInWithIdentity(db: Db, settings: OidcSettings, identity: ProviderIdentity, now: Date) {
  const email = identity.email?.toLowerCase()
  if (!email) throw new SignInRefused('The provider did not say your e-mail address: Flagpost signs people in by e-mail (the client must be allowed the email scope)')
  if (identity.emailVerified === false) throw new SignInRefused(`The provider says your e-mail address ${email} is not verified: verify it there, then sign in again`)
  return untilUnchanged('The user', async () => {
    const [found] = await db
      .select()
      .from(users)
      // A service account never signs in (it has no e-mail address either).
      .where(and(sql`lower(${users.email}) = ${email}`, isNull(users.deletedAt), eq(users.isService, false)))
    if (found) {
      const started = await newSession(found.id, now)
      const [[row]] = await batch(db, [(q) => q.update(users).set({ loginAttempts: 0, seenAt: now }).where(eq(users.id, found.id)).returning(), started.dropExpired, started.store])
      return { user: row!, session: started.session, created: false }
    }
    if (!settings.autoCreate) throw new SignInRefused(`There is no Flagpost user with the e-mail address ${email}, and users are not created on first sign-in here: ask an admin to add you`)
    if (!domainAllowed(settings, email)) throw new SignInRefused(`Users with e-mail addresses of ${email.slice(email.lastIndexOf('@') + 1)} are not created here (allowed: ${settings.emailDomains}): ask an admin to add you`)
    const role = settings.defaultRootRoleId !== undefined ? eq(roles.id, settings.defaultRootRoleId) : eq(roles.name, settings.defaultRootRole ?? DEFAULT_ROOT_ROLE)
    const [ids] = await db
      .select({ roleId: roles.id, userId: sql<number>`nextval(pg_get_serial_sequence('users', 'id'))::int` })
      .from(roles)
      .where(and(role, inArray(roles.type, ['root', 'root-custom'])))
    if (!ids) throw new SignInRefused('The root role for new users in the single sign-on settings no longer exists: ask an admin to choose another')
    const row: UserRow = { id: ids.userId, username: null, email, name: identity.name ?? null, passwordHash: null, rootRoleId: ids.roleId, loginAttempts: 0, isService: false, seenAt: now, createdAt: now, deletedAt: null }
    const started = await newSessionForNewUser(row.id, now)
    const written = await recordEvents(db, SYSTEM_ACTOR, now, [{ type: 'user-created', data: userEventData(row) }], {
      alongside: [db.insert(users).values(row).onConflictDoNothing().returning({ id: users.id })],
      guarded: true,
      unguarded: [started.insert],
    })
    return written > 0 ? { user: row, session: started.session, created: true } : undefined
  })
}
