import { createRoute } from '@hono/zod-openapi'
import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { validationError } from '../core/errors.js'
import { emailTransport, publicBaseUrl } from './accounts.js'
import { ChangeUserPasswordSchema, PasswordSchema, RoleSchema } from './schemas.js'
import { adminResetLink, RESET_EMAIL_GAP_MS, sendResetEmail } from './reset-email.js'
import { adminCount, deleteInactiveUsers, INACTIVE_AFTER_DAYS, inactiveUsers, profileOf, rolesOf } from './admin-extras.js'
import { passwordLinksOff, passwordLinksRefused } from '../auth-settings/store.js'
import { runDetached } from '../http/background.js'

const tags = ['Users']
const adminOnly = 'Needs the Admin root role (permission ADMIN).'
const publicLimit = 'Needs no credentials; limited per client address as sign-in is (429 TooManyRequestsError with `Retry-After`).'

const ValidatePasswordSchema = z.object({ password: PasswordSchema }).openapi('validatePasswordSchema')
const EmailSchema = z.object({ email: z.string().max(320, 'email must be at most 320 characters') }).openapi('emailSchema')
const IdSchema = z.object({ id: z.string().min(1).max(320).openapi({ description: "The user's e-mail address, or their id" }) }).openapi('idSchema')
const ResetPasswordSchema = () =>
  z.object({ resetPasswordUrl: z.string().openapi({ format: 'uri' }) }).openapi('resetPasswordSchema')
const AdminCountSchema = () =>
  z.object({ password: z.number(), noPassword: z.number(), service: z.number() }).openapi('adminCountSchema')
const dateTime = z.string().openapi({ format: 'date-time' })
const InactiveUsersSchema = () =>
  z
  .object({
    version: z.number().int(),
    inactiveUsers: z.array(
      z.object({ id: z.number().int(), name: z.string().nullable().optional(), email: z.string().optional(), username: z.string().nullable().optional(), seenAt: dateTime.nullable().optional(), createdAt: dateTime.optional() }).openapi('inactiveUserSchema'),
    ),
  })
  .openapi('inactiveUsersSchema')
/** The most ids one request deletes: an admin-only route, bounded all the same (each is a statement). */
const MAX_IDS = 1000
const IdsSchema = z.object({ ids: z.array(z.number().int().min(0)).max(MAX_IDS, `at most ${MAX_IDS} ids`) }).openapi('idsSchema')
const RolesSchema = () =>
  z.object({ version: z.number().int(), roles: z.array(RoleSchema) }).openapi('rolesSchema')
const ProfileSchema = () =>
  z
  .object({
    rootRole: RoleSchema,
    projects: z.array(z.string()),
    groups: z.array(z.object({ id: z.number().int(), name: z.string(), description: z.string().nullable(), mappingsSSO: z.array(z.string()), rootRole: z.number().int().optional() }).openapi('groupItemSchema')),
    subscriptions: z.array(z.string()),
    features: z.array(z.unknown()).openapi({ deprecated: true }),
    canChangePassword: z.boolean(),
  })
  .openapi('profileSchema')

const validatePasswordRoute = createRoute({
  method: 'post',
  path: '/auth/reset/validate-password',
  operationId: 'validatePassword',
  tags: ['Auth'],
  summary: 'Validate a password',
  description: `200 when Flagpost would take the password (8 to 256 characters, what every route that sets one takes), else 400 ValidationError saying why. ${publicLimit}`,
  request: { body: { required: true, content: jsonContent(ValidatePasswordSchema) } },
  responses: { 200: { description: 'The password is acceptable' }, ...pickErrors(400, 415, 429) },
})

const passwordEmailRoute = createRoute({
  method: 'post',
  path: '/auth/reset/password-email',
  operationId: 'sendResetPasswordEmail',
  tags: ['Auth'],
  summary: 'Ask for a password-reset e-mail',
  description:
    'Always 200, whether or not an account has this address, so the answer tells nobody which addresses have accounts (Unleash answers 404 for an unknown one). ' +
    'After the response, the account with this e-mail (ignoring case; not a service account) is sent a link to `<FLAGPOST_PUBLIC_URL>/new-user?token=…` that works once, for 24 hours; ' +
    'no e-mail is sent when the deployment has no FLAGPOST_PUBLIC_URL (a link is never made from the request\'s Host) or no e-mail transport (FLAGPOST_EMAIL_WEBHOOK_URL), ' +
    `while password sign-in is switched off, or when the account got such a link less than ${RESET_EMAIL_GAP_MS / 1000} seconds ago. Writes no event (as Unleash). ${publicLimit}`,
  request: { body: { required: true, content: jsonContent(EmailSchema) } },
  responses: { 200: { description: 'Taken (whether a mail goes out is not told)' }, ...pickErrors(400, 415, 429) },
})

const resetUserPasswordRoute = adminRoute({
  method: 'post',
  path: '/api/admin/user-admin/reset-password',
  operationId: 'resetUserPassword',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Make a password-reset link for a user',
  description:
    '`id` is the user\'s e-mail address (as Unleash) or their numeric id. Answers a link to the console\'s page where the user sets a new password; it works once, for 24 hours, ' +
    'and is e-mailed to the user too when an e-mail transport is configured. 404 for no such user (nor a service account). ' +
    `403 while password sign-in is switched off (unless FLAGPOST_ALLOW_PASSWORD_LOGIN=true): the password could not be used. Writes no event (as Unleash). ${adminOnly}`,
  request: { body: { required: true, content: jsonContent(IdSchema) } },
  responses: { 200: { description: 'The link', content: jsonContent(ResetPasswordSchema()) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const validateUserPasswordRoute = adminRoute({
  method: 'post',
  path: '/api/admin/user-admin/validate-password',
  operationId: 'validateUserPassword',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  tags,
  summary: 'Validate a password',
  description: '200 when Flagpost would take `password` (8 to 256 characters), else 400 ValidationError. `confirmPassword`, when given, must equal it. Any signed-in caller. Changes nothing.',
  request: { body: { required: true, content: jsonContent(ChangeUserPasswordSchema) } },
  responses: { 200: { description: 'The password is acceptable' }, ...pickErrors(400, 401, 403, 415) },
})

const adminCountRoute = adminRoute({
  method: 'get',
  path: '/api/admin/user-admin/admin-count',
  operationId: 'getAdminCount',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Count admin accounts',
  description: `Active users with the Admin root role, with a password and without one, and service accounts with it. ${adminOnly}`,
  responses: { 200: { description: 'The counts', content: jsonContent(AdminCountSchema()) }, ...pickErrors(401, 403) },
})

const inactiveRoute = adminRoute({
  method: 'get',
  path: '/api/admin/user-admin/inactive',
  operationId: 'getInactiveUsers',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Get inactive users',
  description: `Users (not service accounts) who have not signed in for ${INACTIVE_AFTER_DAYS} days (created that long ago, if never) and whose personal access tokens were not used in that time. ${adminOnly}`,
  responses: { 200: { description: 'The inactive users', content: jsonContent(InactiveUsersSchema()) }, ...pickErrors(401, 403) },
})

const deleteInactiveRoute = adminRoute({
  method: 'post',
  path: '/api/admin/user-admin/inactive/delete',
  operationId: 'deleteInactiveUsers',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Delete inactive users',
  description:
    `Deletes those of \`ids\` (at most ${MAX_IDS}) that are inactive users (see GET /api/admin/user-admin/inactive); other ids, the caller and the last active Admin are left as they are. ` +
    `Each is deleted as DELETE /api/admin/user-admin/{id} deletes one, with its \`user-deleted\`. ${adminOnly}`,
  request: { body: { required: true, content: jsonContent(IdsSchema) } },
  responses: { 200: { description: 'Deleted' }, ...pickErrors(400, 401, 403, 415) },
})

const deleteScimRoute = adminRoute({
  method: 'delete',
  path: '/api/admin/user-admin/scim-users',
  operationId: 'deleteScimUsers',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Delete all SCIM users',
  description: `Flagpost has no SCIM provisioning, so no user is managed by SCIM (every \`scimId\` is null): this deletes nobody and writes no event. ${adminOnly}`,
  responses: { 200: { description: 'Done (nobody to delete)' }, ...pickErrors(401, 403) },
})

const profileRoute = adminRoute({
  method: 'get',
  path: '/api/admin/user/profile',
  operationId: 'getProfile',
  tags,
  summary: 'Get your profile',
  description:
    'The signed-in user\'s root role, the projects they have a role in (directly or through a group), their groups, and whether they may change their password (not while password sign-in is switched off). ' +
    '`subscriptions` is empty (Flagpost sends no report e-mails) and `features` too (deprecated in Unleash). 400 for an API token, which has no profile.',
  responses: { 200: { description: 'The profile', content: jsonContent(ProfileSchema()) }, ...pickErrors(400, 401, 403) },
})

const userRolesRoute = adminRoute({
  method: 'get',
  path: '/api/admin/user/roles',
  operationId: 'getUserRoles',
  tags,
  summary: 'Get your roles',
  description:
    'The signed-in user\'s roles, given directly and through their groups: with `projectId`, their roles in that project (none in a project they may not see: they hold no role there); ' +
    'without, their root roles. An API token has none.',
  request: { query: z.object({ projectId: z.string().max(100).optional().openapi({ param: { name: 'projectId', in: 'query' } }) }) },
  responses: { 200: { description: 'The roles', content: jsonContent(RolesSchema()) }, ...pickErrors(400, 401, 403) },
})

export const accountRoutes = createRouter()
  .openapi(validatePasswordRoute, (c) => c.body(null, 200))
  .openapi(passwordEmailRoute, (c) => {
    const { email } = c.req.valid('json')
    const settings = c.var.accounts
    const now = c.var.clock()
    // After the response: how long the answer takes must not tell whether the account exists.
    ;(settings.background ?? runDetached)(c, (db) =>
      sendResetEmail(db, email, now, settings).catch((error: unknown) => console.warn('password-reset e-mail failed:', error instanceof Error ? error.message : error)),
    )
    return c.body(null, 200)
  })
  .openapi(resetUserPasswordRoute, async (c) => {
    const [off] = await passwordLinksRefused(c.var.db, c.var.accounts.passwordAlwaysAllowed)
    if (off?.refused) throw passwordLinksOff()
    const link = await adminResetLink(c.var.db, c.req.valid('json').id, c.var.clock(), c.var.caller.actor.createdBy, { baseUrl: publicBaseUrl(c), email: emailTransport(c) })
    return c.json({ resetPasswordUrl: link }, 200)
  })
  .openapi(validateUserPasswordRoute, (c) => {
    const { password, confirmPassword } = c.req.valid('json')
    if (confirmPassword !== undefined && confirmPassword !== password) throw validationError('The password and its confirmation differ', [{ path: 'body.confirmPassword', message: 'must equal password' }])
    return c.body(null, 200)
  })
  .openapi(adminCountRoute, async (c) => c.json(await adminCount(c.var.db), 200))
  .openapi(inactiveRoute, async (c) => c.json(await inactiveUsers(c.var.db, c.var.clock()), 200))
  .openapi(deleteInactiveRoute, async (c) => {
    const principal = c.var.principal
    await deleteInactiveUsers(c.var.db, c.var.caller, principal.kind === 'user' ? principal.userId : undefined, c.req.valid('json').ids)
    return c.body(null, 200)
  })
  .openapi(deleteScimRoute, (c) => c.body(null, 200))
  .openapi(profileRoute, async (c) => {
    const principal = c.var.principal
    if (principal.kind !== 'user') throw validationError('Only a user has a profile: an API token does not')
    const [profile, [off]] = await Promise.all([profileOf(c.var.db, principal.userId), passwordLinksRefused(c.var.db, c.var.accounts.passwordAlwaysAllowed)])
    return c.json({ ...profile, subscriptions: [], features: [], canChangePassword: !off?.refused }, 200)
  })
  .openapi(userRolesRoute, async (c) => {
    const principal = c.var.principal
    if (principal.kind !== 'user') return c.json({ version: 1, roles: [] }, 200)
    return c.json(await rolesOf(c.var.db, principal.userId, c.req.valid('query').projectId), 200)
  })

