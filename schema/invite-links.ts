import { boolean, index, integer, pgTable, primaryKey, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { roles, users } from './access.js'

/**
 * Public invite links (Unleash's public sign-up tokens): whoever opens one may create a user with its root role while it
 * is enabled and unexpired. Only a SHA-256 of the secret is stored; listings show `display_secret` in its place.
 */
export const publicSignupTokens = pgTable(
  'public_signup_tokens',
  {
    id: serial('id').primaryKey(),
    secretHash: text('secret_hash').notNull().unique(),
    displaySecret: text('display_secret').notNull(),
    name: text('name').notNull(),
    roleId: integer('role_id')
      .notNull()
      .references(() => roles.id),
    createdBy: text('created_by'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    enabled: boolean('enabled').notNull().default(true),
  },
  (t) => [index('public_signup_tokens_display_secret_idx').on(t.displaySecret)],
)

/** Who signed up with which invite link. */
export const publicSignupTokenUsers = pgTable(
  'public_signup_token_users',
  {
    tokenId: integer('token_id')
      .notNull()
      .references(() => publicSignupTokens.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.userId] }), index('public_signup_token_users_user_idx').on(t.userId)],
)
