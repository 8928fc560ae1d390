import { sql } from 'drizzle-orm'
import { bigint, bigserial, boolean, index, integer, jsonb, pgSequence, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { projects } from './projects.js'
import { users } from './access.js'
import { signalEndpoints } from './signals.js'

/** The ids of actions (the steps of action sets), given when an action set is written. */
export const actionIds = pgSequence('action_ids')

/**
 * Action sets of a project (Unleash's "actions"): when a signal of the source matches the filters (`payload`), the
 * actions run in their sort order as the service account `actor_id`.
 */
export const actionSets = pgTable(
  'action_sets',
  {
    id: serial('id').primaryKey(),
    project: text('project')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    enabled: boolean('enabled').notNull().default(true),
    actorId: integer('actor_id')
      .notNull()
      .references(() => users.id),
    source: text('source').notNull().default('signal-endpoint'),
    // An endpoint an action set listens to cannot be deleted.
    sourceId: integer('source_id')
      .notNull()
      .references(() => signalEndpoints.id),
    // The filters: payload parameter -> { operator, values | value, inverted, caseInsensitive }.
    payload: jsonb('payload').notNull().default({}),
    // [{ id, action, sortOrder, executionParams, createdAt, createdByUserId }]
    actions: jsonb('actions').notNull().default([]),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdByUserId: integer('created_by_user_id'),
  },
  (t) => [uniqueIndex('action_sets_project_name_unique').on(t.project, t.name), index('action_sets_source_idx').on(t.sourceId), index('action_sets_actor_idx').on(t.actorId)],
)

/**
 * The run log (Unleash's action set events): one run per signal an action set matched, with the signal and the action set
 * as they were, each action with its state. A run is queued `started` with the signal, in the same statement; whoever runs
 * it claims it (`claimed_at`), and a claim left behind by a run that stopped is taken over, so every run ends.
 */
export const actionSetEvents = pgTable(
  'action_set_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    actionSetId: integer('action_set_id')
      .notNull()
      .references(() => actionSets.id, { onDelete: 'cascade' }),
    signalId: bigint('signal_id', { mode: 'number' }).notNull(),
    state: text('state').notNull(),
    signal: jsonb('signal').notNull(),
    actionSet: jsonb('action_set').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    claimedAt: timestamp('claimed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('action_set_events_set_idx').on(t.actionSetId, t.id), index('action_set_events_started_idx').on(t.id).where(sql`state = 'started'`)],
)
