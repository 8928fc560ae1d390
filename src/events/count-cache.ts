import { sql, type SQL } from 'drizzle-orm'
import { eventCountCache, events } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'

/*
 * Exact totals of event searches without counting every match on every search.
 *
 * A row of event_count_cache promises: `n` events match `filterKey` among those with an id up to `upToId`,
 * and no event with such an id will ever be added. A search then counts only the matches above `upToId`.
 * A count is written only in one of two cases, which keep the promise:
 * - Dense: every id from the previous `upToId` + 1 to the new one belongs to an event the counting statement
 *   sees. Ids are unique, so none of them is left for another transaction, whatever else is running.
 * - Quiet: when the statement's snapshot was taken, no other transaction held a transaction id. Flagpost
 *   inserts events in the transaction of the change they record, after that change (rule 6), so a
 *   transaction that has drawn an event id holds a transaction id: every drawn id up to the newest event
 *   the statement sees is then committed (visible) or rolled back (never used). This lets a count step over
 *   the ids of rolled-back transactions, and is what the first count of a filter needs.
 * The quiet test: the snapshot lists no running transaction (xip), and the transaction id the statement
 * takes afterwards is the snapshot's xmax, so no transaction had one at or above xmax either (xip does not
 * list those: an empty xip alone is not enough). Events are append-only; anything that deletes events must
 * clear the table.
 */

// Totals from this size up are cached: counting a thousand rows costs about as much as the rest of a search.
const CACHE_FROM = 1_000
// A cached total is moved up once this many events are newer than it, so a search counts at most about this many.
const ADVANCE_AFTER = 1_000
// After an attempt to cache a filter's total or move it up, this process waits this long before the next one: an
// attempt that is blocked (not quiet, a gap in the ids) would otherwise be repeated by every search.
const RETRY_AFTER_MS = 1_000

// The CASE fixes the order: a transaction id our transaction took before the snapshot proves nothing. Evaluate
// it once per statement: taking the id changes its next answer.
const quiet = sql`case when pg_current_xact_id_if_assigned() is not null then false
  else pg_current_xact_id() = pg_snapshot_xmax(pg_current_snapshot()) and not exists (select from pg_snapshot_xip(pg_current_snapshot())) end`

/**
 * The condition of a search in the two forms its statements need (the same rows): `set` for reading all events (a
 * first count, a page), `row` for checking events one by one (the events above a cached total). They differ only
 * for free text (`text`: see textMatches in src/events/text-index.ts).
 */
export interface SearchWhere {
  set: SQL | undefined
  row: SQL | undefined
  text: boolean
}

/** One condition in both forms. */
export const sameWhere = (where: SQL | undefined): SearchWhere => ({ set: where, row: where, text: false })

/** What a search's statement reads about its total; `n` and `upToId` are null when nothing is cached. */
export interface CountRead {
  n: number | null
  upToId: number | null
  maxId: number | null
  counted: number
  /** Whether the statement was quiet: only asked when `counted` is a first count large enough to cache. */
  quiet: boolean | null
}

/**
 * A one-row subquery read in the statement that reads the page: `count`, [n, upToId, maxId, counted, quiet] as JSON
 * text (see readCount), and `total`, the exact number of matches in the statement's snapshot (what totalOf gives).
 * `counted` is every match when nothing is cached, else the matches above upToId: those are found by id, a short
 * range of the primary key (bounded on both sides so that the planner sees it as short), and the filter is checked
 * on each (`is true` keeps the planner from walking all of a flag's or project's events in the filter's index
 * instead). A first count is cached from this statement's snapshot, so `quiet` is asked here, and only then: taking
 * a transaction id makes the search write a commit record.
 */
export function countRow(filterKey: unknown, where: SearchWhere): SQL {
  return sql`(select json_build_array(c.n, c.up_to_id, m.max_id, t.counted,
      case when c.up_to_id is null and t.counted >= ${sql.raw(String(CACHE_FROM))} then ${quiet} end)::text as count,
      coalesce(c.n, 0) + t.counted as total, m.max_id
    from (select max(${events.id}) as max_id from ${events}) m
    left join ${eventCountCache} c on c.filter_key = ${filterKey}
    cross join lateral (
      select case
        when c.up_to_id is null then (select count(*) from ${events} ${where.set ? sql`where ${where.set}` : sql``})
        else (select count(*) from ${events} where ${events.id} > c.up_to_id and ${events.id} <= m.max_id and (${where.row ?? sql`true`}) is true)
      end as counted
      offset 0 -- not merged into the query above, which would count twice
    ) t)`
}

export function readCount(json: string): CountRead {
  const [n, upToId, maxId, counted, quiet] = JSON.parse(json) as [number | null, number | null, number | null, number, boolean | null]
  return { n, upToId, maxId, counted, quiet }
}

export const totalOf = (read: CountRead) => (read.n ?? 0) + read.counted

// How many filters' totals are kept: every distinct filter (a date range, a free text) can get one, so the
// least recently computed go when a new one comes.
export const KEEP_FILTERS = 1_000

const nextAttempt = new Map<string, number>()

/** Caches a first count, or moves a cached total up, when it is due. */
export async function keepCountCache(db: Db, filterKey: string, where: SearchWhere, read: CountRead, now: Date): Promise<void> {
  if (read.upToId === null && read.quiet && read.maxId !== null) {
    await db
      .insert(eventCountCache)
      .values({ filterKey, upToId: read.maxId, n: read.counted })
      .onConflictDoUpdate({ target: eventCountCache.filterKey, set: { upToId: read.maxId, n: read.counted, computedAt: sql`now()` }, setWhere: sql`${eventCountCache.upToId} < ${read.maxId}` })
    await evictCountCache(db)
    return
  }
  const due = read.upToId === null ? read.counted >= CACHE_FROM : (read.maxId ?? 0) - read.upToId >= ADVANCE_AFTER
  if (!due || (nextAttempt.get(filterKey) ?? 0) > now.getTime()) return
  if (nextAttempt.size >= 10_000) nextAttempt.clear()
  // Taken before the attempt, so that concurrent searches of this process do not make the same one.
  nextAttempt.set(filterKey, now.getTime() + RETRY_AFTER_MS)
  const first = read.upToId === null
  const written = first ? await firstCount(db, filterKey, where.set) : await advance(db, filterKey, where.row, read.upToId!)
  if (written) nextAttempt.delete(filterKey)
  if (written && first) await evictCountCache(db)
}

/** Drops the totals beyond the `keep` most recently computed (a dropped one is counted afresh when next searched). */
export async function evictCountCache(db: Db, keep = KEEP_FILTERS): Promise<void> {
  await db.execute(
    sql`delete from ${eventCountCache} where filter_key in (select filter_key from ${eventCountCache} order by computed_at desc, filter_key offset ${keep})`,
  )
}

// The statements below run rarely and are planned for their values (not prepared).

/**
 * Counts every match again and caches the count if this statement is quiet: for when the search's own was
 * not. The search asks after its counts, so nothing may have taken a transaction id while they ran; this
 * statement asks first, and counts only if it was quiet.
 */
async function firstCount(db: Db, filterKey: string, where: SQL | undefined): Promise<boolean> {
  const rows = await queryRows(
    db,
    sql`with quiet as materialized (select ${quiet} as quiet)
      insert into ${eventCountCache} (filter_key, up_to_id, n)
      select ${filterKey}, (select coalesce(max(${events.id}), 0) from ${events}), (select count(*) from ${events} ${where ? sql`where ${where}` : sql``})
      from quiet where quiet.quiet
      on conflict (filter_key) do update set n = excluded.n, up_to_id = excluded.up_to_id, computed_at = now()
        where ${eventCountCache.upToId} < excluded.up_to_id
      returning 1`,
  )
  return rows.length > 0
}

/**
 * Adds the matches above `upToId` to the cached total: up to the newest event if the statement was quiet,
 * else up to the end of the dense run of ids above `upToId`. Writes nothing if another search moved the row
 * meanwhile (then its `upToId` differs).
 */
async function advance(db: Db, filterKey: string, where: SQL | undefined, upToId: number): Promise<boolean> {
  const rows = await queryRows(
    db,
    sql`with quiet as materialized (select ${quiet} as quiet),
      newer as (
        select ${events.id} as id, (${where ?? sql`true`}) is true as matches, ${events.id} - ${upToId} = row_number() over (order by ${events.id}) as dense
        from ${events} where ${events.id} > ${upToId}
      ),
      bound as materialized (select case when (select quiet from quiet) then max(id) else max(id) filter (where dense) end as up_to_id from newer),
      step as (
        select bound.up_to_id, count(*) filter (where newer.matches and newer.id <= bound.up_to_id) as n
        from bound, newer group by bound.up_to_id
      )
      update ${eventCountCache} set n = ${eventCountCache.n} + step.n, up_to_id = step.up_to_id, computed_at = now()
      from step
      where ${eventCountCache.filterKey} = ${filterKey} and ${eventCountCache.upToId} = ${upToId} and step.up_to_id > ${upToId}
      returning 1`,
  )
  return rows.length > 0
}
