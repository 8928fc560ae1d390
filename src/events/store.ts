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
 */
export async function recordEvents(tx: Db, actor: Actor, createdAt: Date, list: NewEvent[], options: { alongside?: SQLWrapper[] } = {}): Promise<void> {
  const alongside = options.alongside ?? []
  if (list.length === 0) {
    for (const statement of alongside) await tx.execute(statement)
    return
  }
  const insert = tx
    .insert(events)
    .values(
      list.map((e) => {
        const described = describeEvent(actor, e)
        return {
          type: e.type,
          createdAt,
          createdBy: actor.createdBy,
          createdByUserId: actor.createdByUserId,
          project: e.project ?? null,
          environment: e.environment ?? null,
          featureName: e.featureName ?? null,
          data: e.data ?? null,
          preData: e.preData ?? null,
          tags: e.tags ?? [],
          label: e.label ?? described.label,
          summary: e.summary ?? described.summary,
        }
      }),
    )
    .returning({ id: events.id, type: events.type, project: events.project, environment: events.environment, featureName: events.featureName })
  // The events, the collaborators of their flags and their integration deliveries in one statement (one round
  // trip for every write); drizzle puts the embedded insert in parentheses. Collaborators are grouped because
  // ON CONFLICT may not touch a row twice, and upserted in name order so concurrent writers lock in one order.
  // Its text depends only on the number of events: the usual few run as prepared statements.
  // `alongside`: the change the events describe (query builders: an update, an insert), made by the same
  // statement to save a round trip. It must not read the events (all parts of a statement see one snapshot).
  const changes = alongside.map((statement, i) => sql`${sql.raw(`w${i}`)} as ${statement},`)
  await queryRows(
    tx,
    sql`
    with ${sql.join(changes)} e as ${insert},
    c as (
      insert into ${featureCollaborators} (feature_name, created_by, created_by_user_id, latest_event_id)
      select e.feature_name, ${actor.createdBy}::text, ${actor.createdByUserId}::integer, max(e.id)
      from e where e.feature_name is not null
      group by e.feature_name order by e.feature_name
      on conflict (feature_name, created_by, (coalesce(created_by_user_id, -1)))
      do update set latest_event_id = greatest(${featureCollaborators}.latest_event_id, excluded.latest_event_id)
    )
    insert into ${integrationOutbox} (integration_id, event_id, created_at)
    select a.id, e.id, ${createdAt}
    from e
    join ${addons} a on a.enabled
      and e.type = any(a.events)
      and (cardinality(a.projects) = 0 or '*' = any(a.projects) or e.project = any(a.projects))
      and (cardinality(a.environments) = 0 or '*' = any(a.environments) or e.environment = any(a.environments))
  `,
    { prepared: list.length <= 4 },
  )
}
