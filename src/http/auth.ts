import type { MiddlewareHandler } from 'hono'
import type { Db } from '../db.js'
import { ApiError, noAccess } from '../core/errors.js'
import { callerOf, credentialOf, type Principal } from '../core/principal.js'
import type { AppContext, AppEnv } from './context.js'

/** How the admin API finds the caller: given by createApp, so this layer knows no token or session store. */
export interface AdminResolvers {
  /** An API token or a personal access token, from the Authorization header. */
  token(db: Db, credential: string, now: Date): Promise<Principal | undefined>
  /** A signed-in browser's session, from its cookie (undefined without one). */
  session(c: AppContext, now: Date): Promise<Principal | undefined>
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
export function authenticateAdmin(resolve: AdminResolvers): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const now = c.var.clock()
    const credential = credentialOf(c.req.header('authorization'))
    const principal = credential ? await resolve.token(c.var.db, credential, now) : await resolve.session(c, now)
    if (!principal) throw authenticationRequired()
    if (principal.kind === 'client-token' || principal.kind === 'frontend-token') {
      const kind = principal.kind === 'client-token' ? 'client' : 'frontend'
      throw noAccess(`A ${kind} token cannot be used on the admin API: you need permission=ADMIN (an admin token or a user's personal access token)`)
    }
    authenticated(c, principal, now)
    await next()
  }
}

/** Sets the request's principal and its caller. */
export function authenticated(c: AppContext, principal: Principal, now: Date = c.var.clock()): void {
  c.set('principal', principal)
  c.set('caller', callerOf(principal, now))
}
