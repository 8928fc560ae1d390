import { boolean, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/**
 * Context fields (`/api/admin/context`): the names constraints and stickiness refer to. `legal_values` is a JSON
 * list of `{ value, description? }`; when it is not empty, constraints on the field accept only those values.
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
  },
  // The list's order.
  (t) => [index('context_fields_sort_idx').on(t.sortOrder, t.name)],
)
