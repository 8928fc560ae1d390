import { bigint, index, integer, jsonb, pgTable, primaryKey, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { environments } from './environments.js'
import { projects } from './projects.js'

/** A set of flag changes to one environment of a project, reviewed before it is applied. */
export const changeRequests = pgTable(
  'change_requests',
  {
    id: serial('id').primaryKey(),
    project: text('project')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    environment: text('environment')
      .notNull()
      .references(() => environments.name, { onDelete: 'cascade' }),
    // Draft, In review, Approved, Scheduled, Applied, Rejected, Cancelled.
    state: text('state').notNull(),
    title: text('title'),
    createdBy: text('created_by').notNull(),
    createdByUserId: integer('created_by_user_id'),
    // `user:<id>` or `token:<id>`: who owns the draft, and who may not approve it.
    createdByPrincipal: text('created_by_principal').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('change_requests_project_idx').on(t.project, t.id),
    index('change_requests_draft_idx').on(t.project, t.environment, t.createdByPrincipal, t.state),
  ],
)

/** The changes of a change request, applied in id order. */
export const changeRequestChanges = pgTable(
  'change_request_changes',
  {
    id: serial('id').primaryKey(),
    changeRequestId: integer('change_request_id')
      .notNull()
      .references(() => changeRequests.id, { onDelete: 'cascade' }),
    feature: text('feature').notNull(),
    action: text('action').notNull(),
    payload: jsonb('payload').notNull(),
    createdBy: text('created_by').notNull(),
    createdByUserId: integer('created_by_user_id'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('change_request_changes_request_idx').on(t.changeRequestId, t.id)],
)

/** One approval per principal and change request. */
export const changeRequestApprovals = pgTable(
  'change_request_approvals',
  {
    changeRequestId: integer('change_request_id')
      .notNull()
      .references(() => changeRequests.id, { onDelete: 'cascade' }),
    principal: text('principal').notNull(),
    createdBy: text('created_by').notNull(),
    createdByUserId: integer('created_by_user_id'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.changeRequestId, t.principal] })],
)

/**
 * When a Scheduled change request is to be applied, by whom (the schedule's author, whose access it is applied
 * with), and how it stands: pending, failed (applying it failed: `reason`) or suspended (`reason`: its author lost
 * access, or a conflicting change landed). Deleted when the request leaves the Scheduled state.
 */
export const changeRequestSchedules = pgTable(
  'change_request_schedules',
  {
    changeRequestId: integer('change_request_id')
      .primaryKey()
      .references(() => changeRequests.id, { onDelete: 'cascade' }),
    scheduledAt: timestamp('scheduled_at', { withTimezone: true, mode: 'date' }).notNull(),
    status: text('status').notNull(),
    reason: text('reason'),
    createdBy: text('created_by').notNull(),
    createdByUserId: integer('created_by_user_id'),
    // `user:<id>` or `token:<id>`: whose access the request is applied with.
    createdByPrincipal: text('created_by_principal').notNull(),
    // Conflicting changes are those whose events come after this one (the newest when it was scheduled).
    afterEventId: bigint('after_event_id', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('change_request_schedules_due_idx').on(t.status, t.scheduledAt)],
)
