import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/** Instance-wide settings, one JSON document per name (e.g. `oidc`). */
export const settings = pgTable('settings', {
  name: text('name').primaryKey(),
  content: jsonb('content').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})
