import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres'
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator'
import pg from 'pg'
import * as schema from '../schema/index.js'
import { useNamedStatements, type DbHandle } from './db.js'

export const migrationsFolder = fileURLToPath(new URL('../schema/migrations', import.meta.url))

export interface NodeDbHandle extends DbHandle {
  /** Applies every pending migration of `schema/migrations` (idempotent). */
  migrate(): Promise<void>
  /** From now on, tells `observe` how long each query took (the Node server's metrics; queries of a transaction included). */
  timeQueries(observe: (seconds: number) => void): void
  /**
   * What the connection pool holds now: `pg`'s connections (open, idle) and the queries waiting for one; PGlite, which
   * runs one query at a time, as one connection and the queries (and transactions) waiting for it.
   */
  poolState(): { total: number; idle: number; waiting: number }
}

type QueryFunction = (...args: unknown[]) => unknown

/**
 * `query` timed: a promise's settling, or the callback's call (pg's pool calls its clients with one). Nothing is read
 * before `observe()` is set.
 */
function timed(query: QueryFunction, observe: () => ((seconds: number) => void) | undefined): QueryFunction {
  return function (this: unknown, ...args: unknown[]) {
    const told = observe()
    if (!told) return query.apply(this, args)
    const started = performance.now()
    const done = () => told((performance.now() - started) / 1000)
    const last = args.length - 1
    const callback = args[last]
    if (typeof callback === 'function') {
      args[last] = (...results: unknown[]) => (done(), callback(...results))
      return query.apply(this, args)
    }
    const result = query.apply(this, args)
    if (result instanceof Promise) result.then(done, done)
    return result
  }
}

/** Embedded Postgres: a data folder on disk, or in memory when `dataDir` is omitted. */
export async function openPglite(options: { dataDir?: string; loadDataDir?: Blob } = {}): Promise<NodeDbHandle & { client: PGlite }> {
  // pg_trgm backs the free-text event search index.
  const client = await PGlite.create({ dataDir: options.dataDir, loadDataDir: options.loadDataDir, extensions: { pg_trgm } })
  const db = drizzlePglite(client, { schema })
  let observe: ((seconds: number) => void) | undefined
  // Calls made and not finished: PGlite runs one at a time, the others wait for it.
  let pending = 0
  const counted =
    <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      pending++
      try {
        return await run(...args)
      } finally {
        pending--
      }
    }
  return {
    client,
    db: db as unknown as DbHandle['db'],
    migrate: () => migratePglite(db, { migrationsFolder }),
    close: () => client.close(),
    timeQueries(given) {
      if (observe) return void (observe = given)
      observe = given
      const query = timed(client.query.bind(client) as QueryFunction, () => observe) as PGlite['query']
      const transaction = client.transaction.bind(client)
      client.query = counted(query) as unknown as PGlite['query']
      client.exec = counted(client.exec.bind(client))
      client.transaction = counted((callback) =>
        transaction((tx) => {
          tx.query = timed(tx.query as QueryFunction, () => observe) as typeof tx.query
          return callback(tx)
        }),
      ) as PGlite['transaction']
    },
    poolState: () => ({ total: 1, idle: pending === 0 ? 1 : 0, waiting: Math.max(0, pending - 1) }),
  }
}

/**
 * A real Postgres server (self-hosted, Neon, ...) through node-postgres. `onIdleError` hears of a connection that failed
 * while idle in the pool (the database restarted or stopped): the pool drops it and opens another for the next query.
 */
export function openPg(connectionString: string, { onIdleError }: { onIdleError?: (error: Error) => void } = {}): NodeDbHandle {
  const pool = new pg.Pool({ connectionString, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) })
  // Unheard, that error would end the process (an 'error' event without a listener): a stopped database must leave it
  // serving 503 from GET /ready, and working again once the database is back.
  pool.on('error', (error) => onIdleError?.(error))
  let observe: ((seconds: number) => void) | undefined
  // Every connection's queries, a transaction's included (drizzle runs those on a connection it takes from the pool).
  pool.on('connect', (client) => {
    client.query = timed(client.query.bind(client) as QueryFunction, () => observe) as typeof client.query
    // The pool hears a connection's error only while it is idle: one that fails while a request holds it (a transaction
    // drizzle took from the pool) would be an unheard 'error' event ending the process. Its query rejects with the
    // error (the request answers it); nothing more to do here.
    client.on('error', () => {})
  })
  const db = drizzlePg(pool, { schema })
  useNamedStatements(db as unknown as DbHandle['db'])
  return {
    db: db as unknown as DbHandle['db'],
    migrate: () => migratePg(db, { migrationsFolder }),
    close: () => pool.end(),
    timeQueries: (given) => void (observe = given),
    poolState: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  }
}
