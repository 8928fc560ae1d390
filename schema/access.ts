import { sql } from 'drizzle-orm'
import { projects } from './projects.js'
import { environments } from './environments.js'
import { boolean, index, integer, pgTable, primaryKey, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'

export const roles = pgTable('roles', {
  id: serial('id').primaryKey(),
  name: text('name').notNull().unique(),
  // 'root' roles apply everywhere; 'project' roles are granted per project. Built-in roles are of these two types,
  // custom ones (whose permissions are in role_permissions) 'root-custom' or 'custom' (a project role), as in Unleash.
  type: text('type').notNull(),
  description: text('description'),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

/**
 * The permissions of custom roles (the built-in roles' are Flagpost's code: src/core/permissions.ts). `environment`
 * limits an environment permission to one environment; null: every environment (and every other kind of permission).
 */
export const rolePermissions = pgTable(
  'role_permissions',
  {
    roleId: integer('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
    permission: text('permission').notNull(),
    environment: text('environment').references(() => environments.name, { onDelete: 'cascade', onUpdate: 'cascade' }),
  },
  (t) => [uniqueIndex('role_permissions_unique').on(t.roleId, t.permission, sql`coalesce(${t.environment}, '')`)],
)

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
    // Failed password checks since the last success or new password, from every address (Unleash's loginAttempts);
    // the lockout itself is counted per address, in sign_in_failures.
    loginAttempts: integer('login_attempts').notNull().default(0),
    // A service account (Unleash's is_service): never signs in, acts through its tokens; users' listings leave it out.
    isService: boolean('is_service').notNull().default(false),
    // Whether the account's e-mail address was typed by whoever signed up through an invite link: nobody vouched for
    // it (an admin types the address of the users they create), so single sign-on never takes the account over by e-mail.
    emailUnproven: boolean('email_unproven').notNull().default(false),
    // The single sign-on identity bound to the account (the ID token's `iss` and `sub`) at its first OIDC sign-in.
    ssoIssuer: text('sso_issuer'),
    ssoSubject: text('sso_subject'),
    seenAt: timestamp('seen_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    uniqueIndex('users_email_unique').on(sql`lower(${t.email})`),
    uniqueIndex('users_username_unique').on(t.username),
    uniqueIndex('users_sso_identity_unique').on(t.ssoIssuer, t.ssoSubject),
  ],
)

/**
 * The sign-in lockout, per account and client address (its limit key: IPv6 by /64; '' when unknown): failed password
 * checks in a row from that address, and until when that address's checks of that account are refused (growing
 * delays, never permanent). A stranger's failures delay only the stranger's address. Rows not written for a day are
 * removed whenever a failure is written.
 */
export const signInFailures = pgTable(
  'sign_in_failures',
  {
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    address: text('address').notNull(),
    failures: integer('failures').notNull(),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.address] }), index('sign_in_failures_updated_at').on(t.updatedAt)],
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
  (t) => [primaryKey({ columns: [t.projectId, t.userId, t.roleId] }), index('project_members_user_idx').on(t.userId), index('project_members_role_idx').on(t.roleId)],
)

/** User groups: their members hold the group's root role (if any) and its roles in projects, besides their own. */
export const groups = pgTable('groups', {
  id: serial('id').primaryKey(),
  name: text('name').notNull().unique(),
  description: text('description'),
  // The provider's group names or ids that make a user signing in through single sign-on a member (group sync).
  mappingsSso: text('mappings_sso').array().notNull().default(sql`'{}'::text[]`),
  rootRoleId: integer('root_role_id').references(() => roles.id),
  createdBy: text('created_by'),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

export const groupUsers = pgTable(
  'group_users',
  {
    groupId: integer('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdBy: text('created_by'),
    joinedAt: timestamp('joined_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] }), index('group_users_user_idx').on(t.userId)],
)

/** Groups' roles in projects, as project_members for users. */
export const groupRoles = pgTable(
  'group_roles',
  {
    groupId: integer('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    roleId: integer('role_id')
      .notNull()
      .references(() => roles.id),
    createdBy: text('created_by'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.groupId, t.roleId] }), index('group_roles_group_idx').on(t.groupId), index('group_roles_role_idx').on(t.roleId)],
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
    // The provider's ID token of a session made by single sign-on: the hint of the provider's sign-out (never answered).
    idToken: text('id_token'),
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

/**
 * When an account was last e-mailed a reset link it asked for (POST /auth/reset/password-email): one row per account, so
 * that the once-a-minute check and the claim are one atomic upsert (two concurrent requests cannot both send).
 */
export const resetEmailClaims = pgTable('reset_email_claims', {
  userId: integer('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  sentAt: timestamp('sent_at', { withTimezone: true, mode: 'date' }).notNull(),
})

/** Per user, the state of each feedback prompt of the console (Unleash's user_feedback): when given, and whether never to show it again. */
export const userFeedback = pgTable(
  'user_feedback',
  {
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    feedbackId: text('feedback_id').notNull(),
    given: timestamp('given', { withTimezone: true, mode: 'date' }),
    neverShow: boolean('never_show').notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.userId, t.feedbackId] })],
)

/** Per user, the splash screens seen (Unleash's user_splash). */
export const userSplash = pgTable(
  'user_splash',
  {
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    splashId: text('splash_id').notNull(),
    seen: boolean('seen').notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.userId, t.splashId] })],
)
