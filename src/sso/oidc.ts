import * as oauth from 'oauth4webapi'
import { isProviderUrl, type OidcSettings } from '../auth-settings/schemas.js'
import { groupsAt } from '../auth-settings/group-json-path.js'

/**
 * The OpenID Connect protocol of single sign-on, through oauth4webapi (Web APIs only: the same code on Node and
 * Workers): discovery, the authorization-code request with PKCE, `state` and `nonce`, and the ID token checked
 * (issuer, audience, expiry, nonce, and its signature against the provider's JWKS).
 */

const WELL_KNOWN = '/.well-known/openid-configuration'
/** A provider's discovery document is used this long before it is asked again. */
const DISCOVERY_TTL_MS = 10 * 60_000
const TIMEOUT_MS = 10_000

/** Per app (per isolate on Workers): discovery documents by URL, and each issuer's keys (oauth4webapi's JWKS cache). */
export interface OidcCache {
  discovery: Map<string, { as: oauth.AuthorizationServer; until: number }>
  jwks: Map<string, oauth.JWKSCacheInput>
}

export const createOidcCache = (): OidcCache => ({ discovery: new Map(), jwks: new Map() })

/** What the flow keeps in the browser between the two legs (an HttpOnly cookie): checked when the provider answers. */
export interface PendingSignIn {
  state: string
  nonce: string
  codeVerifier: string
}

/** Who the provider says signed in. */
export interface ProviderIdentity {
  /** The ID token's `iss` and `sub`: together, the person at the provider (an account is bound to them). */
  issuer: string
  subject: string
  email?: string
  emailVerified?: boolean
  name?: string
}

/** What the second leg answers: who signed in, the ID token (the hint of a later sign-out) and their groups when synced. */
export interface FinishedSignIn {
  identity: ProviderIdentity
  idToken: string
  /** The groups found at `groupJsonPath` when group syncing is on; undefined when off or when the claims hold none there. */
  groups?: string[]
}

/** A sign-in the provider or its answer made impossible, with a message for the person signing in. */
export class SignInRefused extends Error {}

/** The configured URL is the discovery document itself or the issuer it hangs off. */
const issuerOf = (discoverUrl: string) => new URL(discoverUrl.endsWith(WELL_KNOWN) ? discoverUrl.slice(0, -WELL_KNOWN.length) : discoverUrl.replace(/\/+$/, ''))

/** Plain http is allowed only to a loopback provider, which the settings alone accept (auth-settings/schemas.ts). */
const http = (url: URL) => ({ [oauth.allowInsecureRequests]: url.protocol === 'http:' })

async function discover(cache: OidcCache, discoverUrl: string): Promise<oauth.AuthorizationServer> {
  const cached = cache.discovery.get(discoverUrl)
  if (cached && cached.until > Date.now()) return cached.as
  const issuer = issuerOf(discoverUrl)
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', signal: AbortSignal.timeout(TIMEOUT_MS), ...http(issuer) })
  const as = await oauth.processDiscoveryResponse(issuer, response)
  if (cache.discovery.size >= 100) cache.discovery.clear()
  cache.discovery.set(discoverUrl, { as, until: Date.now() + DISCOVERY_TTL_MS })
  return as
}

/** The client, judged by the app's clock (`now`): the ID token's expiry and issue time are checked against it. */
const clientOf = (settings: OidcSettings, now: Date): oauth.Client => ({
  client_id: settings.clientId!,
  id_token_signed_response_alg: settings.idTokenSigningAlgorithm ?? 'RS256',
  [oauth.clockSkew]: Math.round((now.getTime() - Date.now()) / 1000),
})

/** client_secret_basic unless the provider lists only client_secret_post. */
function clientAuthOf(as: oauth.AuthorizationServer, secret: string): oauth.ClientAuth {
  const methods = as.token_endpoint_auth_methods_supported
  return methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post') ? oauth.ClientSecretPost(secret) : oauth.ClientSecretBasic(secret)
}

/** The first leg: where to send the browser, and what to keep until the provider sends it back. */
export async function startSignIn(cache: OidcCache, settings: OidcSettings, redirectUri: string): Promise<{ location: string; pending: PendingSignIn }> {
  const as = await discover(cache, settings.discoverUrl!)
  if (!as.authorization_endpoint) throw new SignInRefused('The provider has no authorization endpoint in its discovery document')
  const pending: PendingSignIn = { state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce(), codeVerifier: oauth.generateRandomCodeVerifier() }
  const url = new URL(as.authorization_endpoint)
  const scope = ['openid', 'email', 'profile', ...(settings.addGroupsScope ? ['groups'] : [])].join(' ')
  const parameters: Record<string, string> = {
    client_id: settings.clientId!,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: 'S256',
    ...(settings.acrValues ? { acr_values: settings.acrValues } : {}),
  }
  for (const [key, value] of Object.entries(parameters)) url.searchParams.set(key, value)
  return { location: url.toString(), pending }
}

/**
 * The second leg: checks the provider's answer against what the first leg kept (`state`), redeems the code (with
 * the PKCE verifier and the client secret), checks the ID token (issuer, audience, expiry, `nonce`, signature)
 * and answers who signed in; the e-mail comes from the ID token, else from the UserInfo endpoint, and so do the groups
 * when they are synced (at `groupJsonPath`). UserInfo is asked once at most, only for what the ID token lacks.
 */
export async function finishSignIn(cache: OidcCache, settings: OidcSettings, redirectUri: string, callback: URL, pending: PendingSignIn, now: Date): Promise<FinishedSignIn> {
  try {
    const as = await discover(cache, settings.discoverUrl!)
    const client = clientOf(settings, now)
    const insecure = http(new URL(as.issuer))
    const parameters = oauth.validateAuthResponse(as, client, callback.searchParams, pending.state)
    const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuthOf(as, settings.secret!), parameters, redirectUri, pending.codeVerifier, {
      signal: AbortSignal.timeout(TIMEOUT_MS),
      ...insecure,
    })
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: pending.nonce, requireIdToken: true })
    const jwks = cache.jwks.get(as.issuer) ?? {}
    await oauth.validateApplicationLevelSignature(as, response, { [oauth.jwksCache]: jwks, signal: AbortSignal.timeout(TIMEOUT_MS), ...insecure })
    cache.jwks.set(as.issuer, jwks)
    const claims = oauth.getValidatedIdTokenClaims(tokens)!
    const groupPath = settings.enableGroupSyncing ? settings.groupJsonPath : undefined
    let identity = identityOf(claims.iss, claims.sub, claims)
    let groups = groupPath ? groupsAt(claims, groupPath) : undefined
    if ((identity.email === undefined || (groupPath && groups === undefined)) && as.userinfo_endpoint) {
      const answer = await oauth.userInfoRequest(as, client, tokens.access_token, { signal: AbortSignal.timeout(TIMEOUT_MS), ...insecure })
      const userInfo = await oauth.processUserInfoResponse(as, client, claims.sub, answer)
      if (identity.email === undefined) identity = identityOf(claims.iss, claims.sub, userInfo)
      if (groupPath && groups === undefined) groups = groupsAt(userInfo, groupPath)
    }
    return { identity, idToken: tokens.id_token!, ...(groups ? { groups } : {}) }
  } catch (error) {
    throw new SignInRefused(describeFailure(error))
  }
}

function identityOf(issuer: string, subject: string, claims: Record<string, unknown>): ProviderIdentity {
  const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)
  const email = text(claims.email)
  const name = text(claims.name) ?? ([text(claims.given_name), text(claims.family_name)].filter(Boolean).join(' ') || undefined)
  const emailVerified = verifiedClaim(claims.email_verified)
  return { issuer, subject, ...(email ? { email } : {}), ...(emailVerified !== undefined ? { emailVerified } : {}), ...(name ? { name } : {}) }
}

/**
 * `email_verified` as a boolean, or the strings "true" / "false" in any case (Cognito sends strings): a "false" read
 * as absent would pass when the provider is trusted to verify addresses. Anything else is refused, never guessed.
 */
function verifiedClaim(value: unknown): boolean | undefined {
  if (value === undefined || value === null || typeof value === 'boolean') return value ?? undefined
  const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined
  if (text === 'true') return true
  if (text === 'false') return false
  throw new SignInRefused(`The provider's email_verified claim is neither true nor false (${JSON.stringify(value).slice(0, 40)}): the sign-in is refused`)
}

/** What the person signing in is told (and the log says) when the provider's answer is refused. */
function describeFailure(error: unknown): string {
  if (error instanceof SignInRefused) return error.message
  if (error instanceof oauth.AuthorizationResponseError) return `The provider refused the sign-in: ${error.error_description ?? error.error}`
  if (error instanceof oauth.ResponseBodyError) return `The provider refused to complete the sign-in: ${error.error_description ?? error.error}`
  if (error instanceof oauth.OperationProcessingError) {
    if (error.message.includes('"state"')) return 'The answer from the provider is not for the sign-in this browser started (its state differs): start again'
    if (error.code === oauth.JWT_TIMESTAMP_CHECK) return `The provider's ID token is not valid now (${error.message}): check this server's and the provider's clocks, then start again`
    return `The provider's ID token was refused: ${error.message}`
  }
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'TypeError')) return `Could not reach the OpenID Connect provider: ${error.message}`
  return `The sign-in with the provider failed: ${error instanceof Error ? error.message : String(error)}`
}

/**
 * Where the browser goes to end its session at the provider too (RP-initiated logout): the provider's
 * `end_session_endpoint` with the session's ID token as `id_token_hint`, the client id, and where the provider sends
 * the browser back (`postLogoutRedirectUri`, which must be registered there). Undefined when the provider has none.
 */
export async function endSessionUrl(cache: OidcCache, settings: OidcSettings, idToken: string, postLogoutRedirectUri: string): Promise<string | undefined> {
  const as = await discover(cache, settings.discoverUrl!)
  // The console opens it as it is: only an https address (http to a loopback provider), never a javascript: one.
  if (!as.end_session_endpoint || !isProviderUrl(as.end_session_endpoint)) return undefined
  const url = new URL(as.end_session_endpoint)
  url.searchParams.set('id_token_hint', idToken)
  url.searchParams.set('client_id', settings.clientId!)
  url.searchParams.set('post_logout_redirect_uri', postLogoutRedirectUri)
  return url.toString()
}

/** Whether the discovery URL of stored settings can be reached: the first leg's errors, for the sign-in page. */
export const describeStartFailure = describeFailure
