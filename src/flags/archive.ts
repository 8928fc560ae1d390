import { sql } from 'drizzle-orm'
import { changeRequestChanges, changeRequests, environments, events, featureCollaborators, featureDependencies, featureEnvironments, featureLifecycles, features } from '../../schema/index.js'
import { batch, queryRows, untilUnchanged, type Db } from '../db.js'
import { conflict, notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { OPEN_STATES } from '../change-requests/schemas.js'
import { archivedEvent, flagVersionRead, type FlagVersion } from './states.js'

// The archive's writes of many flags at once (and deleting for good): each reads the flags, decides, then sends
// one batch: the flags' locks (in name order, as every lock of several flags is taken), then one statement that
// writes every flag and its events only while every flag is still at the version read (all or nothing).

const p = (name: string) => sql.placeholder(name)

/** What these writes decide from, besides a flag's version: its children, live ones apart, and its enabled environments. */
interface Extra {
  liveChildren: string[]
  archivedChildren: string[]
  enabledEnvironments: string[]
  openChangeRequests: number[]
}

const extra = sql`
    coalesce((select json_agg(d.child order by d.child) from ${featureDependencies} d join ${features} c on c.name = d.child where d.parent = f.name and c.archived_at is null), '[]') as "liveChildren",
    coalesce((select json_agg(d.child order by d.child) from ${featureDependencies} d join ${features} c on c.name = d.child where d.parent = f.name and c.archived_at is not null), '[]') as "archivedChildren",
    coalesce((select json_agg(fe.environment order by env.sort_order, env.name) from ${featureEnvironments} fe join ${environments} env on env.name = fe.environment
      where fe.feature_name = f.name and fe.enabled), '[]') as "enabledEnvironments",
    coalesce((select json_agg(distinct cr.id) from ${changeRequestChanges} ch join ${changeRequests} cr on cr.id = ch.change_request_id
      where ch.feature = f.name and cr.state = any(${p('openStates')}::text[])), '[]') as "openChangeRequests"`

const flagsToWrite = flagVersionRead<Extra>('flagpost_flags_for_archive_ops', { extra, where: sql`f.name = any(${p('names')}::text[])` })
const projectFlagsToWrite = flagVersionRead<Extra>('flagpost_project_flags_for_deletion', { extra, where: sql`f.project = ${p('project')}` })

type FlagToWrite = FlagVersion & Extra

const unique = (names: string[]) => [...new Set(names)].sort()

/** The flags named, each a flag of the project (404 naming those that are not: unknown, or of another project, alike). */
async function readFlags(db: Db, projectId: string | undefined, names: string[]): Promise<FlagToWrite[]> {
  const flags = (await flagsToWrite(db, { names, openStates: OPEN_STATES })).filter((f) => projectId === undefined || f.feature.project === projectId)
  const missing = names.filter((n) => !flags.some((f) => f.feature.name === n))
  if (missing.length > 0) throw notFound(`Could not find feature flag${missing.length > 1 ? 's' : ''} ${missing.join(', ')}${projectId ? ` in project ${projectId}` : ''}`)
  return flags
}

/** Takes the locks of the flags named (placeholder `names`), in name order. */
const lockFlags = (names: string[]) => (q: Db) => queryRows(q, sql`select name from ${features} where name = any(${sql.param(names)}::text[]) order by name for update`)

/** The flags as read, for the version check: `[{ name, version, createdAtMs }]` as JSON. */
const versionsJson = (flags: FlagToWrite[]) => JSON.stringify(flags.map((f) => ({ name: f.feature.name, version: f.version, createdAtMs: f.createdAtMs })))

/** SQL true while every flag of `versions` is a flag of the project at the version read, archived or live as `archived` says. */
const allAtVersions = (archived: boolean) => sql`(select count(*) from ${features} f join jsonb_to_recordset(${p('versions')}::jsonb) as v (name text, version integer, "createdAtMs" float8)
    on f.name = v.name and f.version = v.version and (extract(epoch from f.created_at) * 1000)::float8 = v."createdAtMs"
    where f.project = ${p('project')} and f.archived_at is ${archived ? sql`not null` : sql`null`}) = ${p('count')}::integer`

const archiveFlags = eventsStatement('flagpost_archive_flags', {
  alongside: [
    sql`select 1 where ${allAtVersions(false)}`,
    sql`update ${features} set archived_at = ${p('createdAt')}::timestamptz, version = version + 1 where name = any(${p('names')}::text[]) and ${guardPassed} returning name`,
  ],
  guarded: true,
  unguarded: [
    sql`insert into ${featureLifecycles} (feature_name, stage, entered_stage_at, status, status_value)
      select n, 'archived', ${p('createdAt')}::timestamptz, null, null from unnest(${p('names')}::text[]) as n where ${guardPassed}
      on conflict (feature_name, stage) do update set entered_stage_at = excluded.entered_stage_at, status = null, status_value = null`,
  ],
})

const reviveFlags = eventsStatement('flagpost_revive_flags', {
  alongside: [
    sql`select 1 where ${allAtVersions(true)} and exists (select from projects where id = ${p('project')} and archived_at is null)`,
    sql`update ${features} set archived_at = null, version = version + 1 where name = any(${p('names')}::text[]) and ${guardPassed} returning name`,
  ],
  guarded: true,
  unguarded: [
    sql`update ${featureEnvironments} set enabled = false where feature_name = any(${p('names')}::text[]) and enabled and ${guardPassed}`,
    sql`delete from ${featureLifecycles} where feature_name = any(${p('names')}::text[]) and stage = 'archived' and ${guardPassed}`,
  ],
})

/**
 * Deleting's events, written only while every flag is an archived flag of the project at the version read, no live
 * flag outside those deleted depends on one, and no open change request has a change of one. The flags themselves
 * go in the batch's next statement, only once these events are written (foreign keys would refuse the events'
 * collaborators of a flag deleted in the same statement).
 */
const flagsDeletedEvents = eventsStatement('flagpost_delete_flags_events', {
  alongside: [
    sql`select 1 where ${allAtVersions(true)}
      and not exists (select from ${featureDependencies} d join ${features} c on c.name = d.child
        where d.parent = any(${p('names')}::text[]) and c.archived_at is null and not c.name = any(${p('names')}::text[]))
      and not exists (select from ${changeRequestChanges} ch join ${changeRequests} cr on cr.id = ch.change_request_id
        where ch.feature = any(${p('names')}::text[]) and cr.state = any(${p('openStates')}::text[]))`,
  ],
  guarded: true,
})

/**
 * Deletes the flags whose `feature-deleted` events this transaction wrote (everything of theirs goes with them by
 * foreign keys) and their collaborators (kept by name, with no foreign key), so that a flag made again with the name
 * does not name the deleted one's authors.
 */
const deleteFlags = (names: string[], createdAt: Date, createdBy: string) => (q: Db) =>
  queryRows(
    q,
    sql`with gone as (delete from ${features} f where f.name = any(${sql.param(names)}::text[]) and exists (select from ${events} e
      where e.type = 'feature-deleted' and e.feature_name = f.name and e.created_at = ${createdAt.toISOString()}::timestamptz and e.created_by = ${createdBy})
      returning f.name),
      authors as (delete from ${featureCollaborators} c using gone where c.feature_name = gone.name)
      select name from gone`,
  )

/** POST /api/admin/projects/{projectId}/archive/validate: what archiving these flags would do to the flags depending on them. */
export async function validateArchive(db: Db, projectId: string, names: string[]) {
  const flags = await readFlags(db, projectId, unique(names))
  const named = new Set(flags.map((f) => f.feature.name))
  return {
    parentsWithChildFeatures: flags.filter((f) => f.liveChildren.some((c) => !named.has(c))).map((f) => f.feature.name),
    // An archived flag keeps its dependencies (revived, it depends again as before): archiving deletes none.
    hasDeletedDependencies: false,
  }
}

/**
 * POST /api/admin/projects/{projectId}/archive: archives the live flags named (already archived ones are left as
 * they are), all or nothing. A parent whose live children are not archived with it is refused (400).
 */
export async function archiveFeatures(db: Db, caller: Author, projectId: string, names: string[]) {
  const { actor, now } = caller
  const wanted = unique(names)
  await untilUnchanged(`Feature flags of project ${projectId}`, async () => {
    const flags = (await readFlags(db, projectId, wanted)).filter((f) => !f.feature.archived)
    if (flags.length === 0) return true
    const named = new Set(flags.map((f) => f.feature.name))
    const orphaning = flags.filter((f) => f.liveChildren.some((c) => !named.has(c)))
    if (orphaning.length > 0) {
      throw validationError(`You can not archive ${orphaning.map((f) => f.feature.name).join(', ')}: other flags depend on ${orphaning.length > 1 ? 'them' : 'it'} (archive them together)`, orphaning.map((f) => ({ path: 'body.features', message: `${f.feature.name} has live children ${f.liveChildren.filter((c) => !named.has(c)).join(', ')}` })))
    }
    const list = flags.map((f) => f.feature.name)
    const [, { written }] = await batch(db, [lockFlags(list), (q) => archiveFlags(q, actor, now, flags.map((f) => archivedEvent(f.feature, f.tags)), { project: projectId, names: list, versions: versionsJson(flags), count: list.length })])
    return written > 0 || undefined
  })
}

/**
 * POST /api/admin/projects/{projectId}/revive: revives the archived flags named (live ones are left as they are),
 * all or nothing, each with every environment off as reviving one does.
 */
export async function reviveFeatures(db: Db, caller: Author, projectId: string, names: string[]) {
  const { actor, now } = caller
  const wanted = unique(names)
  await untilUnchanged(`Feature flags of project ${projectId}`, async () => {
    const flags = (await readFlags(db, projectId, wanted)).filter((f) => f.feature.archived)
    if (flags.length === 0) return true
    const list = flags.map((f) => f.feature.name)
    const evs = flags.flatMap((f): NewEvent[] => [
      { type: 'feature-revived', project: projectId, featureName: f.feature.name, data: { ...f.feature, archived: false }, preData: f.feature, tags: f.tags },
      ...f.enabledEnvironments.map((environment): NewEvent => ({ type: 'feature-environment-disabled', project: projectId, featureName: f.feature.name, environment, data: { enabled: false }, preData: { enabled: true }, tags: f.tags })),
    ])
    const [, { written }] = await batch(db, [lockFlags(list), (q) => reviveFlags(q, actor, now, evs, { project: projectId, names: list, versions: versionsJson(flags), count: list.length })])
    if (written === 0) {
      await refuseArchivedProject(db, projectId)
      return undefined
    }
    return true
  })
}

/** Read when a revive wrote nothing: 400 when it is because the flags' project is archived. */
export async function refuseArchivedProject(db: Db, projectId: string) {
  const [project] = await queryRows<{ archived: boolean }>(db, sql`select archived_at is not null as archived from projects where id = ${projectId}`)
  if (project?.archived) throw validationError(`Project ${projectId} is archived: revive it first`)
}

/**
 * Deletes archived flags of the project for good, all or nothing: a live one is a 409 (archive it first), and so is
 * one a live flag outside those deleted depends on, or one an open change request changes. Archived children lose
 * their dependency on it (each a `feature-dependency-removed`).
 */
async function deleteArchived(db: Db, caller: Author, inProject: string | undefined, names: string[], authorize?: (projectId: string) => void) {
  const { actor, now } = caller
  if (names.length === 0) return
  await untilUnchanged(`Feature flags ${names.join(', ')}`, async () => {
    const flags = await readFlags(db, inProject, names)
    const projectId = flags[0]!.feature.project
    authorize?.(projectId)
    const live = flags.filter((f) => !f.feature.archived).map((f) => f.feature.name)
    if (live.length > 0) throw conflict(`Only archived flags can be deleted: archive ${live.join(', ')} first`)
    const named = new Set(names)
    const depended = flags.filter((f) => f.liveChildren.some((c) => !named.has(c)))
    if (depended.length > 0) throw conflict(`You can not delete ${depended.map((f) => f.feature.name).join(', ')}: live flags depend on ${depended.length > 1 ? 'them' : 'it'} (${[...new Set(depended.flatMap((f) => f.liveChildren))].join(', ')})`)
    const pending = flags.filter((f) => f.openChangeRequests.length > 0)
    if (pending.length > 0) throw conflict(`Open change requests (${[...new Set(pending.flatMap((f) => f.openChangeRequests))].join(', ')}) change ${pending.map((f) => f.feature.name).join(', ')}: apply, reject or cancel them first`)
    const evs = flags.flatMap((f): NewEvent[] => [
      { type: 'feature-deleted', project: projectId, featureName: f.feature.name, data: null, preData: f.feature, tags: f.tags },
      ...f.archivedChildren
        .filter((c) => !named.has(c))
        .map((child): NewEvent => ({ type: 'feature-dependency-removed', project: projectId, featureName: child, data: null, preData: { feature: f.feature.name } })),
    ])
    const list = flags.map((f) => f.feature.name)
    const [, { written }, deleted] = await batch(db, [
      lockFlags(list),
      (q) => flagsDeletedEvents(q, actor, now, evs, { project: projectId, names: list, versions: versionsJson(flags), count: list.length, openStates: OPEN_STATES }),
      deleteFlags(list, now, actor.createdBy),
    ])
    return (written > 0 && deleted.length === list.length) || undefined
  })
}

/** DELETE /api/admin/archive/{featureName}: deletes one archived flag for good; `authorize` checks the caller may in its project. */
export const deleteFeature = (db: Db, caller: Author, name: string, authorize: (projectId: string) => void) => deleteArchived(db, caller, undefined, [name], authorize)

/** POST /api/admin/projects/{projectId}/delete: deletes archived flags of the project for good, all or nothing. */
export const deleteFeatures = (db: Db, caller: Author, projectId: string, names: string[]) => deleteArchived(db, caller, projectId, unique(names))

/**
 * Every flag of a project, read for deleting the project (one statement): the live ones (which refuse it), and the
 * archived ones' `feature-deleted` events and what `projectFlagsAsRead` checks them against (`versions`, `count`).
 */
export async function projectFlagsForDeletion(db: Db, projectId: string) {
  const flags = await projectFlagsToWrite(db, { project: projectId, openStates: OPEN_STATES })
  return {
    live: flags.filter((f) => !f.feature.archived).map((f) => f.feature.name),
    events: flags.map((f): NewEvent => ({ type: 'feature-deleted', project: projectId, featureName: f.feature.name, data: null, preData: f.feature, tags: f.tags })),
    check: { versions: versionsJson(flags), count: flags.length },
  }
}

/** SQL (placeholders `project`, `versions`, `count`) true while the project's flags are exactly those read, all archived, each at the version read. */
export const projectFlagsAsRead = sql`${allAtVersions(true)} and (select count(*) from ${features} where project = ${p('project')}) = ${p('count')}::integer`
