import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { noAccess } from '../core/errors.js'
import { pickErrors } from '../http/errors.js'
import { type Principal } from '../core/principal.js'
import { CreatePatSchema, PatSchema } from './schemas.js'
import { createPat, deletePat, listPats, type TokenOwner } from './personal-access-tokens.js'

const tags = ['Personal access tokens']

const PatIdParam = z.object({ id: z.string().regex(/^\d{1,9}$/, 'id must be a token id').openapi({ param: { name: 'id', in: 'path' } }) })

const forUsers =
  "Personal access tokens belong to a user: the caller must be signed in or use one of their tokens (an admin API token, or a service account's token, is a 403). Any user may manage their own."

const getPats = adminRoute({
  method: 'get',
  path: '/api/admin/user/tokens',
  operationId: 'getPats',
  tags,
  summary: 'Get your personal access tokens',
  description: `The caller's personal access tokens, oldest first, without their secrets. ${forUsers}`,
  responses: { 200: { description: 'The tokens', content: jsonContent(z.object({ pats: z.array(PatSchema) }).openapi('patsSchema')) }, ...pickErrors(401, 403) },
})

const createPatRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  path: '/api/admin/user/tokens',
  operationId: 'createPat',
  tags,
  summary: 'Create a personal access token',
  description:
    'A token `user:<secret>` that acts as the caller, with the caller\'s permissions (also as they change), until `expiresAt`. ' +
    `The secret is shown in this response only and stored hashed. ${forUsers} Emits \`pat-created\` (without the secret).`,
  request: { body: { required: true, content: jsonContent(CreatePatSchema) } },
  responses: {
    201: {
      description: 'The token, with its secret',
      headers: { location: { schema: { type: 'string' }, description: 'The location of the token' } },
      content: jsonContent(PatSchema),
    },
    ...pickErrors(400, 401, 403, 415),
  },
})

const deletePatRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  path: '/api/admin/user/tokens/{id}',
  operationId: 'deletePat',
  tags,
  summary: 'Delete a personal access token',
  description: `Deletes one of the caller's tokens; it stops working at once. Another user's token is a 404. ${forUsers} Emits \`pat-deleted\`.`,
  request: { params: PatIdParam },
  responses: { 200: { description: 'The token was deleted' }, ...pickErrors(400, 401, 403, 404) },
})

function ownerOf(principal: Principal): TokenOwner {
  if (principal.kind !== 'user') throw noAccess('Personal access tokens belong to users: sign in, or use a personal access token, to manage yours')
  return { userId: principal.userId, kind: 'user' }
}

export const personalAccessTokenRoutes = createRouter()
  .openapi(getPats, async (c) => c.json({ pats: await listPats(c.var.db, ownerOf(c.var.principal)) }, 200))
  .openapi(createPatRoute, async (c) => {
    const pat = await createPat(c.var.db, c.var.caller, ownerOf(c.var.principal), c.req.valid('json'))
    return c.json(pat, 201, { Location: `/api/admin/user/tokens/${pat.id}` })
  })
  .openapi(deletePatRoute, async (c) => {
    await deletePat(c.var.db, c.var.caller, ownerOf(c.var.principal), Number(c.req.valid('param').id))
    return c.body(null, 200)
  })
