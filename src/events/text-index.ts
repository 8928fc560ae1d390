import { sql, type SQL } from 'drizzle-orm'
import { events, eventSearchState, eventSearchText } from '../../schema/index.js'
import { queryRows, statement, yieldToEventLoop, type Db } from '../db.js'

/*
 * The event search's free text (`query`), indexed after the write instead of in it.
 *
 * Each event's searchable text (data, pre_data and tags, lowercased) is copied by `indexEventText` into
 * event_search_text, under a trigram index. A write adds no trigram entries: a trigram index on events made
 * every recorded event add its trigrams to a pending list all writers share, in the write's transaction, and was
 * the largest part of a write's cost in PostgreSQL (bench/RESULTS.md, round ten).
 *
 * `indexed_through` (event_search_state) promises that every event with an id up to it is in event_search_text and
 * that no event with such an id will ever be added; it moves up once every transaction that could still add such an
 * event has ended (see `advance`). The search (`textMatches`) takes the indexed events whose copied text matches and the
 * events above `indexed_through` not indexed yet whose own text matches: every event is in exactly one of the two,
 * and a copy is the text of an event that never changes, so the answer is the same whether or not the job has run.
 * Jobs that fall behind make searches with text slower (the events above `indexed_through` are read one by one),
 * never different.
 */

/** An event's searchable text, from a row of events named `alias` (the expression the index's text was made with). */
export const searchTextOf = (alias: string) =>
  sql.raw(`lower(coalesce(${alias}.data::text, '') || ' ' || coalesce(${alias}.pre_data::text, '') || ' ' || ${alias}.tags::text)`)

const indexedThrough = sql`(select ${eventSearchState.indexedThrough} from ${eventSearchState} where ${eventSearchState.id} = 1)`

/**
 * SQL true for a row of events (the statement's `events`) whose searchable text matches `pattern` (LIKE), in two
 * forms that select the same rows. `set`: the ids of the matches, found through the copies' trigram index (and the
 * events not copied yet), for a search over all events (a count, a page of rare matches). `row`: checked on each event
 * by its id (its copy, else its own text), for a search that reads few events (the events above a cached total, a
 * page of common matches walked newest first): the set form would find every match first.
 */
export function textMatches(pattern: string, { trigrams }: { trigrams: boolean }): { set: SQL; row: SQL } {
  const notCopied = (alias: SQL) => sql`not exists (select from ${eventSearchText} i where i.event_id = ${alias})`
  const row = sql`(exists (select from ${eventSearchText} s where s.event_id = ${events.id} and s.text like ${pattern})
      or (${events.id} > ${indexedThrough} and ${notCopied(sql`${events.id}`)} and ${searchTextOf('events')} like ${pattern}))`
  // Text of one or two characters has no trigram to look up: every copy would be read, and every match's id gathered.
  if (!trigrams) return { set: row, row }
  return {
    row,
    set: sql`${events.id} in (
      select s.event_id from ${eventSearchText} s where s.text like ${pattern}
      union all
      select t.id from ${events} t where t.id > ${indexedThrough} and ${notCopied(sql`t.id`)} and ${searchTextOf('t')} like ${pattern})`,
  }
}

// Events indexed per statement: a statement holds one connection for tens of milliseconds at most.
const BATCH = 2_000

/**
 * Copies the text of up to BATCH events not indexed yet above `after` (and indexed_through), oldest first. Answers
 * how many, and the newest id copied: the run's next batch starts above it instead of reading again what this one
 * copied (an event committed late below it is copied by the next run).
 */
const indexBatch = statement<{ indexed: number; last: number | null }>(
  'flagpost_index_event_text',
  () => sql`with added as (
      insert into ${eventSearchText} (event_id, text)
      select e.id, ${searchTextOf('e')} from ${events} e
      where e.id > greatest(${indexedThrough}, ${sql.placeholder('after')}::bigint)
        and not exists (select from ${eventSearchText} i where i.event_id = e.id)
      order by e.id limit ${sql.raw(String(BATCH))}
      on conflict (event_id) do nothing
      returning event_id)
    select count(*)::int as indexed, max(event_id)::float8 as last from added`,
)

// How far past indexed_through one run looks for the end of the copied ids' dense run.
const DENSE_WINDOW = 100_000

/**
 * Moves indexed_through up, in a statement of its own (it sees what the batches committed). Over the copied ids
 * that follow it without a gap (each id is one event's, so none is left for a transaction still running), and
 * further by the transactions' horizon: each run leaves a
 * candidate: the newest visible event's id and the snapshot's xmax. Every id up to that event was drawn before the
 * snapshot, by a transaction that held a transaction id (events are inserted after the change they record, rule 6),
 * so below xmax. Once a later snapshot's xmin has reached that xmax, all those transactions have ended: each of those
 * ids is an event that is visible or one that will never be. indexed_through then moves to the candidate, or to just
 * below the first visible event above it not copied yet. `greatest` with the row's own value: a concurrent run
 * never moves it down.
 */
const advance = statement<{ moved: number }>(
  'flagpost_advance_event_text',
  () => sql`with st as (select indexed_through as w, candidate_id, candidate_xmax from ${eventSearchState} where ${eventSearchState.id} = 1),
    target as (
      select case when st.candidate_xmax is not null and pg_snapshot_xmin(pg_current_snapshot())::text::bigint >= st.candidate_xmax
        then least(st.candidate_id, coalesce(
          (select min(e.id) - 1 from ${events} e where e.id > st.w and e.id <= st.candidate_id and not exists (select from ${eventSearchText} i where i.event_id = e.id)),
          st.candidate_id))
        end as through
      from st
    ),
    dense as (
      select max(x.event_id) filter (where x.event_id - st.w = x.n) as through
      from st cross join lateral (
        select i.event_id, row_number() over (order by i.event_id) as n from ${eventSearchText} i
        where i.event_id > st.w order by i.event_id limit ${sql.raw(String(DENSE_WINDOW))}
      ) x group by st.w
    ),
    moved as (
      update ${eventSearchState} set
        indexed_through = greatest(${eventSearchState}.indexed_through, (select through from target), (select through from dense)),
        candidate_id = (select coalesce(max(id), 0) from ${events}),
        candidate_xmax = pg_snapshot_xmax(pg_current_snapshot())::text::bigint
      from st where ${eventSearchState.id} = 1
      returning indexed_through - st.w as moved)
    select coalesce((select moved from moved), 0)::int as moved`,
)

/**
 * Indexes the text of every event not indexed yet, in batches, and moves indexed_through up. Safe to run
 * concurrently (a copy is made once; indexed_through only grows). Answers how many events it indexed.
 */
export async function indexEventText(db: Db): Promise<number> {
  let indexed = 0
  let after = 0
  for (;;) {
    const [row] = await indexBatch(db, { after })
    indexed += row?.indexed ?? 0
    if ((row?.indexed ?? 0) < BATCH || row?.last == null) break
    after = row.last
    await yieldToEventLoop()
  }
  // The first leaves a candidate the second can take when no transaction was running meanwhile; otherwise the next
  // run's first takes it.
  await advance(db, {})
  await advance(db, {})
  return indexed
}

/** For tests and operators: how many events are above indexed_through (read from the events themselves by a text search). */
export async function unindexedTail(db: Db): Promise<{ indexedThrough: number; above: number }> {
  const [row] = await queryRows<{ indexedThrough: number; above: number }>(
    db,
    sql`select st.indexed_through::float8 as "indexedThrough", (select count(*) from ${events} e where e.id > st.indexed_through)::int as above
      from ${eventSearchState} st where st.id = 1`,
  )
  return row ?? { indexedThrough: 0, above: 0 }
}
