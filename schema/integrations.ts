import { bigint, bigserial, boolean, index, integer, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { events } from './events.js'

/** Integration configurations ("addons" in Unleash's API). */
export const addons = pgTable('addons', {
  id: serial('id').primaryKey(),
  provider: text('provider').notNull(),
  description: text('description'),
  enabled: boolean('enabled').notNull().default(true),
  // Holds the webhook's authorization header: shown masked, never written to events.
  parameters: jsonb('parameters').notNull().default({}),
  events: text('events').array().notNull(),
  projects: text('projects').array().notNull().default([]),
  environments: text('environments').array().notNull().default([]),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

/**
 * Deliveries still to make, written in the transaction that records the event (a transactional
 * outbox): an event that commits is delivered even if the process stops right after.
 */
export const integrationOutbox = pgTable('integration_outbox', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  integrationId: integer('integration_id')
    .notNull()
    .references(() => addons.id, { onDelete: 'cascade' }),
  eventId: bigint('event_id', { mode: 'number' })
    .notNull()
    .references(() => events.id, { onDelete: 'cascade' }),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  // Set while a delivery is under way; a claim older than a few minutes is taken over.
  claimedAt: timestamp('claimed_at', { withTimezone: true, mode: 'date' }),
})

/** What each delivery attempt did (operation 8); the newest 100 per integration are kept. */
export const integrationEvents = pgTable(
  'integration_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    integrationId: integer('integration_id')
      .notNull()
      .references(() => addons.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    state: text('state').notNull(),
    stateDetails: text('state_details').notNull(),
    event: jsonb('event').notNull(),
    details: jsonb('details').notNull(),
  },
  (t) => [index('integration_events_integration_idx').on(t.integrationId, t.id)],
)
