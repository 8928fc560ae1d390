import { and, asc, countDistinct, eq, ne, sql } from 'drizzle-orm'
import { features, featureStrategies, featureStrategySegments, projects, segments } from '../../schema/index.js'
import type { Db } from '../db.js'
import { conflict, nameExists, notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { normalizeConstraint, type Constraint } from '../strategies/schemas.js'
import type { Segment, UpsertSegment } from './schemas.js'
import { visibleProjectCondition } from '../projects/visibility.js'

type SegmentRow = typeof segments.$inferSelect

/** What segment events carry: the stored segment, without the usage counts. */
function stateOf(row: SegmentRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    project: row.project,
    constraints: row.constraints as Constraint[],
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
  }
}

/** Segments with their usage counts in one query: the counts are a grouped derived table, never a query per segment. */
async function readSegments(db: Db, hidden: readonly string[], id?: number): Promise<Segment[]> {
  const usage = db
    .select({
      segmentId: featureStrategySegments.segmentId,
      usedInFeatures: countDistinct(featureStrategies.featureName).as('used_in_features'),
      usedInProjects: countDistinct(features.project).as('used_in_projects'),
    })
    .from(featureStrategySegments)
    .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegments.strategyId))
    .innerJoin(features, eq(features.name, featureStrategies.featureName))
    .where(id === undefined ? undefined : eq(featureStrategySegments.segmentId, id))
    .groupBy(featureStrategySegments.segmentId)
    .as('usage')
  const rows = await db
    .select({
      row: segments,
      usedInFeatures: sql<number>`coalesce(${usage.usedInFeatures}, 0)`.mapWith(Number),
      usedInProjects: sql<number>`coalesce(${usage.usedInProjects}, 0)`.mapWith(Number),
    })
    .from(segments)
    .leftJoin(usage, eq(usage.segmentId, segments.id))
    .where(and(id === undefined ? undefined : eq(segments.id, id), visibleProjectCondition(segments.project, hidden)))
    .orderBy(asc(segments.name), asc(segments.id))
  return rows.map(({ row, ...counts }) => ({ ...stateOf(row), ...counts }))
}

/** `hidden`: private projects the caller may not read; their segments do not exist for the caller. */
export async function listSegments(db: Db, hidden: readonly string[]): Promise<Segment[]> {
  return readSegments(db, hidden)
}

export async function getSegment(db: Db, id: number, hidden: readonly string[]): Promise<Segment> {
  const [segment] = await readSegments(db, hidden, id)
  if (!segment) throw notFound(`Could not find segment ${id}`)
  return segment
}

/** Checks the caller may change what the segment's users receive, under the segment's lock (so no strategy starts using it in between). */
export type SegmentAuthorize = (tx: Db, id: number) => Promise<void>

async function lockSegment(tx: Db, id: number): Promise<SegmentRow> {
  const [row] = await tx.select().from(segments).where(eq(segments.id, id)).for('update')
  if (!row) throw notFound(`Could not find segment ${id}`)
  return row
}

/** Segment names are unique (as in Unleash); the advisory lock makes the check hold under concurrent writes of one name. */
async function checkNameFree(tx: Db, name: string, exceptId?: number) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`segment-name:${name}`}, 0))`)
  const filter = exceptId === undefined ? eq(segments.name, name) : and(eq(segments.name, name), ne(segments.id, exceptId))
  const [taken] = await tx.select({ id: segments.id }).from(segments).where(filter).limit(1)
  if (taken) throw nameExists(`A segment named ${name} already exists`)
}

async function checkProject(tx: Db, project: string | null) {
  if (project === null) return
  // FOR KEY SHARE keeps the project from being deleted before the segment that refers to it commits.
  const [row] = await tx.select({ archivedAt: projects.archivedAt }).from(projects).where(eq(projects.id, project)).for('key share')
  if (!row || row.archivedAt) throw validationError(`Project ${project} does not exist`, [{ path: 'body.project', message: `project ${project} does not exist` }])
}

/** The flags (name and project) whose strategies use the segment, archived ones included. */
async function flagsUsing(tx: Db, id: number) {
  return tx
    .selectDistinct({ name: features.name, project: features.project })
    .from(featureStrategySegments)
    .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegments.strategyId))
    .innerJoin(features, eq(features.name, featureStrategies.featureName))
    .where(eq(featureStrategySegments.segmentId, id))
    .orderBy(asc(features.name))
}

function valuesOf(input: UpsertSegment) {
  return {
    name: input.name,
    project: input.project ?? null,
    constraints: input.constraints.map(normalizeConstraint),
  }
}

export async function createSegment(db: Db, caller: Author, input: UpsertSegment): Promise<Segment> {
  const { actor, now } = caller
  return db.transaction(async (tx) => {
    const values = valuesOf(input)
    await checkNameFree(tx, values.name)
    await checkProject(tx, values.project)
    const [row] = await tx
      .insert(segments)
      .values({ ...values, description: input.description ?? null, createdAt: now, createdBy: actor.createdBy })
      .returning()
    await recordEvents(tx, actor, now, [{ type: 'segment-created', project: row!.project, data: stateOf(row!) }])
    return { ...stateOf(row!), usedInFeatures: 0, usedInProjects: 0 }
  })
}

/**
 * Replaces name, project and constraints; description only when given. A segment in use cannot move to a
 * project other than the one of every flag using it (as in Unleash), or strategies would point outside their project.
 */
export async function updateSegment(db: Db, caller: Author, id: number, input: UpsertSegment, authorize: SegmentAuthorize): Promise<void> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    const before = await lockSegment(tx, id)
    await authorize(tx, id)
    const values = valuesOf(input)
    if (values.name !== before.name) await checkNameFree(tx, values.name, id)
    await checkProject(tx, values.project)
    if (values.project !== null) {
      const outside = (await flagsUsing(tx, id)).filter((f) => f.project !== values.project)
      if (outside.length > 0) {
        throw validationError(
          `Segment ${id} cannot belong to project ${values.project}: it is used by flags of other projects (${outside.map((f) => `${f.name} in ${f.project}`).join(', ')})`,
        )
      }
    }
    const [after] = await tx
      .update(segments)
      .set({ ...values, ...(input.description !== undefined ? { description: input.description } : {}) })
      .where(eq(segments.id, id))
      .returning()
    await recordEvents(tx, actor, now, [{ type: 'segment-updated', project: after!.project ?? before.project, data: stateOf(after!), preData: stateOf(before) }])
  })
}

/** Deletes an unused segment; the row lock makes a strategy that starts using it concurrently fail instead. */
export async function deleteSegment(db: Db, caller: Author, id: number, authorize: SegmentAuthorize): Promise<void> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    const before = await lockSegment(tx, id)
    await authorize(tx, id)
    const users = await flagsUsing(tx, id)
    if (users.length > 0) {
      throw conflict(`Segment ${id} (${before.name}) is in use by the strategies of ${users.length === 1 ? 'flag' : 'flags'} ${users.map((f) => f.name).join(', ')}: remove it from them first`)
    }
    await tx.delete(segments).where(eq(segments.id, id))
    await recordEvents(tx, actor, now, [{ type: 'segment-deleted', project: before.project, data: null, preData: stateOf(before) }])
  })
}
