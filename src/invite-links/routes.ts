import { createRoute } from '@hono/zod-openapi'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { publicBaseUrl } from '../users/accounts.js'
import { UserSchema } from '../users/schemas.js'
import { setSessionCookie } from '../auth/sessions.js'
import { validationError } from '../core/errors.js'
import { displaySecret } from '../api-tokens/secrets.js'
import { InviteLinkCreateSchema, InviteLinkParam, InviteLinkSchema, InviteLinksSchema, InviteLinkUpdateSchema, SignUpSchema } from './schemas.js'
import { createInviteLink, getInviteLink, inviteLinkWorks, listInviteLinks, MAX_INVITE_LINKS, SIGN_UP_PATH, signUpWithInviteLink, updateInviteLink } from './store.js'

const tags = ['Public signup tokens']
const path = '/api/admin/invite-link/tokens'

const listRoute = adminRoute({
  method: 'get',
  path,
  operationId: 'getAllPublicSignupTokens',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Get invite links',
  description: `Every public invite link (at most ${MAX_INVITE_LINKS}), newest first, with who signed up with it. Secrets are shown by their first characters and \`url\` is null: both are stored hashed and answered in full only when a link is created. Needs the Admin root role.`,
  responses: { 200: { description: 'The invite links', content: jsonContent(InviteLinksSchema) }, ...pickErrors(401, 403) },
})

const getRoute = adminRoute({
  method: 'get',
  path: `${path}/{token}`,
  operationId: 'getPublicSignupToken',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Get an invite link',
  description: 'The link named by its full secret, or by the first characters listings show when they name one link (400 when they name more). Needs the Admin root role.',
  request: { params: InviteLinkParam },
  responses: { 200: { description: 'The invite link', content: jsonContent(InviteLinkSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const createLinkRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path,
  operationId: 'createPublicSignupToken',
  tags,
  summary: 'Create an invite link',
  description:
    `A link to share (\`url\`: \`<public URL>${SIGN_UP_PATH}?invite=<secret>\`, the console's sign-up page): whoever opens it may create a user with \`role\` ` +
    '(a root role by id or name; Viewer unless given) until `expiresAt` (in the future; capped at a month from now, as Unleash does). ' +
    `The secret and the URL are answered only here. At most ${MAX_INVITE_LINKS} links. Needs the Admin root role. Emits \`public-signup-token-created\` (the secret's first characters only).`,
  request: { body: { required: true, content: jsonContent(InviteLinkCreateSchema) } },
  responses: {
    201: {
      description: 'The new link, with its secret and URL',
      headers: { location: { schema: { type: 'string' }, description: "The link's location, by the first characters of its secret" } },
      content: jsonContent(InviteLinkSchema),
    },
    ...pickErrors(400, 401, 403, 409, 415),
  },
})

const updateRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: `${path}/{token}`,
  operationId: 'updatePublicSignupToken',
  tags,
  summary: 'Update an invite link',
  description:
    'Sets `expiresAt` (in the future, capped at a month from now) and/or `enabled` (false: the link stops working; true: it works again until it expires). ' +
    'The link is named as in GET. Needs the Admin root role. Emits `public-signup-token-updated` with the link as it was (nothing when nothing changes).',
  request: { params: InviteLinkParam, body: { required: true, content: jsonContent(InviteLinkUpdateSchema) } },
  responses: { 200: { description: 'The link as it is now', content: jsonContent(InviteLinkSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const validateRoute = createRoute({
  method: 'get',
  path: '/invite/{token}/validate',
  operationId: 'validatePublicSignupToken',
  tags,
  summary: 'Check an invite link',
  description:
    'For the sign-up page: 200 (no body) while the link (its full secret) is enabled and not expired, 400 otherwise. ' +
    'While password sign-in is switched off (single sign-on only, see POST /api/admin/auth/simple/settings) a 403 saying so, for any link: a sign-up makes a password account ' +
    '(unless the deployment sets FLAGPOST_ALLOW_PASSWORD_LOGIN=true). Needs no credentials; limited per client address as sign-in is.',
  request: { params: InviteLinkParam },
  responses: { 200: { description: 'The link works' }, ...pickErrors(400, 403, 429) },
})

const signUpRoute = createRoute({
  method: 'post',
  path: '/invite/{token}/signup',
  operationId: 'addPublicSignupTokenUser',
  tags,
  summary: 'Sign up with an invite link',
  description:
    "Creates a user with the link's root role (e-mail, name and password; a username if given) and signs them in: the session cookie is set as by " +
    'POST /auth/simple/login. 400 for a link that is unknown, disabled or expired, 409 NameExistsError for an e-mail or username already taken. ' +
    '403 while password sign-in is switched off (the password could not be used; unless the deployment sets FLAGPOST_ALLOW_PASSWORD_LOGIN=true): people join through single sign-on then. ' +
    'Needs no credentials; limited per client address as sign-in is. Emits `user-created` and `public-signup-token-user-added`, both by the new user.',
  request: { params: InviteLinkParam, body: { required: true, content: jsonContent(SignUpSchema) } },
  responses: { 200: { description: 'The new user, signed in', content: jsonContent(UserSchema) }, ...pickErrors(400, 403, 409, 415, 429) },
})

export const inviteLinkRoutes = createRouter()
  .openapi(listRoute, async (c) => c.json({ tokens: await listInviteLinks(c.var.db, c.var.clock()) }, 200))
  .openapi(getRoute, async (c) => c.json(await getInviteLink(c.var.db, c.req.valid('param').token, c.var.clock()), 200))
  .openapi(createLinkRoute, async (c) => {
    const created = await createInviteLink(c.var.db, c.var.caller, c.req.valid('json'), publicBaseUrl(c))
    // The secret is in the body only: a header ends up in proxies' logs.
    return c.json(created, 201, { Location: `${path}/${encodeURIComponent(displaySecret(created.secret))}` })
  })
  .openapi(updateRoute, async (c) => c.json(await updateInviteLink(c.var.db, c.var.caller, c.req.valid('param').token, c.req.valid('json')), 200))
  .openapi(validateRoute, async (c) => {
    if (!(await inviteLinkWorks(c.var.db, c.req.valid('param').token, c.var.clock(), { passwordAlwaysAllowed: c.var.accounts.passwordAlwaysAllowed }))) throw validationError('This invite link does not work: it is unknown, disabled or expired')
    return c.body(null, 200)
  })
  .openapi(signUpRoute, async (c) => {
    const { user, session } = await signUpWithInviteLink(c.var.db, c.req.valid('param').token, c.req.valid('json'), c.var.clock(), { passwordAlwaysAllowed: c.var.accounts.passwordAlwaysAllowed })
    setSessionCookie(c, session, c.var.accounts.publicUrl)
    return c.json(user, 200)
  })
