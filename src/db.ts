import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { sql, type SQL } from 'drizzle-orm'
import { PgDialect, type PgTable } from 'drizzle-orm/pg-core'
import { Pool, neon, neonConfig } from '@neondatabase/serverless'
import { drizzle as drizzleWebSocket } from 'drizzle-orm/neon-serverless'
import { drizzle as drizzleHttp } from 'drizzle-orm/neon-http'
import * as schema from '../schema/index.js'
import { conflict } from './core/errors.js'

/** The database every service works on, whichever driver sits under it (a transaction is one too). */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>

export interface DbHandle {
  db: Db
  close(): Promise<void>
}

export interface NeonOptions {
  /** A plain-WebSocket relay to use instead of Neon's proxy (local development and tests): `host:port/path`. */
  wsProxy?: string
  /** A SQL-over-HTTP endpoint to use instead of Neon's (local development and tests): `http://host:port/sql`. */
  fetchEndpoint?: string
}

/**
 * Opens Neon's serverless driver for one Workers request. Statements go over HTTP (`neon()`), one round trip
 * each and no connection to set up; `db.transaction(fn)`, an interactive transaction, takes a WebSocket pool
 * (Postgres' own protocol), opened by the request's first transaction and ended by `close`.
 */
export function openNeon(connectionString: string, options: NeonOptions = {}): DbHandle {
  if (options.wsProxy) {
    const proxy = options.wsProxy
    neonConfig.wsProxy = (host, port) => proxy.replace('{host}', host).replace('{port}', String(port))
    neonConfig.useSecureWebSocket = false
  }
  if (options.fetchEndpoint) neonConfig.fetchEndpoint = options.fetchEndpoint
  const http: HttpClient = neon(connectionString)
  const db = drizzleHttp(http, { schema }) as unknown as Db
  httpClients.set(db, http)
  const request: RequestWrites = { deliveriesQueued: false }
  requestWrites.set(dialectOf(db), request)
  let pool: Pool | undefined
  let interactive: Db | undefined
  // drizzle's neon-http driver refuses transactions (HTTP has no session to hold one open between statements).
  db.transaction = (run, config) => {
    if (!interactive) {
      interactive = drizzleWebSocket((pool = new Pool({ connectionString })), { schema }) as unknown as Db
      requestWrites.set(dialectOf(interactive), request)
    }
    return interactive.transaction(run, config)
  }
  return {
    db,
    close: async () => {
      const ending = pool
      pool = interactive = undefined
      await ending?.end()
    },
  }
}

type HttpClient = ReturnType<typeof neon<boolean, boolean>>

/** What the writes of one request of openNeon did, found from any database it hands out (its transactions and batches too). */
interface RequestWrites {
  deliveriesQueued: boolean
}

/** By drizzle dialect: one per database handle, shared with its transactions. */
const requestWrites = new WeakMap<object, RequestWrites>()

const dialectOf = (db: Db) => (db as unknown as DrizzleInternals).dialect

/** Notes that a write on `db` queued integration deliveries (src/events/store.ts). */
export function noteDeliveriesQueued(db: Db): void {
  const writes = requestWrites.get(dialectOf(db))
  if (writes) writes.deliveriesQueued = true
}

/**
 * Whether the request's writes may have queued integration deliveries: on Workers (openNeon) only when one did,
 * so a write with no integration to notify makes no round trip after its response; elsewhere always (one
 * process claims for all its requests, and a claim costs little next to its database).
 */
export const deliveriesMaybeQueued = (db: Db): boolean => requestWrites.get(dialectOf(db))?.deliveriesQueued ?? true

/** The SQL-over-HTTP client under each request database of openNeon, for its batches. */
const httpClients = new WeakMap<Db, HttpClient>()

export interface BatchOptions {
  /** Default: the database's (read committed). */
  isolationLevel?: 'read committed' | 'repeatable read' | 'serializable'
  /** `read only` with `repeatable read`: every statement reads the same snapshot. */
  accessMode?: 'read only' | 'read write'
  /**
   * Where the statements run one after the other in this process (PGlite, node-postgres), let the event loop run
   * between them: a long batch of bounded statements then never stalls the process for longer than one of them.
   */
  yieldBetween?: boolean
}

/** Lets timers and I/O run (a macrotask): awaiting a settled promise would let only other promises run. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0))

const NEON_ISOLATION = { 'read committed': 'ReadCommitted', 'repeatable read': 'RepeatableRead', serializable: 'Serializable' } as const

/**
 * Runs statements as one transaction: over Neon's HTTP in one round trip (a non-interactive transaction),
 * elsewhere (PGlite, node-postgres, inside a transaction) as a transaction of their own, one after the other.
 * Each item makes its statement on the database it is given (a query builder, `queryRows`, a `statement`; no
 * transaction) and hands it back unawaited: the statements are sent together, so none can wait on another's
 * answer. Answers in the order given; when one statement fails, all do and nothing is written.
 */
export async function batch<T extends readonly ((q: Db) => PromiseLike<unknown>)[]>(
  db: Db,
  items: readonly [...T],
  options: BatchOptions = {},
): Promise<{ -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  return send(db, items, options, true)
}

/**
 * Runs independent statements that need no transaction together: one batch (one round trip) over Neon's HTTP,
 * side by side elsewhere, where a round trip costs little and a transaction would add two.
 */
export async function together<T extends readonly ((q: Db) => PromiseLike<unknown>)[]>(db: Db, items: readonly [...T]): Promise<{ -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  return send(db, items, {}, false)
}

async function send<T extends readonly ((q: Db) => PromiseLike<unknown>)[]>(
  db: Db,
  items: readonly [...T],
  options: BatchOptions,
  atomic: boolean,
): Promise<{ -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  type Answers = { -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }
  const http = httpClients.get(db)
  if (!http && !atomic) return (await Promise.all(items.map((item) => item(db)))) as Answers
  if (!http) {
    return (await db.transaction(async (tx) => {
      const answers: unknown[] = []
      for (const [i, item] of items.entries()) {
        if (i > 0 && options.yieldBetween) await yieldToEventLoop()
        answers.push(await item(tx))
      }
      return answers
      // drizzle sets the transaction's characteristics from any config given, even an empty one (invalid SQL).
    }, options.isolationLevel || options.accessMode ? { isolationLevel: options.isolationLevel, accessMode: options.accessMode } : undefined)) as Answers
  }
  // Each item gets a database whose statements are written down in its slot instead of sent (drizzle makes a
  // query builder's statement only once it is awaited, so the slots keep the items' order whatever the timing).
  const slots = items.map(() => [] as { query: ReturnType<HttpClient['query']>; resolve(result: unknown): void; reject(error: unknown): void }[])
  let sent = false
  const recorder = (slot: number) => {
    const record = (text: string, params: unknown[], options: Parameters<HttpClient['query']>[2]) =>
      sent
        ? Promise.reject(new Error('A statement of a batch was made after the batch was sent (it waited on another statement)'))
        : new Promise((resolve, reject) => slots[slot]!.push({ query: http.query(text, params, options), resolve, reject }))
    const recorder = drizzleHttp(Object.assign(record, { query: record }) as unknown as HttpClient) as unknown as Db
    const writes = requestWrites.get(dialectOf(db))
    if (writes) requestWrites.set(dialectOf(recorder), writes)
    return recorder
  }
  const answers = Promise.all(items.map((item, i) => item(recorder(i))))
  await new Promise((resolve) => setTimeout(resolve, 0))
  sent = true
  const pending = slots.flat()
  if (pending.length > 0) {
    try {
      const results = await http.transaction(
        pending.map((p) => p.query),
        { isolationLevel: options.isolationLevel && NEON_ISOLATION[options.isolationLevel], readOnly: options.accessMode && options.accessMode === 'read only' },
      )
      pending.forEach((p, i) => p.resolve(results[i]))
    } catch (error) {
      for (const p of pending) p.reject(error)
    }
  }
  return (await answers) as Answers
}

/**
 * SQL of a row of `table` as text (its every column, in Postgres' text output): read it with the row, and a
 * later statement that writes only `where rowText(table) = snapshot` writes only if the row is still
 * exactly as read. Optimistic concurrency without a version column, for writes computed from a read outside a
 * transaction (see `untilUnchanged`). The text of a timestamp follows the session's time zone, which every
 * connection of a deployment shares. `table` must be named in the statement by its own name (no alias).
 */
export const rowText = (table: PgTable) => sql<string>`${table}::text`

/** A LIKE pattern matching text that contains `text` (its `%`, `_` and backslash taken literally). */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/**
 * Runs a write computed from a read and made only if what it was computed from still holds (one statement, or
 * a `batch` whose statements check it: over Neon's HTTP, a read and a write, two round trips, where an
 * interactive transaction would open a WebSocket and take four or more). `attempt` reads, decides (throwing
 * the 4xx of a refused change) and writes, and answers undefined when its write found the read out of date;
 * it is then tried again from a fresh read, `times` in all, after which the write is refused with a 409.
 */
export async function untilUnchanged<T>(what: string, attempt: () => Promise<T | undefined>, times = 5): Promise<T> {
  for (let tried = 0; tried < times; tried++) {
    const done = await attempt()
    if (done !== undefined) return done
  }
  throw conflict(`${what} was changed by others while it was being written, ${times} times: try again`)
}

/** The drizzle dialects (one per database handle, shared with its transactions) whose driver may keep named statements. */
const namedStatementDialects = new WeakSet<object>()

interface DrizzleInternals {
  dialect: { sqlToQuery(query: SQL): { sql: string; params: unknown[] } }
  session: { prepareQuery(query: { sql: string; params: unknown[] }, fields: undefined, name: string | undefined, arrayMode: false): { execute(values?: Record<string, unknown>): Promise<unknown> } }
}

/**
 * Lets statements on this handle (and its transactions) run as named prepared statements: only where every
 * connection is a session of its own for as long as the process keeps it (node-postgres). Not Neon's
 * per-request pool (a statement would not outlive the request) nor the development relay, where many
 * connections share one PGlite session and the names would collide.
 */
export function useNamedStatements(db: Db): void {
  namedStatementDialects.add((db as unknown as DrizzleInternals).dialect)
}

const namedStatements = (db: Db) => namedStatementDialects.has((db as unknown as DrizzleInternals).dialect)

/**
 * Runs raw SQL and returns its rows (every driver answers raw SQL with `{ rows }`). Postgres plans it for its
 * values on every call; a statement run often is a `statement`.
 */
export async function queryRows<T>(db: Db, query: SQL): Promise<T[]> {
  return ((await db.execute(query)) as unknown as { rows: T[] }).rows
}

const dialect = new PgDialect()
const statementNames = new Set<string>()

/**
 * A statement whose text is built once, with named placeholders (`sql.placeholder`) where its values go (lists
 * as one array), for the hot reads and writes. It runs as the named prepared statement `name` where the handle
 * allows it (see useNamedStatements): Postgres parses and plans it once per connection instead of on every
 * call, which for a large query costs more than running it, and drizzle does not assemble the same text again.
 * Define statements at module scope: a name is taken once. Every placeholder must get a value; rows are the
 * driver's, as with queryRows.
 */
export function statement<T>(name: string, build: () => SQL): (db: Db, values: Record<string, unknown>) => Promise<T[]> {
  // One name, one text: a connection refuses a second statement under a name it has prepared.
  if (statementNames.has(name)) throw new Error(`Two statements are named ${name}`)
  statementNames.add(name)
  let built: { sql: string; params: unknown[] } | undefined
  return async (db, values) => {
    built ??= dialect.sqlToQuery(build())
    // drizzle has no public way to name a raw query; its session's prepareQuery (what db.execute calls) takes one.
    const { session } = db as unknown as DrizzleInternals
    const result = await session.prepareQuery(built, undefined, namedStatements(db) ? name : undefined, false).execute(values)
    return (result as { rows: T[] }).rows
  }
}
