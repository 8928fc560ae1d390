import { indexEventText } from './events/text-index.js'
import type { ExecutionContext } from 'hono'
import { createApp, type App, type AppDeps } from './app.js'
import { webhookEmailTransport } from './users/email.js'
import { openNeon, type DbHandle } from './db.js'
import { DEFAULT_DELIVERY_OPTIONS, deliverPending } from './integrations/delivery.js'
import { parseCorsOrigins } from './frontend-api/cors.js'
import { aggregatePendingMetrics, clientNewApplicationsPerDay } from './metrics/aggregate.js'
import { markPotentiallyStale } from './feature-types/potentially-stale.js'
import { applyScheduledChangeRequests } from './change-requests/scheduled.js'
import { createLogger, errorFields, readLogOptions } from './http/request-log.js'
import { loggable } from './core/errors.js'
import { signInPerMinute } from './auth/rate-limit.js'
import { cloudflareClientAddress } from './http/client-address.js'
import { principalTtlMs } from './http/auth.js'
import { signalsPerMinute } from './signals/incoming.js'
import { playgroundEvaluationsPerMinute } from './playground/service.js'
import { evaluationLimitsFromEnv } from './http/evaluation-limits.js'
import { resourceLimitsFromEnv } from './strategies/schemas.js'
import { runPendingActions } from './actions/runs.js'
import { cacheApiPayloads, type CacheLike } from './client-api/cache-api-payloads.js'
import { scopeKey } from './client-api/payload.js'
import { streamHub } from './client-api/streaming.js'

export interface WorkerEnv {
  /** Secret: the Postgres (Neon) connection string. */
  DATABASE_URL?: string
  /** Local development and tests only: a plain-WebSocket relay to Postgres, e.g. `127.0.0.1:5488/v1`. */
  NEON_WS_PROXY?: string
  /** Local development and tests only: a SQL-over-HTTP endpoint speaking Neon's protocol, e.g. `http://127.0.0.1:5488/sql`. */
  NEON_FETCH_ENDPOINT?: string
  /** `true` lets webhooks reach loopback and private addresses. */
  FLAGPOST_ALLOW_PRIVATE_WEBHOOKS?: string
  /** `true`: password sign-in works even where the settings switch it off (the way back in when single sign-on fails). */
  FLAGPOST_ALLOW_PASSWORD_LOGIN?: string
  /** Where invite links point, e.g. `https://flags.example.com`; default: the origin of the request. */
  FLAGPOST_PUBLIC_URL?: string
  /** An HTTP endpoint that takes outgoing e-mails as JSON (`{ to, subject, text }`); unset: no e-mail is sent. */
  FLAGPOST_EMAIL_WEBHOOK_URL?: string
  /** Origins browsers may call the frontend API from, comma-separated; default any (`*`). */
  FLAGPOST_FRONTEND_CORS_ORIGINS?: string
  /** json or pretty (default pretty); with LOG_LEVEL info, one line per request through console.log (Workers Logs, Logpush). */
  LOG_FORMAT?: string
  LOG_LEVEL?: string
  /** Sign-in attempts one client address may make in a minute (per isolate); default 10, 0 for no limit. */
  FLAGPOST_SIGN_IN_RATE_LIMIT?: string
  /** Seconds an isolate remembers the admin principal of a token or session (0 to 60, default 5). */
  FLAGPOST_PRINCIPAL_TTL_SECONDS?: string
  /** Signals one client address may send one signal endpoint in a minute (per isolate); default 60, 0 for no limit. */
  FLAGPOST_SIGNAL_RATE_LIMIT?: string
  FLAGPOST_PLAYGROUND_EVALUATIONS_PER_MINUTE?: string
  FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY?: string
  /** The largest program a saved REGEX pattern may compile to; default 5,000 instructions. */
  FLAGPOST_REGEX_MAX_PROGRAM?: string
  /** The longest context value the playgrounds and the frontend API evaluate; default 1,000 characters. */
  FLAGPOST_CONTEXT_VALUE_MAX_LENGTH?: string
  /** The evaluation work (REGEX matching steps and every other operator's) one request may take; default 2,000,000. */
  FLAGPOST_EVALUATION_WORK_BUDGET?: string
  /** The former name of FLAGPOST_EVALUATION_WORK_BUDGET, still read when that is unset. */
  FLAGPOST_REGEX_WORK_BUDGET?: string
  /** Unleash's resource limits: strategies per flag environment (30), constraints per strategy (30), values per constraint (250), values per segment (1,000), segments per strategy (5). */
  UNLEASH_FEATURE_ENVIRONMENT_STRATEGIES_LIMIT?: string
  UNLEASH_CONSTRAINTS_LIMIT?: string
  UNLEASH_CONSTRAINT_VALUES_LIMIT?: string
  UNLEASH_SEGMENT_VALUES_LIMIT?: string
  UNLEASH_STRATEGY_SEGMENTS_LIMIT?: string
  /** wrangler.toml [version_metadata]: the deployed version, which keys the SDK payloads shared through the Cache API. */
  CF_VERSION_METADATA?: { id: string }
  /** wrangler.toml [assets]: the web console's files, and the OpenAPI document scripts/build-worker.ts made. */
  ASSETS?: { fetch(input: string): Promise<Response> }
  /** wrangler.toml [[durable_objects.bindings]]: the SdkStreams objects, one per SDK scope, that hold `GET /api/client/streaming`. */
  SDK_STREAMS?: { idFromName(name: string): unknown; get(id: unknown): { fetch(request: Request): Promise<Response> } }
}

/** Set by scripts/build-worker.ts: the path, in the static assets, of the OpenAPI document it made from the routes. */
declare const FLAGPOST_OPENAPI_DOCUMENT: string

/**
 * The OpenAPI document the build made (the bundle has no generator). The assets answer a path they do not hold with
 * the console's index.html: anything but JSON means the document is missing, an error rather than a wrong answer.
 */
async function prebuiltOpenApiDocument(env: WorkerEnv) {
  if (!env.ASSETS) throw new Error('no ASSETS binding (wrangler.toml [assets]): the OpenAPI document is read from the static assets')
  const response = await env.ASSETS.fetch(`https://assets.invalid${FLAGPOST_OPENAPI_DOCUMENT}`)
  if (!response.ok || !response.headers.get('content-type')?.startsWith('application/json') || !response.body) {
    throw new Error(`the OpenAPI document is not in the static assets at ${FLAGPOST_OPENAPI_DOCUMENT} (${response.status} ${response.headers.get('content-type')})`)
  }
  return response.body
}

interface RequestBindings extends Record<string, unknown> {
  connection: LazyConnection
  /** Work that runs after the response (integration deliveries); the connection closes after it. */
  background: Promise<unknown>[]
}

/**
 * The request's database, made on first use and closed after the response: statements over HTTP, and a WebSocket
 * pool that only an interactive transaction opens (see openNeon). A request that reads nothing (a cached SDK
 * answer) sends nothing.
 */
class LazyConnection {
  private handle: DbHandle | undefined
  constructor(private readonly env: WorkerEnv) {}

  get db() {
    if (!this.handle) {
      if (!this.env.DATABASE_URL) throw new Error('DATABASE_URL is not set: add it with `wrangler secret put DATABASE_URL` (or to .dev.vars)')
      this.handle = openNeon(this.env.DATABASE_URL, { wsProxy: this.env.NEON_WS_PROXY, fetchEndpoint: this.env.NEON_FETCH_ENDPOINT })
    }
    return this.handle.db
  }

  async close() {
    await this.handle?.close()
  }
}

const deliveryOptions = (env: WorkerEnv) => ({ ...DEFAULT_DELIVERY_OPTIONS, allowPrivateTargets: env.FLAGPOST_ALLOW_PRIVATE_WEBHOOKS === 'true' })

function sharedPayloadsOf(env: WorkerEnv) {
  // Feature-detected: `caches` is a Workers global (the Node types that also check this file have none).
  const cache = (globalThis as { caches?: { default?: CacheLike } }).caches?.default
  if (!cache || !env.DATABASE_URL) return undefined
  return cacheApiPayloads(cache, { database: env.DATABASE_URL, version: env.CF_VERSION_METADATA?.id })
}

// Built on the first request, not at module scope, and reused by every request of the isolate.
let app: App | undefined

/**
 * `GET /api/client/streaming` is handed, once the worker has authenticated it and found its scope, to the Durable
 * Object of that scope (named by scopeKey): a stream outlives any isolate's request, and one object per scope builds
 * each payload once for all its streams.
 */
function streamsIn(namespace: NonNullable<WorkerEnv['SDK_STREAMS']>): NonNullable<AppDeps['streams']> {
  return () => ({
    open: async (c, scope) => namespace.get(namespace.idFromName(scopeKey(scope))).fetch(c.req.raw),
    // The objects read the revision every second: a write through any isolate reaches them so.
    changed() {},
    async close() {},
  })
}

/**
 * The Durable Object holding the SDK streams of one scope: the same app with the Node server's stream hub
 * (client-api/streaming.ts), on a database connection of its own that speaks HTTP only (the hub reads; it never opens
 * a transaction). Each request is authenticated again here, as the object answers it.
 */
export class SdkStreams {
  private app: App | undefined
  private readonly connection: LazyConnection

  constructor(_state: unknown, private readonly env: WorkerEnv) {
    this.connection = new LazyConnection(env)
  }

  async fetch(request: Request): Promise<Response> {
    this.app ??= createApp({
      db: () => this.connection.db,
      sdk: { frontendCorsOrigins: parseCorsOrigins(this.env.FLAGPOST_FRONTEND_CORS_ORIGINS) },
      streams: streamHub(),
      // The stream's request as the worker passed it on, CF-Connecting-IP included: the per-address stream limit.
      clientAddress: cloudflareClientAddress,
      openApiDocument: () => prebuiltOpenApiDocument(this.env),
      // The REGEX program limit is one per isolate (evaluation/regex.ts): the same as the worker's, whichever app comes first.
      evaluation: evaluationLimitsFromEnv(this.env as unknown as Record<string, unknown>),
      resourceLimits: resourceLimitsFromEnv(this.env as unknown as Record<string, unknown>),
    })
    return this.app.fetch(request, {})
  }
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
    app ??= createApp({
      publicUrl: env.FLAGPOST_PUBLIC_URL || undefined,
      email: env.FLAGPOST_EMAIL_WEBHOOK_URL ? webhookEmailTransport(env.FLAGPOST_EMAIL_WEBHOOK_URL) : undefined,
      db: (c) => (c.env as RequestBindings).connection.db,
      delivery: deliveryOptions(env),
      background: (c, task) => {
        const bindings = c.env as RequestBindings
        bindings.background.push(task(bindings.connection.db).catch((error: unknown) => console.error('background work failed:', loggable(error))))
      },
      // The caches live per isolate; a request never waits on work another request started (it may never settle here).
      // SDK polls answer from the isolate's payload and check the revision after the response; a cold isolate
      // takes the payload another isolate of the location stored in the Cache API (see client-api/state.ts).
      // Neon reads a project's overview and flags quickly; a cache miss would cost a second round trip.
      cacheProjectReads: false,
      sdk: {
        frontendCorsOrigins: parseCorsOrigins(env.FLAGPOST_FRONTEND_CORS_ORIGINS),
        shareInFlight: false,
        staleWhileRevalidateMs: 5 * 60_000,
        sharedPayloads: sharedPayloadsOf(env),
        clientNewApplicationsPerDay: clientNewApplicationsPerDay(env.FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY),
      },
      // Cloudflare sets CF-Connecting-IP itself, replacing any the client sent; no other header is believed here.
      clientAddress: cloudflareClientAddress,
      signIn: { perMinute: signInPerMinute(env.FLAGPOST_SIGN_IN_RATE_LIMIT) },
      principalTtlMs: principalTtlMs(env.FLAGPOST_PRINCIPAL_TTL_SECONDS),
      openApiDocument: () => prebuiltOpenApiDocument(env),
      allowPasswordLogin: env.FLAGPOST_ALLOW_PASSWORD_LOGIN === 'true',
      signalsPerMinute: signalsPerMinute(env.FLAGPOST_SIGNAL_RATE_LIMIT),
      playgroundEvaluationsPerMinute: playgroundEvaluationsPerMinute(env.FLAGPOST_PLAYGROUND_EVALUATIONS_PER_MINUTE),
      evaluation: evaluationLimitsFromEnv(env as unknown as Record<string, unknown>),
      resourceLimits: resourceLimitsFromEnv(env as unknown as Record<string, unknown>),
      streams: env.SDK_STREAMS ? streamsIn(env.SDK_STREAMS) : undefined,
      log: readLogOptions(env),
    })
    const bindings: RequestBindings = { connection: new LazyConnection(env), background: [] }
    try {
      return await app.fetch(request, bindings, ctx)
    } finally {
      ctx.waitUntil(Promise.allSettled(bindings.background).then(() => bindings.connection.close()))
    }
  },

  /**
   * Cron trigger: makes deliveries a stopped isolate left queued, folds SDK reports it left in the inbox, indexes the
   * text of new events for the event search, finishes the action set runs it left, marks flags past their type's lifetime potentially stale, and applies (or suspends)
   * scheduled change requests, as of the time the trigger was scheduled for.
   */
  async scheduled(controller: { scheduledTime: number }, env: WorkerEnv, ctx: ExecutionContext): Promise<void> {
    const connection = new LazyConnection(env)
    const at = new Date(controller.scheduledTime)
    const logger = createLogger(readLogOptions(env))
    const failed = (job: string) => (error: unknown) => logger.log('error', 'background job failed', { job, ...errorFields(error) })
    ctx.waitUntil(
      Promise.allSettled([
        deliverPending(connection.db, () => new Date(), { ...deliveryOptions(env), logger }).catch(failed('integration delivery')),
        aggregatePendingMetrics(connection.db, () => new Date(), undefined, clientNewApplicationsPerDay(env.FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY), logger).catch(failed('metrics aggregation')),
        markPotentiallyStale(connection.db, at).catch(failed('potentially stale')),
        applyScheduledChangeRequests(connection.db, at, logger).catch(failed('scheduled change requests')),
        runPendingActions(connection.db, () => new Date(), { logger }).catch(failed('action set runs')),
        indexEventText(connection.db).catch(failed('event text index')),
      ]).finally(() => connection.close()),
    )
  },
}
