import type { MiddlewareHandler } from 'hono'
import { ApiError, noAccess } from '../core/errors.js'
import { callerOf, credentialOf, type Principal, type ResolvedPrincipal } from '../core/principal.js'
import type { AppContext, AppEnv } from './context.js'

/** How the admin API finds the caller: given by createApp, so this layer knows no token or session store. */
export interface AdminResolvers {
  /** An API token or a personal access token, from the Authorization header. */
  token(c: AppContext, credential: string, now: Date): Promise<ResolvedPrincipal | undefined>
  /** The id of a signed-in browser's session, from its cookie. */
  sessionId(c: AppContext): string | undefined
  /** The session's principal. */
  session(c: AppContext, sessionId: string, now: Date): Promise<ResolvedPrincipal | undefined>
  /** How a browser signs in (password, single sign-on), added to the 401 of a request that brought no token, as Unleash's. */
  signInOptions?(c: AppContext): Promise<Record<string, unknown>>
}

/**
 * Principals resolved from credentials, remembered for `ttlMs` (never past the credential's expiry), so a
 * burst of requests costs one look-up instead of one each. `forget` (after every write through this app
 * that may change who may do what: a deleted token, an ended session, a changed role) drops them all, and a
 * look-up that started before it is not remembered. Another app (process, isolate) sharing the database sees
 * such a change within `ttlMs`.
 */
export class PrincipalMemo {
  private readonly entries = new Map<string, { resolved: ResolvedPrincipal; until: number }>()
  private generation = 0

  constructor(readonly ttlMs: number) {}

  get(key: string, now: Date): ResolvedPrincipal | undefined {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    if (entry.until > Date.now() && !(entry.resolved.expiresAt && entry.resolved.expiresAt <= now)) return entry.resolved
    this.entries.delete(key)
    return undefined
  }

  /** Resolves `key` with `resolve` and remembers what it found, unless forgotten meanwhile. */
  async resolve(key: string, resolve: () => Promise<ResolvedPrincipal | undefined>): Promise<ResolvedPrincipal | undefined> {
    const generation = this.generation
    const resolved = await resolve()
    if (resolved && this.ttlMs > 0 && generation === this.generation) {
      if (this.entries.size >= 1_000) this.entries.clear()
      this.entries.set(key, { resolved, until: Date.now() + this.ttlMs })
    }
    return resolved
  }

  forget(): void {
    this.generation++
    this.entries.clear()
  }
}

/** FLAGPOST_PRINCIPAL_TTL_SECONDS: how long a resolved admin principal is remembered, 0 to 60 s (default 5 s). */
export function principalTtlMs(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined
  const seconds = Number(value)
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > 60) throw new Error(`FLAGPOST_PRINCIPAL_TTL_SECONDS must be a number of seconds from 0 to 60, got "${value}"`)
  return seconds * 1000
}

const authenticationRequired = (extra?: Record<string, unknown>) =>
  new ApiError(
    'AuthenticationRequired',
    'You must sign in (POST /auth/simple/login) or provide a valid API token or personal access token in the Authorization header to access this resource',
    undefined,
    extra,
  )

/**
 * Resolves the caller of an /api/admin route: an API token or personal access token in the
 * Authorization header, else a session cookie. A header that is present is never overridden by
 * a cookie. Client and frontend tokens are refused here.
 */
export function authenticateAdmin(resolve: AdminResolvers, memo: PrincipalMemo): MiddlewareHandler<AppEnv> {
  const remembered = async (key: string, now: Date, look: () => Promise<ResolvedPrincipal | undefined>) => memo.get(key, now) ?? (await memo.resolve(key, look))
  return async (c, next) => {
    const now = c.get('clock')()
    const credential = credentialOf(c.req.header('authorization'))
    const sessionId = credential ? undefined : resolve.sessionId(c)
    const resolved = credential
      ? await remembered(`token:${credential}`, now, () => resolve.token(c, credential, now))
      : sessionId
        ? await remembered(`session:${sessionId}`, now, () => resolve.session(c, sessionId, now))
        : undefined
    const principal = resolved?.principal
    // A browser (no Authorization header) is told how it may sign in; an API client gets the plain error.
    if (!principal) throw authenticationRequired(credential ? undefined : await resolve.signInOptions?.(c))
    if (principal.kind === 'client-token' || principal.kind === 'frontend-token') {
      const kind = principal.kind === 'client-token' ? 'client' : 'frontend'
      throw noAccess(`A ${kind} token cannot be used on the admin API: you need permission=ADMIN (an admin token or a user's personal access token)`)
    }
    authenticated(c, principal, now)
    await next()
  }
}

/** Sets the request's principal and its caller. */
export function authenticated(c: AppContext, principal: Principal, now: Date = c.get('clock')()): void {
  c.set('principal', principal)
  c.set('caller', callerOf(principal, now))
}
