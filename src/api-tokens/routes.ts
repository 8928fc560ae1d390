import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { noAccess, validationError } from '../core/errors.js'
import { pickErrors } from '../http/errors.js'
import { type Principal } from '../core/principal.js'
import { hasPermission, Permission, requirePermission, type PermissionName } from '../core/permissions.js'
import { ApiTokenSchema, ApiTokensSchema, CreateApiTokenSchema, TokenParam, UpdateApiTokenSchema, type CreateApiToken } from './schemas.js'
import { createToken, deleteToken, listTokens, updateTokenExpiry, type NewToken, type TokenType } from './store.js'
import { displaySecret, givenSecretProblem } from './secrets.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import type { AppContext } from '../http/context.js'

const permissionFor: Record<'create' | 'read' | 'update' | 'delete', Record<TokenType, PermissionName>> = {
  create: { admin: Permission.ADMIN, client: Permission.CREATE_CLIENT_API_TOKEN, frontend: Permission.CREATE_FRONTEND_API_TOKEN },
  // Setting when a token expires is as much as making one of its type.
  update: { admin: Permission.ADMIN, client: Permission.CREATE_CLIENT_API_TOKEN, frontend: Permission.CREATE_FRONTEND_API_TOKEN },
  read: { admin: Permission.ADMIN, client: Permission.READ_CLIENT_API_TOKEN, frontend: Permission.READ_FRONTEND_API_TOKEN },
  delete: { admin: Permission.ADMIN, client: Permission.DELETE_CLIENT_API_TOKEN, frontend: Permission.DELETE_FRONTEND_API_TOKEN },
}
const TOKEN_TYPES: TokenType[] = ['admin', 'client', 'frontend']
const typesAllowed = (principal: Principal, action: 'read' | 'update' | 'delete') => TOKEN_TYPES.filter((t) => hasPermission(principal, permissionFor[action][t]))

function toNewToken(input: CreateApiToken, now: Date): NewToken {
  const lowered = input.type.toLowerCase()
  const type: TokenType = lowered === 'backend' ? 'client' : (lowered as TokenType)
  const projects = input.projects ? [...new Set(input.projects)] : [input.project ?? '*']
  if (projects.includes('*') && projects.length > 1) throw validationError('projects: `*` (all projects) cannot be combined with named projects')
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null
  if (expiresAt && expiresAt <= now) throw validationError('expiresAt must be in the future')
  if (type === 'admin') {
    if ((input.environment ?? '*') !== '*' || projects[0] !== '*' || projects.length > 1) {
      throw validationError('Admin tokens apply to every project and environment: leave project and environment out')
    }
    return { tokenName: input.tokenName, type, projects: ['*'], environment: '*', expiresAt }
  }
  const environment = input.environment ?? 'development'
  if (environment === '*') throw validationError(`${type} tokens belong to one environment: name it in environment`)
  return { tokenName: input.tokenName, type, projects, environment, expiresAt }
}

const getAllApiTokens = adminRoute({
  method: 'get',
  path: '/api/admin/api-tokens',
  operationId: 'getAllApiTokens',
  tags: ['API tokens'],
  summary: 'Get API tokens',
  description: 'The API tokens the caller may see (of the types they may read, none naming a private project they may not read), oldest first. Secrets are stored hashed, so `secret` is a masked form; it can be used to delete the token.',
  responses: { 200: { description: 'The tokens', content: jsonContent(ApiTokensSchema) }, ...pickErrors(401, 403) },
})

const createApiToken = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_CLIENT_API_TOKEN, checkedBy: 'handler' },
  path: '/api/admin/api-tokens',
  operationId: 'createApiToken',
  tags: ['API tokens'],
  summary: 'Create an API token',
  description:
    'Creates a backend (`client`), `frontend` or `admin` token. The response is the only place the secret is shown. ' +
    'Projects and environment must exist (400 otherwise). Flagpost: a client or frontend token may be given its `secret`: `<project>:<environment>.<16+ of A-Z a-z 0-9 _ ->` of its scope (400; 409 when taken). Emits `api-token-created` (without the secret).',
  request: { body: { required: true, content: jsonContent(CreateApiTokenSchema) } },
  responses: {
    201: {
      description: 'The new token, with its secret',
      headers: { location: { schema: { type: 'string' }, description: 'The location of the token, by its masked secret (never the secret itself)' } },
      content: jsonContent(ApiTokenSchema),
    },
    ...pickErrors(400, 401, 403, 409, 415),
  },
})

const deleteApiToken = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.DELETE_CLIENT_API_TOKEN, checkedBy: 'handler' },
  path: '/api/admin/api-tokens/{token}',
  operationId: 'deleteApiToken',
  tags: ['API tokens'],
  summary: 'Delete an API token',
  description: 'Deletes the token given by its full secret, or by the masked secret the listing shows when that names one token. Emits `api-token-deleted`.',
  request: { params: TokenParam },
  responses: { 200: { description: 'The token was deleted' }, ...pickErrors(400, 401, 403, 404) },
})

const updateApiToken = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_CLIENT_API_TOKEN, checkedBy: 'handler' },
  path: '/api/admin/api-tokens/{token}',
  operationId: 'updateApiToken',
  tags: ['API tokens'],
  summary: 'Update an API token',
  description:
    'Sets `expiresAt` of the token given by its full secret, or by the masked secret the listing shows when that names one token; a time already past expires it at once. ' +
    'An expired token is refused everywhere (401), from the next request through this instance (other instances remember a token for a few seconds at most). ' +
    'Needs the permission that creates a token of its type (ADMIN for an admin token). Unlike Unleash, which answers 200 and does nothing, an unknown token is a 404 (as for deleting one). ' +
    'Emits `api-token-updated` (data and preData: the token without its secret), nothing when the expiry is already that.',
  request: { params: TokenParam, body: { required: true, content: jsonContent(UpdateApiTokenSchema) } },
  responses: { 200: { description: 'The expiry was set' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const getApiTokensByName = adminRoute({
  method: 'get',
  path: '/api/admin/api-tokens/{name}',
  operationId: 'getApiTokensByName',
  // Which token types the caller may read decides what is answered: the handler filters by it.
  'x-permission': { name: Permission.READ_CLIENT_API_TOKEN, checkedBy: 'handler' },
  tags: ['API tokens'],
  summary: 'Get API tokens by name',
  description:
    'The API tokens named `name` (exactly) that the caller may see (as GET /api/admin/api-tokens: admin tokens for admins, client and frontend tokens with their READ permissions), oldest first; ' +
    '`secret` is masked as the list masks it. An empty list when there is none.',
  request: { params: z.object({ name: z.string().min(1).max(200).openapi({ param: { name: 'name', in: 'path' } }) }) },
  responses: { 200: { description: 'The tokens', content: jsonContent(ApiTokensSchema) }, ...pickErrors(400, 401, 403) },
})

/** The token types the caller may read; 403 when none. */
function readableTypes(principal: Principal) {
  const types = typesAllowed(principal, 'read')
  if (types.length === 0) requirePermission(principal, Permission.READ_CLIENT_API_TOKEN)
  return types
}

/**
 * The tokens of the types the caller may read, named `name` when given, leaving out every token that names a project the
 * caller may not read: its name, scope, last use and secret's prefix would tell of the private project.
 */
async function readableTokens(c: AppContext, name?: string) {
  const [tokens, hidden] = await Promise.all([listTokens(c.var.db, readableTypes(c.var.principal), name), hiddenProjectsOf(c)])
  return hidden.length === 0 ? tokens : tokens.filter((token) => !token.projects.some((p) => hidden.includes(p)))
}

export const apiTokenRoutes = createRouter()
  .openapi(getAllApiTokens, async (c) => c.json({ tokens: await readableTokens(c) }, 200))
  .openapi(getApiTokensByName, async (c) => c.json({ tokens: await readableTokens(c, c.req.valid('param').name) }, 200))
  .openapi(createApiToken, async (c) => {
    const input = c.req.valid('json')
    const token = toNewToken(input, c.var.caller.now)
    requirePermission(c.var.principal, permissionFor.create[token.type], { project: token.projects.length === 1 ? token.projects[0] : undefined })
    if (input.secret !== undefined) {
      if (token.type === 'admin') throw validationError('secret is taken for client and frontend tokens only')
      const problem = givenSecretProblem(input.secret, token.projects, token.environment)
      if (problem !== undefined) throw validationError(problem)
    }
    const created = await createToken(c.var.db, c.var.caller, token, input.secret)
    // The secret is shown in the body only: a header or URL ends up in proxies' and browsers' logs.
    return c.json(created, 201, { Location: `/api/admin/api-tokens/${encodeURIComponent(displaySecret(created.secret))}` })
  })
  .openapi(updateApiToken, async (c) => {
    const types = typesAllowed(c.var.principal, 'update')
    if (types.length === 0) requirePermission(c.var.principal, Permission.CREATE_CLIENT_API_TOKEN)
    const result = await updateTokenExpiry(c.var.db, c.var.caller, c.req.valid('param').token, new Date(c.req.valid('json').expiresAt), types)
    if (result.denied) throw noAccess(`You need permission=${permissionFor.update[result.denied]} to perform this action`)
    return c.body(null, 200)
  })
  .openapi(deleteApiToken, async (c) => {
    const types = typesAllowed(c.var.principal, 'delete')
    if (types.length === 0) requirePermission(c.var.principal, Permission.DELETE_CLIENT_API_TOKEN)
    const result = await deleteToken(c.var.db, c.var.caller, c.req.valid('param').token, types)
    if (result.denied) throw noAccess(`You need permission=${permissionFor.delete[result.denied]} to perform this action`)
    return c.body(null, 200)
  })
