import { and, asc, countDistinct, eq, ilike, inArray, isNull, or, sql, type SQL } from 'drizzle-orm'
import { features, featureStrategies, featureStrategySegments, projects, segments } from '../../schema/index.js'
import { batch, queryRows, rowText, untilUnchanged, type Db } from '../db.js'
import { conflict, nameExists, notFound, validationError } from '../core/errors.js'
import { eventsStatement } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { normalizeConstraint, type Constraint } from '../strategies/schemas.js'
import type { Segment, SegmentFilter, UpsertSegment } from './schemas.js'
import { visibleProjectCondition } from '../projects/visibility.js'
import { illegalValuesError, illegalValuesSql, type IllegalValue } from '../context-fields/legal-values.js'

type SegmentRow = typeof segments.$inferSelect

/** What segment events carry: the stored segment, without the usage counts. */
export function segmentState(row: SegmentRow) {
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
async function readSegments(db: Db, hidden: readonly string[], id?: number, filter: SegmentFilter = {}): Promise<Segment[]> {
  const wanted = and(
    id === undefined ? undefined : eq(segments.id, id),
    filter.ids === undefined ? undefined : inArray(segments.id, filter.ids),
    filter.project === undefined ? undefined : or(isNull(segments.project), eq(segments.project, filter.project)),
    filter.query ? ilike(segments.name, `%${filter.query.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`) : undefined,
    visibleProjectCondition(segments.project, hidden),
  )
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
    .where(wanted)
    .orderBy(asc(segments.name), asc(segments.id))
    .limit(filter.limit ?? Number.MAX_SAFE_INTEGER)
  return rows.map(({ row, ...counts }) => ({ ...segmentState(row), ...counts }))
}

/** `hidden`: private projects the caller may not read; their segments do not exist for the caller. */
export async function listSegments(db: Db, hidden: readonly string[], filter: SegmentFilter = {}): Promise<Segment[]> {
  return readSegments(db, hidden, undefined, filter)
}

export async function getSegment(db: Db, id: number, hidden: readonly string[]): Promise<Segment> {
  const [segment] = await readSegments(db, hidden, id)
  if (!segment) throw notFound(`Could not find segment ${id}`)
  return segment
}

/**
 * Checks the caller may change what the segment's users receive. It is made with the read a write is computed
 * from, and the write is made only if no strategy started or stopped using the segment since.
 */
export type SegmentAuthorize = (db: Db, id: number) => Promise<void>

const p = (name: string) => sql.placeholder(name)

/** Segment names are unique (as in Unleash): a write of a name first takes this lock, so its check of the name holds under concurrent writes of it. */
const nameLock = (db: Db, name: string) => db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`segment-name:${name}`}, 0))`)
/** The name locks of many segments (the state import's), in one order so that two writers of several never wait on each other in a circle. */
export const segmentNameLocks = (db: Db, names: string[]) =>
  db.execute(sql`select count(pg_advisory_xact_lock(hashtextextended('segment-name:' || n, 0))) from (select unnest(${sql.param(names)}::text[]) as n order by 1) names`)
/** Holds off strategies starting to use the segment (their reference waits for it) until the write commits: the first statement of its batch. */
const segmentLock = (db: Db, id: number) => db.select({ id: segments.id }).from(segments).where(eq(segments.id, id)).for('update')

/** The strategies using the segment (of the row `segments` names), as text: what a read saw, checked again by the write. */
const usersOf = sql<string>`(select coalesce(string_agg(fss.strategy_id::text, ',' order by fss.strategy_id), '') from ${featureStrategySegments} fss where fss.segment_id = ${segments.id})`
const nameFree = (name: unknown, exceptId: unknown) => sql<boolean>`not exists (select from ${segments} s where s.name = ${name}::text and s.id is distinct from ${exceptId}::integer)`
const projectLive = (project: unknown) => sql<boolean>`(${project}::text is null or exists (select from ${projects} pr where pr.id = ${project}::text and pr.archived_at is null))`

const nameTaken = (name: string) => nameExists(`A segment named ${name} already exists`)
const noSuchProject = (project: string) => validationError(`Project ${project} does not exist`, [{ path: 'body.project', message: `project ${project} does not exist` }])

/** The flags (name and project) whose strategies use the segment, archived ones included. */
async function flagsUsing(db: Db, id: number) {
  return db
    .selectDistinct({ name: features.name, project: features.project })
    .from(featureStrategySegments)
    .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegments.strategyId))
    .innerJoin(features, eq(features.name, featureStrategies.featureName))
    .where(eq(featureStrategySegments.segmentId, id))
    .orderBy(asc(features.name))
}

/**
 * The segment as a write computes its change from (404 when there is none), its snapshot and users (see
 * `usersOf`), the flags using it and `extra` (SQL about it), read in one round trip with the caller's check, all
 * in one snapshot: the check and the decision are about the users the write checks are still there.
 */
async function readForChange<E extends Record<string, SQL>>(db: Db, id: number, authorize: SegmentAuthorize, extra: E) {
  const [[found], users] = await batch(db, [
    (q) => q.select({ row: segments, snapshot: rowText(segments), users: usersOf, ...extra }).from(segments).where(eq(segments.id, id)),
    (q) => flagsUsing(q, id),
    (q) => authorize(q, id),
  ], { isolationLevel: 'repeatable read', accessMode: 'read only' })
  if (!found) throw notFound(`Could not find segment ${id}`)
  return { ...found, flags: users }
}

function valuesOf(input: UpsertSegment) {
  return {
    name: input.name,
    project: input.project ?? null,
    constraints: input.constraints.map(normalizeConstraint),
  }
}

/** Creating a segment whose id was taken first (its event carries it), only while its name is free and its project live; answers its constraints as stored. */
const createStatement = eventsStatement<Constraint[]>('flagpost_create_segment', {
  alongside: [
    sql`insert into ${segments} (id, name, description, project, constraints, created_at, created_by)
      select ${p('id')}::integer, ${p('name')}::text, ${p('description')}::text, ${p('project')}::text, ${p('constraints')}::jsonb, ${p('createdAt')}::timestamptz, ${p('createdBy')}::text
      where ${nameFree(p('name'), null)} and ${projectLive(p('project'))}
      returning constraints`,
  ],
  guarded: true,
  // The change's own answer (w0), not a read of the table.
  returning: sql`(select constraints from w0)`,
})

/**
 * POST /api/admin/segments. Its name and project are checked against a read (which also takes the id), then the
 * segment and its event are written in one batch that first takes the name's lock, only while those still hold;
 * read again otherwise.
 */
export async function createSegment(db: Db, caller: Author, input: UpsertSegment): Promise<Segment> {
  const { actor, now } = caller
  const values = valuesOf(input)
  return untilUnchanged(`The segment name ${values.name}`, async () => {
    const [read] = await queryRows<{ id: number; taken: boolean; live: boolean; illegal: IllegalValue[] }>(
      db,
      sql`select nextval(pg_get_serial_sequence('segments', 'id'))::int as id, not ${nameFree(values.name, null)} as taken, ${projectLive(values.project)} as live,
        ${illegalValuesSql(JSON.stringify(values.constraints), values.project)} as illegal`,
    )
    if (read!.taken) throw nameTaken(values.name)
    if (!read!.live) throw noSuchProject(values.project!)
    if (read!.illegal.length > 0) throw illegalValuesError(read!.illegal, values.project)
    const state = { id: Number(read!.id), ...values, description: input.description ?? null, createdAt: now.toISOString(), createdBy: actor.createdBy }
    const [, created] = await batch(db, [
      (q) => nameLock(q, values.name),
      (q) =>
        createStatement(q, actor, now, [{ type: 'segment-created', project: values.project, data: state }], {
          id: state.id,
          name: values.name,
          description: state.description,
          project: values.project,
          constraints: JSON.stringify(values.constraints),
        }),
    ])
    if (created.written === 0) return undefined
    return { ...state, constraints: created.returned!, usedInFeatures: 0, usedInProjects: 0 }
  })
}

/** Replacing a segment read as `snapshot`, only while no strategy started or stopped using it (`users`), its new name is free and its project live. */
const updateStatement = eventsStatement('flagpost_update_segment', {
  alongside: [
    sql`update ${segments} set name = ${p('name')}::text, description = ${p('description')}::text, project = ${p('project')}::text, constraints = ${p('constraints')}::jsonb
      where ${segments.id} = ${p('id')}::integer and ${rowText(segments)} = ${p('snapshot')}::text and ${usersOf} = ${p('users')}::text
        and ${nameFree(p('name'), p('id'))} and ${projectLive(p('project'))}
      returning id`,
  ],
  guarded: true,
})

/**
 * PUT /api/admin/segments/{id}: replaces name, project and constraints; description only when given. A segment in
 * use cannot move to a project other than the one of every flag using it (as in Unleash), or strategies would
 * point outside their project. Decided from a read, then written in one batch that locks the segment (and a new
 * name) first and writes only if the segment, its users, the name's freedom and the project are as read.
 */
export async function updateSegment(db: Db, caller: Author, id: number, input: UpsertSegment, authorize: SegmentAuthorize): Promise<void> {
  const { actor, now } = caller
  const values = valuesOf(input)
  await untilUnchanged(`Segment ${id}`, async () => {
    const read = await readForChange(db, id, authorize, {
      nameFree: nameFree(values.name, id),
      projectLive: projectLive(values.project),
      illegal: illegalValuesSql(JSON.stringify(values.constraints), values.project),
    })
    const before = read.row
    if (values.name !== before.name && !read.nameFree) throw nameTaken(values.name)
    if (!read.projectLive) throw noSuchProject(values.project!)
    if ((read.illegal as IllegalValue[]).length > 0) throw illegalValuesError(read.illegal as IllegalValue[], values.project)
    if (values.project !== null) {
      const outside = read.flags.filter((f) => f.project !== values.project)
      if (outside.length > 0) {
        throw validationError(
          `Segment ${id} cannot belong to project ${values.project}: it is used by flags of other projects (${outside.map((f) => `${f.name} in ${f.project}`).join(', ')})`,
        )
      }
    }
    const after = { ...before, ...values, description: input.description !== undefined ? input.description : before.description }
    const event: NewEvent = { type: 'segment-updated', project: after.project ?? before.project, data: segmentState(after), preData: segmentState(before) }
    const write = { id, snapshot: read.snapshot, users: read.users, name: after.name, description: after.description, project: after.project, constraints: JSON.stringify(after.constraints) }
    // The name's lock even when it is kept: one fixed batch, and what it holds off would be refused anyway.
    const [, , updated] = await batch(db, [(q) => nameLock(q, values.name), (q) => segmentLock(q, id), (q) => updateStatement(q, actor, now, [event], write)])
    return updated.written === 0 ? undefined : true
  })
}

/** Deleting a segment read as `snapshot` that no strategy uses. */
const deleteStatement = eventsStatement('flagpost_delete_segment', {
  alongside: [
    sql`delete from ${segments}
      where ${segments.id} = ${p('id')}::integer and ${rowText(segments)} = ${p('snapshot')}::text
        and not exists (select from ${featureStrategySegments} fss where fss.segment_id = ${p('id')}::integer)
      returning id`,
  ],
  guarded: true,
})

/**
 * DELETE /api/admin/segments/{id}: deletes an unused segment (409 naming the flags otherwise). Decided from a read,
 * then written in one batch that locks the segment first: a strategy that starts using it meanwhile either waits
 * and then fails, or comes first and the delete reads again and refuses.
 */
export async function deleteSegment(db: Db, caller: Author, id: number, authorize: SegmentAuthorize): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Segment ${id}`, async () => {
    const { row: before, snapshot, flags } = await readForChange(db, id, authorize, {})
    if (flags.length > 0) {
      throw conflict(`Segment ${id} (${before.name}) is in use by the strategies of ${flags.length === 1 ? 'flag' : 'flags'} ${flags.map((f) => f.name).join(', ')}: remove it from them first`)
    }
    const event: NewEvent = { type: 'segment-deleted', project: before.project, data: null, preData: segmentState(before) }
    const [, deleted] = await batch(db, [(q) => segmentLock(q, id), (q) => deleteStatement(q, actor, now, [event], { id, snapshot })])
    return deleted.written === 0 ? undefined : true
  })
}
