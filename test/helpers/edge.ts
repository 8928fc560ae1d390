// The app as the worker builds it (src/worker.ts), run in Node: every request opens Neon's serverless driver
// (src/db.ts openNeon) against dev/local-postgres, statements over SQL over HTTP and interactive transactions
// over a WebSocket pool, so a test can count what one request costs in database round trips. The worker bundle
// itself runs in workerd (test/workerd); this is the quick way to pin a route's round trips.
import { readFile } from 'node:fs/promises'
import { neonConfig } from '@neondatabase/serverless'
import { inject } from 'vitest'
import { WebSocket } from 'ws'
import { startLocalPostgres } from '../../dev/local-postgres.js'
import { createApp, type AppDeps } from '../../src/app.js'
import { createToken } from '../../src/api-tokens/store.js'
import { SYSTEM_ACTOR } from '../../src/core/principal.js'
import { openNeon, type DbHandle } from '../../src/db.js'
import { answerOf } from './app.js'

interface EdgeBindings extends Record<string, unknown> {
  handle: DbHandle
  background: Promise<unknown>[]
}

/**
 * A fresh database behind local-postgres and the worker's app over it, with an admin token. `call` answers a
 * request with the round trips it made before its response (`http`, `webSocket`) and after it (`afterHttp`,
 * `afterWebSocket`: its background work, awaited).
 */
export async function createEdgeApp(options: { delivery?: AppDeps['delivery'] } = {}) {
  // Node 20 has no global WebSocket; workerd has one.
  neonConfig.webSocketConstructor = WebSocket
  const postgres = await startLocalPostgres({ loadDataDir: new Blob([new Uint8Array(await readFile(inject('pgTemplatePath')))]) })
  const app = createApp({
    db: (c) => (c.env as EdgeBindings).handle.db,
    background: (c, task) => void (c.env as EdgeBindings).background.push(task((c.env as EdgeBindings).handle.db).catch(() => undefined)),
    sdk: { shareInFlight: false, staleWhileRevalidateMs: 5 * 60_000 },
    cacheProjectReads: false,
    // Remembered for a day: a request's count does not depend on how fast the test runs (with a minute, a counted
    // request that met its end would look the token up again, and write its last use, in one more round trip).
    principalTtlMs: 24 * 60 * 60_000,
    delivery: options.delivery,
  })
  const adminToken = (await createToken(postgres.database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'edge-admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret

  /**
   * Admin writes ask whether maintenance mode is on, which an isolate reads at most every few seconds: asked (with
   * the admin token) before a counted write, so a count is the route's own.
   */
  async function knowMaintenance(method: string, path: string) {
    if (method !== 'GET' && path.startsWith('/api/admin/') && !path.startsWith('/api/admin/maintenance')) await call('GET', '/api/admin/maintenance')
  }

  async function call(method: string, path: string, options: { body?: unknown; token?: string | null } = {}) {
    await knowMaintenance(method, path)
    const headers: Record<string, string> = {}
    const token = options.token === undefined ? adminToken : options.token
    if (token !== null) headers.authorization = token
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    const bindings: EdgeBindings = { handle: openNeon(postgres.databaseUrl, { fetchEndpoint: postgres.fetchEndpoint, wsProxy: postgres.wsProxy }), background: [] }
    const before = postgres.roundTrips()
    const response = await app.request(path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) }, bindings)
    const answer = await answerOf(response)
    const answered = postgres.roundTrips()
    await Promise.allSettled(bindings.background)
    await bindings.handle.close()
    const after = postgres.roundTrips()
    return {
      ...answer,
      http: answered.http - before.http,
      webSocket: answered.webSocket - before.webSocket,
      afterHttp: after.http - answered.http,
      afterWebSocket: after.webSocket - answered.webSocket,
    }
  }

  /** A request as a browser makes it (cookies, form bodies, redirects answered, not followed), with the round trips it made before its response. */
  async function send(request: Request) {
    await knowMaintenance(request.method, new URL(request.url).pathname)
    const bindings: EdgeBindings = { handle: openNeon(postgres.databaseUrl, { fetchEndpoint: postgres.fetchEndpoint, wsProxy: postgres.wsProxy }), background: [] }
    const before = postgres.roundTrips()
    const response = await app.request(request, undefined, bindings)
    const body = await response.arrayBuffer()
    const answered = postgres.roundTrips()
    await Promise.allSettled(bindings.background)
    await bindings.handle.close()
    return { response: new Response(body, response), http: answered.http - before.http, webSocket: answered.webSocket - before.webSocket }
  }

  /** Runs SQL directly, to check what a request did (or did not) write. */
  const query = async <T = Record<string, unknown>>(sqlText: string, params: unknown[] = []) => (await postgres.database.client.query<T>(sqlText, params)).rows

  async function close() {
    await app.idle()
    await postgres.close()
  }

  /** The database as the worker opens it for a request (or its cron trigger): Neon's driver over local-postgres. Close it after use. */
  const openWorkerDb = () => openNeon(postgres.databaseUrl, { fetchEndpoint: postgres.fetchEndpoint, wsProxy: postgres.wsProxy })

  return { app, db: postgres.database.db, adminToken, call, send, query, close, openWorkerDb }
}

export type EdgeApp = Awaited<ReturnType<typeof createEdgeApp>>
