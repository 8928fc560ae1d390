import { sql, type SQL } from 'drizzle-orm'
import { events, eventSearchState, eventSearchText } from '../../schema/index.js'
import { queryRows, statement, yieldToEventLoop, type Db } from '../db.js'
import { quiet } from './count-cache.js'

/*
 * The event search's free text (`query`), indexed after the write instead of in it.
 *
 * Each event's searchable text (data, pre_data and tags, lowercased) is copied by `indexEventText` into
 * event_search_text, under a trigram index. A write adds no trigram entries: a trigram index on events made
 * every recorded event add its trigrams to a pending list all writers share, in the write's transaction, and was
 * the largest part of a write's cost in PostgreSQL (bench/RESULTS.md, round ten).
 *
 * `indexed_through` (event_search_state) promises that every event with an id up to it is in event_search_text and
 * that no event with such an id will ever be added; it moves up as event_count_cache's `up_to_id` does (see
 * src/events/count-cache.ts): over ids that are all indexed (dense), or, in a quiet moment, up to the first visible
 * event not indexed yet. The search (`textMatches`) takes the indexed events whose copied text matches and the
 * events above `indexed_through` not indexed yet whose own text matches: every event is in exactly one of the two,
 * and a copy is the text of an event that never changes, so the answer is the same whether or not the job has run.
 * Jobs that fall behind make searches with text slower (the events above `indexed_through` are read one by one),
 * never different.
 */

/** An event's searchable text, from a row of events named `alias` (the expression the index's text was made with). */
export const searchTextOf = (alias: string) =>
  sql.raw(`lower(coalesce(${alias}.data::text, '') || ' ' || coalesce(${alias}.pre_data::text, '') || ' ' || ${alias}.tags::text)`)

const indexedThrough = sql`(select ${eventSearchState.indexedThrough} from ${eventSearchState} where ${eventSearchState.id} = 1)`

/** SQL true for a row of events (the statement's `events`) whose searchable text matches `pattern` (LIKE). */
export function textMatches(pattern: string): SQL {
  return sql`${events.id} in (
    select s.event_id from ${eventSearchText} s where s.text like ${pattern}
    union all
    select t.id from ${events} t
    where t.id > ${indexedThrough} and not exists (select from ${eventSearchText} i where i.event_id = t.id)
      and ${searchTextOf('t')} like ${pattern})`
}

// Events indexed per statement: a statement holds one connection for tens of milliseconds at most.
const BATCH = 2_000

/** Copies the text of up to BATCH events not indexed yet, oldest first. Answers how many. */
const indexBatch = statement<{ indexed: number }>(
  'flagpost_index_event_text',
  () => sql`with added as (
      insert into ${eventSearchText} (event_id, text)
      select e.id, ${searchTextOf('e')} from ${events} e
      where e.id > ${indexedThrough} and not exists (select from ${eventSearchText} i where i.event_id = e.id)
      order by e.id limit ${sql.raw(String(BATCH))}
      on conflict (event_id) do nothing
      returning 1)
    select count(*)::int as indexed from added`,
)

// How far past indexed_through one run looks for the end of the indexed ids' dense run.
const DENSE_WINDOW = 1_000_000

/**
 * Moves indexed_through up, in a statement of its own (it sees what the batches committed, and the quiet test
 * needs a transaction that holds no id yet): to the end of the dense run of indexed ids above it, or, when
 * quiet, to just below the first visible event not indexed (every id drawn up to the newest event is then
 * committed or rolled back), or the newest event when all are indexed.
 */
const advance = statement<{ moved: number }>(
  'flagpost_advance_event_text',
  () => sql`with st as (select ${eventSearchState.indexedThrough} as w from ${eventSearchState} where ${eventSearchState.id} = 1),
    dense as (
      select max(x.event_id) filter (where x.event_id - st.w = x.n) as through
      from st cross join lateral (
        select i.event_id, row_number() over (order by i.event_id) as n from ${eventSearchText} i
        where i.event_id > st.w order by i.event_id limit ${sql.raw(String(DENSE_WINDOW))}
      ) x group by st.w
    ),
    moved as (
      update ${eventSearchState} set indexed_through = greatest(
        st.w,
        (select through from dense),
        case when ${quiet} then coalesce(
          (select min(e.id) - 1 from ${events} e where e.id > st.w and not exists (select from ${eventSearchText} i where i.event_id = e.id)),
          (select max(id) from ${events}))
        end)
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
  for (;;) {
    const [row] = await indexBatch(db, {})
    indexed += row?.indexed ?? 0
    if ((row?.indexed ?? 0) < BATCH) break
    await yieldToEventLoop()
  }
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
