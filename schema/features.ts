import { boolean, check, foreignKey, index, integer, jsonb, pgTable, primaryKey, serial, smallint, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core'
import { sql } from 'drizzle-orm'
import { environments } from './environments.js'
import { projects } from './projects.js'

export const features = pgTable(
  'features',
  {
    // Unique across projects and across archived flags: SDKs know a flag by its name alone.
    name: text('name').primaryKey(),
    project: text('project')
      .notNull()
      .references(() => projects.id),
    type: text('type').notNull().default('release'),
    description: text('description'),
    stale: boolean('stale').notNull().default(false),
    // Set by the potentially-stale job (src/feature-types/potentially-stale.ts) once a live flag outlives its type's lifetime.
    potentiallyStale: boolean('potentially_stale').notNull().default(false),
    impressionData: boolean('impression_data').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdBy: text('created_by').notNull(),
    createdByUserId: integer('created_by_user_id'),
    archivedAt: timestamp('archived_at', { withTimezone: true, mode: 'date' }),
    // Moves forward whenever a writer takes the flag's lock (src/flags/lock.ts): an optimistic write changes
    // the flag only if it is still at the version it read, and a locking read knows whether it waited.
    version: integer('version').notNull().default(0),
  },
  (t) => [
    index('features_project_idx').on(t.project, t.name),
    index('features_created_by_user_idx').on(t.createdByUserId, t.createdAt),
    // The flag search's default order (created_at, then name) and the potentially-stale job's scan.
    index('features_created_at_idx').on(t.createdAt, t.name),
  ],
)

/** Flag types (Unleash's five, seeded by the migration) and how many days a flag of each lives before it is potentially stale (null: never). */
export const featureTypes = pgTable('feature_types', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull(),
  lifetimeDays: integer('lifetime_days'),
  sortOrder: integer('sort_order').notNull().default(0),
})

export const featureEnvironments = pgTable(
  'feature_environments',
  {
    featureName: text('feature_name')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    environment: text('environment')
      .notNull()
      .references(() => environments.name, { onDelete: 'cascade' }),
    enabled: boolean('enabled').notNull().default(false),
    variants: jsonb('variants').notNull().default([]),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [primaryKey({ columns: [t.featureName, t.environment] })],
)

export const featureStrategies = pgTable(
  'feature_strategies',
  {
    id: uuid('id').primaryKey(),
    featureName: text('feature_name')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    environment: text('environment')
      .notNull()
      .references(() => environments.name, { onDelete: 'cascade' }),
    name: text('strategy_name').notNull(),
    title: text('title'),
    disabled: boolean('disabled').notNull().default(false),
    sortOrder: integer('sort_order').notNull().default(0),
    parameters: jsonb('parameters').notNull().default({}),
    constraints: jsonb('constraints').notNull().default([]),
    variants: jsonb('variants').notNull().default([]),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('feature_strategies_feature_idx').on(t.featureName, t.environment, t.sortOrder)],
)

export const segments = pgTable('segments', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description'),
  project: text('project').references(() => projects.id, { onDelete: 'cascade' }),
  constraints: jsonb('constraints').notNull().default([]),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  createdBy: text('created_by'),
})

export const featureStrategySegments = pgTable(
  'feature_strategy_segments',
  {
    strategyId: uuid('strategy_id')
      .notNull()
      .references(() => featureStrategies.id, { onDelete: 'cascade' }),
    // No cascade: a segment in use cannot be deleted.
    segmentId: integer('segment_id')
      .notNull()
      .references(() => segments.id),
  },
  (t) => [primaryKey({ columns: [t.strategyId, t.segmentId] }), index('feature_strategy_segments_segment_idx').on(t.segmentId)],
)

/** The registry of tag types (`simple` is built in, seeded by the migration). Deleting one deletes its tags. */
export const tagTypes = pgTable('tag_types', {
  name: text('name').primaryKey(),
  description: text('description'),
  icon: text('icon'),
  color: text('color'),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

/** Tags exist on their own (as in Unleash), each of a registered type; deleting one untags every flag it was on. */
export const tags = pgTable(
  'tags',
  {
    type: text('type')
      .notNull()
      .references(() => tagTypes.name, { onDelete: 'cascade' }),
    value: text('value').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.type, t.value] })],
)

export const featureTags = pgTable(
  'feature_tags',
  {
    featureName: text('feature_name')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    type: text('tag_type').notNull(),
    value: text('tag_value').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.featureName, t.type, t.value] }),
    foreignKey({ columns: [t.type, t.value], foreignColumns: [tags.type, tags.value], name: 'feature_tags_tag_fk' }).onDelete('cascade'),
    index('feature_tags_tag_idx').on(t.type, t.value),
  ],
)

export const featureDependencies = pgTable(
  'feature_dependencies',
  {
    child: text('child')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    parent: text('parent')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    enabled: boolean('enabled').notNull().default(true),
    variants: jsonb('variants').notNull().default([]),
  },
  (t) => [primaryKey({ columns: [t.child, t.parent] }), index('feature_dependencies_parent_idx').on(t.parent)],
)

/** One row per stage a flag entered; the newest is its current stage. */
export const featureLifecycles = pgTable(
  'feature_lifecycles',
  {
    featureName: text('feature_name')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    stage: text('stage').notNull(),
    status: text('status'),
    statusValue: text('status_value'),
    enteredStageAt: timestamp('entered_stage_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.featureName, t.stage] })],
)

/** Favorites belong to a principal: `user:<id>` or `token:<id>`. */
export const favoriteFeatures = pgTable(
  'favorite_features',
  {
    principal: text('principal').notNull(),
    featureName: text('feature_name')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.principal, t.featureName] })],
)

export const favoriteProjects = pgTable(
  'favorite_projects',
  {
    principal: text('principal').notNull(),
    project: text('project')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.principal, t.project] })],
)


/**
 * A flag's links (Unleash's feature links): at most 10 per flag, each in one of the slots 0..9, so that two
 * concurrent adds cannot take the same slot and a flag never holds more (the unique slot is the limit).
 */
export const featureLinks = pgTable(
  'feature_links',
  {
    id: text('id').primaryKey(),
    featureName: text('feature_name')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    slot: smallint('slot').notNull(),
    url: text('url').notNull(),
    title: text('title'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [unique('feature_links_slot_unique').on(t.featureName, t.slot), check('feature_links_slot_range', sql`${t.slot} between 0 and 9`)],
)
