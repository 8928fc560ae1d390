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
}

/** Embedded Postgres: a data folder on disk, or in memory when `dataDir` is omitted. */
export async function openPglite(options: { dataDir?: string; loadDataDir?: Blob } = {}): Promise<NodeDbHandle & { client: PGlite }> {
  // pg_trgm backs the free-text event search index.
  const client = await PGlite.create({ dataDir: options.dataDir, loadDataDir: options.loadDataDir, extensions: { pg_trgm } })
  const db = drizzlePglite(client, { schema })
  return {
    client,
    db: db as unknown as DbHandle['db'],
    migrate: () => migratePglite(db, { migrationsFolder }),
    close: () => client.close(),
  }
}

/** A real Postgres server (self-hosted, Neon, ...) through node-postgres. */
export function openPg(connectionString: string): NodeDbHandle {
  const pool = new pg.Pool({ connectionString, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) })
  const db = drizzlePg(pool, { schema })
  useNamedStatements(db as unknown as DbHandle['db'])
  return {
    db: db as unknown as DbHandle['db'],
    migrate: () => migratePg(db, { migrationsFolder }),
    close: () => pool.end(),
  }
}
