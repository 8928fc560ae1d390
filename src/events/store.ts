import { sql, type SQLWrapper } from 'drizzle-orm'
import { addons, events, featureCollaborators, integrationOutbox } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { describeEvent } from './describe.js'
import type { EventType } from './types.js'

/** Who an audit event is attributed to. */
export interface Actor {
  createdBy: string
  createdByUserId: number | null
}

export const SYSTEM_ACTOR: Actor = { createdBy: 'system', createdByUserId: null }

export interface EventTag {
  type: string
  value: string
}

export interface NewEvent {
  type: EventType
  project?: string | null
  environment?: string | null
  featureName?: string | null
  data?: unknown
  preData?: unknown
  tags?: EventTag[]
  label?: string | null
  summary?: string | null
}

/**
 * Appends audit events. Call it with the transaction that makes the change, never on its own.
 * In the same transaction it queues the deliveries of every enabled integration that matches an
 * event (type, project, environment), to be made after the commit.
 *
 * `alongside`: the change the events describe (query builders: an update, an insert), made by the same
 * statement to save a round trip. It must not read the events (all parts of a statement see one snapshot).
 * With `guarded`, the first of them must return a row for anything to be written: an update made only if
 * the row is still as read (an optimistic write, outside a transaction). Returns how many events it wrote.
 */
export async function recordEvents(tx: Db, actor: Actor, createdAt: Date, list: NewEvent[], options: { alongside?: SQLWrapper[]; guarded?: boolean } = {}): Promise<number> {
  const alongside = options.alongside ?? []
  if (list.length === 0) {
    for (const statement of alongside) await tx.execute(statement)
    return 0
  }
  // The events travel as one JSON parameter, unpacked by Postgres: the statement's text is the same for any
  // number of events (one prepared statement), and drizzle has a few parameters to place instead of nine per
  // event. A missing key is an SQL null.
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
  const changes = alongside.map((statement, i) => sql`${sql.raw(`w${i}`)} as ${statement},`)
  // The events, the collaborators of their flags and their integration deliveries in one statement (one round
  // trip for every write). Collaborators are grouped because ON CONFLICT may not touch a row twice, and
  // upserted in name order so concurrent writers lock in one order. The text depends only on the change
  // alongside: it runs as a prepared statement.
  const [result] = await queryRows<{ written: number }>(
    tx,
    sql`
    with ${sql.join(changes)} e as (
      insert into ${events} (created_at, created_by, created_by_user_id, type, project, environment, feature_name, data, pre_data, tags, label, summary)
      select ${createdAt}::timestamptz, ${actor.createdBy}::text, ${actor.createdByUserId}::integer, v.*
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as v (type text, project text, environment text, feature_name text, data jsonb, pre_data jsonb, tags jsonb, label text, summary text)
      ${options.guarded ? sql`where exists (select from w0)` : sql``}
      returning id, type, project, environment, feature_name
    ),
    c as (
      insert into ${featureCollaborators} (feature_name, created_by, created_by_user_id, latest_event_id)
      select e.feature_name, ${actor.createdBy}::text, ${actor.createdByUserId}::integer, max(e.id)
      from e where e.feature_name is not null
      group by e.feature_name order by e.feature_name
      on conflict (feature_name, created_by, (coalesce(created_by_user_id, -1)))
      do update set latest_event_id = greatest(${featureCollaborators}.latest_event_id, excluded.latest_event_id)
    ),
    o as (
      insert into ${integrationOutbox} (integration_id, event_id, created_at)
      select a.id, e.id, ${createdAt}
      from e
      join ${addons} a on a.enabled
        and e.type = any(a.events)
        and (cardinality(a.projects) = 0 or '*' = any(a.projects) or e.project = any(a.projects))
        and (cardinality(a.environments) = 0 or '*' = any(a.environments) or e.environment = any(a.environments))
    )
    select count(*)::int as written from e`,
    { prepared: true },
  )
  return result?.written ?? 0
}
