import { boolean, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/**
 * Strategy definitions (`/api/admin/strategies`, Unleash's "strategy types"): the names a flag strategy may have, and
 * for a custom one the parameters it takes (a JSON list of `{ name, type, description, required }`). The built-in
 * ones are seeded by the migration that creates the table and cannot be changed or deleted.
 */
export const strategyDefinitions = pgTable(
  'strategy_definitions',
  {
    name: text('name').primaryKey(),
    title: text('title'),
    displayName: text('display_name'),
    description: text('description'),
    parameters: jsonb('parameters').notNull().default([]),
    builtIn: boolean('built_in').notNull().default(false),
    deprecated: boolean('deprecated').notNull().default(false),
    sortOrder: integer('sort_order').notNull().default(9999),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  // The list's order, as Unleash's.
  (t) => [index('strategy_definitions_sort_idx').on(t.sortOrder, t.name)],
)
