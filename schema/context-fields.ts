import { boolean, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { projects } from './projects.js'

/**
 * Context fields (`/api/admin/context`, and a project's own under `/api/admin/projects/{projectId}/context`): the
 * names constraints and stickiness refer to. `legal_values` is a JSON list of `{ value, description? }`; when it is
 * not empty, constraints on the field accept only those values. `project` is null for a global field; a project's
 * field exists for that project's flags, segments and default strategies only, and goes with the project. Names are
 * unique across both, as in Unleash.
 */
export const contextFields = pgTable(
  'context_fields',
  {
    name: text('name').primaryKey(),
    description: text('description'),
    stickiness: boolean('stickiness').notNull().default(false),
    sortOrder: integer('sort_order').notNull().default(10),
    legalValues: jsonb('legal_values').notNull().default([]),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    project: text('project').references(() => projects.id, { onDelete: 'cascade' }),
  },
  // The list's order; a project's fields.
  (t) => [index('context_fields_sort_idx').on(t.sortOrder, t.name), index('context_fields_project_idx').on(t.project)],
)
