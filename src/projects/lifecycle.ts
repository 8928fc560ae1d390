import { eq, sql, type SQL } from 'drizzle-orm'
import { actionSets, addons, apiTokens, changeRequests, eventCountCache, events, featureCollaborators, features, projects, segments } from '../../schema/index.js'
import { batch, queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { conflict, notFound } from '../core/errors.js'
import { eventsStatement, recordEvents } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { OPEN_STATES } from '../change-requests/schemas.js'
import { projectFlagsAsRead, projectFlagsForDeletion } from '../flags/archive.js'
import { segmentState } from '../segments/store.js'
import { tokenDeletedEvent } from '../api-tokens/store.js'
import { projectFieldsAsRead, projectFieldsForDeletion } from '../context-fields/store.js'
import { actionSetJson } from '../actions/store.js'
import { addonView } from '../integrations/store.js'

/*
 * A project's life after its creation: archiving (it takes no more writes and is listed only when archived
 * projects are asked for), reviving, and deleting for good. Each is a read, then one statement or batch that
 * writes only while what it was decided from still holds.
 */

/** The project flags are created in when none is named: it can be neither archived nor deleted, as in Unleash. */
export const DEFAULT_PROJECT = 'default'

const p = (name: string) => sql.placeholder(name)

const openChangeRequest = sql.raw(`cr.state in (${OPEN_STATES.map((state) => `'${state}'`).join(', ')})`)

type ProjectRow = typeof projects.$inferSelect

/** What the lifecycle events carry of a project. */
const lifeOf = (row: Pick<ProjectRow, 'id' | 'name' | 'archivedAt'>) => ({ id: row.id, name: row.name, archivedAt: row.archivedAt?.toISOString() ?? null })

/** The project as read (with its text, for the write's check) and its live flags, in one statement. */
async function readProject(db: Db, projectId: string) {
  const [found] = await db
    .select({
      row: projects,
      snapshot: rowText(projects),
      liveFlags: sql<string[]>`coalesce((select array_agg(f.name order by f.name) from ${features} f where f.project = projects.id and f.archived_at is null), '{}')`,
      openChangeRequests: sql<number[]>`coalesce((select array_agg(cr.id order by cr.id) from ${changeRequests} cr where cr.project = projects.id and ${openChangeRequest}), '{}')`,
    })
    .from(projects)
    .where(eq(projects.id, projectId))
  if (!found) throw notFound(`Could not find project ${projectId}`)
  return found
}

/** 409 for a project with live flags or open change requests (nothing could be done with them after). */
const refuseBusy = (verb: string, projectId: string, { liveFlags, openChangeRequests }: { liveFlags: string[]; openChangeRequests: number[] }) => {
  if (liveFlags.length > 0) throw conflict(`You can not ${verb} project ${projectId}: it has live feature flags (${liveFlags.slice(0, 10).join(', ')}${liveFlags.length > 10 ? ', …' : ''}): archive them first`)
  if (openChangeRequests.length > 0) throw conflict(`You can not ${verb} project ${projectId}: open change requests (${openChangeRequests.join(', ')}) must be applied, rejected or cancelled first`)
}

/** SQL true while the project has no live flag and no open change request. */
const idle = (projectId: string | SQL) => sql`not exists (select from ${features} f where f.project = ${projectId} and f.archived_at is null)
  and not exists (select from ${changeRequests} cr where cr.project = ${projectId} and ${openChangeRequest})`

const projectLock = (projectId: string) => (q: Db) => q.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).for('update')

/**
 * POST /api/admin/projects/archive/{projectId}: a read, then one batch: the project's lock (flag creation takes it
 * first too, so no flag is created in it meanwhile) and the change with its `project-archived` event, made only while
 * the project is as read and has no live flag and no open change request (which could then be neither applied nor
 * closed). Archiving an archived project changes nothing.
 */
export async function archiveProject(db: Db, caller: Author, projectId: string): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Project ${projectId}`, async () => {
    const found = await readProject(db, projectId)
    const { row, snapshot } = found
    if (projectId === DEFAULT_PROJECT) throw conflict('You can not archive the default project')
    if (row.archivedAt) return true
    refuseBusy('archive', projectId, found)
    const update = db
      .update(projects)
      .set({ archivedAt: now })
      .where(sql`${projects.id} = ${projectId} and ${rowText(projects)} = ${snapshot} and ${idle(projectId)}`)
      .returning({ id: projects.id })
    const event: NewEvent = { type: 'project-archived', project: projectId, data: lifeOf({ ...row, archivedAt: now }), preData: lifeOf(row) }
    const [, written] = await batch(db, [projectLock(projectId), (q) => recordEvents(q, actor, now, [event], { alongside: [update], guarded: true })])
    return written > 0 || undefined
  })
}

/**
 * POST /api/admin/projects/revive/{projectId}: a read, then the change and its `project-revived` event in one
 * statement, made only while the project is as read. Reviving a live project changes nothing. Its flags stay
 * archived (revive them on their own).
 */
export async function reviveProject(db: Db, caller: Author, projectId: string): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Project ${projectId}`, async () => {
    const { row, snapshot } = await readProject(db, projectId)
    if (!row.archivedAt) return true
    const update = db
      .update(projects)
      .set({ archivedAt: null })
      .where(sql`${projects.id} = ${projectId} and ${rowText(projects)} = ${snapshot}`)
      .returning({ id: projects.id })
    const event: NewEvent = { type: 'project-revived', project: projectId, data: lifeOf({ ...row, archivedAt: null }), preData: lifeOf(row) }
    return (await recordEvents(db, actor, now, [event], { alongside: [update], guarded: true })) > 0 || undefined
  })
}

/** SQL true while the ids of `table`'s rows matching `where` are, sorted, the placeholder `ids`. */
const idsAsRead = (table: typeof apiTokens | typeof segments | typeof actionSets, where: SQL, ids: string) => sql`(select coalesce(array_agg(id order by id), '{}') from ${table} where ${where}) = ${p(ids)}::int[]`

/**
 * Every event of the deletion, written only while the project is as read, its flags are exactly the archived flags
 * read (at their versions), it has no open change request, and the tokens naming it, its segments, its own context
 * fields and its action sets are those read.
 * What it deletes is deleted by the batch's next statements, only where this statement wrote `project-deleted`.
 */
const projectDeletedEvents = eventsStatement('flagpost_delete_project_events', {
  alongside: [
    sql`select 1 where exists (select from ${projects} pr where pr.id = ${p('project')} and pr::text = ${p('snapshot')})
      and ${projectFlagsAsRead}
      and not exists (select from ${changeRequests} cr where cr.project = ${p('project')} and ${openChangeRequest})
      and ${idsAsRead(apiTokens, sql`${p('project')} = any(projects) and user_id is null`, 'tokenIds')}
      and ${idsAsRead(segments, sql`project = ${p('project')}`, 'segmentIds')}
      and ${projectFieldsAsRead(p('project'), p('fieldSnapshots'))}
      and ${idsAsRead(actionSets, sql`project = ${p('project')}`, 'actionSetIds')}
      and (select coalesce(array_agg(a::text order by a.id), '{}') from ${addons} a where ${p('project')} = any(a.projects)) = ${p('addonSnapshots')}::text[]`,
  ],
  guarded: true,
})

/** SQL true when this transaction wrote the project's `project-deleted` event (it runs at `now`, as `createdBy`). */
const deletedHere = (projectId: string, now: Date, createdBy: string) =>
  sql`exists (select from ${events} e where e.type = 'project-deleted' and e.project = ${projectId} and e.created_at = ${now.toISOString()}::timestamptz and e.created_by = ${createdBy})`

/**
 * DELETE /api/admin/projects/{projectId}: a read (the project with its live flags and open change requests, its flags,
 * the tokens naming it, its segments, its own context fields), then one batch: the project's lock and its flags', the
 * events (one statement, see projectDeletedEvents), then its archived flags, and then the project itself (its
 * environments, members, favorites, segments, context fields, action sets (with `actions-deleted` each) and closed change requests go with it by foreign keys), its tokens for it alone, and its name from the
 * tokens of several projects. Events stay.
 */
export async function deleteProject(db: Db, caller: Author, projectId: string): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Project ${projectId}`, async () => {
    const [found, flags, tokens, projectSegments, fields, projectActionSets, integrations] = await together(db, [
      (q) => readProject(q, projectId),
      (q) => projectFlagsForDeletion(q, projectId),
      (q) => q.select().from(apiTokens).where(sql`${projectId} = any(${apiTokens.projects}) and ${apiTokens.userId} is null`).orderBy(apiTokens.id),
      (q) => q.select().from(segments).where(eq(segments.project, projectId)).orderBy(segments.id),
      (q) => projectFieldsForDeletion(q, projectId),
      (q) => q.select({ id: actionSets.id, set: sql<unknown>`${actionSetJson('action_sets')}` }).from(actionSets).where(eq(actionSets.project, projectId)).orderBy(actionSets.id),
      (q) => q.select({ row: addons, snapshot: rowText(addons) }).from(addons).where(sql`${projectId} = any(${addons.projects})`).orderBy(addons.id),
    ])
    const { row, snapshot } = found
    if (projectId === DEFAULT_PROJECT) throw conflict('You can not delete the default project')
    refuseBusy('delete', projectId, found)
    const alone = tokens.filter((t) => t.projects.length === 1)
    // Integrations naming the project stop naming it, so that a project made again with its id does not send its
    // events to them; one naming it alone is deleted: left with no project it would mean every project, and
    // switching it back on would send every project's events (private ones too) to its URL.
    const integrationsAfter = integrations.map(({ row: a }) => ({ before: a, after: { ...a, projects: a.projects.filter((id) => id !== projectId) } }))
    const list: NewEvent[] = [
      ...flags.events,
      ...projectSegments.map((s): NewEvent => ({ type: 'segment-deleted', project: projectId, data: null, preData: segmentState(s) })),
      ...fields.map((f): NewEvent => ({ type: 'context-field-deleted', project: projectId, data: null, preData: f.field })),
      ...alone.map(tokenDeletedEvent),
      // Drivers hand jsonb back parsed or as text.
      ...projectActionSets.map((a): NewEvent => ({ type: 'actions-deleted', project: projectId, preData: typeof a.set === 'string' ? JSON.parse(a.set) : a.set })),
      ...integrationsAfter.map(({ before, after }): NewEvent =>
        after.projects.length > 0 ? { type: 'addon-config-updated', data: addonView(after), preData: addonView(before) } : { type: 'addon-config-deleted', preData: addonView(before) },
      ),
      { type: 'project-deleted', project: projectId, data: null, preData: { ...lifeOf(row), description: row.description, mode: row.mode } },
    ]
    const here = deletedHere(projectId, now, actor.createdBy)
    const [, , { written }, , [removed]] = await batch(db, [
      projectLock(projectId),
      (q) => queryRows(q, sql`select name from ${features} where project = ${projectId} order by name for update`),
      (q) =>
        projectDeletedEvents(q, actor, now, list, {
          project: projectId,
          snapshot,
          ...flags.check,
          tokenIds: tokens.map((t) => t.id),
          segmentIds: projectSegments.map((s) => s.id),
          fieldSnapshots: fields.map((f) => f.snapshot),
          actionSetIds: projectActionSets.map((a) => a.id),
          addonSnapshots: integrations.map((a) => a.snapshot),
        }),
      // Its flags' collaborators (kept by name) go too: a flag made again with a name must not name the deleted one's authors.
      (q) =>
        queryRows(
          q,
          sql`with gone as (delete from ${features} where project = ${projectId} and ${here} returning name)
            delete from ${featureCollaborators} c using gone where c.feature_name = gone.name`,
        ),
      // counts: the events of a private project's life are hidden from then on, so totals counted before are no longer true.
      (q) =>
        queryRows<{ id: string }>(
          q,
          sql`with alone as (delete from ${apiTokens} where id = any(${sql.param(alone.map((t) => t.id))}::int[]) and ${here}),
            shared as (update ${apiTokens} set projects = array_remove(projects, ${projectId}) where ${projectId} = any(projects) and cardinality(projects) > 1 and user_id is null and ${here}),
            counts as (delete from ${eventCountCache} where ${row.mode === 'private'} and ${here}),
            integrations as (update ${addons} set projects = array_remove(projects, ${projectId}) where ${projectId} = any(projects) and cardinality(array_remove(projects, ${projectId})) > 0 and ${here}),
            lone_integrations as (delete from ${addons} where ${projectId} = any(projects) and cardinality(array_remove(projects, ${projectId})) = 0 and ${here})
            delete from ${projects} where id = ${projectId} and ${here} returning id`,
        ),
    ])
    return (written > 0 && removed !== undefined) || undefined
  })
}
