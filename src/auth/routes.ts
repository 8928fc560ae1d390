import { createRoute } from '@hono/zod-openapi'
import type { Context } from 'hono'
import * as z from '../http/zod.js'
import { createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { PasswordSchema, RoleSchema, UserSchema } from '../users/schemas.js'
import { resetPasswordWithToken, signIn, validateResetToken } from './login.js'
import { limitKeyOf } from '../http/client-address.js'
import { clearSessionCookie, deleteSession, sessionIdOf, setSessionCookie } from './sessions.js'
import { oidcUsable, readOidcSettings } from '../auth-settings/store.js'
import { publicBaseUrl } from '../users/accounts.js'
import { describeStartFailure, endSessionUrl } from '../sso/oidc.js'

const tags = ['Auth']

const LoginSchema = z
  .object({
    username: z.string().min(1, 'username must not be empty').max(320).openapi({ description: 'A username or an e-mail address', example: 'hunter' }),
    password: z.string().min(1, 'password must not be empty').max(1024),
  })
  .openapi('loginSchema')

const TokenUserSchema = z
  .object({
    id: z.number().int(),
    name: z.string().optional(),
    username: z.string().optional().openapi({ description: "The user's username, when they have one (the console signs them in with it, or with the e-mail)" }),
    email: z.string(),
    token: z.string(),
    createdBy: z.string().nullable(),
    role: RoleSchema,
  })
  .openapi('tokenUserSchema')

const ChangePasswordSchema = z.object({ token: z.string().min(1).max(200), password: PasswordSchema }).openapi('changePasswordSchema')

const loginRoute = createRoute({
  method: 'post',
  path: '/auth/simple/login',
  operationId: 'login',
  tags,
  summary: 'Sign in',
  description:
    'Signs in with a username (or e-mail) and password and sets the session cookie `flagpost-session` (HttpOnly, SameSite=Lax, Secure on https, valid 48 hours), ' +
    'which every /api/admin route accepts in place of a token. A failure is a 401 that does not say whether the user exists and adds one to `loginAttempts`; ' +
    'from 10 failures in a row from one client address, each further attempt from that address waits out a growing delay (1, 5, 15, then 60 minutes), during which even the right password gets the same 401 there; ' +
    'other addresses are not delayed, so nobody can lock the owner out. A success forgets that address\'s failures (an admin setting a new password, POST /api/admin/user-admin/{id}/change-password, every address\'s). ' +
    'Each client address may try 10 times a minute (429 TooManyRequestsError with `Retry-After` past that, as Unleash). ' +
    'While password sign-in is switched off (POST /api/admin/auth/simple/settings) and OpenID Connect sign-in is enabled, every attempt is a 401 saying so ' +
    '(unless the deployment sets FLAGPOST_ALLOW_PASSWORD_LOGIN=true). Signing in is not an audited change: it writes no event (as in Unleash).',
  request: { body: { required: true, content: jsonContent(LoginSchema) } },
  responses: {
    200: { description: 'Signed in; the session cookie is set', content: jsonContent(UserSchema) },
    ...pickErrors(400, 401, 415, 429),
  },
})

/** Where the provider sends the browser back after single sign-out: the console's sign-in page. */
const SIGNED_OUT_PAGE = '/sign-in'

const SingleSignOutSchema = z
  .object({
    redirectUrl: z.string().optional().openapi({ description: "Single sign-out only: the provider's end-session URL (with the session's ID token as id_token_hint); open it to sign out there too", format: 'uri' }),
  })
  .openapi('logoutSchema')

const logoutRoute = createRoute({
  method: 'post',
  path: '/logout',
  operationId: 'logout',
  tags,
  summary: 'Sign out',
  description:
    'Ends the session of the cookie (if any) and clears the cookie. Always 200, answering `{}`, but for single sign-out: when the session was made by OpenID Connect ' +
    'sign-in, `enableSingleSignOut` is on and the provider has an `end_session_endpoint`, it answers `{ redirectUrl }`, where the browser goes to end its session ' +
    `at the provider too (RP-initiated logout: \`id_token_hint\` the session's ID token, kept with the session until now, \`client_id\`, and \`post_logout_redirect_uri\` ` +
    `\`<public URL>${SIGNED_OUT_PAGE}\`, which the provider must accept). If the provider cannot be reached, only this session ends. Writes no event.`,
  responses: { 200: { description: 'Signed out (`redirectUrl` only for single sign-out)', content: jsonContent(SingleSignOutSchema) }, ...pickErrors(400) },
})

const validateRoute = createRoute({
  method: 'get',
  path: '/auth/reset/validate',
  operationId: 'validateToken',
  tags,
  summary: 'Check an invite or password-reset link',
  description:
    'The user a link (its `token`) belongs to, while the link is unused and not expired (7 days); 401 otherwise. The link itself (`/new-user?token=…`) opens the web console\'s page, which asks this, then sets the password. ' +
    'While password sign-in is switched off (single sign-on only) a 403 saying so, for any link: a password set with it could not be used (unless the deployment sets FLAGPOST_ALLOW_PASSWORD_LOGIN=true). ' +
    'Needs no credentials; limited per client address as sign-in is (429 TooManyRequestsError with `Retry-After`).',
  request: { query: z.object({ token: z.string().min(1).max(200).openapi({ param: { name: 'token', in: 'query' } }) }) },
  responses: { 200: { description: 'The link is valid', content: jsonContent(TokenUserSchema) }, ...pickErrors(400, 401, 403) },
})

const resetPasswordRoute = createRoute({
  method: 'post',
  path: '/auth/reset/password',
  operationId: 'changePassword',
  tags,
  summary: 'Set a password with an invite or password-reset link',
  description:
    'Sets the password (at least 8 characters) of the user the link belongs to and uses the link up: it works once. ' +
    '`loginAttempts` goes back to 0 and the user\'s sessions end. 401 for a link that is invalid, used or expired; 403 while password sign-in is switched off, the link kept ' +
    '(unless the deployment sets FLAGPOST_ALLOW_PASSWORD_LOGIN=true). ' +
    'Emits `user-updated` by the user (noting the change, without the password). The password is hashed only for a link that works. ' +
    'Needs no credentials; limited per client address as sign-in is (429 TooManyRequestsError with `Retry-After`).',
  request: { body: { required: true, content: jsonContent(ChangePasswordSchema) } },
  responses: { 200: { description: 'The password was set' }, ...pickErrors(400, 401, 403, 415) },
})

/** Where the browser ends its session at the provider, when single sign-out applies (see the route); undefined otherwise. */
async function singleSignOut(c: Context, idToken: string): Promise<string | undefined> {
  const settings = await readOidcSettings(c.var.db)
  if (!settings.enableSingleSignOut || !oidcUsable(settings)) return undefined
  try {
    return await endSessionUrl(c.var.oidc, settings, idToken, `${publicBaseUrl(c)}${SIGNED_OUT_PAGE}`)
  } catch (error) {
    console.warn(`Single sign-out: the provider's session is left as it is: ${describeStartFailure(error)}`)
    return undefined
  }
}

export const authRoutes = createRouter()
  .openapi(loginRoute, async (c) => {
    const { username, password } = c.req.valid('json')
    const { user, session } = await signIn(c.var.db, username.trim(), password, c.var.clock(), { passwordAlwaysAllowed: c.var.accounts.passwordAlwaysAllowed, address: limitKeyOf(c) })
    setSessionCookie(c, session, c.var.accounts.publicUrl)
    return c.json(user, 200)
  })
  .openapi(logoutRoute, async (c) => {
    const sessionId = sessionIdOf(c)
    const ended = sessionId ? await deleteSession(c.var.db, sessionId) : undefined
    clearSessionCookie(c, c.var.accounts.publicUrl)
    const redirectUrl = ended?.idToken ? await singleSignOut(c, ended.idToken) : undefined
    c.header('Cache-Control', 'no-store')
    return c.json(redirectUrl ? { redirectUrl } : {}, 200)
  })
  .openapi(validateRoute, async (c) => c.json(await validateResetToken(c.var.db, c.req.valid('query').token, c.var.clock(), { passwordAlwaysAllowed: c.var.accounts.passwordAlwaysAllowed }), 200))
  .openapi(resetPasswordRoute, async (c) => {
    const { token, password } = c.req.valid('json')
    await resetPasswordWithToken(c.var.db, token, password, c.var.clock(), { passwordAlwaysAllowed: c.var.accounts.passwordAlwaysAllowed })
    return c.body(null, 200)
  })
