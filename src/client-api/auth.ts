import type { Context, MiddlewareHandler } from 'hono'
import { lookUpToken } from '../api-tokens/store.js'
import { hashSecret } from '../api-tokens/secrets.js'
import { together } from '../db.js'
import { readRevision } from './revision.js'
import { credentialOf, type Principal, type ResolvedPrincipal } from '../core/principal.js'
import type { AppEnv } from '../http/context.js'
import { authenticated } from '../http/auth.js'
import { ApiError, loggable, noAccess } from '../core/errors.js'

export type SdkPrincipal = Extract<Principal, { kind: 'client-token' | 'frontend-token' | 'admin-token' }>

const authenticationRequired = () =>
  new ApiError('AuthenticationRequired', 'You must provide a valid API token in the Authorization header to access this resource (a client token for /api/client, a frontend token for /api/frontend, either for /ofrep)')

/**
 * The token of an SDK request, remembered for a few seconds (tokenTtlMs) so a poll does not look it
 * up each time, never past its expiry; writes through this process (deleting a token, changing its expiry)
 * forget every remembered token.
 * With stale-while-revalidate (Workers), a token past that is still accepted while it is looked up
 * again after the response, so a poll does not wait for it; a deleted token is refused from then on.
 * Only the Authorization header counts here: SDK routes never accept a session cookie.
 */
async function principalOf(c: Context<AppEnv>): Promise<Principal> {
  const credential = credentialOf(c.req.header('authorization'))
  if (!credential) throw authenticationRequired()
  const tokens = c.get('sdk').tokens
  const now = c.get('clock')()
  const remembered = tokens.lookup(credential)
  // A remembered token is never served past its expiry: it is looked up again (and refused).
  if (remembered && !expired(remembered.value, now)) {
    if (!remembered.fresh && tokens.claimRecheck(credential)) recheckAfterResponse(c, credential)
    return remembered.value.principal
  }
  const sdk = c.get('sdk')
  const hash = await hashSecret(credential)
  // An isolate that knows no revision (a cold one) reads it with the token, in one round trip.
  const generation = sdk.revisions.generation
  const revisionUnknown = sdk.revisions.known() === undefined
  const [resolved, revision] = await together(c.get('db'), [(q) => lookUpToken(q, hash, now), (q) => (revisionUnknown ? readRevision(q) : Promise.resolve(undefined))])
  if (revision) sdk.revisions.observe(revision, generation)
  if (!resolved) throw authenticationRequired()
  // Remembered only if no change (a token deleted, say) was seen while it was read: a read from before the change is not kept.
  if (generation === sdk.revisions.generation) tokens.set(credential, resolved)
  return resolved.principal
}

const expired = (resolved: ResolvedPrincipal, now: Date) => resolved.expiresAt !== null && resolved.expiresAt <= now

function recheckAfterResponse(c: Context<AppEnv>, credential: string): void {
  const sdk = c.get('sdk')
  const generation = sdk.revisions.generation
  const now = c.get('clock')()
  sdk.background(c, async (db) => {
    try {
      const resolved = await lookUpToken(db, await hashSecret(credential), now)
      // A write through this process meanwhile forgot every token: what was read before it must not come back.
      if (generation !== sdk.revisions.generation) return
      if (resolved) sdk.tokens.set(credential, resolved)
      else sdk.tokens.delete(credential)
    } catch (error) {
      console.error('checking an SDK token again failed:', loggable(error))
    }
  })
}

/** `/api/client/*`: client (backend) tokens and admin tokens. Frontend tokens and users' tokens get 403. */
export const authenticateClient: MiddlewareHandler<AppEnv> = async (c, next) => {
  const principal = await principalOf(c)
  if (principal.kind === 'frontend-token') throw noAccess('A frontend token cannot be used on the client API: use a client (backend) token')
  if (principal.kind === 'user') throw noAccess('The client API needs a client (backend) token or an admin API token, not a personal access token')
  authenticated(c, principal)
  await next()
}

/** `/api/frontend/*`: frontend tokens only. Client and admin tokens get 403 (they must never reach a browser). */
export const authenticateFrontend: MiddlewareHandler<AppEnv> = async (c, next) => {
  const principal = await principalOf(c)
  if (principal.kind !== 'frontend-token') {
    const what = principal.kind === 'client-token' ? 'A client (backend) token' : principal.kind === 'admin-token' ? 'An admin token' : 'A personal access token'
    throw noAccess(`${what} cannot be used on the frontend API: use a frontend token`)
  }
  authenticated(c, principal)
  await next()
}

/** `/ofrep/*` (OpenFeature's providers): client and frontend tokens, each with its own API's scope. Admin tokens and personal access tokens get 403. */
export const authenticateOfrep: MiddlewareHandler<AppEnv> = async (c, next) => {
  const principal = await principalOf(c)
  if (principal.kind !== 'client-token' && principal.kind !== 'frontend-token') throw noAccess('OpenFeature evaluations need a client token (servers) or a frontend token (browsers)')
  authenticated(c, principal)
  await next()
}

/** The principal an SDK route runs as (set by the middlewares above). */
export function sdkPrincipal(c: Context<AppEnv>): SdkPrincipal {
  const principal = c.get('principal')
  if (principal.kind === 'user') throw noAccess('This route needs an API token')
  return principal
}
