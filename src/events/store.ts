import { sql, type SQL, type SQLWrapper } from 'drizzle-orm'
import { addons, events, featureCollaborators, integrationOutbox } from '../../schema/index.js'
import { noteDeliveriesQueued, queryRows, statement, type Db } from '../db.js'
import { describeEvent } from './describe.js'
import type { NewEvent } from './types.js'
import type { Actor } from '../core/principal.js'

/**
 * Appends audit events. Call it with the transaction that makes the change, never on its own.
 * In the same transaction it queues the deliveries of every enabled integration that matches an
 * event (type, project, environment), to be made after the commit.
 *
 * `alongside`: the change the events describe (query builders: an update, an insert), made by the same
 * statement to save a round trip. It must not read the events (all parts of a statement see one snapshot).
 * With `guarded`, the events are written only if every one of them returns a row: the first is the version
 * check of an optimistic write (an update made only if the flag is still at the version the change was computed
 * from, outside a transaction: `guardSql` in src/flags/states.ts), and the others change something only where
 * `guardPassed`. `unguarded`: more changes the events do not wait on (as eventsStatement's). Returns how many events it wrote.
 */
export async function recordEvents(tx: Db, actor: Actor, createdAt: Date, list: NewEvent[], options: { alongside?: SQLWrapper[]; guarded?: boolean; unguarded?: SQLWrapper[] } = {}): Promise<number> {
  const alongside = options.alongside ?? []
  if (list.length === 0) {
    for (const statement of alongside) await tx.execute(statement)
    return 0
  }
  if (alongside.length === 0) return (await writeEvents(tx, actor, createdAt, list, {})).written
  // The text varies with the changes alongside: planned on every call (the hot writes are eventsStatements of their own).
  const text = eventsSql({ createdAt, createdBy: actor.createdBy, createdByUserId: actor.createdByUserId, events: eventRowsJson(actor, list) }, alongside, options.guarded ?? false, undefined, options.unguarded)
  const [result] = await queryRows<{ written: number; queued: number }>(tx, text)
  if (result?.queued) noteDeliveriesQueued(tx)
  return result?.written ?? 0
}

/** SQL for the `where` of a change made alongside events with `guarded` (after the version check): the check passed. */
export const guardPassed = sql.raw('exists (select from w0)')

/**
 * `recordEvents` as a statement built once (see `statement` in src/db.ts): `alongside` (and `returning`) with
 * placeholders for their values. Runs the events of one change with those values and answers how many events
 * it wrote and, with `returning` (SQL of one value, read in the statement's snapshot: before the change), that.
 * `unguarded`: more changes of the statement that the events do not wait on (they may touch no row; with
 * `guarded`, make them depend on `guardPassed` themselves).
 */
export function eventsStatement<R = never>(name: string, parts: { alongside: SQL[]; guarded?: boolean; returning?: SQL<R>; unguarded?: SQL[] }) {
  const run = statement<{ written: number; queued: number; returned: R | null }>(name, () => {
    const placeholders = { createdAt: sql.placeholder('createdAt'), createdBy: sql.placeholder('createdBy'), createdByUserId: sql.placeholder('createdByUserId'), events: sql.placeholder('events') }
    return eventsSql(placeholders, parts.alongside, parts.guarded ?? false, parts.returning, parts.unguarded)
  })
  return async (db: Db, actor: Actor, createdAt: Date, list: NewEvent[], values: Record<string, unknown>) => {
    const [result] = await run(db, { ...values, createdAt: createdAt.toISOString(), createdBy: actor.createdBy, createdByUserId: actor.createdByUserId, events: eventRowsJson(actor, list) })
    if (result?.queued) noteDeliveriesQueued(db)
    return { written: result?.written ?? 0, returned: result?.returned ?? null }
  }
}

/**
 * A statement whose events SQL makes from what its changes return, for a job that finds what to change itself
 * (nothing read first: the statement decides, so no event is written twice when runs overlap). `events`: SQL of a
 * jsonb array of event rows (type, project, environment, feature_name, data, pre_data, tags, label, summary),
 * reading the changes `w0`… Answers how many events it wrote and `returning` (as eventsStatement's).
 */
export function derivedEventsStatement<R = never>(name: string, parts: { alongside: SQL[]; events: SQL; returning?: SQL<R>; unguarded?: SQL[] }) {
  const run = statement<{ written: number; queued: number; returned: R | null }>(name, () =>
    eventsSql({ createdAt: sql.placeholder('createdAt'), createdBy: sql.placeholder('createdBy'), createdByUserId: sql.placeholder('createdByUserId'), events: parts.events }, parts.alongside, false, parts.returning, parts.unguarded),
  )
  return async (db: Db, actor: Actor, createdAt: Date, values: Record<string, unknown>) => {
    const [result] = await run(db, { ...values, createdAt: createdAt.toISOString(), createdBy: actor.createdBy, createdByUserId: actor.createdByUserId })
    if (result?.queued) noteDeliveriesQueued(db)
    return { written: result?.written ?? 0, returned: result?.returned ?? null }
  }
}

/** `recordEvents` with nothing alongside: most writes. */
const writeEvents = eventsStatement('flagpost_record_events', { alongside: [] })

/**
 * The events as one JSON value, unpacked by Postgres: the statement's text is the same for any number of
 * events (one prepared statement), and there are a few parameters to place instead of nine per event. A
 * missing key is an SQL null.
 */
function eventRowsJson(actor: Actor, list: NewEvent[]): string {
  const rows = list.map((e) => {
    const described = describeEvent(actor, e)
    return {
      type: e.type,
      project: e.project ?? undefined,
      environment: e.environment ?? undefined,
      feature_name: e.featureName ?? undefined,
      data: e.data ?? undefined,
      pre_data: e.preData ?? undefined,
      tags: e.tags ?? [],
      label: e.label ?? described.label,
      summary: e.summary ?? described.summary,
    }
  })
  return JSON.stringify(rows)
}

/**
 * The statement that writes events (values: parameters or placeholders), the changes alongside them, the
 * collaborators of their flags and their integration deliveries: one round trip for every write.
 * Collaborators are grouped because ON CONFLICT may not touch a row twice, and upserted in name order so
 * concurrent writers lock in one order. Answers `written` (events) and `queued` (deliveries).
 */
function eventsSql(v: { createdAt: unknown; createdBy: unknown; createdByUserId: unknown; events: unknown }, alongside: SQLWrapper[], guarded: boolean, returning?: SQL, unguarded: SQLWrapper[] = []): SQL {
  const changes = alongside.map((statement, i) => sql`${sql.raw(`w${i}`)} as (${statement.getSQL()}),`)
  // Changes that may touch no row (a list that can be empty), which the events therefore do not wait on.
  const others = unguarded.map((statement, i) => sql`${sql.raw(`u${i}`)} as (${statement.getSQL()}),`)
  return sql`
    with ${sql.join(changes)} ${sql.join(others)} e as (
      insert into ${events} (created_at, created_by, created_by_user_id, type, project, environment, feature_name, data, pre_data, tags, label, summary)
      select ${v.createdAt}::timestamptz, ${v.createdBy}::text, ${v.createdByUserId}::integer, v.*
      from jsonb_to_recordset(${v.events}::jsonb) as v (type text, project text, environment text, feature_name text, data jsonb, pre_data jsonb, tags jsonb, label text, summary text)
      ${guarded ? sql`where ${sql.join(alongside.map((_, i) => sql.raw(`exists (select from w${i})`)), sql` and `)}` : sql``}
      returning id, type, project, environment, feature_name
    ),
    c as (
      insert into ${featureCollaborators} (feature_name, created_by, created_by_user_id, latest_event_id)
      select e.feature_name, ${v.createdBy}::text, ${v.createdByUserId}::integer, max(e.id)
      from e where e.feature_name is not null
      group by e.feature_name order by e.feature_name
      on conflict (feature_name, created_by, (coalesce(created_by_user_id, -1)))
      do update set latest_event_id = greatest(${featureCollaborators}.latest_event_id, excluded.latest_event_id)
    ),
    o as (
      insert into ${integrationOutbox} (integration_id, event_id, created_at)
      select a.id, e.id, ${v.createdAt}::timestamptz
      from e
      join ${addons} a on a.enabled
        and e.type = any(a.events)
        and (cardinality(a.projects) = 0 or '*' = any(a.projects) or e.project = any(a.projects))
        and (cardinality(a.environments) = 0 or '*' = any(a.environments) or e.environment = any(a.environments))
      returning 1
    )
    select count(*)::int as written, (select count(*) from o)::int as queued${returning ? sql`, (${returning}) as returned` : sql``} from e`
}
