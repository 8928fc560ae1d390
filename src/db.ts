import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
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
