import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import type { SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { Pool, neonConfig } from '@neondatabase/serverless'
import { drizzle } from 'drizzle-orm/neon-serverless'
import * as schema from '../schema/index.js'

/** The database every service works on, whichever driver sits under it (a transaction is one too). */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>

export interface DbHandle {
  db: Db
  close(): Promise<void>
}

/**
 * Opens Neon's serverless driver (Postgres over WebSocket) for one Workers request.
 * `wsProxy` points it at a plain-WebSocket relay instead of Neon (local development and tests).
 */
export function openNeon(connectionString: string, options: { wsProxy?: string } = {}): DbHandle {
  if (options.wsProxy) {
    const proxy = options.wsProxy
    neonConfig.wsProxy = (host, port) => proxy.replace('{host}', host).replace('{port}', String(port))
    neonConfig.useSecureWebSocket = false
    neonConfig.pipelineConnect = false
  }
  const pool = new Pool({ connectionString })
  return { db: drizzle(pool, { schema }) as unknown as Db, close: () => pool.end() }
}

const statementNames = new Map<string, string>()
/** The drizzle dialects (one per database handle, shared with its transactions) whose driver may keep named statements. */
const namedStatementDialects = new WeakSet<object>()

interface DrizzleInternals {
  dialect: { sqlToQuery(query: SQL): { sql: string; params: unknown[] } }
  session: { prepareQuery(query: { sql: string; params: unknown[] }, fields: undefined, name: string | undefined, arrayMode: false): { execute(values?: Record<string, unknown>): Promise<unknown> } }
}

/**
 * Lets queries on this handle (and its transactions) run as named prepared statements: only where every
 * connection is a session of its own for as long as the process keeps it (node-postgres). Not Neon's
 * per-request pool (a statement would not outlive the request) nor the development relay, where many
 * connections share one PGlite session and the names would collide.
 */
export function useNamedStatements(db: Db): void {
  namedStatementDialects.add((db as unknown as DrizzleInternals).dialect)
}

const namedStatements = (db: Db) => namedStatementDialects.has((db as unknown as DrizzleInternals).dialect)

/**
 * Runs raw SQL and returns its rows (every driver answers raw SQL with `{ rows }`). With `prepared`, the
 * query runs as a named prepared statement where the handle allows it (see useNamedStatements): Postgres
 * parses and plans the text once per connection instead of on every call, which for a large query costs
 * more than running it. The name is derived from the text, so only use it for queries whose text does
 * not vary with the values (lists as one array parameter).
 */
export async function queryRows<T>(db: Db, query: SQL, options: { prepared?: boolean } = {}): Promise<T[]> {
  if (!options.prepared || !namedStatements(db)) return ((await db.execute(query)) as unknown as { rows: T[] }).rows
  // drizzle has no public way to name a raw query; its session's prepareQuery (what db.execute calls) takes one.
  const internal = db as unknown as DrizzleInternals
  const built = internal.dialect.sqlToQuery(query)
  let name = statementNames.get(built.sql)
  if (!name) statementNames.set(built.sql, (name = `flagpost_${statementNames.size + 1}`))
  return ((await internal.session.prepareQuery(built, undefined, name, false).execute()) as { rows: T[] }).rows
}

/** Runs a query builder, as the named prepared statement `name` where the handle allows it (see queryRows). */
export function runPrepared<T>(db: Db, query: PromiseLike<T> & { prepare(name: string): { execute(): Promise<T> } }, name: string): Promise<T> {
  return namedStatements(db) ? query.prepare(name).execute() : Promise.resolve(query)
}

const dialect = new PgDialect()
const statementNamesTaken = new Set<string>()

/**
 * A statement whose text is built once, with named placeholders (`sql.placeholder`) where its values go: the
 * hot writes and reads, which would otherwise spend more of the process's time having drizzle assemble the
 * same text than waiting for Postgres. Runs as the named prepared statement `name` where the handle allows it
 * (see queryRows); every placeholder must get a value.
 */
export function statement<T>(name: string, build: () => SQL): (db: Db, values: Record<string, unknown>) => Promise<T[]> {
  // One name, one text: a connection refuses a second statement under a name it has prepared.
  if (statementNamesTaken.has(name)) throw new Error(`Two statements are named ${name}`)
  statementNamesTaken.add(name)
  let built: { sql: string; params: unknown[] } | undefined
  return async (db, values) => {
    built ??= dialect.sqlToQuery(build())
    const { session } = db as unknown as DrizzleInternals
    const result = await session.prepareQuery(built, undefined, namedStatements(db) ? name : undefined, false).execute(values)
    return (result as { rows: T[] }).rows
  }
}
