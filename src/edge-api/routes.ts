import { createRoute } from '@hono/zod-openapi'
import { clientAddressOf } from '../http/client-address.js'
import { validationError } from '../core/errors.js'
import { createRouter, jsonContent, SECURITY_SCHEME } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { liveApiTokensByHash, markTokensSeen } from '../api-tokens/store.js'
import { hashSecret } from '../api-tokens/secrets.js'
import { sdkPrincipal } from '../client-api/auth.js'
import { environmentOf, tokenProjects } from '../client-api/scope.js'
import { together } from '../db.js'
import { storeBulk } from '../metrics/ingest.js'
import { bulkReports } from './bulk.js'
import { BulkMetricsSchema, TokenStringListSchema, ValidatedEdgeTokensSchema } from './schemas.js'

const tags = ['Unleash Edge']

const getValidTokensRoute = createRoute({
  method: 'post',
  path: '/edge/validate',
  operationId: 'getValidTokens',
  tags,
  security: [{}],
  summary: 'Check which tokens are valid',
  description:
    'What Unleash Edge asks before it serves a token: of the tokens sent, the valid ones (API tokens: client, frontend and admin, not personal access ' +
    'tokens), each with its type, projects (`*` for all) and environment, in the order sent. Unknown, deleted and expired tokens are left out of the answer ' +
    '(still 200), as Unleash does; Edge then refuses them. Needs no token itself (Edge sends none), as in Unleash: it tells nothing to whoever does not ' +
    'already hold a token. At most 1000 tokens a request.',
  request: { body: { required: true, content: jsonContent(TokenStringListSchema) } },
  responses: { 200: { description: 'The valid tokens', content: jsonContent(ValidatedEdgeTokensSchema) }, ...pickErrors(400, 413, 415) },
})

const clientBulkMetricsRoute = createRoute({
  method: 'post',
  path: '/api/client/metrics/bulk',
  operationId: 'clientBulkMetrics',
  tags,
  security: [{ [SECURITY_SCHEME]: [] }],
  summary: 'Send metrics in bulk',
  description:
    'What Unleash Edge sends upstream for the SDKs behind it: `applications` (registrations), `metrics` (per flag, application, environment and hour: ' +
    'yes/no and variant counts), `impactMetrics` and `seenTokens`. A client token reports for its own environment: metrics of other environments are ' +
    'dropped and registrations count for it, as Unleash does; an admin token or a client token of every environment reports for the environment each ' +
    'entry names. Flags outside the token’s projects and unknown flags are ignored, as for `POST /api/client/metrics`. Impact metrics are kept for the ' +
    'application their samples’ `appName` label names (else the `Unleash-AppName` header’s, else `unleash-edge`). `seenTokens` marks those API tokens as ' +
    'used. The shapes are Unleash’s; where Unleash requires a field Edge’s own types may leave null (an application’s `instanceId`, `environment`), ' +
    'null and absent are accepted. Accepted with 202 once stored (one insert); folded in the background. Frontend tokens get 403. ' +
    'A client token may name at most 100 distinct applications (`appName`s of registrations and metrics) in one report (400 past it); admin tokens are not capped.',
  request: { body: { required: true, content: jsonContent(BulkMetricsSchema) } },
  responses: { 202: { description: 'Accepted' }, ...pickErrors(400, 401, 403, 413, 415) },
})

/**
 * Distinct applications one bulk report of a client token may name: an Edge forwards the SDKs behind it, a handful of
 * applications; thousands of distinct appNames are a token holder filling the applications list (each new one is an
 * `application-created` event and an upsert). Admin tokens are not capped.
 */
export const BULK_APPLICATIONS_PER_REQUEST = 100

function checkBulkApplications(body: { applications: { appName: string }[]; metrics: { appName: string }[]; impactMetrics?: { samples: { labels?: Record<string, unknown> | null }[] }[] }) {
  const names = new Set<string>()
  for (const entry of [...body.applications, ...body.metrics]) names.add(entry.appName.trim())
  // Impact metrics' samples name their application in an `appName` label: each is an application too.
  for (const metric of body.impactMetrics ?? [])
    for (const sample of metric.samples) {
      const appName = sample.labels?.appName
      if (typeof appName === 'string' && appName.trim()) names.add(appName.trim().slice(0, 255))
    }
  if (names.size > BULK_APPLICATIONS_PER_REQUEST) {
    throw validationError(`This report names ${names.size} applications, more than the ${BULK_APPLICATIONS_PER_REQUEST} a client token may report at once: send them in several reports`, [
      { path: 'body', message: `at most ${BULK_APPLICATIONS_PER_REQUEST} distinct appName values` },
    ])
  }
}

export const edgeRoutes = createRouter()
  .openapi(getValidTokensRoute, async (c) => {
    const sent = [...new Set(c.req.valid('json').tokens.map((t) => t.trim()).filter(Boolean))]
    const hashed = await Promise.all(sent.map(async (token) => ({ token, hash: await hashSecret(token) })))
    const live = new Map((await liveApiTokensByHash(c.var.db, hashed.map((h) => h.hash), c.var.clock())).map((row) => [row.secretHash, row]))
    const tokens = hashed.flatMap(({ token, hash }) => {
      const row = live.get(hash)
      if (!row) return []
      return [{ token, type: row.type as 'admin' | 'client' | 'frontend', projects: row.type === 'admin' ? ['*'] : row.projects, environment: row.environment }]
    })
    return c.json({ tokens }, 200)
  })
  .openapi(clientBulkMetricsRoute, async (c) => {
    const body = c.req.valid('json')
    const principal = sdkPrincipal(c)
    if (principal.kind !== 'admin-token') checkBulkApplications(body)
    const now = c.var.caller.now
    const fixed = principal.kind !== 'admin-token' && principal.environment !== '*' ? principal.environment : undefined
    const fallback = await environmentOf(c, principal)
    const projects = tokenProjects(principal)
    const reports = bulkReports(body, { environment: fixed, fallback, appName: c.req.header('unleash-appname')?.trim().slice(0, 255) || 'unleash-edge' }, now)
    const seen = await Promise.all([...new Set(body.seenTokens ?? [])].map(hashSecret))
    const reporter = { tokenName: principal.name, projects: projects === '*' ? ['*'] : projects, clientIp: clientAddressOf(c) }
    await together(c.var.db, [(q) => storeBulk(q, now, reporter, reports), (q) => markTokensSeen(q, seen, now)])
    c.var.sdk.aggregation.schedule(c)
    return c.body(null, 202)
  })
