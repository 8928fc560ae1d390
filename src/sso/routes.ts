import { createRoute } from '@hono/zod-openapi'
import * as z from '../http/zod.js'
import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import { createRouter } from '../http/openapi.js'
import { readOidcSettings, oidcUsable } from '../auth-settings/store.js'
import { publicBaseUrl } from '../users/accounts.js'
import { isHttps, setSessionCookie } from '../auth/sessions.js'
import { describeStartFailure, finishSignIn, SignInRefused, startSignIn, type OidcCache, type PendingSignIn } from './oidc.js'
import { signInWithIdentity } from './store.js'
import { localPath } from '../core/local-path.js'

declare module 'hono' {
  interface ContextVariableMap {
    oidc: OidcCache
  }
}

const tags = ['Auth']
export const OIDC_CALLBACK_PATH = '/auth/oidc/callback'
/** The console's sign-in page, which shows why single sign-on failed (Unleash's `errorMsg`; the reason itself from SSO_ERROR_COOKIE). */
const SIGN_IN_PAGE = '/sign-in'
/** Why the last single sign-on failed, for the sign-in page to show (readable by its script; two minutes, this path only). */
const SSO_ERROR_COOKIE = 'flagpost-sso-error'
/** The flow's cookie: what the callback checks the provider's answer against, for as long as a sign-in may take. */
const PENDING_COOKIE = 'flagpost-oidc'
const PENDING_TTL_S = 10 * 60

const b64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
const unb64 = (text: string) => new TextDecoder().decode(Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (ch) => ch.charCodeAt(0)))

/** The pending sign-in and where it leads, as the cookie holds it: state, nonce and verifier are base64url already. */
const encodePending = (p: PendingSignIn, redirect: string) => [p.state, p.nonce, p.codeVerifier, b64(redirect)].join('.')
function decodePending(value: string | undefined, origin: string): { pending: PendingSignIn; redirect: string } | undefined {
  const parts = value?.split('.')
  if (parts?.length !== 4 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return undefined
  try {
    return { pending: { state: parts[0]!, nonce: parts[1]!, codeVerifier: parts[2]! }, redirect: localPath(unb64(parts[3]!), origin) }
  } catch {
    return undefined
  }
}

const failed = (c: Context, message: string) => {
  // The reason may carry the provider's words (or a callback URL's error_description): a field of one log line.
  c.var.logger.log('warn', 'OpenID Connect sign-in refused', { requestId: c.var.requestId, reason: message.slice(0, 500) })
  // The sign-in page shows the reason from this cookie, which only this site sets, never from the URL's `errorMsg`
  // (kept for Unleash's clients): a link to /sign-in?errorMsg=… cannot put anyone's words on the sign-in page.
  setCookie(c, SSO_ERROR_COOKIE, message.slice(0, 500), { path: SIGN_IN_PAGE, maxAge: 120, secure: isHttps(c, c.var.accounts.publicUrl), sameSite: 'Lax' })
  return c.redirect(`${SIGN_IN_PAGE}?errorMsg=${encodeURIComponent(message)}`, 302)
}

const redirectResponse = (description: string) => ({ 302: { description, headers: { location: { schema: { type: 'string' as const }, description: 'Where the browser goes next' } } } })

const loginRoute = createRoute({
  method: 'get',
  path: '/auth/oidc/login',
  operationId: 'oidcLogin',
  tags,
  summary: 'Start signing in with OpenID Connect',
  description:
    'Opened by the browser (the sign-in page links it when OpenID Connect sign-in is enabled). Sends the browser to the provider found through the ' +
    'settings\' discovery URL, with an authorization-code request using PKCE (S256), a `state` and a `nonce`, kept until the provider answers in an HttpOnly ' +
    `cookie (\`${PENDING_COOKIE}\`, 10 minutes). The provider must send the browser back to \`<public URL>${OIDC_CALLBACK_PATH}\`. \`redirect\`: a path of this site to land on ` +
    `once signed in (default \`/\`; anything that is not a path of this site, parsed against its own origin, such as \`//host\`, \`/\\host\` or one holding a control character, leads to \`/\`). When single sign-on is not enabled or the provider cannot be reached, the browser is sent to ${SIGN_IN_PAGE}?errorMsg=… instead.`,
  request: { query: z.object({ redirect: z.string().max(2000).optional().openapi({ param: { name: 'redirect', in: 'query' }, example: '/projects' }) }) },
  responses: redirectResponse('To the provider, or back to the sign-in page with why not'),
})

const callbackRoute = createRoute({
  method: 'get',
  path: OIDC_CALLBACK_PATH,
  operationId: 'oidcCallback',
  tags,
  summary: 'Finish signing in with OpenID Connect',
  description:
    'Where the provider sends the browser back. Checks the answer\'s `state` against the sign-in this browser started, redeems the code (PKCE verifier, ' +
    'client secret), and checks the ID token: issuer, audience (the client id), expiry, `nonce`, and its signature against the provider\'s JWKS, with the ' +
    'settings\' signing algorithm. The e-mail (from the ID token, else the UserInfo endpoint) must be verified (`email_verified` true; absent is accepted only ' +
    'with `emailVerifiedByProvider`) and of a domain in `emailDomains` (if set), for every user. The user bound to the token\'s `iss` and `sub` is signed in with ' +
    'a session cookie as after a password (no event); else the user with the e-mail, bound to them at this first sign-in, unless bound to another identity or ' +
    'made through an invite link, whose address nobody proved (refused, so nobody who signed up with a colleague\'s ' +
    'address gets their sign-in); an unknown e-mail is created, bound, with the default root role (Editor unless set) when `autoCreate` is on, with ' +
    '`user-created` by the system, and refused otherwise. ' +
    'With `enableGroupSyncing`, the groups at `groupJsonPath` in the ID token\'s claims (else UserInfo\'s) decide the user\'s memberships of the groups that have ' +
    '`mappingsSSO`: they join each group mapping one of them (`group-user-added`, the membership made by `SSO`), and leave those mapping none that group sync had made ' +
    'them a member of (`group-user-removed`); memberships an admin made, and groups without mappings, are never touched; no claim there: no change. ' +
    'Both events by the system, `{ groupId, userId }`, written with the session. The session keeps the ID token, for single sign-out (POST /logout). ' +
    `Success leads to the \`redirect\` given at the start; any refusal to ${SIGN_IN_PAGE}?errorMsg=<why>.`,
  request: {
    query: z.object({
      code: z.string().max(4096).optional().openapi({ param: { name: 'code', in: 'query' } }),
      state: z.string().max(1024).optional().openapi({ param: { name: 'state', in: 'query' } }),
      error: z.string().max(1024).optional().openapi({ param: { name: 'error', in: 'query' } }),
      error_description: z.string().max(4096).optional().openapi({ param: { name: 'error_description', in: 'query' } }),
    }),
  },
  responses: redirectResponse('Signed in (the session cookie is set) and on to the page asked for, or back to the sign-in page with why not'),
})

export const ssoRoutes = createRouter()
  .openapi(loginRoute, async (c) => {
    const settings = await readOidcSettings(c.var.db)
    if (!oidcUsable(settings)) return failed(c, 'Single sign-on (OpenID Connect) is not enabled on this instance: sign in with your password')
    try {
      const { location, pending } = await startSignIn(c.var.oidc, settings, `${publicBaseUrl(c)}${OIDC_CALLBACK_PATH}`)
      setCookie(c, PENDING_COOKIE, encodePending(pending, localPath(c.req.valid('query').redirect, publicBaseUrl(c))), {
        path: '/auth/oidc',
        httpOnly: true,
        secure: isHttps(c, c.var.accounts.publicUrl),
        // Lax: sent on the provider's top-level redirect back to the callback.
        sameSite: 'Lax',
        maxAge: PENDING_TTL_S,
      })
      c.header('Cache-Control', 'no-store')
      return c.redirect(location, 302)
    } catch (error) {
      return failed(c, describeStartFailure(error))
    }
  })
  .openapi(callbackRoute, async (c) => {
    const kept = decodePending(getCookie(c, PENDING_COOKIE), publicBaseUrl(c))
    deleteCookie(c, PENDING_COOKIE, { path: '/auth/oidc', httpOnly: true, secure: isHttps(c, c.var.accounts.publicUrl), sameSite: 'Lax' })
    c.header('Cache-Control', 'no-store')
    if (!kept) return failed(c, 'This browser has no sign-in under way (it took more than 10 minutes, or was started elsewhere): start again')
    const settings = await readOidcSettings(c.var.db)
    if (!oidcUsable(settings)) return failed(c, 'Single sign-on (OpenID Connect) is not enabled on this instance: sign in with your password')
    try {
      const now = c.var.clock()
      const signedIn = await finishSignIn(c.var.oidc, settings, `${publicBaseUrl(c)}${OIDC_CALLBACK_PATH}`, new URL(c.req.url), kept.pending, now)
      const { session, groupsChanged } = await signInWithIdentity(c.var.db, settings, signedIn, now)
      // The user's memberships give roles: their tokens and other sessions remembered here must be looked up again.
      if (groupsChanged) c.var.forgetPrincipals()
      setSessionCookie(c, session, c.var.accounts.publicUrl)
      return c.redirect(kept.redirect, 302)
    } catch (error) {
      if (error instanceof SignInRefused) return failed(c, error.message)
      throw error
    }
  })
