/**
 * Who makes a request and whom its changes are attributed to. The lowest layer: it imports nothing of
 * the app, and every feature uses it.
 */

export type Principal =
  | { kind: 'admin-token'; tokenId: number; name: string; rootRole: 'Admin' }
  | { kind: 'client-token' | 'frontend-token'; tokenId: number; name: string; projects: string[]; environment: string }
  /** A signed-in user (session cookie) or a user's personal access token: their own root role's name, and what they hold. */
  | { kind: 'user'; userId: number; name: string; rootRole: string; grants: Grants }

/**
 * What a caller holds at one level (instance-wide, or in one project): permission names, each alone when held in every
 * environment, or joined to one environment when held only there (see src/core/permissions.ts).
 */
export type HeldPermissions = ReadonlySet<string>

/** What a user holds: instance-wide (their root role and their groups'), and per project (their project roles and their groups'). */
export interface Grants {
  root: HeldPermissions
  /** Every project the user has a role in (directly or through a group), even one granting nothing: it makes them a member. */
  projects: ReadonlyMap<string, HeldPermissions>
  /** The projects where they hold the built-in Owner role (directly or through a group); `*` when it is their root role. */
  owns: ReadonlySet<string>
}

/** A credential resolved to its principal, with when the credential expires (null: never). */
export interface ResolvedPrincipal {
  principal: Principal
  expiresAt: Date | null
}

/** Who an audit event is attributed to: a name and a stable id, so the audit trail can be filtered by any actor. */
export interface Actor {
  createdBy: string
  createdByUserId: number
}

/** The ids Unleash gives actors that are not users: the system (start-up, background work) and every admin API token. */
export const SYSTEM_USER_ID = -1337
export const ADMIN_TOKEN_USER_ID = -42

export const SYSTEM_ACTOR: Actor = { createdBy: 'system', createdByUserId: SYSTEM_USER_ID }

export function actorOf(principal: Principal): Actor {
  if (principal.kind === 'user') return { createdBy: principal.name, createdByUserId: principal.userId }
  // Admin tokens share Unleash's fixed id (their name tells them apart); SDK tokens act only through the system's background work.
  return { createdBy: principal.name, createdByUserId: principal.kind === 'admin-token' ? ADMIN_TOKEN_USER_ID : SYSTEM_USER_ID }
}

/** A stable key for what belongs to the caller (favorites, change requests): `user:<id>` or `token:<id>`. */
export function principalKey(principal: Principal): string {
  return principal.kind === 'user' ? `user:${principal.userId}` : `token:${principal.tokenId}`
}

/**
 * The caller of one request, fixed when it is authenticated: who it is, whom its changes are attributed
 * to, its stable key, and the time every write of the request is stamped with.
 */
export interface Caller {
  principal: Principal
  actor: Actor
  key: string
  now: Date
}

/** Whom a write is attributed to, and when: what a store needs of its caller (background work has no principal). */
export type Author = Pick<Caller, 'actor' | 'now'>

export const callerOf = (principal: Principal, now: Date): Caller => ({ principal, actor: actorOf(principal), key: principalKey(principal), now })

/** The credential of a request: the raw Authorization header value, or what follows `Bearer `. */
export function credentialOf(header: string | undefined): string | undefined {
  const value = header?.trim()
  if (!value) return undefined
  return /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, '').trim() || undefined : value
}
