import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { dateTime } from '../http/common-schemas.js'
import { markSplashSeen, MAX_PROMPTS_PER_USER, promptUser, saveFeedback } from './prompts.js'

const tags = ['Admin UI']
const promptId = (what: string) => z.string().min(1).max(100, `${what} must be at most 100 characters`)
const own =
  `The caller's own state (a user: a session or a personal access token; an API token is a 400), read back in GET /api/admin/user. ` +
  `Any signed-in user may set their own; no event (as Unleash). A user keeps at most ${MAX_PROMPTS_PER_USER} (a 400 for a new one beyond).`

const FeedbackResponseSchema = () =>
  z
    .object({ userId: z.number().int(), feedbackId: z.string(), neverShow: z.boolean(), given: z.string().nullable().openapi({ format: 'date-time' }) })
    .openapi('feedbackResponseSchema')
const FeedbackCreateSchema = z.object({ feedbackId: promptId('feedbackId'), neverShow: z.boolean().optional() }).openapi('feedbackCreateSchema')
const FeedbackUpdateSchema = z
  .object({ userId: z.number().int().optional().openapi({ description: 'Ignored: the caller is the user' }), neverShow: z.boolean().optional(), given: dateTime.nullable().optional() })
  .openapi('feedbackUpdateSchema')

const createFeedbackRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  path: '/api/admin/feedback',
  operationId: 'createFeedback',
  tags,
  summary: 'Send Unleash feedback',
  description: `Records that the caller gave the feedback \`feedbackId\` now (\`given\`), with \`neverShow\` (false unless sent). ${own}`,
  request: { body: { required: true, content: jsonContent(FeedbackCreateSchema) } },
  responses: { 200: { description: 'The feedback state', content: jsonContent(FeedbackResponseSchema()) }, ...pickErrors(400, 401, 403, 415) },
})

const updateFeedbackRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  path: '/api/admin/feedback/{id}',
  operationId: 'updateFeedback',
  tags,
  summary: 'Update Unleash feedback',
  description: `Updates the caller's state of feedback \`id\`: only the fields sent (\`neverShow\`, \`given\`); an unknown one starts not given, shown. ${own}`,
  request: { params: z.object({ id: promptId('id') }), body: { required: true, content: jsonContent(FeedbackUpdateSchema) } },
  responses: { 200: { description: 'The feedback state', content: jsonContent(FeedbackResponseSchema()) }, ...pickErrors(400, 401, 403, 415) },
})

const splashRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  path: '/api/admin/splash/{id}',
  operationId: 'updateSplashSettings',
  tags,
  summary: 'Update splash settings',
  description: `Records that the caller has seen the splash screen \`id\`. ${own}`,
  request: { params: z.object({ id: promptId('id') }) },
  responses: {
    200: { description: 'The splash state', content: jsonContent(z.object({ userId: z.number().int(), splashId: z.string(), seen: z.boolean() }).openapi('splashResponseSchema')) },
    ...pickErrors(400, 401, 403, 415),
  },
})

export const promptRoutes = createRouter()
  .openapi(createFeedbackRoute, async (c) => {
    const { feedbackId, neverShow } = c.req.valid('json')
    return c.json(await saveFeedback(c.var.db, promptUser(c.var.principal), feedbackId, { neverShow: neverShow ?? false, given: c.var.caller.now.toISOString() }), 200)
  })
  .openapi(updateFeedbackRoute, async (c) => {
    const { neverShow, given } = c.req.valid('json')
    return c.json(await saveFeedback(c.var.db, promptUser(c.var.principal), c.req.valid('param').id, { neverShow, given }), 200)
  })
  .openapi(splashRoute, async (c) => c.json(await markSplashSeen(c.var.db, promptUser(c.var.principal), c.req.valid('param').id), 200))
