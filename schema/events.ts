import { bigserial, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

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
  // Every filter of the event search walks its own index in the order results are returned.
  (t) => [
    index('events_created_at_idx').on(t.createdAt.desc(), t.id.desc()),
    index('events_feature_name_idx').on(t.featureName, t.createdAt.desc(), t.id.desc()),
    index('events_project_idx').on(t.project, t.createdAt.desc(), t.id.desc()),
    index('events_type_idx').on(t.type, t.createdAt.desc(), t.id.desc()),
    index('events_created_by_idx').on(t.createdBy, t.createdAt.desc(), t.id.desc()),
  ],
)
