import type { ExecutionContext } from 'hono'
import { createApp, type App } from './app.js'
import { openNeon, type DbHandle } from './db.js'
import { DEFAULT_DELIVERY_OPTIONS, deliverPending } from './integrations/delivery.js'

export interface WorkerEnv {
  /** Secret: the Postgres (Neon) connection string. */
  DATABASE_URL?: string
  /** Local development and tests only: a plain-WebSocket relay to Postgres, e.g. `127.0.0.1:5488/v1`. */
  NEON_WS_PROXY?: string
  /** `true` lets webhooks reach loopback and private addresses. */
  FLAGPOST_ALLOW_PRIVATE_WEBHOOKS?: string
}

interface RequestBindings extends Record<string, unknown> {
  connection: LazyConnection
  /** Work that runs after the response (integration deliveries); the connection closes after it. */
  background: Promise<unknown>[]
}

/** Opens the request's pool only when a route touches the database, and closes it after the response. */
class LazyConnection {
  private handle: DbHandle | undefined
  constructor(private readonly env: WorkerEnv) {}

  get db() {
    if (!this.handle) {
      if (!this.env.DATABASE_URL) throw new Error('DATABASE_URL is not set: add it with `wrangler secret put DATABASE_URL` (or to .dev.vars)')
      this.handle = openNeon(this.env.DATABASE_URL, { wsProxy: this.env.NEON_WS_PROXY })
    }
    return this.handle.db
  }

  async close() {
    await this.handle?.close()
  }
}

const deliveryOptions = (env: WorkerEnv) => ({ ...DEFAULT_DELIVERY_OPTIONS, allowPrivateTargets: env.FLAGPOST_ALLOW_PRIVATE_WEBHOOKS === 'true' })

// Built on the first request, not at module scope, and reused by every request of the isolate.
let app: App | undefined

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
    app ??= createApp({
      db: (c) => (c.env as RequestBindings).connection.db,
      delivery: deliveryOptions(env),
      afterWrite: (c, deliver) => {
        const bindings = c.env as RequestBindings
        bindings.background.push(deliver(bindings.connection.db).catch((error: unknown) => console.error('integration delivery failed:', error)))
      },
    })
    const bindings: RequestBindings = { connection: new LazyConnection(env), background: [] }
    try {
      return await app.fetch(request, bindings, ctx)
    } finally {
      ctx.waitUntil(Promise.allSettled(bindings.background).then(() => bindings.connection.close()))
    }
  },

  /** Cron trigger: makes deliveries a stopped isolate left queued. */
  async scheduled(_controller: unknown, env: WorkerEnv, ctx: ExecutionContext): Promise<void> {
    const connection = new LazyConnection(env)
    ctx.waitUntil(
      deliverPending(connection.db, () => new Date(), deliveryOptions(env))
        .catch((error: unknown) => console.error('integration delivery failed:', error))
        .finally(() => connection.close()),
    )
  },
}
