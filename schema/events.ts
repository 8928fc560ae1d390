import { sql } from 'drizzle-orm'
import { bigint, bigserial, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'

/**
 * Event types that never change what SDKs or the playground evaluate (flags, strategies, variants, segments,
 * dependencies, tags, projects, environments): who may do what, credentials, integrations, applications, favorites,
 * change requests before they apply (an applied one records its flags' own events). The SDK revision
 * (src/client-api/revision.ts) skips them, so a write of this kind (a Viewer making a personal access token) does not
 * make every SDK payload be read again. A type missing here only costs a rebuild; one wrongly here would serve stale
 * flags: add a type only when no payload can depend on it. A token's update or deletion is not here: it moves the
 * revision so that SDK streams held by that token end at once (src/client-api/streaming.ts).
 */
export const NON_CONFIGURATION_EVENT_TYPES = [
  'application-created',
  'feature-favorited',
  'feature-unfavorited',
  'project-favorited',
  'project-unfavorited',
  'project-access-added',
  'project-access-user-roles-updated',
  'project-access-group-roles-updated',
  'project-access-user-roles-deleted',
  'project-access-group-roles-deleted',
  'project-access-updated',
  'project-user-added',
  'project-user-removed',
  'project-user-role-changed',
  'project-group-role-changed',
  'project-group-added',
  'project-group-removed',
  'role-created',
  'role-updated',
  'role-deleted',
  'addon-config-created',
  'addon-config-updated',
  'addon-config-deleted',
  'user-created',
  'user-updated',
  'user-deleted',
  'group-created',
  'group-updated',
  'group-deleted',
  'group-user-added',
  'group-user-removed',
  'client-metrics',
  'client-register',
  'pat-created',
  'pat-deleted',
  'public-signup-token-created',
  'public-signup-token-user-added',
  'public-signup-token-updated',
  'change-request-created',
  'change-request-discarded',
  'change-added',
  'change-discarded',
  'change-edited',
  'change-request-rejected',
  'change-request-approved',
  'change-request-approval-added',
  'change-request-cancelled',
  'change-request-sent-to-review',
  'change-request-schedule-suspended',
  'change-request-scheduled',
  'change-request-scheduled-application-failure',
  'api-token-created',
  'features-exported',
  'service-account-created',
  'service-account-deleted',
  'service-account-updated',
  'banner-created',
  'banner-updated',
  'banner-deleted',
  'signal-endpoint-created',
  'signal-endpoint-updated',
  'signal-endpoint-deleted',
  'signal-endpoint-token-created',
  'signal-endpoint-token-updated',
  'signal-endpoint-token-deleted',
  'actions-created',
  'actions-updated',
  'actions-deleted',
] as const

/**
 * `type not in (…NON_CONFIGURATION_EVENT_TYPES)`, spelled the same in the partial index and in the revision's query so
 * the planner reads the newest configuration events from the index.
 */
export const configurationEventCondition = sql.raw(`type not in (${NON_CONFIGURATION_EVENT_TYPES.map((t) => `'${t}'`).join(', ')})`)

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
    // ANALYZE does not sample these two (migration 0041): no query compares them whole.
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
    // The SDK revision: the newest events that may change a payload.
    index('events_configuration_idx').on(t.id).where(configurationEventCondition),
  ],
)

/**
 * The event search's free text (`query`), off the write path: each event's lowercased text (data, pre_data and
 * tags, as src/events/search.ts spells it), written after the event by the indexing job (src/events/text-index.ts)
 * under a trigram index (migration 0042). A write then adds no trigram entries to the events it records.
 */
export const eventSearchText = pgTable('event_search_text', {
  eventId: bigint('event_id', { mode: 'number' }).primaryKey(),
  text: text('text').notNull(),
})

/**
 * One row: `indexed_through`, an event id such that every event with an id up to it is in event_search_text and
 * no event with such an id will ever be added. The search reads the events above it that are not indexed yet from
 * the events themselves.
 */
export const eventSearchState = pgTable('event_search_state', {
  id: integer('id').primaryKey(),
  indexedThrough: bigint('indexed_through', { mode: 'number' }).notNull(),
  /** The newest event's id when the job last ran, and that snapshot's xmax (a transaction id, as bigint): see src/events/text-index.ts. */
  candidateId: bigint('candidate_id', { mode: 'number' }),
  candidateXmax: bigint('candidate_xmax', { mode: 'number' }),
})

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
  // No index holds `latest_event_id`: every write moves it, and without one that update is a HOT update (no index
  // entry written); a flag's few collaborators are found by the unique index and sorted in memory.
  (t) => [uniqueIndex('feature_collaborators_author_unique').on(t.featureName, t.createdBy, sql`coalesce(${t.createdByUserId}, -1)`)],
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
