import { bigserial, boolean, index, integer, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'

/** Signal endpoints: `POST /api/signal-endpoint/{name}` with one of the endpoint's tokens stores a signal. */
export const signalEndpoints = pgTable('signal_endpoints', {
  id: serial('id').primaryKey(),
  // URL-friendly: it is the last segment of the endpoint's URL.
  name: text('name').notNull().unique(),
  description: text('description'),
  enabled: boolean('enabled').notNull().default(true),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  createdByUserId: integer('created_by_user_id'),
})

/** The tokens an endpoint accepts. Only a SHA-256 of each is stored; the token is shown once. */
export const signalEndpointTokens = pgTable(
  'signal_endpoint_tokens',
  {
    id: serial('id').primaryKey(),
    signalEndpointId: integer('signal_endpoint_id')
      .notNull()
      .references(() => signalEndpoints.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    secretHash: text('secret_hash').notNull().unique(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdByUserId: integer('created_by_user_id'),
  },
  (t) => [index('signal_endpoint_tokens_endpoint_idx').on(t.signalEndpointId)],
)

/** Signals received: any JSON payload, by source (a signal endpoint); the newest 1,000 per endpoint are kept. */
export const signals = pgTable(
  'signals',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    source: text('source').notNull().default('signal-endpoint'),
    sourceId: integer('source_id')
      .notNull()
      .references(() => signalEndpoints.id, { onDelete: 'cascade' }),
    payload: jsonb('payload').notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdBySourceTokenId: integer('created_by_source_token_id').references(() => signalEndpointTokens.id, { onDelete: 'set null' }),
  },
  (t) => [index('signals_source_idx').on(t.sourceId, t.id), index('signals_created_at_idx').on(t.createdAt)],
)
