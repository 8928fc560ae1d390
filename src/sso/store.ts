import { and, eq, inArray, isNull, or, sql, type SQL } from 'drizzle-orm'
import { groups, groupUsers, roles, users } from '../../schema/index.js'
import { batch, queryRows, together, untilUnchanged, type Db } from '../db.js'
import { SYSTEM_ACTOR } from '../core/principal.js'
import { guardPassed, recordEvents } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import { userEventData } from '../users/store.js'
import { isEmail, normalEmail } from '../users/schemas.js'
import { newGuardedSession, newSession } from '../auth/sessions.js'
import type { OidcSettings } from '../auth-settings/schemas.js'
import { SignInRefused, type FinishedSignIn } from './oidc.js'

type UserRow = typeof users.$inferSelect

/** The root role of auto-created users when the settings name none: Unleash's (Editor). */
const DEFAULT_ROOT_ROLE = 'Editor'

/** Whether `email` is of one of the settings' domains (the part after the last `@`, exactly); no list: any. */
export function domainAllowed(settings: OidcSettings, email: string): boolean {
  const domains = (settings.emailDomains ?? '').split(',').map((d) => d.trim().toLowerCase()).filter(Boolean)
  return domains.length === 0 || domains.includes(email.slice(email.lastIndexOf('@') + 1).toLowerCase())
}

/** Who group sync records as having made the memberships it makes (Unleash's `SSO_SYNC_USER`): only those it removes. */
export const SSO_SYNC_CREATED_BY = 'SSO'

/** The ids of the groups whose SSO mappings hold one of `names`, as text (`1,4`): read, and checked again by the write. */
const matchingGroupsText = (names: string[]) =>
  sql<string>`(select coalesce(string_agg(id::text, ',' order by id), '') from ${groups} where ${groups.mappingsSso} && ${sql.param(names)}::text[])`

/** The user's memberships of groups that have SSO mappings (the only ones sync touches), as text: checked again by the write. */
const syncedMembershipsText = (userId: SQL | number) =>
  sql<string>`(select coalesce(string_agg(gu.group_id::text || ':' || coalesce(gu.created_by, ''), ',' order by gu.group_id), '')
    from ${groupUsers} gu join ${groups} g on g.id = gu.group_id where gu.user_id = ${userId} and cardinality(g.mappings_sso) > 0)`
/** The same memberships as rows: which group, and whether sync made it. */
const syncedMembershipsJson = (userId: SQL) =>
  sql<unknown>`(select coalesce(json_agg(json_build_object('groupId', gu.group_id, 'bySync', gu.created_by = ${SSO_SYNC_CREATED_BY}) order by gu.group_id), '[]')
    from ${groupUsers} gu join ${groups} g on g.id = gu.group_id where gu.user_id = ${userId} and cardinality(g.mappings_sso) > 0)`

const idsOf = (text: string) => (text === '' ? [] : text.split(',').map(Number))
const parsed = <T>(value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as T

/**
 * The audit of a first single sign-on binding an existing account to the provider's identity: `user-updated`, the
 * account before and after, with the provider's issuer (never the subject nor a token). An admin may undo it
 * (DELETE /api/admin/user-admin/{id}/sso).
 */
const boundEvent = (before: typeof users.$inferSelect, issuer: string): NewEvent => ({ type: 'user-updated', data: { ...userEventData(before), ssoIssuer: issuer }, preData: { ...userEventData(before), ssoIssuer: null } })

/**
 * What group sync changes for a user signing in with the provider's `names` (Unleash's syncExternalGroups): they join
 * every group whose mappings hold one of the names that they are not in (`group-user-added`), and leave the groups with
 * mappings that hold none of them, where sync had made them a member (`group-user-removed`); a membership an admin
 * made stays, and a group without mappings is never touched. Both events by the system, `{ groupId, userId }`.
 */
function groupChanges(userId: number, matching: number[], memberships: { groupId: number; bySync: boolean }[]) {
  const added = matching.filter((id) => !memberships.some((m) => m.groupId === id))
  const removed = memberships.filter((m) => m.bySync && !matching.includes(m.groupId)).map((m) => m.groupId)
  const events: NewEvent[] = [
    ...added.map((groupId): NewEvent => ({ type: 'group-user-added', data: { groupId, userId } })),
    ...removed.map((groupId): NewEvent => ({ type: 'group-user-removed', preData: { groupId, userId } })),
  ]
  return { added, removed, events }
}

const addSynced = (userId: number, added: number[], now: Date) =>
  sql`insert into ${groupUsers} (group_id, user_id, created_by, joined_at)
    select g, ${userId}::int, ${SSO_SYNC_CREATED_BY}::text, ${now.toISOString()}::timestamptz from unnest(${sql.param(added)}::int[]) g where ${guardPassed}
    on conflict do nothing`
const removeSynced = (userId: number, removed: number[]) =>
  sql`delete from ${groupUsers} where user_id = ${userId}::int and group_id = any(${sql.param(removed)}::int[]) and created_by = ${SSO_SYNC_CREATED_BY} and ${guardPassed}`

const MAX_EMAIL_LENGTH = 254
const MAX_NAME_LENGTH = 255
const CONTROLS = /[\p{Cc}\p{Cf}]/gu

/**
 * The provider's e-mail address as Flagpost matches and stores it, or a refusal: the same shape and length as every other
 * way of making a user, no control character, and no letter that only lower-cases into ASCII (the Kelvin sign "\u212a"
 * becomes "k"): such an address is another mailbox at the provider, which would otherwise land in the account of the one
 * it folds into.
 */
export function providerEmail(given: string | undefined): string {
  const raw = given?.trim()
  if (!raw) throw new SignInRefused('The provider did not say your e-mail address: Flagpost signs people in by e-mail (the client must be allowed the email scope)')
  const email = normalEmail(raw)
  if (email.length > MAX_EMAIL_LENGTH || !isEmail(raw)) {
    throw new SignInRefused('The provider gave an e-mail address Flagpost cannot take as an account\'s (its form, its length or its characters): ask an admin')
  }
  return email
}

/** The provider's display name, without control characters and at most MAX_NAME_LENGTH characters; none when empty. */
export function providerName(given: string | undefined | null): string | null {
  const name = given?.replace(CONTROLS, '').trim().slice(0, MAX_NAME_LENGTH)
  return name ? name : null
}

/**
 * Signs in the person the provider vouched for. The e-mail must be verified (`email_verified` true, or absent when the
 * settings say the provider releases only verified addresses) and of a domain in `emailDomains` (if set), for every
 * user. The account is found by the identity bound to it (the ID token's `iss` and `sub`), else by e-mail (any case):
 * an account bound to another identity is refused, and so is an unbound one made through an invite link
 * (`email_unproven`): nobody vouched for its e-mail, so whoever made it could be waiting for its owner to sign in
 * (pre-hijacking). An unbound account an admin made (the admin gave the address) is bound to the identity at this first
 * sign-in, whether or not its holder has since set a password (a welcome or reset link, their own change). An unknown e-mail is created, bound, with the settings' default root
 * role when `autoCreate` is on (`user-created`, by the system), and refused with a message otherwise. The session
 * keeps the provider's ID token (the hint of single sign-out).
 * With `groups` (group syncing on, the claim there), their group memberships follow them (see groupChanges) in the
 * same statement as the session, and `groupsChanged` says whether any did (so remembered principals are forgotten).
 * Existing: a read (a binding first, made only while the account is still unbound), then one batch, or one statement
 * made only while the memberships and the matching groups are as read; created: a read (the role, the id, the matching
 * groups), then one statement with the user, its events and the session, made only while the matching groups are as
 * read. Either is tried again from a fresh read otherwise.
 */
export async function signInWithIdentity(db: Db, settings: OidcSettings, signedIn: FinishedSignIn, now: Date) {
  const { identity, idToken, groups: names } = signedIn
  const email = providerEmail(identity.email)
  if (identity.emailVerified === false) throw new SignInRefused(`The provider says your e-mail address ${email} is not verified: verify it there, then sign in again`)
  if (identity.emailVerified !== true && settings.emailVerifiedByProvider !== true) {
    throw new SignInRefused(
      `The provider did not say your e-mail address ${email} is verified (no email_verified claim): an admin may switch on "the provider verifies e-mail addresses" in the single sign-on settings if it does`,
    )
  }
  if (!domainAllowed(settings, email)) throw new SignInRefused(`E-mail addresses of ${email.slice(email.lastIndexOf('@') + 1)} do not sign in here (allowed: ${settings.emailDomains}): ask an admin`)
  const { issuer, subject } = identity
  const boundHere = and(eq(users.ssoIssuer, issuer), eq(users.ssoSubject, subject))
  return untilUnchanged('The user', async () => {
    const [[found], [matched]] = await together(db, [
      (q) =>
        q
          .select({
            user: users,
            memberships: names ? syncedMembershipsJson(sql`${users.id}`) : sql<unknown>`'[]'::json`,
            membershipsText: names ? syncedMembershipsText(sql`${users.id}`) : sql<string>`''`,
          })
          .from(users)
          // A service account never signs in (it has no e-mail address either).
          .where(and(or(boundHere, sql`lower(${users.email}) = ${email}`), isNull(users.deletedAt), eq(users.isService, false)))
          // The account bound to this identity wins over another with its current e-mail.
          .orderBy(sql`(${users.ssoIssuer} = ${issuer} and ${users.ssoSubject} = ${subject}) is true desc`)
          .limit(1),
      (q) => (names ? queryRows<{ ids: string }>(q, sql`select ${matchingGroupsText(names)} as ids`) : Promise.resolve([{ ids: '' }])),
    ])
    const matchingText = matched!.ids
    if (found) {
      const userId = found.user.id
      const at = now.toISOString()
      const bound = found.user.ssoIssuer === issuer && found.user.ssoSubject === subject
      if (!bound && found.user.ssoSubject !== null) {
        throw new SignInRefused(`The Flagpost account with the e-mail address ${email} belongs to another identity at the provider (or another provider): ask an admin`)
      }
      if (!bound && found.user.emailUnproven) {
        throw new SignInRefused(
          `A Flagpost account with the e-mail address ${email} was made through an invite link, where nobody proved the address, and single sign-on does not take over such an account: sign in with its password, or ask an admin to remove it and sign in again`,
        )
      }
      /** The first sign-in binds the identity with the sign-in's own update, only while the account is still unbound, with an address an admin or the provider gave, and the identity bound nowhere else. */
      const bindAndTouch = (alsoWhile: SQL) => sql`update ${users} set sso_issuer = ${issuer}::text, sso_subject = ${subject}::text, login_attempts = 0, seen_at = ${at}::timestamptz
        where id = ${userId}::int and deleted_at is null and sso_subject is null and not email_unproven
          and not exists (select from ${users} u where u.sso_issuer = ${issuer}::text and u.sso_subject = ${subject}::text) and ${alsoWhile}
        returning id`
      const changes = groupChanges(userId, idsOf(matchingText), names ? parsed<{ groupId: number; bySync: boolean }[]>(found.memberships) : [])
      const user = { ...found.user, loginAttempts: 0, seenAt: now, ssoIssuer: issuer, ssoSubject: subject }
      if (changes.events.length === 0) {
        if (bound) {
          const started = await newSession(userId, now, idToken)
          await batch(db, [(q) => q.update(users).set({ loginAttempts: 0, seenAt: now }).where(eq(users.id, userId)), started.dropExpired, started.store])
          return { user, session: started.session, created: false, groupsChanged: false }
        }
        const started = await newGuardedSession(userId, now, idToken)
        const made = await recordEvents(db, SYSTEM_ACTOR, now, [boundEvent(found.user, issuer)], { alongside: [bindAndTouch(sql`true`)], guarded: true, unguarded: [started.dropExpired, started.insert] })
        return made > 0 ? { user, session: started.session, created: false, groupsChanged: false } : undefined
      }
      const started = await newGuardedSession(userId, now, idToken)
      const asRead = sql`${syncedMembershipsText(userId)} = ${found.membershipsText}::text and ${matchingGroupsText(names!)} = ${matchingText}::text`
      const written = await recordEvents(db, SYSTEM_ACTOR, now, bound ? changes.events : [boundEvent(found.user, issuer), ...changes.events], {
        alongside: [bound ? sql`select 1 where ${asRead}` : bindAndTouch(asRead)],
        guarded: true,
        unguarded: [
          ...(bound ? [sql`update ${users} set login_attempts = 0, seen_at = ${at}::timestamptz where id = ${userId}::int and ${guardPassed}`] : []),
          started.dropExpired,
          started.insert,
          removeSynced(userId, changes.removed),
          addSynced(userId, changes.added, now),
        ],
      })
      return written > 0 ? { user, session: started.session, created: false, groupsChanged: true } : undefined
    }
    if (!settings.autoCreate) throw new SignInRefused(`There is no Flagpost user with the e-mail address ${email}, and users are not created on first sign-in here: ask an admin to add you`)
    const role = settings.defaultRootRoleId !== undefined ? eq(roles.id, settings.defaultRootRoleId) : eq(roles.name, settings.defaultRootRole ?? DEFAULT_ROOT_ROLE)
    const [ids] = await db
      .select({ roleId: roles.id, userId: sql<number>`nextval(pg_get_serial_sequence('users', 'id'))::int` })
      .from(roles)
      .where(and(role, inArray(roles.type, ['root', 'root-custom'])))
    if (!ids) throw new SignInRefused('The root role for new users in the single sign-on settings no longer exists: ask an admin to choose another')
    const row: UserRow = { id: ids.userId, username: null, email, name: providerName(identity.name), passwordHash: null, rootRoleId: ids.roleId, loginAttempts: 0, isService: false, seenAt: now, createdAt: now, deletedAt: null, emailUnproven: false, ssoIssuer: issuer, ssoSubject: subject }
    const changes = groupChanges(row.id, idsOf(matchingText), [])
    const started = await newGuardedSession(row.id, now, idToken)
    const at = now.toISOString()
    // The user is made only while the groups it joins still match, so its events and memberships are all or none.
    const insertUser = sql`insert into ${users} (id, email, name, root_role_id, login_attempts, is_service, seen_at, created_at, sso_issuer, sso_subject)
      select ${row.id}::int, ${email}::text, ${row.name}::text, ${row.rootRoleId}::int, 0, false, ${at}::timestamptz, ${at}::timestamptz, ${issuer}::text, ${subject}::text
      where ${names && changes.added.length > 0 ? sql`${matchingGroupsText(names)} = ${matchingText}::text` : sql`true`}
      on conflict do nothing returning id`
    const written = await recordEvents(db, SYSTEM_ACTOR, now, [{ type: 'user-created', data: userEventData(row) }, ...changes.events], {
      alongside: [insertUser],
      guarded: true,
      unguarded: [started.insert, addSynced(row.id, changes.added, now)],
    })
    return written > 0 ? { user: row, session: started.session, created: true, groupsChanged: changes.events.length > 0 } : undefined
  })
}
