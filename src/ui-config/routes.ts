import { createRoute } from '@hono/zod-openapi'
import { sql } from 'drizzle-orm'
import { queryRows } from '../db.js'
import * as z from '../http/zod.js'
import { MIGRATIONS } from '../health/migrations.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { loggable } from '../core/errors.js'
import { Permission } from '../core/permissions.js'
import { publicBaseUrl } from '../users/accounts.js'
import { passwordLinksRefused } from '../auth-settings/store.js'
import { saveFrontendOrigins } from './store.js'
import { normaliseOrigin } from '../frontend-api/cors.js'
import { principalFields } from '../http/request-log.js'

const tags = ['Admin UI']

const VersionSchema = () =>
  z
  .object({
    current: z.object({ oss: z.string().optional(), enterprise: z.string().optional() }),
    latest: z.object({ oss: z.string().optional(), enterprise: z.string().optional() }),
    isLatest: z.boolean(),
    instanceId: z.string().optional(),
  })
  .openapi('versionSchema')

const UiConfigSchema = () =>
  z
  .object({
    name: z.string().optional(),
    version: z.string(),
    unleashUrl: z.string(),
    baseUriPath: z.string(),
    disablePasswordAuth: z.boolean().optional(),
    emailEnabled: z.boolean().optional(),
    frontendApiOrigins: z.array(z.string()).optional(),
    authenticationType: z.string().optional(),
    flags: z.record(z.string(), z.boolean()).optional(),
    versionInfo: VersionSchema(),
  })
  .openapi('uiConfigSchema')

/**
 * An origin as Unleash takes it: `*`, or a URL's scheme, host and port with no path; stored as browsers send it (lower-case,
 * no trailing slash) so that it matches. A wildcard host (`https://*.example.com`) is refused: Unleash matches exactly.
 */
const OriginSchema = z
  .string()
  .max(500)
  .transform((value, ctx) => {
    const origin = normaliseOrigin(value.trim())
    if (origin !== undefined) return origin
    ctx.addIssue({
      code: 'custom',
      message: value.includes('*') && value !== '*'
        ? `"${value.slice(0, 100)}": a wildcard host never matches (origins match exactly); list each origin, or \`*\` for any`
        : `"${value.slice(0, 100)}": each origin must be \`*\` or a URL origin such as https://example.com (http or https, no path)`,
    })
    return z.NEVER
  })
const SetCorsSchema = z.object({ frontendApiOrigins: z.array(OriginSchema).max(100, 'at most 100 origins').optional() }).openapi('setCorsSchema')

const TelemetrySettingsSchema = () =>
  z.object({ versionInfoCollectionEnabled: z.boolean(), featureInfoCollectionEnabled: z.boolean() }).openapi('telemetrySettingsSchema')
const ReadySchema = () =>
  z.object({ health: z.enum(['GOOD', 'BAD']), reason: z.string().optional().openapi({ description: 'Why not ready (503 only)' }) }).openapi('readyCheckSchema')
const RecordUiErrorSchema = z.object({ errorMessage: z.string().max(10_000), errorStack: z.string().max(100_000).optional() }).openapi('recordUiErrorSchema')

const getUiConfigRoute = adminRoute({
  method: 'get',
  path: '/api/admin/ui-config',
  operationId: 'getUiConfig',
  tags,
  summary: 'Get the UI configuration',
  description:
    'What a console needs to know about this instance: its version (Flagpost looks up no newer version: `isLatest` is true), its public URL, whether password sign-in is switched off, ' +
    'whether e-mail can be sent, and the frontend API\'s CORS origins (POST /api/admin/ui-config/cors; the deployment\'s FLAGPOST_FRONTEND_CORS_ORIGINS until one is stored). Any signed-in caller.',
  responses: { 200: { description: 'The configuration', content: jsonContent(UiConfigSchema()) }, ...pickErrors(401, 403) },
})

const setCorsRoute = adminRoute({
  method: 'post',
  path: '/api/admin/ui-config/cors',
  operationId: 'setCors',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  tags,
  summary: 'Set the frontend API\'s CORS origins',
  description:
    'Stores the origins browsers may call the frontend API (/api/frontend) from: each `*` or a URL origin (scheme, host, port; 400 otherwise), at most 100; an empty list allows any (as `*`). ' +
    'Stored, it replaces the deployment\'s FLAGPOST_FRONTEND_CORS_ORIGINS; each app reads it again within 5 seconds. Needs ADMIN (Unleash: UPDATE_CORS, which only admins hold). Emits `setting-created` or `setting-updated`.',
  request: { body: { required: true, content: jsonContent(SetCorsSchema) } },
  responses: { 204: { description: 'Stored' }, ...pickErrors(400, 401, 403, 415) },
})

const telemetryRoute = adminRoute({
  method: 'get',
  path: '/api/admin/telemetry/settings',
  operationId: 'getTelemetrySettings',
  tags,
  summary: 'Get telemetry settings',
  description: 'Flagpost sends no telemetry: neither version information nor feature usage is collected, so both are false. Any signed-in caller.',
  responses: { 200: { description: 'The telemetry settings', content: jsonContent(TelemetrySettingsSchema()) }, ...pickErrors(401, 403) },
})

const recordUiErrorRoute = adminRoute({
  method: 'post',
  path: '/api/admin/record-ui-error',
  operationId: 'uiObservability',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  tags,
  summary: 'Report an error the console met',
  description: 'Logs the message (and the first 2,000 characters of the stack) on the server\'s console with who reported it; stores nothing and writes no event. Any signed-in caller.',
  request: { body: { required: true, content: jsonContent(RecordUiErrorSchema) } },
  responses: { 204: { description: 'Logged' }, ...pickErrors(400, 401, 403, 415) },
})

const readyRoute = createRoute({
  method: 'get',
  path: '/ready',
  operationId: 'getReady',
  tags: ['Operational'],
  summary: 'Readiness check',
  description:
    '200 GOOD when this process should take traffic: its database answers, has every migration of this version applied, and (on the Node server) its background jobs run and it is not shutting down. ' +
    '503 BAD with the `reason` otherwise (a load balancer’s readiness probe; `/health` stays the liveness check). Needs no token.',
  responses: { 200: { description: 'Ready', content: jsonContent(ReadySchema()) }, 503: { description: 'Not ready, and why', content: jsonContent(ReadySchema()) } },
})

/** How much of a reported console error's message and stack one log line keeps. */
const UI_ERROR_LOGGED_CHARS = 2000

export const uiConfigRoutes = createRouter()
  .openapi(getUiConfigRoute, async (c) => {
    const [[off], origins] = await Promise.all([passwordLinksRefused(c.var.db, false), c.var.frontendOrigins.get(c.var.db)])
    const version = c.var.accounts.version ?? '0.1.0'
    return c.json(
      {
        name: 'Flagpost',
        version,
        unleashUrl: publicBaseUrl(c),
        baseUriPath: '',
        disablePasswordAuth: off?.refused ?? false,
        emailEnabled: c.var.accounts.email !== undefined,
        frontendApiOrigins: origins,
        authenticationType: 'open-source',
        flags: {},
        versionInfo: { current: { oss: version }, latest: {}, isLatest: true },
      },
      200,
    )
  })
  .openapi(setCorsRoute, async (c) => {
    await saveFrontendOrigins(c.var.db, c.var.caller, c.req.valid('json').frontendApiOrigins ?? [])
    c.var.frontendOrigins.forget()
    return c.body(null, 204)
  })
  .openapi(telemetryRoute, (c) => c.json({ versionInfoCollectionEnabled: false, featureInfoCollectionEnabled: false }, 200))
  .openapi(recordUiErrorRoute, (c) => {
    // One line through the app's logger: the reporter's text only as bounded, escaped fields (a newline in it cannot
    // forge a line), the reporter by kind and id (no e-mail address in the log).
    const { errorMessage, errorStack } = c.req.valid('json')
    c.var.logger.log('warn', 'console error reported', {
      requestId: c.var.requestId,
      ...principalFields(c.var.principal),
      errorMessage: errorMessage.slice(0, UI_ERROR_LOGGED_CHARS),
      ...(errorStack ? { errorStack: errorStack.slice(0, UI_ERROR_LOGGED_CHARS) } : {}),
    })
    return c.body(null, 204)
  })
  .openapi(readyRoute, async (c) => {
    const notReady = (reason: string) => c.json({ health: 'BAD' as const, reason }, 503)
    const why = c.var.notReady()
    if (why !== undefined) return notReady(why)
    try {
      const [row] = await queryRows<{ applied: number | null }>(c.var.db, sql`select (select count(*) from drizzle.__drizzle_migrations)::int as applied`)
      if ((row?.applied ?? 0) < MIGRATIONS) return notReady(`the database has ${row?.applied ?? 0} of this version's ${MIGRATIONS} migrations applied`)
      return c.json({ health: 'GOOD' as const }, 200)
    } catch (error) {
      console.error('readiness check failed:', loggable(error))
      return notReady('the database cannot be queried')
    }
  })
