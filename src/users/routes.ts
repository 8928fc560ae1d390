import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { emailTransport, publicBaseUrl } from './accounts.js'
import { Permission } from '../core/permissions.js'
import { describeCaller } from './me.js'
import {
  ChangeUserPasswordSchema,
  CreatedUserSchema,
  CreateUserSchema,
  MeSchema,
  UpdateUserSchema,
  USER_SEARCH_MAX_QUERY,
  USER_SEARCH_MAX_RESULTS,
  UserIdParam,
  UserSchema,
  UserSearchQuerySchema,
  UsersSchema,
  UsersSearchSchema,
} from './schemas.js'
import { changeUserPassword, createUser, deleteUser, getUser, listUsers, searchUsers, unbindSso, updateUser } from './store.js'
import { changeOwnPassword } from '../auth/login.js'
import { limitKeyOf } from '../http/client-address.js'
import { usersAndGroups } from '../groups/store.js'
import { UsersGroupsBaseSchema } from '../groups/schemas.js'
import { noAccess } from '../core/errors.js'

const tags = ['Users']
const userPath = '/api/admin/user-admin/{id}'
const adminOnly = 'Needs the Admin root role (permission ADMIN).'
const offRefused =
  'While password sign-in is switched off (single sign-on only) a 403 saying so, nothing changed: a password set now could not be used (unless the deployment sets FLAGPOST_ALLOW_PASSWORD_LOGIN=true).'
const secrets = 'Passwords are stored as PBKDF2-SHA256 hashes and never appear in responses or events.'

const createUserRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  path: '/api/admin/user-admin',
  operationId: 'createUser',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Create a new user',
  description:
    '`username` or `email` is required (400 `You must specify username or email`); the e-mail is validated and stored lower-case. ' +
    '`rootRole` is the id of a root role (built in, or a custom root role) or one of the names Admin, Editor, Viewer, Owner, Member (400 for another, and for a custom project role); ' +
    'the response gives it back as the string when a string was sent. ' +
    'A `password` has at least 8 characters. An existing e-mail (case-insensitive) or username is a 400 `User already exists`. ' +
    '`inviteLink` opens a page where the user sets a password: the link works once, for 7 days (and not while password sign-in is switched off for single sign-on: the page says so, and the link works again once passwords are back). ' +
    'While password sign-in is switched off (single sign-on only; unless the deployment sets FLAGPOST_ALLOW_PASSWORD_LOGIN=true) a `password` is a 403 saying so (it could not be used), ' +
    'and the user gets no invite link: `inviteLink` is absent and they sign in through single sign-on. ' +
    '`emailSent` is true only when an e-mail transport is configured (`FLAGPOST_EMAIL_WEBHOOK_URL`) and took the welcome e-mail: Flagpost has no SMTP client, ' +
    'so with no transport configured no e-mail is sent and `emailSent` is false. ' +
    `${secrets} ${adminOnly} Emits \`user-created\`.`,
  request: { body: { required: true, content: jsonContent(CreateUserSchema) } },
  responses: {
    201: {
      description: 'The user was created',
      headers: { location: { schema: { type: 'string' }, description: 'The location of the new user' } },
      content: jsonContent(CreatedUserSchema),
    },
    ...pickErrors(400, 401, 403, 415),
  },
})

const getUsersRoute = adminRoute({
  method: 'get',
  path: '/api/admin/user-admin',
  operationId: 'getUsers',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Get all users and root roles',
  description: `Every user that is not deleted, by id, and the root roles a user may be given (built in and custom). ${adminOnly}`,
  responses: { 200: { description: 'The users', content: jsonContent(UsersSchema) }, ...pickErrors(401, 403) },
})

const getUsersAndGroupsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/user-admin/access',
  operationId: 'getBaseUsersAndGroups',
  // Names and e-mails of everyone: only for those who may manage some project's members, like the user search.
  'x-permission': { name: Permission.UPDATE_PROJECT, inSomeProject: true },
  tags,
  summary: 'Get basic user and group information',
  description:
    'The active users (id, name, username, e-mail, picture) and the groups (id, name, root role, member count): what is needed to give them roles in a project. ' +
    'For those who may manage some project\'s members: admins, and UPDATE_PROJECT instance-wide (Editors) or in at least one project (its Owners); 403 for anyone else ' +
    '(Unleash answers any signed-in caller, which shows every user\'s e-mail to Viewers).',
  responses: { 200: { description: 'The users and groups', content: jsonContent(UsersGroupsBaseSchema) }, ...pickErrors(401, 403) },
})

const searchUsersRoute = adminRoute({
  method: 'get',
  path: '/api/admin/user-admin/search',
  operationId: 'searchUsers',
  // Project Owners add members by name without being admins; Viewers and Members may not list the users.
  'x-permission': { name: Permission.UPDATE_PROJECT, inSomeProject: true },
  tags,
  summary: 'Search users',
  description:
    `Users whose name, username or e-mail contains \`q\` (ignoring case; at most ${USER_SEARCH_MAX_QUERY} characters, 400 beyond), ordered by name, at most ${USER_SEARCH_MAX_RESULTS}; ` +
    'fewer than 2 characters find no one, as in Unleash. Each user is only `id`, `name`, `username`, `email` and `imageUrl`: never password data, sessions or roles. ' +
    'For those who may manage some project\'s members: admins, and UPDATE_PROJECT instance-wide (Editors) or in at least one project (its Owners); 403 for anyone else.',
  request: { query: UserSearchQuerySchema },
  responses: { 200: { description: 'The users found', content: jsonContent(UsersSearchSchema) }, ...pickErrors(400, 401, 403) },
})

const getUserRoute = adminRoute({
  method: 'get',
  path: userPath,
  operationId: 'getUser',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Get a user',
  description: `404 for an unknown or deleted user. ${adminOnly}`,
  request: { params: UserIdParam },
  responses: { 200: { description: 'The user', content: jsonContent(UserSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const updateUserRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  path: userPath,
  operationId: 'updateUser',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Update a user',
  description: `Changes the fields given (\`email\`, \`name\`, \`rootRole\`: as when creating a user, a custom root role by id); empty strings leave a field as it is. An e-mail another user has is a 400 \`User already exists\`, and so is (another message) a rootRole other than Admin for the last active human Admin. ${adminOnly} Emits \`user-updated\`.`,
  request: { params: UserIdParam, body: { required: true, content: jsonContent(UpdateUserSchema) } },
  responses: { 200: { description: 'The updated user', content: jsonContent(UserSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const deleteUserRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  path: userPath,
  operationId: 'deleteUser',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Delete a user',
  description:
    'The user can no longer sign in: their sessions, personal access tokens and project roles are removed, and their e-mail and username become free again. ' +
    `Their name stays on the events and flags they created. 400 for the last active human Admin. ${adminOnly} Emits \`user-deleted\`.`,
  request: { params: UserIdParam },
  responses: { 200: { description: 'The user was deleted' }, ...pickErrors(400, 401, 403, 404) },
})

const unbindSsoRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  path: `${userPath}/sso`,
  operationId: 'unbindUserSso',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: "Forget a user's single sign-on identity",
  description:
    'A first single sign-on binds an account to the identity at the provider (issuer and subject); later sign-ins need that identity. This forgets it ' +
    '(for a user whose identity at the provider changed, or an account bound by mistake): the next single sign-on with the address binds whichever identity ' +
    `signs in first. The user's sessions end. A user bound to none is left as they are. ${adminOnly} Emits \`user-updated\` (with the issuer it was bound to). Not in Unleash.`,
  request: { params: UserIdParam },
  responses: { 200: { description: 'The user is bound to no identity' }, ...pickErrors(400, 401, 403, 404) },
})

const changePasswordRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  path: `${userPath}/change-password`,
  operationId: 'changeUserPassword',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: "Change a user's password as an admin",
  description:
    'Sets the password (at least 8 characters) and resets `loginAttempts` to 0, which ends a sign-in lockout (after 10 failed sign-ins in a row) before its delay. ' +
    `The user's sessions end and their open invite links stop working. ${offRefused} ${secrets} ${adminOnly} Emits \`user-updated\` (noting the change, without the password).`,
  request: { params: UserIdParam, body: { required: true, content: jsonContent(ChangeUserPasswordSchema) } },
  responses: { 200: { description: 'The password was changed' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const changeMyPasswordRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  path: '/api/admin/user/change-password',
  'x-permission': 'any-caller',
  operationId: 'changeMyPassword',
  tags,
  summary: 'Change your own password',
  description:
    'For a signed-in user (session or personal access token): `oldPassword` must be the current password (a wrong one is a 400 and counts as a failed sign-in: ' +
    'from ten in a row, each further check waits out the sign-in lockout\'s growing delay, during which even the right old password gets that 400), `confirmPassword`, when given, must equal `password` (at least 8 characters). Every session of the user ends, this one too: ' +
    `sign in again with the new password. An API token has no password (403). ${offRefused} Emits \`user-updated\` (noting the change, without the password).`,
  request: { body: { required: true, content: jsonContent(ChangeUserPasswordSchema) } },
  responses: { 200: { description: 'The password was changed' }, ...pickErrors(400, 401, 403, 415) },
})

const getMeRoute = adminRoute({
  method: 'get',
  path: '/api/admin/user',
  operationId: 'getMe',
  tags,
  summary: 'Get your own user details',
  description:
    'The caller: the signed-in user (session or personal access token) with the permissions of their root role and of their project roles. ' +
    'An admin API token is answered as a service account (id -1337, root role Admin).',
  responses: { 200: { description: 'The caller', content: jsonContent(MeSchema) }, ...pickErrors(401, 403) },
})

// The path pattern allows at most 9 digits, so the number is always a valid Postgres integer.
const userId = (id: string) => Number(id)

export const userRoutes = createRouter()
  .openapi(createUserRoute, async (c) => {
    const user = await createUser(c.var.db, c.var.caller, c.req.valid('json'), { baseUrl: publicBaseUrl(c), email: emailTransport(c), passwordAlwaysAllowed: c.var.accounts.passwordAlwaysAllowed })
    return c.json(user, 201, { Location: `/api/admin/user-admin/${user.id}` })
  })
  .openapi(getUsersRoute, async (c) => c.json(await listUsers(c.var.db), 200))
  // Before `/api/admin/user-admin/{id}`, which would take `access` for an id.
  .openapi(getUsersAndGroupsRoute, async (c) => c.json(await usersAndGroups(c.var.db), 200))
  // Before GET /api/admin/user-admin/{id}, which would take `search` for an id.
  .openapi(searchUsersRoute, async (c) => c.json(await searchUsers(c.var.db, c.req.valid('query').q), 200))
  .openapi(getUserRoute, async (c) => c.json(await getUser(c.var.db, userId(c.req.valid('param').id)), 200))
  .openapi(updateUserRoute, async (c) => c.json(await updateUser(c.var.db, c.var.caller, userId(c.req.valid('param').id), c.req.valid('json')), 200))
  .openapi(deleteUserRoute, async (c) => {
    await deleteUser(c.var.db, c.var.caller, userId(c.req.valid('param').id))
    return c.body(null, 200)
  })
  .openapi(unbindSsoRoute, async (c) => {
    await unbindSso(c.var.db, c.var.caller, userId(c.req.valid('param').id))
    return c.body(null, 200)
  })
  .openapi(changePasswordRoute, async (c) => {
    await changeUserPassword(c.var.db, c.var.caller, userId(c.req.valid('param').id), c.req.valid('json').password, { passwordAlwaysAllowed: c.var.accounts.passwordAlwaysAllowed })
    return c.body(null, 200)
  })
  .openapi(changeMyPasswordRoute, async (c) => {
    const principal = c.var.principal
    if (principal.kind !== 'user') throw noAccess('Only a user has a password to change: an API token does not')
    await changeOwnPassword(c.var.db, c.var.caller, principal.userId, c.req.valid('json'), { passwordAlwaysAllowed: c.var.accounts.passwordAlwaysAllowed, address: limitKeyOf(c) })
    return c.body(null, 200)
  })
  .openapi(getMeRoute, async (c) => c.json(await describeCaller(c.var.db, c.var.principal), 200))
