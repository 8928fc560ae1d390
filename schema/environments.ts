import { boolean, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

export const environments = pgTable('environments', {
  name: text('name').primaryKey(),
  type: text('type').notNull(),
  // Unleash calls a disabled environment "deprecated": it is kept but not offered to new projects.
  enabled: boolean('enabled').notNull().default(true),
  protected: boolean('protected').notNull().default(false),
  sortOrder: integer('sort_order').notNull().default(0),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})
