import { sql } from 'drizzle-orm'
import { projects } from './projects.js'
import { index, integer, pgTable, primaryKey, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'

export const roles = pgTable('roles', {
  id: serial('id').primaryKey(),
  name: text('name').notNull().unique(),
  // 'root' roles apply everywhere; 'project' roles are granted per project.
  type: text('type').notNull(),
  description: text('description'),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

export const users = pgTable(
  'users',
  {
    id: serial('id').primaryKey(),
    name: text('name'),
    username: text('username'),
    email: text('email'),
    passwordHash: text('password_hash'),
    rootRoleId: integer('root_role_id')
      .notNull()
      .references(() => roles.id),
    loginAttempts: integer('login_attempts').notNull().default(0),
    seenAt: timestamp('seen_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    uniqueIndex('users_email_unique').on(sql`lower(${t.email})`),
    uniqueIndex('users_username_unique').on(t.username),
  ],
)

export const apiTokens = pgTable(
  'api_tokens',
  {
    id: serial('id').primaryKey(),
    // SHA-256 (hex) of the whole token string; the token itself is never stored.
    secretHash: text('secret_hash').notNull().unique(),
    // What listings show instead of the secret, e.g. `default:development.3f9a…`.
    displaySecret: text('display_secret').notNull(),
    tokenName: text('token_name').notNull(),
    type: text('type').notNull(),
    projects: text('projects').array().notNull(),
    environment: text('environment').notNull(),
    userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    seenAt: timestamp('seen_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('api_tokens_display_secret_idx').on(t.displaySecret)],
)

/** Users' roles in projects (Owner, Member, ...). */
export const projectMembers = pgTable(
  'project_members',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    roleId: integer('role_id')
      .notNull()
      .references(() => roles.id),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId, t.roleId] }), index('project_members_user_idx').on(t.userId)],
)

/** Browser sessions from a sign-in. Only a SHA-256 of the session id is stored; the id lives in the cookie. */
export const sessions = pgTable(
  'sessions',
  {
    sessionHash: text('session_hash').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [index('sessions_user_idx').on(t.userId)],
)

/** Single-use links to set a password (invites of new users and password resets), stored as SHA-256 of the token. */
export const resetTokens = pgTable(
  'reset_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('reset_tokens_user_idx').on(t.userId)],
)
