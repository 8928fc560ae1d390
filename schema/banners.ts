import { boolean, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'

/** Instance banners: messages shown at the top of the console to every signed-in user while enabled. */
export const banners = pgTable('banners', {
  id: serial('id').primaryKey(),
  message: text('message').notNull(),
  // info, warning, error or success.
  variant: text('variant').notNull().default('info'),
  sticky: boolean('sticky').notNull().default(false),
  icon: text('icon'),
  // An http(s) URL, a path of the console, or `dialog`.
  link: text('link'),
  linkText: text('link_text'),
  dialogTitle: text('dialog_title'),
  dialog: text('dialog'),
  enabled: boolean('enabled').notNull().default(true),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})
