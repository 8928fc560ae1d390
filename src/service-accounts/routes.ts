import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { CreatePatSchema, PatSchema } from '../api-tokens/schemas.js'
import { createPat, deletePat, listPats, type TokenOwner } from '../api-tokens/personal-access-tokens.js'
import {
  CreateServiceAccountSchema,
  ServiceAccountIdParam,
  ServiceAccountSchema,
  ServiceAccountsSchema,
  ServiceAccountTokenParams,
  UpdateServiceAccountSchema,
} from './schemas.js'
import { createServiceAccount, deleteServiceAccount, listServiceAccounts, updateServiceAccount } from './store.js'

const tags = ['Service accounts']
const ADMIN_ONLY = ' Needs ADMIN, as in Unleash.'
const path = '/api/admin/service-account'
const accountPath = `${path}/{id}`

const getServiceAccounts = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path,
  operationId: 'getServiceAccounts',
  tags,
  summary: 'Get service accounts',
  description: `Every service account, by id, with its tokens (never their secrets), and the root roles they may hold.${ADMIN_ONLY}`,
  responses: { 200: { description: 'The service accounts', content: jsonContent(ServiceAccountsSchema) }, ...pickErrors(401, 403) },
})

const createServiceAccountRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path,
  operationId: 'createServiceAccount',
  tags,
  summary: 'Create a service account',
  description:
    'An account for a system, not a person: it has no password and cannot sign in (a sign-in as its username fails as for an unknown user), and acts through its tokens with its root role\'s permissions (and any project roles it is given). ' +
    `\`rootRole\` is a root role id or name (400 for an unknown one). A username a user or service account already has is a 409.${ADMIN_ONLY} Emits \`service-account-created\`.`,
  request: { body: { required: true, content: jsonContent(CreateServiceAccountSchema) } },
  responses: {
    201: {
      description: 'The service account',
      headers: { location: { schema: { type: 'string' }, description: 'The location of the service account' } },
      content: jsonContent(ServiceAccountSchema),
    },
    ...pickErrors(400, 401, 403, 409, 415),
  },
})

const updateServiceAccountRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: accountPath,
  operationId: 'updateServiceAccount',
  tags,
  summary: 'Update a service account',
  description: `Changes its \`name\` and \`rootRole\` (those given); the username stays. Its tokens act with the new role from their next request. 404 for an unknown service account (or a user's id).${ADMIN_ONLY} Emits \`service-account-updated\`.`,
  request: { params: ServiceAccountIdParam, body: { required: true, content: jsonContent(UpdateServiceAccountSchema) } },
  responses: { 200: { description: 'The service account', content: jsonContent(ServiceAccountSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const deleteServiceAccountRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: accountPath,
  operationId: 'deleteServiceAccount',
  tags,
  summary: 'Delete a service account',
  description: `Its tokens stop working at once and its project roles go; its username is free again. Events keep its name. Refused (409) while action sets run as it.${ADMIN_ONLY} Emits \`service-account-deleted\`.`,
  request: { params: ServiceAccountIdParam },
  responses: { 200: { description: 'The service account was deleted' }, ...pickErrors(400, 401, 403, 404, 409) },
})

const getTokens = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: `${accountPath}/token`,
  operationId: 'getServiceAccountTokens',
  tags,
  summary: "Get a service account's tokens",
  description: `Oldest first, without their secrets. 404 for an unknown service account.${ADMIN_ONLY}`,
  request: { params: ServiceAccountIdParam },
  responses: { 200: { description: 'The tokens', content: jsonContent(z.object({ pats: z.array(PatSchema) }).openapi('serviceAccountTokensSchema')) }, ...pickErrors(400, 401, 403, 404) },
})

const createTokenRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: `${accountPath}/token`,
  operationId: 'createServiceAccountToken',
  tags,
  summary: 'Create a token for a service account',
  description:
    'A token `user:<secret>` (a personal access token of the service account) that acts as the account, with its permissions as they change, until `expiresAt` (in the future). ' +
    `The secret is shown in this response only and stored hashed; listings, events and logs never hold it. 404 for an unknown service account.${ADMIN_ONLY} Emits \`pat-created\` (without the secret).`,
  request: { params: ServiceAccountIdParam, body: { required: true, content: jsonContent(CreatePatSchema) } },
  responses: { 201: { description: 'The token, with its secret', content: jsonContent(PatSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const deleteTokenRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: `${accountPath}/token/{tokenId}`,
  operationId: 'deleteServiceAccountToken',
  tags,
  summary: "Delete a service account's token",
  description: `The token stops working at once. 404 for an unknown service account or a token not its own.${ADMIN_ONLY} Emits \`pat-deleted\`.`,
  request: { params: ServiceAccountTokenParams },
  responses: { 200: { description: 'The token was deleted' }, ...pickErrors(400, 401, 403, 404) },
})

// The path patterns allow at most 9 digits, so the numbers are always valid Postgres integers.
const accountOf = (id: string): TokenOwner => ({ userId: Number(id), kind: 'service-account' })

export const serviceAccountRoutes = createRouter()
  .openapi(getServiceAccounts, async (c) => c.json(await listServiceAccounts(c.var.db), 200))
  .openapi(createServiceAccountRoute, async (c) => {
    const account = await createServiceAccount(c.var.db, c.var.caller, c.req.valid('json'))
    return c.json(account, 201, { Location: `${path}/${account.id}` })
  })
  .openapi(updateServiceAccountRoute, async (c) => c.json(await updateServiceAccount(c.var.db, c.var.caller, Number(c.req.valid('param').id), c.req.valid('json')), 200))
  .openapi(deleteServiceAccountRoute, async (c) => {
    await deleteServiceAccount(c.var.db, c.var.caller, Number(c.req.valid('param').id))
    return c.body(null, 200)
  })
  .openapi(getTokens, async (c) => c.json({ pats: await listPats(c.var.db, accountOf(c.req.valid('param').id)) }, 200))
  .openapi(createTokenRoute, async (c) => c.json(await createPat(c.var.db, c.var.caller, accountOf(c.req.valid('param').id), c.req.valid('json')), 201))
  .openapi(deleteTokenRoute, async (c) => {
    const { id, tokenId } = c.req.valid('param')
    await deletePat(c.var.db, c.var.caller, accountOf(id), Number(tokenId))
    return c.body(null, 200)
  })
