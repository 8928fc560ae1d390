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
