import { indexEventText } from './events/text-index.js'
import { createServer as createHttpServer, type RequestListener, type Server, type ServerOptions } from 'node:http'
import { createHash } from 'node:crypto'
import { endStreamsOnHangUp, trackConnections } from './http-connections-node.js'
import { serve } from '@hono/node-server'
import { createApp } from './app.js'
import { migrateRoutes } from './migrate/routes.js'
import { webhookEmailTransport } from './users/email.js'
import { bootstrapAdminTokens, bootstrapSdkTokens } from './api-tokens/store.js'
import { givenSecretProblem } from './api-tokens/secrets.js'
import { bootstrapAdminUser } from './users/store.js'
import { MIN_PASSWORD_LENGTH } from './users/passwords.js'
import { serverMetrics, type ServerMetrics } from './metrics-node.js'
import { withConsole } from './console-node.js'
import { createLogger, errorFields, readLogOptions, type LogOptions } from './http/request-log.js'
import { bufferedLogWriter } from './log-writer-node.js'
import { nodeFastPolls } from './fast-poll-node.js'
import { withCompression } from './compression-node.js'
import { openPg, openPglite, type NodeDbHandle } from './db-node.js'
import { ANALYZE_CHECK_MS, analyzeTables } from './db-analyze-node.js'
import { DEFAULT_DELIVERY_OPTIONS, deliverPending, releaseDeliveryClaims } from './integrations/delivery.js'
import { parseCorsOrigins } from './frontend-api/cors.js'
import { aggregatePendingMetrics, clientNewApplicationsPerDay } from './metrics/aggregate.js'
import { markPotentiallyStale } from './feature-types/potentially-stale.js'
import { applyScheduledChangeRequests } from './change-requests/scheduled.js'
import { nodeGet, nodeWebhookSend } from './webhook-node.js'
import { signInPerMinute } from './auth/rate-limit.js'
import { parseTrustProxy, socketClientAddress, type TrustProxy } from './http/client-address.js'
import { principalTtlMs } from './http/auth.js'
import { signalsPerMinute } from './signals/incoming.js'
import { playgroundEvaluationsPerMinute } from './playground/service.js'
import { evaluationLimitsFromEnv, type EvaluationLimits } from './http/evaluation-limits.js'
import { resourceLimitsFromEnv, type ResourceLimits } from './strategies/schemas.js'
import { releaseRunClaims, runPendingActions } from './actions/runs.js'
import { claimLedger } from './http/background.js'
import { streamHub, type StreamingOptions } from './client-api/streaming.js'
import type { Clock } from './core/clock.js'
import { useSha256Hex } from './client-api/sha256.js'

// Answers' hashes (the frontend API's and OFREP's ETags, SDK payload keys) with node:crypto: synchronous and several
// times cheaper on Node than WebCrypto's digest, the same bytes.
useSha256Hex((text) => createHash('sha256').update(text, 'utf8').digest('hex'))

export interface ServerConfig {
  port: number
  host: string
  dataDir: string
  databaseUrl?: string
  initAdminTokens: string[]
  /** INIT_CLIENT_API_TOKENS / INIT_FRONTEND_API_TOKENS: SDK tokens created at start-up when missing (secrets kept from Unleash). */
  initSdkTokens: { type: 'client' | 'frontend'; secret: string }[]
  allowPrivateWebhooks: boolean
  /** FLAGPOST_ALLOW_PASSWORD_LOGIN=true: password sign-in works even where the settings switch it off (the way back in). */
  allowPasswordLogin: boolean
  /** Where invite links point; default: the origin of each request. */
  publicUrl?: string
  /** An HTTP endpoint that takes outgoing e-mails as JSON; none: no e-mail is sent. */
  emailWebhookUrl?: string
  /** Origins browsers may call the frontend API from (FLAGPOST_FRONTEND_CORS_ORIGINS, comma-separated); default any. */
  frontendCorsOrigins: string[]
  /** Whose X-Forwarded-For is believed (FLAGPOST_TRUST_PROXY); default none: the socket's peer is the client. */
  trustProxy: TrustProxy
  /** Sign-in attempts one client address may make in a minute (FLAGPOST_SIGN_IN_RATE_LIMIT); 0: no limit. */
  signInPerMinute: number
  /** Signals one client address may send one signal endpoint in a minute (FLAGPOST_SIGNAL_RATE_LIMIT, default 60); 0: no limit. */
  signalsPerMinute?: number
  /** The playgrounds' evaluations per caller and minute (FLAGPOST_PLAYGROUND_EVALUATIONS_PER_MINUTE, default 150,000); 0: no limit. */
  playgroundEvaluationsPerMinute?: number | undefined
  /** New applications one client token may create in a day (FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY, default 200); reports of more are dropped. */
  clientNewApplicationsPerDay?: number
  /** How long an admin principal is remembered (FLAGPOST_PRINCIPAL_TTL_SECONDS); default 5 s. */
  principalTtlMs?: number
  /** The Admin user a first start (no users yet) creates for the web console; no password: a random one, printed once. */
  initAdmin: { username: string; password?: string }
  /** The built web console (default console/dist); served at / with the app's paths passed through. */
  consoleDir?: string
  /**
   * Limits of `GET /api/client/streaming` (FLAGPOST_MAX_STREAMS, FLAGPOST_MAX_STREAMS_PER_TOKEN,
   * FLAGPOST_MAX_STREAMS_PER_ADDRESS; defaults 10,000, 1,000, 500) and its timings.
   */
  streaming?: Partial<StreamingOptions>
  /**
   * What evaluating a context may cost (FLAGPOST_REGEX_MAX_PROGRAM, FLAGPOST_CONTEXT_VALUE_MAX_LENGTH,
   * FLAGPOST_REGEX_WORK_BUDGET; defaults 5,000 instructions, 1,000 characters, 2,000,000 steps).
   */
  evaluation?: Partial<EvaluationLimits> & { regexMaxProgram?: number }
  /** FLAGPOST_METRICS_TOKEN: serves Prometheus metrics at /internal-backstage/prometheus to `Authorization: Bearer <it>`; unset: not served. */
  metricsToken?: string
  /** Request ids and log lines (LOG_FORMAT json|pretty, LOG_LEVEL error|warn|info|debug; info logs every request). */
  log?: LogOptions
  /** Unleash's resource limits (UNLEASH_CONSTRAINTS_LIMIT, UNLEASH_CONSTRAINT_VALUES_LIMIT, …; Unleash's defaults). */
  resourceLimits?: Partial<ResourceLimits>
  /**
   * SHUTDOWN_WAIT_MS (default 10,000): how long a shutdown waits for requests in flight and background work under way;
   * past it, connections are cut, and the work this process claimed and did not finish is handed back.
   */
  shutdownWaitMs?: number
  /** FLAGPOST_WEBHOOK_TIMEOUT_MS (default 10,000, at most 60,000): how long one webhook delivery may take. */
  webhookTimeoutMs?: number
  /** The embedded database only: how often tables changed enough are analyzed again (default ANALYZE_CHECK_MS, a minute). */
  analyzeCheckMs?: number
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const port = Number(env.PORT ?? 4242)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got "${env.PORT}"`)
  const initAdminTokens = (env.INIT_ADMIN_API_TOKENS ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
  const malformed = initAdminTokens.filter((t) => !/^\*:\*\..+$/.test(t))
  if (malformed.length > 0) throw new Error('INIT_ADMIN_API_TOKENS must be comma-separated admin tokens of the form *:*.<secret>')
  const initSdkTokens = (['client', 'frontend'] as const).flatMap((type) => {
    const name = type === 'client' ? 'INIT_CLIENT_API_TOKENS' : 'INIT_FRONTEND_API_TOKENS'
    const secrets = (env[name] ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean)
    for (const secret of secrets) {
      const scope = /^([^:.[\]]+):([^.]+)\./.exec(secret)
      const problem = scope ? givenSecretProblem(secret, [scope[1]!], scope[2]!) : 'not of the form <project>:<environment>.<random>'
      if (problem !== undefined) throw new Error(`${name}: a token (${scope ? `${scope[1]}:${scope[2]}` : 'unreadable scope'}) is refused: ${problem}`)
    }
    return secrets.map((secret) => ({ type, secret }))
  })
  const adminPassword = env.FLAGPOST_ADMIN_PASSWORD || undefined
  if (adminPassword !== undefined && adminPassword.length < MIN_PASSWORD_LENGTH) throw new Error(`FLAGPOST_ADMIN_PASSWORD must be at least ${MIN_PASSWORD_LENGTH} characters`)
  return {
    port,
    host: env.HOST ?? '0.0.0.0',
    dataDir: env.FLAGPOST_DATA_DIR ?? './.flagpost',
    databaseUrl: env.DATABASE_URL || undefined,
    initAdminTokens,
    initSdkTokens,
    allowPrivateWebhooks: env.FLAGPOST_ALLOW_PRIVATE_WEBHOOKS === 'true',
    allowPasswordLogin: env.FLAGPOST_ALLOW_PASSWORD_LOGIN === 'true',
    publicUrl: httpUrl(env.FLAGPOST_PUBLIC_URL, 'FLAGPOST_PUBLIC_URL'),
    emailWebhookUrl: httpUrl(env.FLAGPOST_EMAIL_WEBHOOK_URL, 'FLAGPOST_EMAIL_WEBHOOK_URL'),
    frontendCorsOrigins: parseCorsOrigins(env.FLAGPOST_FRONTEND_CORS_ORIGINS),
    trustProxy: parseTrustProxy(env.FLAGPOST_TRUST_PROXY),
    signInPerMinute: signInPerMinute(env.FLAGPOST_SIGN_IN_RATE_LIMIT),
    signalsPerMinute: signalsPerMinute(env.FLAGPOST_SIGNAL_RATE_LIMIT),
    playgroundEvaluationsPerMinute: playgroundEvaluationsPerMinute(env.FLAGPOST_PLAYGROUND_EVALUATIONS_PER_MINUTE),
    clientNewApplicationsPerDay: clientNewApplicationsPerDay(env.FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY),
    principalTtlMs: principalTtlMs(env.FLAGPOST_PRINCIPAL_TTL_SECONDS),
    initAdmin: { username: env.FLAGPOST_ADMIN_USERNAME?.trim() || 'admin', ...(adminPassword ? { password: adminPassword } : {}) },
    streaming: {
      maxConnections: positiveInteger(env.FLAGPOST_MAX_STREAMS, 'FLAGPOST_MAX_STREAMS'),
      maxPerToken: positiveInteger(env.FLAGPOST_MAX_STREAMS_PER_TOKEN, 'FLAGPOST_MAX_STREAMS_PER_TOKEN'),
      maxPerAddress: positiveInteger(env.FLAGPOST_MAX_STREAMS_PER_ADDRESS, 'FLAGPOST_MAX_STREAMS_PER_ADDRESS'),
    },
    evaluation: evaluationLimitsFromEnv(env),
    resourceLimits: resourceLimitsFromEnv(env),
    metricsToken: metricsToken(env.FLAGPOST_METRICS_TOKEN),
    log: readLogOptions(env),
    shutdownWaitMs: positiveInteger(env.SHUTDOWN_WAIT_MS, 'SHUTDOWN_WAIT_MS'),
    webhookTimeoutMs: webhookTimeoutMs(env.FLAGPOST_WEBHOOK_TIMEOUT_MS),
  }
}

function metricsToken(value: string | undefined): string | undefined {
  if (!value) return undefined
  if (value.length < 16 || !/^[\x21-\x7e]+$/.test(value)) throw new Error('FLAGPOST_METRICS_TOKEN must be at least 16 printable characters without spaces')
  return value
}

/** The metrics scrape before the app (it is no API route: not in the OpenAPI document, no API token). */
function withMetrics<Env>(metrics: ServerMetrics, fetch: (request: Request, env: Env) => Response | Promise<Response>) {
  // The bindings (`env`) carry the socket: the client's address (sign-in limits, lockouts) is read from it.
  return (request: Request, env: Env) => metrics.scrape(request) ?? fetch(request, env)
}

/** A delivery holds a connection and its batch's claim: a minute at most. */
const MAX_WEBHOOK_TIMEOUT_MS = 60_000

function webhookTimeoutMs(value: string | undefined): number | undefined {
  const ms = positiveInteger(value, 'FLAGPOST_WEBHOOK_TIMEOUT_MS')
  if (ms !== undefined && ms > MAX_WEBHOOK_TIMEOUT_MS) throw new Error(`FLAGPOST_WEBHOOK_TIMEOUT_MS must be at most ${MAX_WEBHOOK_TIMEOUT_MS}, got "${value}"`)
  return ms
}

function positiveInteger(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined
  const number = Number(value)
  if (!Number.isInteger(number) || number < 1) throw new Error(`${name} must be a whole number of at least 1, got "${value}"`)
  return number
}

// Deliveries are made right after each write; this sweep only catches what a stopped process left queued.
const DELIVERY_SWEEP_MS = 60_000
const POTENTIALLY_STALE_JOB_MS = 60 * 60_000
const SCHEDULED_CHANGE_REQUESTS_JOB_MS = 60_000
/** How long a shutdown waits for requests in flight and background work before it cuts connections (SHUTDOWN_WAIT_MS). */
const SHUTDOWN_WAIT_MS = 10_000

function httpUrl(value: string | undefined, name: string): string | undefined {
  if (!value) return undefined
  try {
    const url = new URL(value)
    if (url.protocol === 'http:' || url.protocol === 'https:') return value
  } catch {}
  throw new Error(`${name} must be an http(s) URL, got "${value}"`)
}

/**
 * Opens and migrates the database, makes sure an admin token exists, and serves the app. `clock` (default: the system's)
 * is the time of everything the server does: requests, and the jobs it runs at start and then periodically.
 */
export async function startServer(config: ServerConfig, { clock = () => new Date(), onFastPoll }: { clock?: Clock; /** Tests: each SDK poll answered before the router. */ onFastPoll?: () => void } = {}) {
  const logger = createLogger(config.log ?? { format: 'pretty', level: 'warn' })
  const database: NodeDbHandle = config.databaseUrl
    ? openPg(config.databaseUrl, { onIdleError: (error) => logger.log('error', 'database connection lost (the next query opens another)', errorFields(error)) })
    : await openPglite({ dataDir: config.dataDir })
  await database.migrate()
  const firstToken = await bootstrapAdminTokens(database.db, clock(), config.initAdminTokens)
  for (const skipped of await bootstrapSdkTokens(database.db, clock(), config.initSdkTokens)) console.warn(`INIT token not created: ${skipped}`)
  const firstAdmin = await bootstrapAdminUser(database.db, clock(), config.initAdmin)
  // GET /ready: no traffic before the background jobs run, nor once shutting down (a load balancer drains first).
  let phase: 'starting' | 'running' | 'stopping' = 'starting'
  const makeHub = streamHub(config.streaming)
  let hub: ReturnType<typeof makeHub> | undefined
  const metrics = serverMetrics(config.metricsToken, () => database.db, () => ({ sdk: hub?.stats().connections ?? 0 }), () => database.poolState())
  const measured = config.metricsToken !== undefined
  if (measured) database.timeQueries(metrics.query)
  const failed = (job: string) => (error: unknown) => logger.log('error', 'background job failed', { job, ...errorFields(error) })
  const delivery = { ...DEFAULT_DELIVERY_OPTIONS, logger, timeoutMs: config.webhookTimeoutMs ?? DEFAULT_DELIVERY_OPTIONS.timeoutMs, allowPrivateTargets: config.allowPrivateWebhooks, send: nodeWebhookSend(), get: nodeGet() }
  const email = config.emailWebhookUrl ? webhookEmailTransport(config.emailWebhookUrl) : undefined
  const claims = claimLedger()
  const shutdownWaitMs = config.shutdownWaitMs ?? SHUTDOWN_WAIT_MS
  const app = createApp({
    claims,
    nodeRoutes: [migrateRoutes],
    db: () => database.db,
    clock,
    delivery,
    publicUrl: config.publicUrl,
    email,
    sdk: { frontendCorsOrigins: config.frontendCorsOrigins, clientNewApplicationsPerDay: config.clientNewApplicationsPerDay, observePayload: measured ? metrics.payload : undefined, onFastPoll },
    streams: (sdk) => (hub = makeHub(sdk)),
    observe: measured ? metrics.observe : undefined,
    log: config.log,
    // The socket's peer, or as far back through X-Forwarded-For as the proxies FLAGPOST_TRUST_PROXY names.
    clientAddress: socketClientAddress(config.trustProxy),
    signIn: { perMinute: config.signInPerMinute },
    principalTtlMs: config.principalTtlMs,
    notReady: () => (phase === 'running' ? undefined : phase === 'starting' ? 'the background jobs are starting' : 'shutting down'),
    allowPasswordLogin: config.allowPasswordLogin,
    signalsPerMinute: config.signalsPerMinute,
    playgroundEvaluationsPerMinute: config.playgroundEvaluationsPerMinute,
    evaluation: config.evaluation,
    ...(config.resourceLimits ? { resourceLimits: config.resourceLimits } : {}),
  })
  // The periodic jobs under way: a shutdown waits for them (within SHUTDOWN_WAIT_MS) before it closes the database.
  const underway = new Set<Promise<unknown>>()
  const track = (job: Promise<unknown>) => {
    underway.add(job)
    void job.finally(() => underway.delete(job))
  }
  const sweep = setInterval(() => {
    if (phase === 'stopping') return
    track(deliverPending(database.db, clock, delivery, claims).catch(failed('integration delivery')))
    // SDK reports are folded right after they arrive; this catches what a stopped process left in the inbox.
    track(aggregatePendingMetrics(database.db, clock, undefined, config.clientNewApplicationsPerDay, logger).catch(failed('metrics aggregation')))
    // Action sets' runs are made right after their signal; this finishes what a stopped process left.
    track(runPendingActions(database.db, clock, { claims, logger }).catch(failed('action set runs')))
    // Writes run it after their response; this catches events recorded otherwise (jobs, imports at start).
    track(indexEventText(database.db).catch(failed('event text index')))
  }, DELIVERY_SWEEP_MS)
  sweep.unref()
  // Flags outlive their type's lifetime by days: marking them hourly (and once at start) is soon enough.
  const markStale = () => track(markPotentiallyStale(database.db, clock()).catch(failed('potentially stale')))
  markStale()
  // The event search's text index: what a migration or a stopped process left, before the first request (then after
  // writes and in the sweep). Searches are right without it, only slower.
  await indexEventText(database.db).catch(failed('event text index'))
  const staleJob = setInterval(markStale, POTENTIALLY_STALE_JOB_MS)
  staleJob.unref()
  // Scheduled change requests are applied within a minute of their time (and those a stopped process missed, at start).
  const applyScheduled = () => track(applyScheduledChangeRequests(database.db, clock(), logger).catch(failed('scheduled change requests')))
  applyScheduled()
  const scheduledJob = setInterval(applyScheduled, SCHEDULED_CHANGE_REQUESTS_JOB_MS)
  scheduledJob.unref()
  // The embedded database has no autovacuum: its planner statistics are made here, off the request path (once the
  // migrations ran, then every minute), one run at a time.
  let analyzeJob: ReturnType<typeof setInterval> | undefined
  if (!config.databaseUrl) {
    let analyzing: Promise<unknown> | undefined
    const analyze = () => {
      if (analyzing || phase === 'stopping') return
      analyzing = analyzeTables(database.db, logger).catch(failed('analyze'))
      track(analyzing.finally(() => (analyzing = undefined)))
    }
    analyze()
    analyzeJob = setInterval(analyze, config.analyzeCheckMs ?? ANALYZE_CHECK_MS)
    analyzeJob.unref()
  }
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const routed = endStreamsOnHangUp(withCompression(withMetrics(metrics, withConsole(app.routed, config.consoleDir))))
    // The unchanged SDK poll is answered first, from Node's request itself (src/fast-poll-node.ts), before node-server
    // makes a Web request of it. Its 304 is what the wrappers would pass unchanged (no compression of a 304, not the
    // scrape, an app path); anything else goes to node-server and the wrappers.
    const fastPoll = nodeFastPolls(app.fastPoll)
    // node-server makes its server with (serverOptions, its request listener).
    const createServer = ((options: ServerOptions, listener: RequestListener) =>
      createHttpServer(options, (request, response) => {
        if (!fastPoll(request, response)) listener(request, response)
      })) as typeof createHttpServer
    const s = serve({ fetch: routed, port: config.port, hostname: config.host, createServer }, () => resolve(s))
  })
  const connections = trackConnections(server as unknown as Server)
  // A client may close its side once it has sent its request (half-close) and still read the answer. Node's
  // HTTP server otherwise drops a request whose body it has not read yet when that end arrives: one still
  // being authenticated against the database got no answer at all.
  ;(server as unknown as { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true
  phase = 'running'
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : config.port
  const url = `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`
  return {
    url,
    firstToken,
    firstAdmin,
    async close() {
      phase = 'stopping'
      const deadline = Date.now() + shutdownWaitMs
      clearInterval(sweep)
      clearInterval(staleJob)
      clearInterval(scheduledJob)
      clearInterval(analyzeJob)
      // From here no job claims more work; what it holds is finished within the wait or handed back below.
      claims.stop()
      await app.endStreams()
      // In-flight requests finish; at the deadline the rest are cut. Node's own server.close() also destroys at once
      // the connections it deems idle, and under load those included requests not answered yet (each saw a reset): the
      // server ends connections itself instead (src/http-connections-node.ts), each once it has no request in flight.
      await connections.drain(deadline)
      // Background work under way gets what is left of the wait.
      let waited: ReturnType<typeof setTimeout> | undefined
      await Promise.race([
        Promise.all([app.idle(), ...underway]),
        new Promise((resolve) => (waited = setTimeout(resolve, Math.max(0, deadline - Date.now())))),
      ])
      clearTimeout(waited)
      // What this process claimed and did not finish goes back to the queue now, not when its claim goes stale.
      const held = claims.held()
      if (held.length > 0) {
        try {
          const released = (await releaseRunClaims(database.db, held)) + (await releaseDeliveryClaims(database.db, held))
          logger.log('warn', 'shutdown: claimed background work not finished, handed back', { released, actionRuns: held.filter((h) => h.queue === 'action_runs').map((h) => h.id), deliveries: held.filter((h) => h.queue === 'integration_deliveries').map((h) => h.id) })
        } catch (error) {
          logger.log('error', 'shutdown: handing back claimed background work failed (it is taken over once its claim is stale)', errorFields(error))
        }
      }
      await database.close()
    },
  }
}

async function main() {
  const read = readConfig()
  // Log lines through a buffer (one write per turn of the event loop, not one per request), flushed on exit.
  const logs = bufferedLogWriter()
  const config: ServerConfig = read.log ? { ...read, log: { ...read.log, write: logs.write } } : read
  const server = await startServer(config)
  console.log(`Flagpost is listening on ${server.url} (database: ${config.databaseUrl ? 'DATABASE_URL' : `embedded, in ${config.dataDir}`})`)
  console.log(`API reference: ${server.url}/docs`)
  if (server.firstAdmin) {
    const password = server.firstAdmin.password ? `password ${server.firstAdmin.password} (shown only this once; to choose it, set FLAGPOST_ADMIN_PASSWORD before the first start)` : 'the password in FLAGPOST_ADMIN_PASSWORD'
    console.log(`\nWeb console: open ${server.url} and sign in as "${server.firstAdmin.username}" with ${password}\n`)
  }
  if (server.firstToken) {
    console.log(`\nFirst admin API token (shown only this once, keep it safe):\n\n  ${server.firstToken}\n`)
    console.log(`Try: curl -H "Authorization: ${server.firstToken}" ${server.url}/api/admin/projects`)
  }
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logs.flush()
    console.log(`${signal}: shutting down (requests in flight and background work get up to ${config.shutdownWaitMs ?? SHUTDOWN_WAIT_MS} ms)`)
    await server.close()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/src/server.ts')) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  })
}
