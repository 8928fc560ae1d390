import type { MiddlewareHandler } from 'hono'
import { findTokenPrincipal } from '../api-tokens/store.js'
import { ApiError, noAccess } from './errors.js'
import type { AppEnv } from './context.js'
import type { Actor } from '../events/store.js'

export type Principal =
  | { kind: 'admin-token'; tokenId: number; name: string; rootRole: 'Admin' }
  | { kind: 'client-token' | 'frontend-token'; tokenId: number; name: string; projects: string[]; environment: string }
  | { kind: 'user'; userId: number; name: string; rootRole: string }

export function actorOf(principal: Principal): Actor {
  return principal.kind === 'user'
    ? { createdBy: principal.name, createdByUserId: principal.userId }
    : { createdBy: principal.name, createdByUserId: null }
}

/** The credential of a request: the raw Authorization header value, or what follows `Bearer `. */
export function credentialOf(header: string | undefined): string | undefined {
  const value = header?.trim()
  if (!value) return undefined
  return /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, '').trim() || undefined : value
}

const authenticationRequired = () =>
  new ApiError('AuthenticationRequired', 'You must provide a valid API token in the Authorization header to access this resource')

/** Resolves the caller of an /api/admin route; client and frontend tokens are refused there. */
export const authenticateAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const credential = credentialOf(c.req.header('authorization'))
  if (!credential) throw authenticationRequired()
  const principal = await findTokenPrincipal(c.var.db, credential, c.var.clock())
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
