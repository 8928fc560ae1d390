import { sql } from 'drizzle-orm'
import { queryRows, type Db } from './db.js'
import type { Logger } from './http/request-log.js'

/**
 * The embedded database's planner statistics. PGlite runs no autovacuum, so without this its tables are never analyzed
 * and the planner guesses their sizes: at 10,000 flags a project overview took seconds on a plan made for an empty
 * table. Postgres (`DATABASE_URL`) needs none of it: its autovacuum analyzes.
 */

/** How often the server looks for tables to analyze (one read of the statistics views). */
export const ANALYZE_CHECK_MS = 60_000

/**
 * Analyzes, one table at a time (PGlite runs one statement at a time: a request waits for one table's, not all), the
 * tables that hold pages and were never analyzed (`reltuples` −1: a database of an older version, a table a migration
 * filled), that count rows but have no statistics (an index built on a filled table sets the count), or changed enough since their last analysis by autovacuum's rule (more rows inserted, updated or deleted
 * than 50 plus 10 % of its rows: `autovacuum_analyze_threshold`, `autovacuum_analyze_scale_factor`). PGlite keeps
 * the counts of changes in memory only (a restart forgets them), and publishes them within a second. A table emptied
 * since (an inbox drained: PGlite never vacuums, so its pages stay) is analyzed once, to a count of 0, and then left
 * alone: ANALYZE of no live rows writes no statistics, so "no statistics" alone would pick it every minute. Logged at `info`
 * with the tables and its duration; returns the tables analyzed.
 */
export async function analyzeTables(db: Db, logger: Logger): Promise<string[]> {
  const started = performance.now()
  const rows = await queryRows<{ name: string }>(
    db,
    sql`select format('%I.%I', s.schemaname, s.relname) as name from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      where s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
        or (pg_relation_size(c.oid) > 0 and c.reltuples < 0)
        or (c.reltuples > 0 and not exists (select from pg_statistic where starelid = c.oid))
      order by 1`,
  )
  const tables = rows.map((row) => row.name)
  if (tables.length === 0) return tables
  for (const table of tables) await db.execute(sql.raw(`analyze ${table}`))
  logger.log('info', 'database analyzed', { tables, durationMs: Math.round(performance.now() - started) })
  return tables
}
