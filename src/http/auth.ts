import type { MiddlewareHandler } from 'hono'
import { findTokenPrincipal } from '../api-tokens/store.js'
import { findSessionPrincipal, sessionIdOf } from '../auth/sessions.js'
import { ApiError, noAccess } from './errors.js'
import type { AppEnv } from './context.js'
import { ADMIN_TOKEN_USER_ID, SYSTEM_USER_ID, type Actor } from '../events/store.js'

export type Principal =
  | { kind: 'admin-token'; tokenId: number; name: string; rootRole: 'Admin' }
  | { kind: 'client-token' | 'frontend-token'; tokenId: number; name: string; projects: string[]; environment: string }
  /** A signed-in user (session cookie) or a user's personal access token. `projectRoles`: project id -> role names there. */
  | { kind: 'user'; userId: number; name: string; rootRole: string; projectRoles?: ReadonlyMap<string, readonly string[]> }

export function actorOf(principal: Principal): Actor {
  if (principal.kind === 'user') return { createdBy: principal.name, createdByUserId: principal.userId }
  // Admin tokens share Unleash's fixed id (their name tells them apart); SDK tokens act only through the system's background work.
  return { createdBy: principal.name, createdByUserId: principal.kind === 'admin-token' ? ADMIN_TOKEN_USER_ID : SYSTEM_USER_ID }
}

/** The credential of a request: the raw Authorization header value, or what follows `Bearer `. */
export function credentialOf(header: string | undefined): string | undefined {
  const value = header?.trim()
  if (!value) return undefined
  return /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, '').trim() || undefined : value
}

const authenticationRequired = () =>
  new ApiError(
    'AuthenticationRequired',
    'You must sign in (POST /auth/simple/login) or provide a valid API token or personal access token in the Authorization header to access this resource',
  )

/**
 * Resolves the caller of an /api/admin route: an API token or personal access token in the
 * Authorization header, else a session cookie. A header that is present is never overridden by
 * a cookie. Client and frontend tokens are refused here.
 */
export const authenticateAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const credential = credentialOf(c.req.header('authorization'))
  const sessionId = credential ? undefined : sessionIdOf(c)
  const principal = credential
    ? await findTokenPrincipal(c.var.db, credential, c.var.clock())
    : sessionId
      ? await findSessionPrincipal(c.var.db, sessionId, c.var.clock())
      : undefined
  if (!principal) throw authenticationRequired()
  if (principal.kind === 'client-token' || principal.kind === 'frontend-token') {
    const kind = principal.kind === 'client-token' ? 'client' : 'frontend'
    throw noAccess(`A ${kind} token cannot be used on the admin API: you need permission=ADMIN (an admin token or a user's personal access token)`)
  }
  c.set('principal', principal)
  await next()
}

/** A stable key for what belongs to the caller (favorites): `user:<id>` or `token:<id>`. */
export function principalKey(principal: Principal): string {
  return principal.kind === 'user' ? `user:${principal.userId}` : `token:${principal.tokenId}`
}
