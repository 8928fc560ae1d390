import { boolean, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { environments } from './environments.js'

export const projects = pgTable('projects', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description'),
  mode: text('mode').notNull().default('open'),
  defaultStickiness: text('default_stickiness').notNull().default('default'),
  featureLimit: integer('feature_limit'),
  featureNamingPattern: text('feature_naming_pattern'),
  featureNamingExample: text('feature_naming_example'),
  featureNamingDescription: text('feature_naming_description'),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }),
  archivedAt: timestamp('archived_at', { withTimezone: true, mode: 'date' }),
})

export const projectEnvironments = pgTable(
  'project_environments',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    environment: text('environment_name')
      .notNull()
      .references(() => environments.name, { onDelete: 'cascade', onUpdate: 'cascade' }),
    changeRequestsEnabled: boolean('change_requests_enabled').notNull().default(false),
    requiredApprovals: integer('required_approvals').notNull().default(1),
    defaultStrategy: jsonb('default_strategy'),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.environment] })],
)

/**
 * The change-request setting of an environment taken out of a project while it required change requests: adding it
 * back restores it (lifting it needs SKIP_CHANGE_REQUEST there, as the settings route asks), so removing and
 * re-adding an environment cannot drop its protection.
 */
export const keptChangeRequestSettings = pgTable(
  'kept_change_request_settings',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    environment: text('environment_name')
      .notNull()
      .references(() => environments.name, { onDelete: 'cascade', onUpdate: 'cascade' }),
    requiredApprovals: integer('required_approvals').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.environment] })],
)
