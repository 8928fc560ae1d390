import { Scalar } from '@scalar/hono-api-reference'
import { HTTPException } from 'hono/http-exception'
import { ZodError } from 'zod'
import type { Context } from 'hono'
import type { Db } from './db.js'
import type { AppEnv, Clock } from './http/context.js'
import { ApiError, errorBody, fromDatabaseError, notFound, validationError } from './http/errors.js'
import { createRouter, SECURITY_SCHEME, zodValidationError } from './http/openapi.js'
import { bodyGuard, urlGuard } from './http/request-guard.js'
import { authenticateAdmin } from './http/auth.js'
import { healthRoutes } from './health/routes.js'
import { projectRoutes } from './projects/routes.js'
import { environmentRoutes } from './environments/routes.js'
import { apiTokenRoutes } from './api-tokens/routes.js'
import { integrationRoutes } from './integrations/routes.js'
import { DEFAULT_DELIVERY_OPTIONS, deliverPending, deliveryScheduler, type DeliveryOptions } from './integrations/delivery.js'
import { flagRoutes } from './flags/routes.js'
import { eventRoutes } from './events/routes.js'
import { strategyRoutes } from './strategies/routes.js'
import { variantRoutes } from './variants/routes.js'
import { segmentRoutes } from './segments/routes.js'
import { tagRoutes } from './tags/routes.js'
import { dependencyRoutes } from './dependencies/routes.js'
import { favoriteRoutes } from './favorites/routes.js'
import { lifecycleRoutes } from './lifecycle/routes.js'

export interface AppDeps {
  /** The database of a request: the same one on Node, one opened per request on Workers. */
  db: (c: Context<AppEnv>) => Db
  clock?: Clock
  version?: string
  /** Integration delivery settings (private targets, timeout). */
  delivery?: Partial<DeliveryOptions>
  /**
   * Runs the integration deliveries a write queued, after the response. Workers pass one that keeps
   * the request's connection open until it is done (waitUntil); the default, for Node, runs them
   * detached, one run at a time.
   */
  afterWrite?: (c: Context<AppEnv>, deliver: (db: Db) => Promise<number>) => void
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Turns anything thrown into the one error contract; unexpected errors are logged and answered generically. */
export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error
  if (error instanceof ZodError) return zodValidationError(error)
  if (error instanceof HTTPException) {
    if (error.status === 413) return new ApiError('PayloadTooLargeError', error.message)
    if (error.status === 415) return new ApiError('ContentTypeerror', error.message)
    if (error.status >= 400 && error.status < 500) return validationError(error.message || 'Bad request')
  }
  return fromDatabaseError(error)
}

export function createApp(deps: AppDeps) {
  const clock = deps.clock ?? (() => new Date())
  const delivery = { ...DEFAULT_DELIVERY_OPTIONS, ...deps.delivery }
  const deliver = (db: Db) => deliverPending(db, clock, delivery)
  const afterWrite = deps.afterWrite ?? detachedDeliveries()
  const app = createRouter()

  app.onError((error, c) => {
    const apiError = toApiError(error)
    if (apiError) return c.json(errorBody(apiError), apiError.status)
    console.error(`unexpected error on ${c.req.method} ${new URL(c.req.url).pathname}:`, error)
    return c.json({ id: crypto.randomUUID(), name: 'InternalError', message: 'Unexpected error: the request was not completed' }, 500)
  })
  app.notFound((c) => {
    const error = notFound(`No route for ${c.req.method} ${new URL(c.req.url).pathname}`)
    return c.json(errorBody(error), error.status)
  })

  app.use('*', urlGuard)
  app.use('*', async (c, next) => {
    c.set('clock', clock)
    c.set('delivery', delivery)
    c.set('db', deps.db(c))
    await next()
    if (WRITE_METHODS.has(c.req.method) && c.res.status < 400) afterWrite(c, deliver)
  })
  app.use('/api/admin/*', authenticateAdmin)
  app.use('*', bodyGuard)

  app.route('/', healthRoutes)
  app.route('/', projectRoutes)
  app.route('/', environmentRoutes)
  app.route('/', apiTokenRoutes)
  app.route('/', integrationRoutes)
  app.route('/', flagRoutes)
  app.route('/', eventRoutes)
  app.route('/', strategyRoutes)
  app.route('/', variantRoutes)
  app.route('/', segmentRoutes)
  app.route('/', tagRoutes)
  app.route('/', dependencyRoutes)
  app.route('/', favoriteRoutes)
  app.route('/', lifecycleRoutes)

  app.openAPIRegistry.registerComponent('securitySchemes', SECURITY_SCHEME, {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'An API token (`*:*.<secret>` for admin tokens), raw or after `Bearer `',
  })
  app.doc31('/docs/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Flagpost API',
      version: deps.version ?? '0.1.0',
      description: 'Feature-flag management with an Unleash-compatible API. Errors always have the body `{ id, name, message }`.',
    },
  })
  app.get('/docs', Scalar({ url: '/docs/openapi.json', pageTitle: 'Flagpost API' }))
  return app
}

export type App = ReturnType<typeof createApp>

/** On Node the database is the same for every request, so one coalescing runner serves the app. */
function detachedDeliveries(): NonNullable<AppDeps['afterWrite']> {
  let db: Db | undefined
  const schedule = deliveryScheduler(() => deliver!(db!))
  let deliver: ((db: Db) => Promise<number>) | undefined
  return (c, run) => {
    db = c.var.db
    deliver = run
    void schedule()
  }
}
