import type { ExecutionContext } from 'hono'
import { createApp, type App } from './app.js'
import { openNeon, type DbHandle } from './db.js'

export interface WorkerEnv {
  /** Secret: the Postgres (Neon) connection string. */
  DATABASE_URL?: string
  /** Local development and tests only: a plain-WebSocket relay to Postgres, e.g. `127.0.0.1:5488/v1`. */
  NEON_WS_PROXY?: string
}

interface RequestBindings extends Record<string, unknown> {
  connection: LazyConnection
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

// Built on the first request, not at module scope, and reused by every request of the isolate.
let app: App | undefined

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
    app ??= createApp({ db: (c) => (c.env as RequestBindings).connection.db })
    const connection = new LazyConnection(env)
    try {
      return await app.fetch(request, { connection } satisfies RequestBindings, ctx)
    } finally {
      ctx.waitUntil(connection.close())
    }
  },
}
