import { sql } from 'drizzle-orm'
import { bigint, bigserial, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'

export const events = pgTable(
  'events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    type: text('type').notNull(),
    createdBy: text('created_by').notNull(),
    createdByUserId: integer('created_by_user_id'),
    project: text('project'),
    environment: text('environment'),
    featureName: text('feature_name'),
    data: jsonb('data'),
    preData: jsonb('pre_data'),
    tags: jsonb('tags').notNull().default([]),
    label: text('label'),
    summary: text('summary'),
  },
  // Every filter of the event search walks its own index backwards, in the order results are returned
  // (created_at desc, id desc): ascending indexes, so NULLS FIRST/LAST match the query's default.
  (t) => [
    index('events_created_at_idx').on(t.createdAt, t.id),
    index('events_feature_name_idx').on(t.featureName, t.createdAt, t.id),
    index('events_project_idx').on(t.project, t.createdAt, t.id),
    index('events_type_idx').on(t.type, t.createdAt, t.id),
    index('events_created_by_idx').on(t.createdBy, t.createdAt, t.id),
    index('events_created_by_user_id_idx').on(t.createdByUserId, t.createdAt, t.id),
    // Where each life of a project id ended: events before it belong to the deleted project, not to one re-created with its id.
    index('events_project_deleted_idx').on(t.project, t.id).where(sql`${t.type} = 'project-deleted'`),
  ],
)

/**
 * The distinct authors of each flag's events and the id of their latest one, kept by recordEvents in the
 * statement that writes the events, so reading a flag's collaborators does not aggregate all its events.
 * Keyed by name with no foreign key: events outlive their flag, and so do its collaborators.
 */
export const featureCollaborators = pgTable(
  'feature_collaborators',
  {
    featureName: text('feature_name').notNull(),
    createdBy: text('created_by').notNull(),
    createdByUserId: integer('created_by_user_id'),
    latestEventId: bigint('latest_event_id', { mode: 'number' }).notNull(),
  },
  // coalesce: authors without a user id (tokens, system) are one collaborator per name, as GROUP BY would
  // make them; recordEvents' ON CONFLICT names this exact expression. User ids are never negative.
  (t) => [
    uniqueIndex('feature_collaborators_author_unique').on(t.featureName, t.createdBy, sql`coalesce(${t.createdByUserId}, -1)`),
    index('feature_collaborators_latest_idx').on(t.featureName, t.latestEventId),
  ],
)

/**
 * Exact totals of large event searches, so a search does not count a million rows each time:
 * `n` events matching `filterKey` have ids up to `upToId`; newer ones are counted on top.
 * Events are append-only, so an entry stays true; anything that deletes events must clear this table.
 */
export const eventCountCache = pgTable('event_count_cache', {
  filterKey: text('filter_key').primaryKey(),
  upToId: bigint('up_to_id', { mode: 'number' }).notNull(),
  n: bigint('n', { mode: 'number' }).notNull(),
  computedAt: timestamp('computed_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})
