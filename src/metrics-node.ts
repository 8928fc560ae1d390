// The operator's metrics (Node server only): `/internal-backstage/prometheus`, Unleash's path, in the Prometheus text
// format (prom-client). Off unless FLAGPOST_METRICS_TOKEN is set (then 404, as any unknown path); with it, a scrape must
// send `Authorization: Bearer <token>` (401 otherwise). Labels are route templates, methods and statuses only: no URL
// or value a client chooses becomes a series.
import { timingSafeEqual } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { queryRows, type Db } from './db.js'
import { loggable } from './core/errors.js'
import type { SdkPayloadRoute } from './client-api/state.js'

export const METRICS_PATH = '/internal-backstage/prometheus'

export interface ServerMetrics {
  /** createApp's `observe`: one answered request. */
  observe: (request: { route: string; method: string; status: number; seconds: number }) => void
  /** Serves the scrape, or undefined when `request` is not one (the app answers it). */
  scrape: (request: Request) => Promise<Response> | undefined
  /**
   * The SDK routes' hook (SdkOptions.observePayload): the size of a flag payload answered with 200 or written to a
   * stream. One histogram observe, no allocation; a 304 calls nothing but `observe`.
   */
  payload: (route: SdkPayloadRoute, bytes: number) => void
  /** The database handle's hook (NodeDbHandle.timeQueries): how long one query took. */
  query: (seconds: number) => void
}

/** The database's connection pool as the handle reports it (NodeDbHandle.poolState). */
export type PoolState = () => { total: number; idle: number; waiting: number }

interface Totals {
  flags: number
  archived: number
  events: number
  inbox: number
  inboxAge: number | null
  outbox: number
  outboxAge: number | null
  runs: number
  runsAge: number | null
  scheduled: number
  scheduledOverdue: number
  scheduledOverdueAge: number | null
}

/** The instance's totals and background queues (depth, and age in seconds of the oldest), read at each scrape in one statement. */
async function readTotals(db: Db): Promise<Totals> {
  const age = (table: string, column: string, where = 'true') => sql.raw(`(select extract(epoch from now() - min(${column}))::float8 from ${table} where ${where})`)
  const [row] = await queryRows<Totals>(
    db,
    sql`select (select count(*) from features where archived_at is null)::int as flags, (select count(*) from features where archived_at is not null)::int as archived,
      (select coalesce(max(id), 0) from events)::float8 as events,
      (select count(*) from client_metrics_inbox)::int as inbox, ${age('client_metrics_inbox', 'received_at')} as "inboxAge",
      (select count(*) from integration_outbox)::int as outbox, ${age('integration_outbox', 'created_at')} as "outboxAge",
      (select count(*) from action_set_events where state = 'started')::int as runs, ${age('action_set_events', 'created_at', "state = 'started'")} as "runsAge",
      (select count(*) from change_request_schedules where status = 'pending')::int as scheduled,
      (select count(*) from change_request_schedules where status = 'pending' and scheduled_at < now())::int as "scheduledOverdue",
      ${age('change_request_schedules', 'scheduled_at', "status = 'pending' and scheduled_at < now()")} as "scheduledOverdueAge"`,
  )
  return row!
}

const MAX_BOUND_CHILDREN = 4_096

const PAYLOAD_ROUTES: SdkPayloadRoute[] = ['/api/client/features', '/api/client/delta', '/api/client/streaming', '/api/frontend']

export function serverMetrics(token: string | undefined, db: () => Db, streams: () => Record<string, number>, pool?: PoolState): ServerMetrics {
  const registry = new Registry()
  // The process's own metrics (a GC observer, an event loop delay monitor) only where they can be scraped.
  if (token !== undefined) collectDefaultMetrics({ register: registry, prefix: 'flagpost_' })
  const labelNames = ['route', 'method', 'status'] as const
  const requests = new Counter({ name: 'flagpost_http_requests_total', help: 'Requests answered, by route template, method and status', labelNames, registers: [registry] })
  const duration = new Histogram({
    name: 'flagpost_http_request_duration_seconds',
    help: 'Time to answer a request (until its headers; a stream counts until it starts), by route template, method and status',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  })
  const sdkPolls = new Counter({ name: 'flagpost_sdk_polls_total', help: 'SDK flag payload polls (GET /api/client/features, GET /api/frontend) by status (200, 304)', labelNames: ['route', 'status'], registers: [registry] })
  const gauge = (name: string, help: string, labels: string[] = []) => new Gauge({ name, help, labelNames: labels, registers: [registry] })
  const flags = gauge('flagpost_flags', 'Flags, by state (live, archived)', ['state'])
  const events = gauge('flagpost_events_total', 'Events recorded (the newest event id)')
  const queue = gauge('flagpost_queue_depth', 'Background work waiting, by queue', ['queue'])
  const queueAge = gauge('flagpost_queue_oldest_seconds', 'Age of the oldest waiting item, by queue (0 when empty)', ['queue'])
  const overdue = gauge('flagpost_scheduled_change_requests_overdue', 'Scheduled change requests past their time and not applied')
  const open = gauge('flagpost_streams_open', 'Open SDK streams, by kind', ['kind'])
  const payloadBytes = new Histogram({
    name: 'flagpost_sdk_payload_bytes',
    help: 'Size of the flag payloads SDKs are sent (200 answers, and each stream message), by route template, before compression',
    labelNames: ['route'],
    buckets: [256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304],
    registers: [registry],
  })
  // One child per route, made here: an observe per poll hashes no labels.
  const payloadSizes = Object.fromEntries(PAYLOAD_ROUTES.map((route) => [route, payloadBytes.labels({ route })])) as Record<SdkPayloadRoute, Histogram.Internal<'route'>>
  const queryTime = new Histogram({
    name: 'flagpost_database_query_duration_seconds',
    help: 'Time a database query took, from sending it to its answer (embedded database: waiting for it included)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  })
  const poolTotal = gauge('flagpost_database_pool_connections', 'Database connections open (embedded database: 1)')
  const poolIdle = gauge('flagpost_database_pool_idle', 'Database connections open and idle')
  const poolWaiting = gauge('flagpost_database_pool_waiting', 'Queries waiting for a database connection (embedded database: for the one query it runs at a time)')
  const up = gauge('flagpost_database_up', '1 when the last scrape could read the database, else 0')
  const scrapeSeconds = gauge('flagpost_database_scrape_seconds', 'Time the scrape took to read the totals from the database')

  async function refresh() {
    // Before the scrape's own query takes a connection.
    if (pool) {
      const state = pool()
      poolTotal.set(state.total)
      poolIdle.set(state.idle)
      poolWaiting.set(state.waiting)
    }
    const started = performance.now()
    try {
      const t = await readTotals(db())
      flags.set({ state: 'live' }, t.flags)
      flags.set({ state: 'archived' }, t.archived)
      events.set(t.events)
      for (const [name, depth, oldest] of [
        ['metrics_inbox', t.inbox, t.inboxAge],
        ['integration_deliveries', t.outbox, t.outboxAge],
        ['action_runs', t.runs, t.runsAge],
        // Scheduled change requests wait by design: their age is how long the oldest is past its time.
        ['scheduled_change_requests', t.scheduled, t.scheduledOverdueAge],
      ] as const) {
        queue.set({ queue: name }, depth)
        queueAge.set({ queue: name }, oldest ?? 0)
      }
      overdue.set(t.scheduledOverdue)
      up.set(1)
    } catch (error) {
      console.error('metrics: reading the totals failed:', loggable(error))
      up.set(0)
    }
    scrapeSeconds.set((performance.now() - started) / 1000)
    for (const [kind, count] of Object.entries(streams())) open.set({ kind }, count)
  }

  // The request metrics' children per route template, method and status, made on first use: an observe per request
  // (every SDK poll) hashes no labels.
  const children = new Map<string, { requests: Counter.Internal; duration: Histogram.Internal<'route' | 'method' | 'status'>; poll: Counter.Internal | undefined }>()

  const expected = token === undefined ? undefined : Buffer.from(`Bearer ${token}`)
  const authorized = (header: string | null) => {
    if (!expected || header === null) return false
    const given = Buffer.from(header)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  return {
    observe({ route, method, status, seconds }) {
      const key = `${status} ${method} ${route}`
      let bound = children.get(key)
      if (bound === undefined) {
        const labels = { route, method, status: String(status) }
        const poll = (route === '/api/client/features' || route === '/api/frontend') && method === 'GET' && (status === 200 || status === 304)
        bound = { requests: requests.labels(labels), duration: duration.labels(labels), poll: poll ? sdkPolls.labels({ route, status: String(status) }) : undefined }
        // Route templates, methods and statuses are few; the bound is only a guard (past it, a child is made per call).
        if (children.size < MAX_BOUND_CHILDREN) children.set(key, bound)
      }
      bound.requests.inc()
      bound.duration.observe(seconds)
      bound.poll?.inc()
    },
    payload: (route, bytes) => payloadSizes[route].observe(bytes),
    query: (seconds) => queryTime.observe(seconds),
    scrape(request) {
      // Every request passes here: parse the URL only when it may be the scrape's.
      if (!request.url.includes(METRICS_PATH) || new URL(request.url).pathname !== METRICS_PATH) return undefined
      // Not configured: a 404, as for any unknown path (not the console's page).
      if (token === undefined) return Promise.resolve(new Response('Not found\n', { status: 404 }))
      return (async () => {
        if (request.method !== 'GET') return new Response(null, { status: 405, headers: { Allow: 'GET' } })
        if (!authorized(request.headers.get('authorization'))) return new Response('Unauthorized\n', { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } })
        await refresh()
        return new Response(await registry.metrics(), { headers: { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' } })
      })()
    },
  }
}
