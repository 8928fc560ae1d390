import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { validationError } from '../core/errors.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { dateTime, projectIdParam } from '../http/common-schemas.js'
import { ApiTokenSchema, ApiTokensSchema } from './schemas.js'
import { displaySecret } from './secrets.js'
import { createProjectToken, deleteProjectToken, listProjectTokens, type ProjectTokenType } from './project-tokens.js'
import { hiddenProjectsOf } from '../projects/visibility.js'

const tags = ['Projects']

export const CreateProjectApiTokenSchema = z
  .object({
    tokenName: z.string().trim().min(1, 'tokenName must not be empty').max(100),
    type: z
      .string()
      .regex(/^(client|backend|frontend)$/i, 'type must be one of client, backend, frontend')
      .openapi({ description: '`backend` (or the older `client`) or `frontend`; not case sensitive. A project has no admin tokens.' }),
    environment: z.string().min(1).max(100).optional().openapi({ description: 'The one environment the token is for; default `development`' }),
    expiresAt: dateTime.optional(),
  })
  .openapi('createProjectApiTokenSchema')

const ProjectTokenParams = projectIdParam.extend({ token: z.string().openapi({ param: { name: 'token', in: 'path' } }) })

const visibility = 'A private project is a 404 to those who may not read it.'

const getProjectApiTokens = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.READ_PROJECT_API_TOKEN, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/api-tokens',
  operationId: 'getProjectApiTokens',
  tags,
  summary: 'Get api tokens for project.',
  description:
    'The client and frontend tokens naming the project (alone or among other projects, as Unleash lists them), oldest first. Secrets are stored hashed, ' +
    `so \`secret\` is a masked form, which can name the token to delete. Needs READ_PROJECT_API_TOKEN in the project. 404 for an unknown project. ${visibility} A token that also names a project the caller may not read is left out.`,
  request: { params: projectIdParam },
  responses: { 200: { description: 'The tokens', content: jsonContent(ApiTokensSchema) }, ...pickErrors(401, 403, 404) },
})

const createProjectApiToken = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_PROJECT_API_TOKEN, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/api-tokens',
  operationId: 'createProjectApiToken',
  tags,
  summary: 'Create a project API token.',
  description:
    'A backend (`client`) or `frontend` token for exactly this project and one environment. The response is the only place the secret is shown. ' +
    'Needs CREATE_PROJECT_API_TOKEN in the project. 404 for an unknown or archived project, 400 for an unknown environment or an `expiresAt` not in the future. ' +
    `${visibility} Emits \`api-token-created\` (without the secret).`,
  request: { params: projectIdParam, body: { required: true, content: jsonContent(CreateProjectApiTokenSchema) } },
  responses: {
    201: {
      description: 'The new token, with its secret',
      headers: { location: { schema: { type: 'string' }, description: 'The location of the token, by its masked secret (never the secret itself)' } },
      content: jsonContent(ApiTokenSchema),
    },
    ...pickErrors(400, 401, 403, 404, 409, 415),
  },
})

const deleteProjectApiToken = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.DELETE_PROJECT_API_TOKEN, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/api-tokens/{token}',
  operationId: 'deleteProjectApiToken',
  tags,
  summary: 'Delete a project API token.',
  description:
    'Deletes the token given by its full secret, or by the masked secret the listing shows when that names one of the project’s tokens. Needs DELETE_PROJECT_API_TOKEN in the project. ' +
    '404 for an unknown project or a token that is not one of its client or frontend tokens (Unleash answers 404 too, though its description says 200); ' +
    `400 for a token that also names other projects (delete it through \`/api/admin/api-tokens\`), as Unleash. ${visibility} Emits \`api-token-deleted\`.`,
  request: { params: ProjectTokenParams },
  responses: { 200: { description: 'The token was deleted' }, ...pickErrors(400, 401, 403, 404) },
})

export const projectApiTokenRoutes = createRouter()
  .openapi(getProjectApiTokens, async (c) => c.json({ tokens: await listProjectTokens(c.var.db, c.req.valid('param').projectId, await hiddenProjectsOf(c)) }, 200))
  .openapi(createProjectApiToken, async (c) => {
    const { projectId } = c.req.valid('param')
    const input = c.req.valid('json')
    const lowered = input.type.toLowerCase()
    const type: ProjectTokenType = lowered === 'frontend' ? 'frontend' : 'client'
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null
    if (expiresAt && expiresAt <= c.var.caller.now) throw validationError('expiresAt must be in the future')
    const created = await createProjectToken(c.var.db, c.var.caller, projectId, { tokenName: input.tokenName, type, environment: input.environment ?? 'development', expiresAt })
    // The secret is shown in the body only: a header or URL ends up in proxies' and browsers' logs.
    return c.json(created, 201, { Location: `/api/admin/projects/${encodeURIComponent(projectId)}/api-tokens/${encodeURIComponent(displaySecret(created.secret))}` })
  })
  .openapi(deleteProjectApiToken, async (c) => {
    const { projectId, token } = c.req.valid('param')
    await deleteProjectToken(c.var.db, c.var.caller, projectId, token)
    return c.body(null, 200)
  })
