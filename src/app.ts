import { HTTPException } from 'hono/http-exception'
import { ZodError } from 'zod'
import type { Context } from 'hono'
import { deliveriesMaybeQueued, together, type Db } from './db.js'
import { setAnswerHeader, type AppEnv } from './http/context.js'
import { createLogger, requestLog, routeTemplateOf, type LogOptions } from './http/request-log.js'
import type { Clock } from './core/clock.js'
import { ApiError, fromDatabaseError, loggable, notFound, validationError } from './core/errors.js'
import { API_REFERENCE_HEADERS, apiReferencePage } from './api-reference.js'
import { errorBody, statusOf } from './http/errors.js'
import { createRouter, SECURITY_SCHEME, zodValidationError } from './http/openapi.js'
import { bodyGuard, urlGuard } from './http/request-guard.js'
import { checkImportDocument, checkStateDocument } from './export-import/document-limits.js'
import { authenticateAdmin, PrincipalMemo } from './http/auth.js'
import { lookUpToken } from './api-tokens/store.js'
import { hashSecret } from './api-tokens/secrets.js'
import { PAT_PREFIX } from './api-tokens/personal-access-tokens.js'
import { lookUpSession, sessionIdOf } from './auth/sessions.js'
import type { ResolvedPrincipal } from './core/principal.js'
import { crossSiteWriteGuard } from './http/cross-site.js'
import { signInRateLimit, type SignInRateLimit } from './auth/rate-limit.js'
import { socketClientAddress, type ClientAddress } from './http/client-address.js'
import { healthRoutes } from './health/routes.js'
import { projectRoutes } from './projects/routes.js'
import { projectInsightRoutes } from './projects/insights-routes.js'
import { environmentRoutes } from './environments/routes.js'
import { apiTokenRoutes } from './api-tokens/routes.js'
import { projectApiTokenRoutes } from './api-tokens/project-token-routes.js'
import { integrationRoutes } from './integrations/routes.js'
import { DEFAULT_DELIVERY_OPTIONS, deliverPending, type DeliveryOptions } from './integrations/delivery.js'
import { createOverviewCache } from './projects/overview.js'
import { createSearchCache } from './flags/search-cache.js'
import { flagVisibility, knownPrivateProjects, privateProjectIds, projectVisibility } from './projects/visibility.js'
import { createFlagStates } from './flags/states.js'
import { createEventPages } from './events/search.js'
import { indexEventText } from './events/text-index.js'
import { backgroundJob, type ClaimLedger, type RunInBackground } from './http/background.js'
import { flagRoutes } from './flags/routes.js'
import { flagBulkRoutes } from './flags/bulk-routes.js'
import { dependencyOptionRoutes } from './dependencies/option-routes.js'
import { legacyEventRoutes } from './events/legacy-routes.js'
import { lifecycleCountRoutes } from './lifecycle/count-route.js'
import { strategyPatchRoutes } from './strategies/patch-routes.js'
import { segmentUsageRoutes } from './segments/usage-routes.js'
import { variantBatchRoutes } from './variants/batch-routes.js'
import { createMaintenanceState, maintenanceGuard, maintenanceRoutes } from './maintenance/routes.js'
import { eventRoutes } from './events/routes.js'
import { strategyRoutes } from './strategies/routes.js'
import { variantRoutes } from './variants/routes.js'
import { segmentRoutes } from './segments/routes.js'
import { contextFieldRoutes } from './context-fields/routes.js'
import { strategyDefinitionRoutes } from './strategy-definitions/routes.js'
import { tagRoutes } from './tags/routes.js'
import { tagTypeRoutes } from './tag-types/routes.js'
import { dependencyRoutes } from './dependencies/routes.js'
import { linkRoutes } from './links/routes.js'
import { exportImportRoutes } from './export-import/routes.js'
import { STATE_IMPORT_PATH, stateRoutes } from './state/routes.js'
import { STATE_IMPORT_MAX_BYTES } from './state/schemas.js'
import { favoriteRoutes } from './favorites/routes.js'
import { lifecycleRoutes } from './lifecycle/routes.js'
import { featureTypeRoutes } from './feature-types/routes.js'
import { flagSearchRoutes } from './flags/search-routes.js'
import { userRoutes } from './users/routes.js'
import { accountRoutes } from './users/account-routes.js'
import { promptRoutes } from './users/prompt-routes.js'
import { authRoutes } from './auth/routes.js'
import { personalAccessTokenRoutes } from './api-tokens/personal-access-token-routes.js'
import { serviceAccountRoutes } from './service-accounts/routes.js'
import { SIGNAL_SECURITY_SCHEME, signalRoutes } from './signals/routes.js'
import { authenticateSignal } from './signals/incoming.js'
import { actionRoutes } from './actions/routes.js'
import { runPendingActions } from './actions/runs.js'
import { projectAccessRoutes } from './projects/access-routes.js'
import { roleRoutes } from './roles/routes.js'
import { groupRoutes } from './groups/routes.js'
import { authSettingsRoutes } from './auth-settings/routes.js'
import { instanceStatsRoutes } from './instance-stats/routes.js'
import { dashboardRoutes } from './dashboard/routes.js'
import type { EmailTransport } from './users/email.js'
import { changeRequestRoutes } from './change-requests/routes.js'
import { changeRequestSearchRoutes } from './change-requests/search.js'
import { playgroundRoutes } from './playground/routes.js'
import { authenticateClient, authenticateFrontend, authenticateOfrep } from './client-api/auth.js'
import { clientRoutes } from './client-api/routes.js'
import { fastPolls } from './client-api/fast-poll.js'
import { createSdkState, type SdkOptions, type SdkState, type StreamHub } from './client-api/state.js'
import { frontendCors } from './frontend-api/cors.js'
import { createFrontendOrigins } from './ui-config/store.js'
import { uiConfigRoutes } from './ui-config/routes.js'
import { frontendRoutes } from './frontend-api/routes.js'
import { ofrepErrors, ofrepRoutes } from './ofrep/routes.js'
import { edgeRoutes } from './edge-api/routes.js'
import { metricsRoutes } from './metrics/routes.js'
import { bannerRoutes } from './banners/routes.js'
import { ssoRoutes } from './sso/routes.js'
import { inviteLinkRoutes } from './invite-links/routes.js'
import { createOidcCache } from './sso/oidc.js'
import { signInOptions } from './auth-settings/store.js'
import { DEFAULT_EVALUATION_LIMITS, type EvaluationLimits } from './http/evaluation-limits.js'
import { DEFAULT_REGEX_MAX_PROGRAM, RegexWorkExceeded, setRegexMaxProgram } from './evaluation/index.js'
import { setResourceLimits, type ResourceLimits } from './strategies/schemas.js'

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

export interface AppDeps {
  /** Routes served on Node only, kept out of the Worker's bundle (the migration from Unleash: src/migrate/routes.ts). */
  nodeRoutes?: ReturnType<typeof createRouter>[]
  /** The database of a request: the same one on Node, one opened per request on Workers. */
  db: (c: Context<AppEnv>) => Db
  clock?: Clock
  version?: string
  /** Where invite links point (e.g. `https://flags.example.com`); default: the origin of the request. */
  publicUrl?: string
  /** How e-mails leave; none configured: no e-mail is sent (`emailSent: false`). */
  email?: EmailTransport
  /** Integration delivery settings (private targets, timeout). */
  delivery?: Partial<DeliveryOptions>
  /** Most evaluations (environments × flags × context combinations) one advanced playground request may ask for; default 15,000 as Unleash. */
  playgroundMaxEvaluations?: number
  /** Evaluations the playgrounds make for one caller in a minute (FLAGPOST_PLAYGROUND_EVALUATIONS_PER_MINUTE); default 150,000, 0: no limit. */
  playgroundEvaluationsPerMinute?: number | undefined
  /**
   * What evaluating a context may cost: the largest program a saved REGEX pattern may compile to
   * (FLAGPOST_REGEX_MAX_PROGRAM; one value per process, see evaluation/regex.ts), the longest context value
   * (FLAGPOST_CONTEXT_VALUE_MAX_LENGTH) and the REGEX matching steps of one request (FLAGPOST_REGEX_WORK_BUDGET).
   */
  evaluation?: Partial<EvaluationLimits> & { regexMaxProgram?: number }
  /**
   * Unleash's resource limits on strategies and segments (UNLEASH_CONSTRAINTS_LIMIT and the others: strategies/schemas.ts);
   * one value per process, like the REGEX program limit. Unset: Unleash's defaults.
   */
  resourceLimits?: Partial<ResourceLimits>
  /**
   * Runs work after the response: integration deliveries a write queued, folding SDK reports. Workers
   * pass one that hands it to waitUntil (keeping the request's connection open until it is done); the
   * default, for Node, runs it detached, one run of each job at a time.
   */
  background?: RunInBackground
  /**
   * What this process claimed of the background queues (action runs, deliveries) and has not finished: the Node server
   * hands it back at shutdown. Without one (Workers), a claim left behind is taken over once stale.
   */
  claims?: ClaimLedger
  /** SDK-facing API settings: cache lifetimes and sizes, frontend CORS origins. */
  sdk?: Partial<SdkOptions>
  /**
   * The hub of `GET /api/client/streaming` (client-api/streaming.ts `streamHub`), on Node; without one (Workers) the
   * route answers 404 and SDKs poll.
   */
  streams?: (sdk: SdkState) => StreamHub
  /**
   * Password sign-in works even where the settings switch it off (FLAGPOST_ALLOW_PASSWORD_LOGIN): the way back in
   * when single sign-on fails.
   */
  allowPasswordLogin?: boolean
  /** Sign-in attempts per client address. */
  signIn?: SignInRateLimit
  /**
   * Which address a request's client is at, for every per-address limit and the SDKs' client_ip (src/http/client-address.ts):
   * Node's server passes the socket's peer as FLAGPOST_TRUST_PROXY says, the worker CF-Connecting-IP. Default: the
   * socket's peer, trusting no forwarding header.
   */
  clientAddress?: ClientAddress
  /**
   * How long this app remembers the admin principal of a token or session (default 5 s; 0: looked up on every
   * request). A change through another app (a token deleted, a session ended, a role changed) reaches this
   * one within it; writes through this app forget them all (but those that change none of that: KEEPS_PRINCIPALS).
   */
  principalTtlMs?: number
  /**
   * Told of every answered request (the Node server's Prometheus metrics): the route's template (never the URL: a bounded
   * set), the method (`OTHER` for one no route has), the status and the seconds it took.
   */
  observe?: (request: { route: string; method: string; status: number; seconds: number }) => void
  /** Request ids and logs (LOG_FORMAT, LOG_LEVEL: readLogOptions); default pretty at warn: ids, no line per request. */
  log?: LogOptions
  /** Why the process should take no traffic now (the Node server: shutting down, its background jobs not started), for GET /ready. */
  notReady?: () => string | undefined
  /**
   * The body of `/docs/openapi.json` when the document was made beforehand: the worker reads the one
   * scripts/build-worker.ts made from these same routes, as its bundle has no OpenAPI generator. Default: made
   * from the routes.
   */
  openApiDocument?: () => Promise<ReadableStream<Uint8Array> | string>
  /** Signals one client address may send one signal endpoint in a minute (default 60; 0: no limit). */
  signalsPerMinute?: number
  /**
   * Whether the console's reads of a project, its overview without flags and a flag search limited to it, are kept
   * serialized by revision (projects/overview.ts, flags/search-cache.ts; default true): their work is gathering JSON,
   * which PGlite does slowly in the app's own thread. Where the database is a round trip away and does it quickly
   * (Workers on Neon), a miss would cost a second round trip for little: the worker turns it off.
   */
  cacheProjectReads?: boolean
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const DEFAULT_PRINCIPAL_TTL_MS = 5_000
/**
 * Admin writes that change no token, user, session, role, membership or project visibility, so they keep the
 * remembered principals: flags and what hangs off them (tags, tag types, favorites, dependencies), a project's
 * environments, change requests and context fields, segments, context fields, environments, integrations, the archive, flag types' lifetimes, export and import, banners, invite links (a link makes users, it changes none),
 * signal endpoints and action sets. Any other write forgets
 * them all (a new route is on the safe side until it is listed here).
 */
const KEEPS_PRINCIPALS = /^\/api\/admin\/(projects\/[^/]+\/(features|favorites|environments|change-requests|tags|archive|revive|delete|context|actions)|features|features-batch|segments|context|environments|addons|archive|playground|tags|tag-types|feature-types|strategies|banners|invite-link|signal-endpoints)(\/|$)/
const ENVIRONMENT_PATH = /^\/api\/admin\/environments\/[^/]+$/
/** Whether a write keeps the remembered principals: its path is listed above, and it is not deleting an environment (which deletes its API tokens). */
const keepsPrincipals = (method: string, path: string) => KEEPS_PRINCIPALS.test(path) && !(method === 'DELETE' && ENVIRONMENT_PATH.test(path))
/** Routes that take their own tokens only (SDKs', signal endpoints', Unleash Edge's): no cookie reaches them, and their writes change no principal. */
const TOKEN_ONLY_PATH = /^\/(api\/(client|frontend|signal-endpoint)|edge|ofrep)(\/|$)/

/** Turns anything thrown into the one error contract; unexpected errors are logged and answered generically. */
export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error
  if (error instanceof ZodError) return zodValidationError(error)
  if (error instanceof RegexWorkExceeded) return validationError(error.message)
  if (error instanceof HTTPException) {
    if (error.status === 413) return new ApiError('PayloadTooLargeError', error.message)
    if (error.status === 415) return new ApiError('ContentTypeerror', error.message)
    if (error.status >= 400 && error.status < 500) return validationError(error.message || 'Bad request')
  }
  return fromDatabaseError(error)
}

/** On Node, deliveries run at most this often after writes (each run first looks for queued deliveries). */
const DELIVERY_GAP_MS = 25
// Writes within this of each other share one run of the event text index: under a burst, a few runs a second.
const TEXT_INDEX_GAP_MS = 200

export function createApp(deps: AppDeps) {
  const clock = deps.clock ?? (() => new Date())
  setRegexMaxProgram(deps.evaluation?.regexMaxProgram ?? DEFAULT_REGEX_MAX_PROGRAM)
  setResourceLimits(deps.resourceLimits ?? {})
  const evaluationLimits: EvaluationLimits = {
    contextValueMaxLength: deps.evaluation?.contextValueMaxLength ?? DEFAULT_EVALUATION_LIMITS.contextValueMaxLength,
    regexWorkBudget: deps.evaluation?.regexWorkBudget ?? DEFAULT_EVALUATION_LIMITS.regexWorkBudget,
  }
  const clientAddress = deps.clientAddress ?? socketClientAddress()
  // Requests and background jobs log through one logger (LOG_FORMAT, LOG_LEVEL).
  const logger = createLogger(deps.log ?? { format: 'pretty', level: 'warn' })
  const delivery = { ...DEFAULT_DELIVERY_OPTIONS, logger, ...deps.delivery }
  const accounts = { publicUrl: deps.publicUrl, email: deps.email, passwordAlwaysAllowed: deps.allowPasswordLogin ?? false, background: deps.background, version: deps.version }
  const sdk = createSdkState({ ...deps.sdk, clock, background: deps.background, streams: deps.streams, logger })
  const cacheProjectReads = deps.cacheProjectReads !== false
  const overviews = createOverviewCache(sdk.options.shareInFlight, { summaries: cacheProjectReads })
  const flagSearches = cacheProjectReads ? createSearchCache(sdk.options.shareInFlight) : undefined
  const flagStates = createFlagStates()
  const eventPages = createEventPages()
  const notReady = deps.notReady ?? (() => undefined)
  const frontendOrigins = createFrontendOrigins(sdk.options.frontendCorsOrigins, clock)
  const principals = new PrincipalMemo(deps.principalTtlMs ?? DEFAULT_PRINCIPAL_TTL_MS)
  const oidc = createOidcCache()
  const deliveries = backgroundJob('integration delivery', (db) => deliverPending(db, clock, delivery, deps.claims), { background: deps.background, coalesce: sdk.options.shareInFlight, gapMs: DELIVERY_GAP_MS, logger })
  // The event search's text of the events writes recorded (src/events/text-index.ts): after the response, where one
  // process serves (Node); on Workers the cron trigger runs it, and until then the search reads those events' own text.
  const textIndex = sdk.options.shareInFlight ? backgroundJob('event text index', indexEventText, { background: deps.background, coalesce: true, gapMs: TEXT_INDEX_GAP_MS, logger }) : undefined
  // Runs of action sets a signal queued: what they change is new to SDKs, and their events are delivered right after.
  const actionRuns = backgroundJob(
    'action set runs',
    async (db) => {
      const { changed } = await runPendingActions(db, clock, { flagStates, claims: deps.claims, logger })
      if (!changed) return
      sdk.invalidate()
      if (deliveriesMaybeQueued(db)) await deliverPending(db, clock, delivery, deps.claims)
    },
    { background: deps.background, coalesce: sdk.options.shareInFlight, logger },
  )
  const app = createRouter({ memoRoutes: true })

  app.onError((error, c) => {
    const apiError = toApiError(error)
    if (apiError) return c.json(errorBody(apiError), statusOf(apiError))
    const failure = loggable(error)
    // The route's template, not the path: the log never holds what a client put in the URL.
    logger.log('error', 'unexpected error', {
      requestId: c.get('requestId'),
      method: c.req.method,
      route: routeTemplateOf(c),
      error: failure instanceof Error ? (failure.stack ?? failure.message) : String(failure),
    })
    return c.json({ id: crypto.randomUUID(), name: 'InternalError', message: 'Unexpected error: the request was not completed' }, 500)
  })
  app.notFound((c) => {
    const error = notFound(`No route for ${c.req.method} ${new URL(c.req.url).pathname}`)
    return c.json(errorBody(error), statusOf(error))
  })

  app.use('*', requestLog(logger))
  if (deps.observe) {
    const observe = deps.observe
    app.use('*', async (c, next) => {
      const start = performance.now()
      await next()
      const route = routeTemplateOf(c)
      const method = KNOWN_METHODS.has(c.req.method) ? c.req.method : 'OTHER'
      observe({ route, method, status: c.res.status, seconds: (performance.now() - start) / 1000 })
    })
  }
  app.use('*', urlGuard)
  app.use('*', async (c, next) => {
    c.set('clock', clock)
    c.set('logger', logger)
    c.set('evaluationLimits', evaluationLimits)
    c.set('clientAddress', clientAddress)
    c.set('notReady', notReady)
    c.set('accounts', accounts)
    c.set('frontendOrigins', frontendOrigins)
    c.set('oidc', oidc)
    c.set('forgetPrincipals', () => principals.forget())
    c.set('delivery', delivery)
    c.set('overviews', overviews)
    c.set('flagSearches', flagSearches)
    c.set('flagStates', flagStates)
    c.set('eventPages', eventPages)
    c.set('actionRuns', actionRuns)
    c.set('db', deps.db(c))
    await next()
    // Writes queue the deliveries of their events (SDK reports write none), and may have changed who may do what.
    if (WRITE_METHODS.has(c.req.method) && c.res.status < 400 && !TOKEN_ONLY_PATH.test(c.req.path)) {
      if (!keepsPrincipals(c.req.method, c.req.path)) principals.forget()
      if (deliveriesMaybeQueued(c.get('db'))) deliveries.schedule(c)
      textIndex?.schedule(c)
    }
  })
  // A signed-in browser's cookie must not carry another site's writes; SDK routes take tokens only.
  const crossSite = crossSiteWriteGuard({ publicUrl: deps.publicUrl })
  app.use('*', (c, next) => (TOKEN_ONLY_PATH.test(c.req.path) ? next() : crossSite(c, next)))
  app.use('/auth/simple/login', signInRateLimit(deps.signIn ?? {}, clock))
  // Each leg of a single sign-on asks the provider over the network: limited per address as password sign-in is.
  app.use('/auth/oidc/*', signInRateLimit(deps.signIn ?? {}, clock))
  // Invite links are public: checking and using one is limited per address as sign-in is.
  app.use('/invite/*', signInRateLimit(deps.signIn ?? {}, clock))
  // Reset links are public too, and setting a password with one hashes it: limited per address as sign-in is.
  app.use('/auth/reset/*', signInRateLimit(deps.signIn ?? {}, clock))
  // A user (a session, a personal access token) may have projects hidden from them: the private projects are
  // read with their credential, in one round trip.
  const withPrivateProjects = async (c: Context<AppEnv>, lookUp: (q: Db) => Promise<ResolvedPrincipal | undefined>) => {
    const [resolved, privateIds] = await together(c.get('db'), [lookUp, privateProjectIds])
    knownPrivateProjects(c, privateIds)
    return resolved
  }
  // What the admin API answers is one caller's (their tokens, users, statistics), refusals included: never kept by a
  // proxy or the browser's cache.
  app.use('/api/admin/*', async (c, next) => {
    await next()
    if (!c.res.headers.has('cache-control')) setAnswerHeader(c, 'Cache-Control', 'no-store')
  })
  app.use(
    '/api/admin/*',
    authenticateAdmin(
      {
        token: async (c, credential, now) => {
          const hash = await hashSecret(credential)
          return credential.startsWith(PAT_PREFIX) ? withPrivateProjects(c, (q) => lookUpToken(q, hash, now)) : lookUpToken(c.get('db'), hash, now)
        },
        sessionId: sessionIdOf,
        session: async (c, sessionId, now) => {
          const hash = await hashSecret(sessionId)
          return withPrivateProjects(c, (q) => lookUpSession(q, hash, now))
        },
        signInOptions: (c) => signInOptions(c.get('db'), accounts.passwordAlwaysAllowed),
      },
      principals,
    ),
  )
  // A private project, and what belongs to it, exists only for those who may read it (src/projects/visibility.ts).
  app.use('/api/admin/projects/:projectId', projectVisibility)
  app.use('/api/admin/projects/:projectId/*', projectVisibility)
  app.use('/api/admin/personal-dashboard/:projectId', projectVisibility)
  // The wildcard matches `/api/admin/features/validate` too, which names no flag.
  const featureVisibility = flagVisibility('featureName')
  app.use('/api/admin/features/:featureName/*', (c, next) => (c.req.path === '/api/admin/features/validate' ? next() : featureVisibility(c, next)))
  app.use('/api/admin/archive/revive/:featureName', flagVisibility('featureName'))
  app.use('/api/admin/archive/:featureName', flagVisibility('featureName'))
  app.use('/api/admin/client-metrics/features/:featureName', flagVisibility('featureName'))
  app.use('/api/admin/client-metrics/features/:featureName/*', flagVisibility('featureName'))
  app.use('*', async (c, next) => {
    c.set('sdk', sdk)
    await next()
  })
  // A write through this process may change what SDKs see: their next poll re-reads the revision (and tokens) at once.
  app.use('/api/admin/*', async (c, next) => {
    await next()
    if (WRITE_METHODS.has(c.req.method) && c.res.status < 400) sdk.invalidate()
  })
  const maintenance = createMaintenanceState(clock)
  app.use('/api/admin/*', maintenanceGuard(maintenance))
  app.use('/api/frontend/*', frontendCors((c) => frontendOrigins.get(c.get('db'))))
  app.use('/api/client/*', authenticateClient)
  app.use('/api/frontend/*', authenticateFrontend)
  // OpenFeature's web provider calls from browsers as the frontend SDK does; its errors carry OFREP's error codes.
  app.use('/ofrep/*', frontendCors((c) => frontendOrigins.get(c.get('db'))))
  app.use('/ofrep/*', authenticateOfrep)
  app.use('/ofrep/*', ofrepErrors)
  app.use('/api/signal-endpoint/:name', authenticateSignal({ perMinute: deps.signalsPerMinute }, clock))
  // A whole instance's state is restored in one request: its import takes a larger body than any other write.
  // Import documents are counted (flags, strategies, constraints) before their schema walks them.
  app.use('*', bodyGuard({
    largerBodies: { [STATE_IMPORT_PATH]: STATE_IMPORT_MAX_BYTES },
    documentChecks: {
      [STATE_IMPORT_PATH]: checkStateDocument,
      '/api/admin/features-batch/import': (body) => checkImportDocument(body, true),
      '/api/admin/features-batch/validate': (body) => checkImportDocument(body, false),
    },
  }))

  app.route('/', healthRoutes)
  app.route('/', uiConfigRoutes)
  app.route('/', maintenanceRoutes(maintenance))
  app.route('/', projectRoutes)
  app.route('/', projectInsightRoutes)
  app.route('/', environmentRoutes)
  app.route('/', apiTokenRoutes)
  app.route('/', projectApiTokenRoutes)
  app.route('/', integrationRoutes)
  app.route('/', flagRoutes)
  app.route('/', flagBulkRoutes)
  app.route('/', eventRoutes)
  app.route('/', legacyEventRoutes)
  app.route('/', strategyRoutes)
  app.route('/', strategyPatchRoutes)
  app.route('/', variantRoutes)
  app.route('/', variantBatchRoutes)
  app.route('/', segmentUsageRoutes)
  app.route('/', segmentRoutes)
  app.route('/', contextFieldRoutes)
  app.route('/', strategyDefinitionRoutes)
  app.route('/', tagRoutes)
  app.route('/', tagTypeRoutes)
  app.route('/', dependencyRoutes)
  app.route('/', linkRoutes)
  app.route('/', dependencyOptionRoutes)
  app.route('/', exportImportRoutes)
  app.route('/', stateRoutes)
  if (deps.nodeRoutes) for (const routes of deps.nodeRoutes) app.route('/', routes)
  else
    app.post('/api/admin/migrate/unleash', () => {
      throw validationError('Served by the Node server only: use npm run migrate:unleash')
    })
  app.route('/', favoriteRoutes)
  app.route('/', lifecycleRoutes)
  app.route('/', lifecycleCountRoutes)
  app.route('/', featureTypeRoutes)
  app.route('/', flagSearchRoutes)
  // Before userRoutes: `/api/admin/user-admin/{id}` would take `admin-count`, `inactive` and `scim-users` for ids.
  app.route('/', accountRoutes)
  app.route('/', userRoutes)
  app.route('/', promptRoutes)
  app.route('/', authRoutes)
  app.route('/', personalAccessTokenRoutes)
  app.route('/', serviceAccountRoutes)
  app.route('/', signalRoutes)
  app.route('/', actionRoutes)
  app.route('/', projectAccessRoutes)
  app.route('/', roleRoutes)
  app.route('/', groupRoutes)
  app.route('/', authSettingsRoutes)
  app.route('/', dashboardRoutes)
  app.route('/', instanceStatsRoutes)
  app.route('/', changeRequestRoutes)
  app.route('/', changeRequestSearchRoutes)
  app.route('/', playgroundRoutes({ maxEvaluations: deps.playgroundMaxEvaluations, evaluationsPerMinute: deps.playgroundEvaluationsPerMinute }))
  app.route('/', clientRoutes)
  app.route('/', frontendRoutes)
  app.route('/', ofrepRoutes)
  app.route('/', edgeRoutes)
  app.route('/', metricsRoutes)
  app.route('/', bannerRoutes)
  app.route('/', ssoRoutes)
  app.route('/', inviteLinkRoutes)

  if (deps.openApiDocument) {
    const prebuilt = deps.openApiDocument
    app.get(OPENAPI_DOCUMENT_PATH, async (c) => c.body(await prebuilt(), 200, { 'content-type': 'application/json' }))
  } else mountOpenApiDocument(app, deps.version)
  const referencePage = apiReferencePage(OPENAPI_DOCUMENT_PATH)
  app.get('/docs', (c) => c.body(referencePage, 200, API_REFERENCE_HEADERS))
  // Resolves when no work that requests left behind (deliveries, metrics folding) is under way: await it
  // before closing the database.
  const idle = async () => void (await Promise.all([deliveries.idle(), sdk.aggregation.idle(), actionRuns.idle(), textIndex?.idle()]))
  // Ends every SDK stream (before the server closes: it waits for open responses).
  const endStreams = async () => void (await sdk.streams?.close())
  // The unchanged SDK poll is answered before Hono's dispatch (the same 304, log line and metrics); anything else is routed.
  // `routed` skips it (for a home that asks `fastPoll` itself, before its own wrappers: the Node server).
  const routed = app.fetch
  const fastPoll = fastPolls({ sdk, clock, logger, observe: deps.observe })
  app.fetch = (request, ...rest) => fastPoll(request) ?? routed(request, ...rest)
  return Object.assign(app, { idle, endStreams, fastPoll, routed })
}

const OPENAPI_DOCUMENT_PATH = '/docs/openapi.json'

/** `/docs/openapi.json`, made from the routes (with the token scheme) when asked for. */
function mountOpenApiDocument(app: ReturnType<typeof createRouter>, version: string | undefined) {
  app.openAPIRegistry.registerComponent('securitySchemes', SECURITY_SCHEME, {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'An API token (`*:*.<secret>` for admin tokens) or a personal access token (`user:<secret>`), raw or after `Bearer `. Signed-in browsers use the `flagpost-session` cookie instead.',
  })
  app.openAPIRegistry.registerComponent('securitySchemes', SIGNAL_SECURITY_SCHEME, {
    type: 'http',
    scheme: 'bearer',
    description: 'A token of the signal endpoint (`POST /api/admin/signal-endpoints/{id}/tokens`), after `Bearer `: it authenticates that endpoint only.',
  })
  app.doc31(OPENAPI_DOCUMENT_PATH, {
    openapi: '3.1.0',
    info: {
      title: 'Flagpost API',
      version: version ?? '0.1.0',
      description: 'Feature-flag management with an Unleash-compatible API. Errors always have the body `{ id, name, message }`.',
    },
  })
}

export type App = ReturnType<typeof createApp>
