import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { validationError } from '../core/errors.js'
import { Permission } from '../core/permissions.js'
import { protectedEnvironmentsCheck } from '../change-requests/guard.js'
import { DeliveryRefused } from '../integrations/delivery.js'
import { webhookUrlProblem } from '../integrations/webhook-target.js'
import { StateImportResultSchema } from '../state/schemas.js'
import { MigrationRefused, migrateFromUnleash, unleashGet } from './unleash.js'

const MigrateInputSchema = z
  .object({
    url: z.string().min(1).max(2000).openapi({ description: 'The base URL of the Unleash instance (http or https; no credentials in it)', example: 'https://unleash.example.com' }),
    token: z.string().min(1).max(1000).openapi({ description: 'An admin API token of that instance: sent only to it, never echoed, logged or stored' }),
    dryRun: z.boolean().optional().openapi({ description: 'Read and check, write nothing: answer the plan' }),
    onConflict: z.enum(['fail', 'skip']).optional().openapi({ description: 'Flags of Flagpost named as one of Unleash’s: `fail` (default) refuses with 409, `skip` leaves them as they are' }),
  })
  .strict()
  .openapi('migrateFromUnleashSchema')

const count = z.number().int()
const MigrationResultSchema = z
  .object({
    plan: z.object({
      counts: z.object({
        projects: count,
        environments: count,
        contextFields: count,
        strategies: count,
        tagTypes: count,
        tags: count,
        segments: count,
        features: count,
        featureStrategies: count,
        featureTags: count,
        featureDependencies: count,
        apiTokens: count.openapi({ description: "Client and frontend tokens carried with their secrets (stored hashed), so their SDKs keep working" }),
      }),
      conflicts: z.object({ names: z.array(z.string()), onConflict: z.enum(['fail', 'skip']) }),
      notCarried: z.array(z.string()).openapi({ description: 'What is not carried, and why (users’ passwords, admin tokens, tokens whose secret Unleash does not show, what the token could not read), never a secret' }),
    }),
    result: StateImportResultSchema.optional().openapi({ description: 'What was written (absent in a dry run)' }),
  })
  .openapi('migrateFromUnleashResultSchema')

const migrateRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/migrate/unleash',
  operationId: 'migrateFromUnleash',
  tags: ['Import/Export'],
  summary: 'Migrate from a running Unleash',
  description:
    'Flagpost: reads an Unleash 8.2 instance through its admin API (projects, environments, context fields, custom strategy types, tag types, tags, segments, every flag with its strategies in order, ' +
    'variants per environment, dependencies and tags) and writes it as the state import does (POST /api/admin/state/import with keep=false): one transaction with its events, every object held to the routes’ rules. ' +
    '`dryRun` answers the plan only. The URL follows the webhook targets’ rules (http or https, no credentials, no private address unless FLAGPOST_ALLOW_PRIVATE_WEBHOOKS); redirects are not followed, ' +
    'each answer is bounded to 10 s and 20 MiB; the token is never echoed. 409 when flags of the same names exist and onConflict is not `skip`. Admins only.',
  request: { body: { required: true, content: jsonContent(MigrateInputSchema) } },
  responses: { 200: { description: 'The plan, and what was written', content: jsonContent(MigrationResultSchema) }, ...pickErrors(400, 401, 403, 409, 415) },
})

export const migrateRoutes = createRouter().openapi(migrateRoute, async (c) => {
  const { url, token, dryRun, onConflict } = c.req.valid('json')
  const { delivery } = c.var
  const problem = webhookUrlProblem(url, delivery.allowPrivateTargets)
  if (problem !== undefined) throw validationError(problem)
  const get = unleashGet(url, token, (target, init) =>
    delivery.get(target, { headers: init.headers as Record<string, string>, timeoutMs: 10_000, allowPrivateTargets: delivery.allowPrivateTargets }).catch((error: unknown) => {
      throw error instanceof DeliveryRefused ? new MigrationRefused(`Unleash is not reachable: ${error.message}`) : error
    }),
  )
  try {
    const answer = await migrateFromUnleash(c.var.db, c.var.caller, get, { dryRun: dryRun ?? false, onConflict: onConflict ?? 'fail' }, protectedEnvironmentsCheck(c))
    return c.json(answer, 200)
  } catch (error) {
    if (error instanceof MigrationRefused) throw validationError(error.message.replaceAll(token, '*****'))
    throw error
  }
})
