import { and, asc, desc, eq, inArray, isNull, or, sql, type SQL } from 'drizzle-orm'
import {
  changeRequestApprovals,
  changeRequestChanges,
  changeRequestSchedules,
  changeRequests,
  events,
  environments,
  featureDependencies,
  featureEnvironments,
  features,
  featureStrategies,
  featureStrategySegments,
  projectEnvironments,
  projects,
  segments,
  strategyDefinitions,
  apiTokens,
  roles,
  users,
} from '../../schema/index.js'
import { batch, queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { ApiError, conflict, fromDatabaseError, notFound, validationError } from '../core/errors.js'
import { guardPassed, recordEvents } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import { SYSTEM_ACTOR, SYSTEM_USER_ID, type Actor, type Author, type Caller } from '../core/principal.js'
import { MAX_APPROVALS, MIN_APPROVALS } from '../projects/schemas.js'
import { normalizeVariants } from '../variants/weights.js'
import { applyChange, type StoredChange } from './apply.js'
import { toUserPrincipal, userPrincipalColumns } from '../users/principal.js'
import { REVIEW_PERMISSION } from './permissions.js'
import { hasPermission } from '../core/permissions.js'
import { misfit } from '../strategy-definitions/fit.js'
import {
  MAX_CHANGES_PER_REQUEST,
  OPEN_STATES,
  type ChangeInput,
  type ChangeRequestConfigEntry,
  type ChangeRequestState,
  type ChangeRequestView,
  type ChangeRequestScheduleView,
  type ScheduleStatus,
  EDITABLE_STATES,
} from './schemas.js'

type ChangeRequestRow = typeof changeRequests.$inferSelect
type ChangeRow = typeof changeRequestChanges.$inferSelect
type ScheduleRow = typeof changeRequestSchedules.$inferSelect


const clampApprovals = (n: number) => Math.min(MAX_APPROVALS, Math.max(MIN_APPROVALS, n))

// ---- configuration ---------------------------------------------------------------------------

/** The environments of the project (all, or the one given) where direct changes need SKIP_CHANGE_REQUEST. */
export async function environmentsRequiringChangeRequests(db: Db, projectId: string, environment?: string): Promise<string[]> {
  const filter = [eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.changeRequestsEnabled, true)]
  if (environment !== undefined) filter.push(eq(projectEnvironments.environment, environment))
  const rows = await db.select({ environment: projectEnvironments.environment }).from(projectEnvironments).where(and(...filter))
  return rows.map((r) => r.environment)
}

/** Change requests not yet applied, rejected or cancelled: what they name can still be applied. */
const PENDING_STATES = ['Draft', 'In review', 'Approved', 'Scheduled']

/**
 * Every project environment requiring change requests where the segment is used, in one query: by a strategy
 * (disabled strategies and archived flags included: either can come back without touching the segment), by a
 * pending change request's addStrategy or updateStrategy (what reviewers approve must be what gets applied), or by
 * the environment's default strategy (a pending switch-on adds it when applied).
 */
export async function protectedEnvironmentsUsingSegment(db: Db, segmentId: number): Promise<{ project: string; environment: string }[]> {
  return queryRows<{ project: string; environment: string }>(
    db,
    sql`select distinct pe.project_id as project, pe.environment_name as environment
      from ${projectEnvironments} pe
      where pe.change_requests_enabled and (
        exists (select from ${featureStrategySegments} fss join ${featureStrategies} fs on fs.id = fss.strategy_id join ${features} f on f.name = fs.feature_name
          where fss.segment_id = ${segmentId} and f.project = pe.project_id and fs.environment = pe.environment_name)
        or exists (select from ${changeRequests} cr join ${changeRequestChanges} c on c.change_request_id = cr.id
          where cr.project = pe.project_id and cr.environment = pe.environment_name and cr.state = any(${sql.param(PENDING_STATES)}::text[])
            and c.action in ('addStrategy', 'updateStrategy') and jsonb_typeof(c.payload->'segments') = 'array' and c.payload->'segments' @> to_jsonb(${segmentId}::int))
        or (jsonb_typeof(pe.default_strategy->'segments') = 'array' and pe.default_strategy->'segments' @> to_jsonb(${segmentId}::int)))
      order by 1, 2`,
  )
}

const liveProject = (q: Db, projectId: string) => q.select({ id: projects.id }).from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt)))

const configRows = (q: Db, projectId: string) =>
  q
    .select({ environment: projectEnvironments.environment, type: environments.type, changeRequestsEnabled: projectEnvironments.changeRequestsEnabled, requiredApprovals: projectEnvironments.requiredApprovals })
    .from(projectEnvironments)
    .innerJoin(environments, eq(environments.name, projectEnvironments.environment))
    .where(eq(projectEnvironments.projectId, projectId))
    .orderBy(asc(environments.sortOrder), asc(environments.name))

export async function getChangeRequestConfig(db: Db, projectId: string) {
  const [[project], rows] = await together(db, [(q) => liveProject(q, projectId), (q) => configRows(q, projectId)])
  if (!project) throw notFound(`Could not find project ${projectId}`)
  return rows
}

async function requireProject(db: Db, projectId: string) {
  const [row] = await liveProject(db, projectId)
  if (!row) throw notFound(`Could not find project ${projectId}`)
}

type ProtectionSettings = Pick<typeof projectEnvironments.$inferSelect, 'changeRequestsEnabled' | 'requiredApprovals'>

/**
 * Turns change requests on or off per environment of the project. Emits `change-request-configuration-updated`
 * per environment that changed. `authorizeWeakening` is asked for each protected environment whose protection
 * the entry would lift or lower, from the settings read; the write then takes the lock of the environments it
 * changes and writes only while they are still as read, so the check holds at the write. Answers the settings
 * now in force: a read, then one batch.
 */
export async function setChangeRequestConfig(db: Db, caller: Author, projectId: string, entries: ChangeRequestConfigEntry[], authorizeWeakening: (environment: string) => void) {
  const { actor, now } = caller
  const names = [...new Set(entries.map((e) => e.environment))]
  return untilUnchanged(`The change request settings of project ${projectId}`, async () => {
    const [[project], read, config] = await together(db, [
      (q) => liveProject(q, projectId),
      (q) => q.select({ row: projectEnvironments, snapshot: rowText(projectEnvironments) }).from(projectEnvironments).where(and(eq(projectEnvironments.projectId, projectId), inArray(projectEnvironments.environment, names))),
      (q) => configRows(q, projectId),
    ])
    if (!project) throw notFound(`Could not find project ${projectId}`)
    const settings = new Map<string, ProtectionSettings>(read.map(({ row }) => [row.environment, { changeRequestsEnabled: row.changeRequestsEnabled, requiredApprovals: row.requiredApprovals }]))
    const list: NewEvent[] = []
    for (const entry of entries) {
      const previous = settings.get(entry.environment)
      if (!previous) throw notFound(`Environment ${entry.environment} is not enabled in project ${projectId}`)
      const after = { changeRequestsEnabled: entry.changeRequestsEnabled, requiredApprovals: clampApprovals(entry.requiredApprovals ?? previous.requiredApprovals) }
      if (after.changeRequestsEnabled === previous.changeRequestsEnabled && after.requiredApprovals === previous.requiredApprovals) continue
      if (previous.changeRequestsEnabled && (!after.changeRequestsEnabled || after.requiredApprovals < previous.requiredApprovals)) authorizeWeakening(entry.environment)
      settings.set(entry.environment, after)
      list.push({ type: 'change-request-configuration-updated', project: projectId, environment: entry.environment, data: after, preData: previous })
    }
    if (list.length === 0) return config
    const changed = [...new Set(list.map((e) => e.environment!))]
    const snapshots = read.filter(({ row }) => changed.includes(row.environment)).map((r) => r.snapshot)
    const updates = changed.map((environment) => ({ environment, ...settings.get(environment)! }))
    const unchanged = sql`select where (select count(*) from ${projectEnvironments} where project_id = ${projectId} and ${rowText(projectEnvironments)} = any(${sql.param(snapshots)}::text[])) = ${snapshots.length}
      and exists (select from ${projects} where id = ${projectId} and archived_at is null)`
    const update = sql`update ${projectEnvironments} set change_requests_enabled = v."changeRequestsEnabled", required_approvals = v."requiredApprovals"
      from jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) as v (environment text, "changeRequestsEnabled" boolean, "requiredApprovals" integer)
      where project_id = ${projectId} and environment_name = v.environment and ${guardPassed}
      returning 1`
    const [, written, inForce] = await batch(db, [
      (q) => q.select({ environment: projectEnvironments.environment }).from(projectEnvironments).where(and(eq(projectEnvironments.projectId, projectId), inArray(projectEnvironments.environment, changed))).for('update'),
      (q) => recordEvents(q, actor, now, list, { alongside: [unchanged, update], guarded: true }),
      (q) => configRows(q, projectId),
    ])
    return written > 0 ? inForce : undefined
  })
}

// ---- reading ---------------------------------------------------------------------------------

const userRef = (name: string, userId: number | null) => ({ id: userId ?? SYSTEM_USER_ID, username: name })

const requestRows = (q: Db, where: SQL) =>
  q
    .select({ cr: changeRequests, requiredApprovals: projectEnvironments.requiredApprovals })
    .from(changeRequests)
    .leftJoin(projectEnvironments, and(eq(projectEnvironments.projectId, changeRequests.project), eq(projectEnvironments.environment, changeRequests.environment)))
    .where(where)
    .orderBy(desc(changeRequests.id))
const changeRowsOf = (q: Db, ids: number[]) => q.select().from(changeRequestChanges).where(inArray(changeRequestChanges.changeRequestId, ids)).orderBy(asc(changeRequestChanges.id))
const approvalRowsOf = (q: Db, ids: number[]) => q.select().from(changeRequestApprovals).where(inArray(changeRequestApprovals.changeRequestId, ids)).orderBy(asc(changeRequestApprovals.createdAt))
const scheduleRowsOf = (q: Db, ids: number[]) => q.select().from(changeRequestSchedules).where(inArray(changeRequestSchedules.changeRequestId, ids))

type ViewRows = [Awaited<ReturnType<typeof requestRows>>, ChangeRow[], (typeof changeRequestApprovals.$inferSelect)[], ScheduleRow[]]

/** Change requests with their changes and approvals, in two round trips however many there are. */
async function views(db: Db, where: SQL): Promise<ChangeRequestView[]> {
  const rows = await requestRows(db, where)
  if (rows.length === 0) return []
  const ids = rows.map((r) => r.cr.id)
  return viewsOf([rows, ...(await together(db, [(q) => changeRowsOf(q, ids), (q) => approvalRowsOf(q, ids), (q) => scheduleRowsOf(q, ids)]))])
}

/** The reads of one change request's view (see oneView), which can go in one round trip: with the write they answer, in its batch. */
const viewReads = (projectId: string, id: number) =>
  [(q: Db) => requestRows(q, and(eq(changeRequests.project, projectId), eq(changeRequests.id, id))!), (q: Db) => changeRowsOf(q, [id]), (q: Db) => approvalRowsOf(q, [id]), (q: Db) => scheduleRowsOf(q, [id])] as const

function oneView(rows: ViewRows, projectId: string, id: string | number): ChangeRequestView {
  const [view] = viewsOf(rows)
  if (!view) throw notFoundIn(projectId, String(id))
  return view
}

export function scheduleView(row: ScheduleRow): ChangeRequestScheduleView {
  const status = row.status as ScheduleStatus
  return {
    scheduledAt: row.scheduledAt.toISOString(),
    status,
    ...(status === 'pending' ? {} : { reason: row.reason ?? '' }),
    ...(status === 'failed' ? { failureReason: row.reason } : {}),
    scheduledBy: userRef(row.createdBy, row.createdByUserId),
  }
}

function viewsOf([rows, changeRows, approvalRows, scheduleRows]: ViewRows): ChangeRequestView[] {
  return rows.map(({ cr, requiredApprovals }) => {
    const schedule = scheduleRows.find((r) => r.changeRequestId === cr.id)
    const byFeature = new Map<string, ChangeRequestView['features'][number]>()
    for (const change of changeRows) {
      if (change.changeRequestId !== cr.id) continue
      let entry = byFeature.get(change.feature)
      if (!entry) byFeature.set(change.feature, (entry = { name: change.feature, changes: [] }))
      entry.changes.push({
        id: change.id,
        action: change.action,
        payload: change.payload as Record<string, unknown>,
        createdAt: change.createdAt.toISOString(),
        createdBy: userRef(change.createdBy, change.createdByUserId),
      })
    }
    return {
      id: cr.id,
      title: cr.title ?? `Change request #${cr.id}`,
      project: cr.project,
      environment: cr.environment,
      state: cr.state as ChangeRequestState,
      minApprovals: requiredApprovals ?? 1,
      createdAt: cr.createdAt.toISOString(),
      updatedAt: cr.updatedAt.toISOString(),
      createdBy: userRef(cr.createdBy, cr.createdByUserId),
      features: [...byFeature.values()],
      approvals: approvalRows.filter((a) => a.changeRequestId === cr.id).map((a) => ({ createdBy: userRef(a.createdBy, a.createdByUserId), createdAt: a.createdAt.toISOString() })),
      ...(cr.state === 'Scheduled' && schedule ? { schedule: scheduleView(schedule) } : {}),
    }
  })
}

const notFoundIn = (projectId: string, id: string) => notFound(`Could not find change request ${id} in project ${projectId}`)

/** Change request ids are whole numbers; anything else is simply not found. */
function parseId(id: string): number | undefined {
  return /^[1-9]\d{0,9}$/.test(id) && Number(id) <= 2147483647 ? Number(id) : undefined
}

/** The change request's id in the path as a number; 404 where it cannot be one. */
function requestId(projectId: string, id: string): number {
  const numeric = parseId(id)
  if (numeric === undefined) throw notFoundIn(projectId, id)
  return numeric
}

export async function getChangeRequest(db: Db, projectId: string, id: string): Promise<ChangeRequestView> {
  const numeric = requestId(projectId, id)
  return oneView(await together(db, viewReads(projectId, numeric)), projectId, id)
}

export async function listChangeRequests(db: Db, projectId: string, state?: ChangeRequestState): Promise<ChangeRequestView[]> {
  await requireProject(db, projectId)
  const filter = [eq(changeRequests.project, projectId)]
  if (state) filter.push(eq(changeRequests.state, state))
  return views(db, and(...filter)!)
}

/** A change request's project, environment, state and the changes still to apply (none once it is closed), for the preview. */
export async function pendingChanges(db: Db, id: string) {
  const numeric = parseId(id)
  const [row] = numeric === undefined ? [] : await db.select().from(changeRequests).where(eq(changeRequests.id, numeric))
  if (!row) throw notFound(`Could not find change request ${id}`)
  const open = OPEN_STATES.includes(row.state as ChangeRequestState)
  const changes = open ? await db.select().from(changeRequestChanges).where(eq(changeRequestChanges.changeRequestId, row.id)).orderBy(asc(changeRequestChanges.id)) : []
  return { id: row.id, project: row.project, environment: row.environment, state: row.state as ChangeRequestState, changes: changes.map(storedChange) }
}

const storedChange = (row: ChangeRow): StoredChange => ({ id: row.id, feature: row.feature, action: row.action as StoredChange['action'], payload: row.payload as Record<string, unknown> })

const changeCount = (id: SQL | number) => sql`(select count(*)::int from ${changeRequestChanges} c where c.change_request_id = ${id})`

// ---- adding changes --------------------------------------------------------------------------

/** The reads `checkChanges` decides from, to send in one round trip with the others of the write. */
function changeFactReads(environment: string, changes: ChangeInput[]) {
  const names = [...new Set(changes.flatMap((c) => (c.action === 'addDependency' ? [c.feature, c.payload.feature] : [c.feature])))]
  const segmentIds = [...new Set(changes.flatMap((c) => (c.action === 'addStrategy' || c.action === 'updateStrategy' ? (c.payload.segments ?? []) : [])))]
  const strategyNames = [...new Set(changes.flatMap((c) => (c.action === 'addStrategy' || c.action === 'updateStrategy' ? [c.payload.name] : [])))]
  return [
    (q: Db) => q.select({ name: features.name, project: features.project, archivedAt: features.archivedAt }).from(features).where(inArray(features.name, names)),
    (q: Db) => q.select({ featureName: featureEnvironments.featureName }).from(featureEnvironments).where(and(inArray(featureEnvironments.featureName, names), eq(featureEnvironments.environment, environment))),
    (q: Db) => q.select({ id: featureStrategies.id, featureName: featureStrategies.featureName, name: featureStrategies.name, parameters: featureStrategies.parameters }).from(featureStrategies).where(and(inArray(featureStrategies.featureName, names), eq(featureStrategies.environment, environment))),
    (q: Db) => q.select({ child: featureDependencies.child, parent: featureDependencies.parent }).from(featureDependencies).where(inArray(featureDependencies.child, names)),
    (q: Db) => (segmentIds.length > 0 ? q.select({ id: segments.id }).from(segments).where(inArray(segments.id, segmentIds)) : Promise.resolve([])),
    (q: Db) => (strategyNames.length > 0 ? q.select().from(strategyDefinitions).where(inArray(strategyDefinitions.name, strategyNames)) : Promise.resolve([])),
  ] as const
}

type Answers<T extends readonly ((q: Db) => PromiseLike<unknown>)[]> = { -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }
type ChangeFacts = Answers<ReturnType<typeof changeFactReads>>

/**
 * Checks what the direct routes would check before any write: the flag is live in the project and
 * has the environment, named strategies and dependencies exist, segments exist, variant weights add
 * up. What can still change before the request is applied is checked again then.
 */
function checkChanges([flagRows, envRows, strategyRows, dependencyRows, segmentRows, definitionRows]: ChangeFacts, projectId: string, environment: string, changes: ChangeInput[]) {
  const live = (name: string) => flagRows.find((f) => f.name === name && f.project === projectId && f.archivedAt === null)
  for (const [i, change] of changes.entries()) {
    const at = (path: string) => `body.${changes.length > 1 ? `${i}.` : ''}${path}`
    if (!live(change.feature)) throw notFound(`Could not find feature flag ${change.feature} in project ${projectId}`)
    if (!envRows.some((e) => e.featureName === change.feature)) throw notFound(`Could not find environment ${environment} for feature flag ${change.feature}`)
    switch (change.action) {
      case 'addStrategy':
      case 'updateStrategy': {
        normalizeVariants(change.payload.variants ?? [], { sortByName: false, path: at('payload.variants') })
        const missing = (change.payload.segments ?? []).filter((id) => !segmentRows.some((s) => s.id === id))
        if (missing.length > 0) throw validationError(`Unknown segment(s): ${missing.join(', ')}`, missing.map((id) => ({ path: at('payload.segments'), message: `segment ${id} does not exist` })))
        const before = change.action === 'updateStrategy' ? strategyRows.find((s) => s.id === change.payload.id.toLowerCase() && s.featureName === change.feature) : undefined
        if (change.action === 'updateStrategy' && !before) throw notFound(`Could not find strategy ${change.payload.id} of ${change.feature} in ${environment}`)
        // Checked again when applied: the definition may change in between.
        const use = { name: change.payload.name, parameters: change.payload.parameters ?? {}, previousName: before?.name ?? null, previousParameters: (before?.parameters as Record<string, string> | undefined) ?? null }
        const refused = misfit(definitionRows.find((d) => d.name === use.name), use, at('payload'))
        if (refused) throw refused
        break
      }
      case 'deleteStrategy':
        if (!strategyRows.some((s) => s.id === change.payload.id.toLowerCase() && s.featureName === change.feature)) throw notFound(`Could not find strategy ${change.payload.id} of ${change.feature} in ${environment}`)
        break
      case 'patchVariant':
        normalizeVariants(change.payload.variants, { sortByName: true, path: at('payload.variants') })
        break
      case 'addDependency':
        if (change.payload.feature === change.feature) throw validationError('A feature flag cannot depend on itself', [{ path: at('payload.feature'), message: 'must name another flag' }])
        if (!live(change.payload.feature)) throw validationError(`The parent flag ${change.payload.feature} is not a live flag of project ${projectId}`, [{ path: at('payload.feature'), message: `no live flag named ${change.payload.feature} in ${projectId}` }])
        break
      case 'deleteDependency':
        if (!dependencyRows.some((d) => d.child === change.feature && d.parent === change.payload.feature)) throw notFound(`Feature flag ${change.feature} does not depend on ${change.payload.feature}`)
        break
    }
  }
}

/**
 * Adds changes to the caller's open draft in the project environment, creating the draft when there
 * is none. Emits `change-request-created` for a new one and `change-added` per change. Everything it decides
 * from is read in one round trip, with the ids of what it creates (for the events); then one batch takes the
 * project environment's lock, which serializes a caller's concurrent requests onto one draft, writes only while
 * the draft (or its absence) and the environment's protection are as read, and reads the draft back.
 */
export async function addChanges(db: Db, caller: Caller, { projectId, environment, changes }: { projectId: string; environment: string; changes: ChangeInput[] }): Promise<ChangeRequestView> {
  const { actor, now } = caller
  const callersDraft = and(eq(changeRequests.project, projectId), eq(changeRequests.environment, environment), eq(changeRequests.createdByPrincipal, caller.key), eq(changeRequests.state, 'Draft'))!
  const protectedEnvironment = sql`exists (select from ${projectEnvironments} pe join ${projects} pr on pr.id = pe.project_id
    where pe.project_id = ${projectId} and pe.environment_name = ${environment} and pe.change_requests_enabled and pr.archived_at is null)`
  return untilUnchanged('Your draft change request', async () => {
    const [[pe], flagRows, envRows, strategyRows, dependencyRows, segmentRows, definitionRows, [draft], [newDraft], changeIds] = await together(db, [
      (q) =>
        q
          .select({ enabled: projectEnvironments.changeRequestsEnabled })
          .from(projectEnvironments)
          .innerJoin(projects, eq(projects.id, projectEnvironments.projectId))
          .where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environment, environment), isNull(projects.archivedAt))),
      ...changeFactReads(environment, changes),
      (q) => q.select({ id: changeRequests.id, changes: changeCount(sql`${changeRequests.id}`).mapWith(Number) }).from(changeRequests).where(callersDraft).orderBy(asc(changeRequests.id)).limit(1),
      // The id of a new draft, taken only when there is none.
      (q) => queryRows<{ id: number }>(q, sql`select nextval(pg_get_serial_sequence('change_requests', 'id'))::int as id where not exists (select from ${changeRequests} where ${callersDraft})`),
      (q) => queryRows<{ id: number }>(q, sql`select nextval(pg_get_serial_sequence('change_request_changes', 'id'))::int as id from generate_series(1, ${changes.length}::int)`),
    ])
    if (!pe) throw notFound(`Could not find environment ${environment} in project ${projectId}`)
    if (!pe.enabled) throw validationError(`Change requests are not enabled in environment ${environment} of project ${projectId}: change the flags directly`)
    checkChanges([flagRows, envRows, strategyRows, dependencyRows, segmentRows, definitionRows], projectId, environment, changes)
    if (draft && draft.changes + changes.length > MAX_CHANGES_PER_REQUEST) throw validationError(`A change request holds at most ${MAX_CHANGES_PER_REQUEST} changes: send change request ${draft.id} to review first`)
    // The two reads disagree when a draft was made in between.
    const crId = draft?.id ?? newDraft?.id
    if (crId === undefined) return undefined

    const events: NewEvent[] = []
    if (!draft) events.push({ type: 'change-request-created', project: projectId, environment, data: { changeRequestId: crId, state: 'Draft' } })
    const ids = changeIds.map((r) => r.id).sort((a, b) => a - b)
    const rows = changes.map((c, i) => ({ id: ids[i]!, feature: c.feature, action: c.action, payload: c.payload ?? {} }))
    for (const change of rows) {
      events.push({ type: 'change-added', project: projectId, environment, featureName: change.feature, data: { changeRequestId: crId, change: { id: change.id, action: change.action, payload: change.payload } } })
    }
    const draftWrite = draft
      ? sql`update ${changeRequests} set updated_at = ${now.toISOString()}::timestamptz
          where id = ${crId} and state = 'Draft' and ${changeCount(crId)} = ${draft.changes} and ${protectedEnvironment}
          returning id`
      : sql`insert into ${changeRequests} (id, project, environment, state, created_by, created_by_user_id, created_by_principal, created_at, updated_at)
          select ${crId}::integer, ${projectId}::text, ${environment}::text, 'Draft', ${actor.createdBy}::text, ${actor.createdByUserId}::integer, ${caller.key}::text, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
          where not exists (select from ${changeRequests} where ${callersDraft}) and ${protectedEnvironment}
          returning id`
    const changesInsert = sql`insert into ${changeRequestChanges} (id, change_request_id, feature, action, payload, created_by, created_by_user_id, created_at)
      select v.id, ${crId}::integer, v.feature, v.action, v.payload, ${actor.createdBy}::text, ${actor.createdByUserId}::integer, ${now.toISOString()}::timestamptz
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as v (id integer, feature text, action text, payload jsonb)
      where ${guardPassed}
      returning id`
    const [, written, ...view] = await batch(db, [
      (q) => q.select({ environment: projectEnvironments.environment }).from(projectEnvironments).where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environment, environment))).for('update'),
      (q) => recordEvents(q, actor, now, events, { alongside: [draftWrite, changesInsert], guarded: true }),
      ...viewReads(projectId, crId),
    ])
    return written > 0 ? oneView(view, projectId, crId) : undefined
  })
}

// ---- review and apply ------------------------------------------------------------------------

/** Who wrote a change request, and for which environment: what deciding who may move it on needs. */
export interface ChangeRequestParties {
  id: number
  project: string
  environment: string
  authorKey: string
  author: string
}

/** The route's check of who may make a move, asked with the change request the move is decided from. */
export type AuthorizeMove = (parties: ChangeRequestParties) => void

const partiesOf = (row: ChangeRequestRow): ChangeRequestParties => ({ id: row.id, project: row.project, environment: row.environment, authorKey: row.createdByPrincipal, author: row.createdBy })

const inProject = (projectId: string, id: number) => and(eq(changeRequests.project, projectId), eq(changeRequests.id, id))

async function lockChangeRequest(tx: Db, projectId: string, id: string): Promise<ChangeRequestRow> {
  const numeric = parseId(id)
  const [row] = numeric === undefined ? [] : await tx.select().from(changeRequests).where(inProject(projectId, numeric)).for('update')
  if (!row) throw notFoundIn(projectId, id)
  return row
}

function requireState(row: ChangeRequestRow, allowed: readonly ChangeRequestState[], doing: string) {
  if (!allowed.includes(row.state as ChangeRequestState)) {
    throw conflict(`Change request ${row.id} is ${row.state}: it can only be ${doing} when it is ${allowed.join(' or ')}`)
  }
}

const stateEvent = (row: ChangeRequestRow, state: ChangeRequestState, type: NewEvent['type'], extra: Record<string, unknown> = {}): NewEvent => ({
  type,
  project: row.project,
  environment: row.environment,
  data: { changeRequestId: row.id, state, ...extra },
  preData: { changeRequestId: row.id, state: row.state },
})

/** Leaving the Scheduled state drops the schedule, in the statement of the move (only where its check passed). */
const dropSchedule = (id: number) => sql`delete from ${changeRequestSchedules} where change_request_id = ${id} and ${guardPassed}`

const MOVES = {
  'In review': { from: ['Draft'], doing: 'sent to review', type: 'change-request-sent-to-review' },
  Rejected: { from: ['In review', 'Approved', 'Scheduled'], doing: 'rejected', type: 'change-request-rejected' },
  Cancelled: { from: ['Draft', 'In review', 'Approved', 'Scheduled'], doing: 'cancelled', type: 'change-request-cancelled' },
} as const satisfies Record<string, { from: ChangeRequestState[]; doing: string; type: NewEvent['type'] }>

/**
 * Moves a change request on: `In review` (its author, from Draft), `Approved` (as approve), `Scheduled` (as
 * schedule), `Applied` (from Approved or Scheduled), `Rejected` (a reviewer, from In review, Approved or Scheduled),
 * `Cancelled` (its author or an admin, while open). Rejecting or cancelling a Scheduled one drops its schedule.
 * `authorize` is the route's check of who may make the move. Sending to review, rejecting and cancelling read the
 * change request, then write the move (only from the state it was decided from) with its event and read the answer
 * in one batch.
 */
export async function changeState(
  db: Db,
  caller: Caller,
  { projectId, id, state, comment, scheduledAt }: { projectId: string; id: string; state: Exclude<ChangeRequestState, 'Draft'>; comment?: string | undefined; scheduledAt?: string | undefined },
  authorize: AuthorizeMove,
): Promise<ChangeRequestView> {
  const { actor, now } = caller
  if (state === 'Approved') return approve(db, caller, { projectId, id }, authorize)
  if (state === 'Applied') return apply(db, caller, { projectId, id }, authorize)
  if (state === 'Scheduled') return schedule(db, caller, { projectId, id, scheduledAt: scheduledAt! }, authorize)
  const numeric = requestId(projectId, id)
  const move = MOVES[state]
  return untilUnchanged(`Change request ${id}`, async () => {
    const [row] = await db.select().from(changeRequests).where(inProject(projectId, numeric))
    if (!row) throw notFoundIn(projectId, id)
    authorize(partiesOf(row))
    requireState(row, [...move.from], move.doing)
    const moved = db
      .update(changeRequests)
      .set({ state, updatedAt: now })
      .where(and(eq(changeRequests.id, row.id), eq(changeRequests.state, row.state)))
      .returning({ id: changeRequests.id })
    const [written, ...view] = await batch(db, [
      (q) => recordEvents(q, actor, now, [stateEvent(row, state, move.type, comment ? { comment } : {})], { alongside: [moved], guarded: true, unguarded: [dropSchedule(row.id)] }),
      ...viewReads(projectId, row.id),
    ])
    return written > 0 ? oneView(view, projectId, id) : undefined
  })
}

/**
 * Adds the caller's approval. Never its author's (`authorize`), and once per approver. With the environment's
 * required approvals reached the request is Approved (`change-request-approved`); before that each
 * approval is `change-request-approval-added`. The change request is read with its approvals, then one batch
 * takes its lock and writes only while its state, its approvals and the approvals it needs are as read.
 */
export async function approve(db: Db, caller: Caller, { projectId, id }: { projectId: string; id: string }, authorize: AuthorizeMove): Promise<ChangeRequestView> {
  const { actor, now } = caller
  const numeric = requestId(projectId, id)
  const approvalsOf = sql`(select count(*)::int from ${changeRequestApprovals} a where a.change_request_id = ${changeRequests.id})`
  const requiredOf = sql`coalesce((select pe.required_approvals from ${projectEnvironments} pe where pe.project_id = ${changeRequests.project} and pe.environment_name = ${changeRequests.environment}), 1)`
  return untilUnchanged(`Change request ${id}`, async () => {
    const [read] = await db
      .select({
        row: changeRequests,
        approvals: approvalsOf.mapWith(Number),
        required: requiredOf.mapWith(Number),
        approvedByCaller: sql<boolean>`exists (select from ${changeRequestApprovals} a where a.change_request_id = ${changeRequests.id} and a.principal = ${caller.key})`,
      })
      .from(changeRequests)
      .where(inProject(projectId, numeric))
    if (!read) throw notFoundIn(projectId, id)
    const { row, required } = read
    authorize(partiesOf(row))
    requireState(row, ['In review'], 'approved')
    if (read.approvedByCaller) throw conflict(`You have already approved change request ${row.id}`)
    const approvals = read.approvals + 1
    const approved = approvals >= required
    const event: NewEvent = approved
      ? stateEvent(row, 'Approved', 'change-request-approved', { approvals, minApprovals: required })
      : { type: 'change-request-approval-added', project: row.project, environment: row.environment, data: { changeRequestId: row.id, approvals, minApprovals: required } }
    const moved = sql`update ${changeRequests} set state = ${approved ? 'Approved' : row.state}::text, updated_at = ${now.toISOString()}::timestamptz
      where ${changeRequests.id} = ${row.id} and ${changeRequests.state} = 'In review' and ${approvalsOf} = ${read.approvals} and ${requiredOf} = ${required}
      returning id`
    const approval = sql`insert into ${changeRequestApprovals} (change_request_id, principal, created_by, created_by_user_id, created_at)
      select ${row.id}::integer, ${caller.key}::text, ${actor.createdBy}::text, ${actor.createdByUserId}::integer, ${now.toISOString()}::timestamptz
      where ${guardPassed}
      returning principal`
    const [, written, ...view] = await batch(db, [
      (q) => q.select({ id: changeRequests.id }).from(changeRequests).where(eq(changeRequests.id, row.id)).for('update'),
      (q) => recordEvents(q, actor, now, [event], { alongside: [moved, approval], guarded: true }),
      ...viewReads(projectId, row.id),
    ])
    return written > 0 ? oneView(view, projectId, id) : undefined
  })
}

/**
 * Runs every change of a change request locked by `tx`, in order, each through the same write path as its direct
 * route (so each writes its usual events, attributed to the caller), then marks it Applied and drops its schedule.
 * A change that no longer applies throws 409 naming it, and the caller's transaction rolls everything back.
 * Answers how many changes it applied.
 */
/**
 * The approvals an Approved request holds, against what its environment requires now: raising `requiredApprovals`
 * after the approval must not let the request through with fewer (checked at apply, at schedule and when it fires).
 * An approval counts only while its giver may still approve in the environment: one given by a user since deleted,
 * demoted or removed from the project (or a token since deleted) no longer does.
 */
async function requireCurrentApprovals(q: Db, row: ChangeRequestRow, now: Date): Promise<void> {
  // One round trip: the environment's requirement, and each approval's giver as they are now (a live user with their
  // roles, or a live admin token).
  const rows = await q
    .select({
      required: sql<number>`coalesce((select pe.required_approvals from ${projectEnvironments} pe where pe.project_id = ${changeRequests.project} and pe.environment_name = ${changeRequests.environment}), 1)`.mapWith(Number),
      principal: changeRequestApprovals.principal,
      userId: users.id,
      email: users.email,
      username: users.username,
      rootRole: roles.name,
      heldRoles: userPrincipalColumns.heldRoles,
      tokenId: apiTokens.id,
    })
    .from(changeRequests)
    .leftJoin(changeRequestApprovals, eq(changeRequestApprovals.changeRequestId, changeRequests.id))
    .leftJoin(users, and(sql`${changeRequestApprovals.principal} = 'user:' || ${users.id}`, isNull(users.deletedAt)))
    .leftJoin(roles, eq(roles.id, users.rootRoleId))
    .leftJoin(apiTokens, and(sql`${changeRequestApprovals.principal} = 'token:' || ${apiTokens.id}`, eq(apiTokens.type, 'admin'), or(isNull(apiTokens.expiresAt), sql`${apiTokens.expiresAt} > ${now.toISOString()}::timestamptz`)))
    .where(eq(changeRequests.id, row.id))
  if (rows.length === 0) return
  const required = rows[0]!.required
  const given = rows.filter((r) => r.principal !== null)
  const scope = { project: row.project, environment: row.environment }
  const approvals = given.filter((r) =>
    r.tokenId !== null
      ? true
      : r.userId !== null && r.rootRole !== null && hasPermission(toUserPrincipal({ userId: r.userId, email: r.email, username: r.username, rootRole: r.rootRole, heldRoles: r.heldRoles }), REVIEW_PERMISSION, scope),
  ).length
  if (approvals < required) {
    const lapsed = given.length - approvals
    throw conflict(
      `Change request ${row.id} has ${approvals} of the ${required} approvals ${row.environment} now requires` +
        (lapsed > 0 ? ` (${lapsed} given by ${lapsed === 1 ? 'someone who' : 'people who'} may no longer approve there)` : '') +
        ': it needs more approvals before it is applied or scheduled',
    )
  }
}

async function applyChanges(tx: Db, caller: Caller, row: ChangeRequestRow): Promise<number> {
  await requireCurrentApprovals(tx, row, caller.now)
  const changes = await tx.select().from(changeRequestChanges).where(eq(changeRequestChanges.changeRequestId, row.id)).orderBy(asc(changeRequestChanges.id))
  for (const change of changes.map(storedChange)) {
    try {
      await applyChange(tx, caller, { project: row.project, environment: row.environment }, change)
    } catch (error) {
      const apiError = error instanceof ApiError ? error : fromDatabaseError(error)
      if (!apiError || apiError.name === 'InternalError') throw error
      throw conflict(`Change request ${row.id} cannot be applied: change ${change.id} (${change.action} on ${change.feature}) no longer applies: ${apiError.message}`)
    }
  }
  await tx.update(changeRequests).set({ state: 'Applied', updatedAt: caller.now }).where(eq(changeRequests.id, row.id))
  await tx.delete(changeRequestSchedules).where(eq(changeRequestSchedules.changeRequestId, row.id))
  return changes.length
}

/**
 * Applies an Approved or Scheduled change request now (a Scheduled one's schedule is dropped), every change in
 * order in one transaction (see applyChanges), with `change-request-applied`. A change that no longer applies fails
 * the whole request with 409 and nothing is written. An interactive transaction: each change is decided under its
 * flag's lock from what the changes before it wrote.
 */
export async function apply(db: Db, caller: Caller, { projectId, id }: { projectId: string; id: string }, authorize: AuthorizeMove): Promise<ChangeRequestView> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    const row = await lockChangeRequest(tx, projectId, id)
    authorize(partiesOf(row))
    requireState(row, ['Approved', 'Scheduled'], 'applied')
    const changes = await applyChanges(tx, caller, row)
    await recordEvents(tx, actor, now, [stateEvent(row, 'Applied', 'change-request-applied', { changes })])
  })
  return getChangeRequest(db, projectId, id)
}

// ---- scheduling --------------------------------------------------------------------------------

/**
 * Schedules an Approved change request to be applied at `scheduledAt` (in the future), or reschedules a Scheduled
 * one whatever its schedule's status (pending, failed, suspended): the schedule is pending again, its author is the
 * caller (the request will be applied with their access), and conflicting changes count from now on. Emits
 * `change-request-scheduled` (data: `scheduledDate`; preData: the state and any schedule before). Read, then one
 * batch that takes the request's lock and writes only while it is as read.
 */
export async function schedule(db: Db, caller: Caller, { projectId, id, scheduledAt }: { projectId: string; id: string; scheduledAt: string }, authorize: AuthorizeMove): Promise<ChangeRequestView> {
  const { actor, now } = caller
  const numeric = requestId(projectId, id)
  const at = new Date(scheduledAt)
  if (!(at.getTime() > now.getTime())) throw validationError(`scheduledAt must be in the future: ${at.toISOString()} is not after ${now.toISOString()}`, [{ path: 'body.scheduledAt', message: 'must be in the future' }])
  return untilUnchanged(`Change request ${id}`, async () => {
    const [read] = await db
      .select({ row: changeRequests, snapshot: rowText(changeRequests), schedule: changeRequestSchedules })
      .from(changeRequests)
      .leftJoin(changeRequestSchedules, eq(changeRequestSchedules.changeRequestId, changeRequests.id))
      .where(inProject(projectId, numeric))
    if (!read) throw notFoundIn(projectId, id)
    const { row } = read
    authorize(partiesOf(row))
    requireState(row, ['Approved', 'Scheduled'], 'scheduled')
    await requireCurrentApprovals(db, row, now)
    const before = row.state === 'Scheduled' && read.schedule ? { scheduledDate: read.schedule.scheduledAt.toISOString(), status: read.schedule.status } : {}
    const event: NewEvent = {
      type: 'change-request-scheduled',
      project: row.project,
      environment: row.environment,
      data: { changeRequestId: row.id, state: 'Scheduled', scheduledDate: at.toISOString() },
      preData: { changeRequestId: row.id, state: row.state, ...before },
    }
    const moved = sql`update ${changeRequests} set state = 'Scheduled', updated_at = ${now.toISOString()}::timestamptz
      where id = ${row.id} and ${rowText(changeRequests)} = ${read.snapshot}
      returning id`
    const upsert = sql`insert into ${changeRequestSchedules} (change_request_id, scheduled_at, status, reason, created_by, created_by_user_id, created_by_principal, after_event_id, created_at)
      select ${row.id}::integer, ${at.toISOString()}::timestamptz, 'pending', null, ${actor.createdBy}::text, ${actor.createdByUserId}::integer, ${caller.key}::text,
        (select coalesce(max(id), 0) from ${events}), ${now.toISOString()}::timestamptz
      where ${guardPassed}
      on conflict (change_request_id) do update set scheduled_at = excluded.scheduled_at, status = 'pending', reason = null, created_by = excluded.created_by,
        created_by_user_id = excluded.created_by_user_id, created_by_principal = excluded.created_by_principal, after_event_id = excluded.after_event_id, created_at = excluded.created_at`
    const [, written, ...view] = await batch(db, [
      (q) => q.select({ id: changeRequests.id }).from(changeRequests).where(eq(changeRequests.id, row.id)).for('update'),
      (q) => recordEvents(q, actor, now, [event], { alongside: [moved], guarded: true, unguarded: [upsert] }),
      ...viewReads(projectId, row.id),
    ])
    return written > 0 ? oneView(view, projectId, id) : undefined
  })
}

/** A pending schedule as the scheduled-application job reads it, with the first conflicting change since it was set. */
export interface PendingSchedule {
  id: number
  project: string
  environment: string
  title: string | null
  scheduledAt: Date
  scheduledBy: Actor
  principalKey: string
  due: boolean
  conflict: { type: string; feature: string; strategyId: string | null } | null
}

/*
 * What counts as a conflicting change (Unleash's rule), among the events recorded after the schedule was set (every
 * change writes its events with it): the flag of any change of the request was archived; a strategy the request
 * updates or deletes was updated or deleted (in its environment); the variants of a flag whose variants the request
 * sets were changed in its environment (by the environment's or the flag's variants route).
 */
const pendingSchedulesSql = (now: Date) => sql`
  select s.change_request_id as id, cr.project, cr.environment, cr.title, s.scheduled_at as "scheduledAt", s.created_by as "createdBy",
    s.created_by_user_id as "createdByUserId", s.created_by_principal as "principalKey", s.scheduled_at <= ${now.toISOString()}::timestamptz as due,
    c.type as "conflictType", c.feature as "conflictFeature", c.strategy as "conflictStrategy"
  from ${changeRequestSchedules} s
  join ${changeRequests} cr on cr.id = s.change_request_id and cr.state = 'Scheduled'
  left join lateral (
    select e.type, ch.feature, ch.payload->>'id' as strategy
    from ${changeRequestChanges} ch
    join ${events} e on e.feature_name = ch.feature and e.id > s.after_event_id
    where ch.change_request_id = s.change_request_id and (
      e.type = 'feature-archived'
      or (ch.action in ('updateStrategy', 'deleteStrategy') and e.type in ('feature-strategy-update', 'feature-strategy-remove') and e.environment = cr.environment
        and lower(coalesce(e.pre_data->>'id', e.data->>'id')) = lower(ch.payload->>'id'))
      or (ch.action = 'patchVariant' and e.type in ('feature-environment-variants-updated', 'feature-variants-updated') and e.environment = cr.environment)
    )
    order by e.id limit 1
  ) c on true
  where s.status = 'pending'
  order by s.scheduled_at, s.change_request_id`

/** Every pending schedule of a Scheduled change request, whether it is due at `now`, and its first conflict. One query. */
export async function pendingSchedules(db: Db, now: Date): Promise<PendingSchedule[]> {
  const rows = await queryRows<Record<string, unknown>>(db, pendingSchedulesSql(now))
  return rows.map((r) => ({
    id: Number(r.id),
    project: String(r.project),
    environment: String(r.environment),
    title: (r.title as string | null) ?? null,
    // Drivers hand timestamps and booleans of raw rows back parsed or as text.
    scheduledAt: new Date(r.scheduledAt as string | Date),
    scheduledBy: { createdBy: String(r.createdBy), createdByUserId: r.createdByUserId === null ? SYSTEM_USER_ID : Number(r.createdByUserId) },
    principalKey: String(r.principalKey),
    due: r.due === true || r.due === 't',
    conflict: r.conflictType ? { type: String(r.conflictType), feature: String(r.conflictFeature), strategyId: (r.conflictStrategy as string | null) ?? null } : null,
  }))
}

const scheduleEventBase = (s: PendingSchedule) => ({ project: s.project, environment: s.environment })
/** Where the schedule is still the pending one read: a write about it is made only then (the Node timer and the Workers cron may overlap). */
const stillPending = (s: PendingSchedule) => sql`change_request_id = ${s.id} and status = 'pending' and scheduled_at = ${s.scheduledAt.toISOString()}::timestamptz`

/**
 * Suspends a pending schedule, with `change-request-schedule-suspended` (by the system; data: the reason and who
 * scheduled it). One statement, made only while the schedule is the pending one read. Answers whether it did.
 */
export async function suspendSchedule(db: Db, now: Date, s: PendingSchedule, reason: string): Promise<boolean> {
  const suspended = sql`update ${changeRequestSchedules} set status = 'suspended', reason = ${reason} where ${stillPending(s)} returning 1`
  const event: NewEvent = {
    ...scheduleEventBase(s),
    type: 'change-request-schedule-suspended',
    data: { changeRequestId: s.id, reason, scheduledDate: s.scheduledAt.toISOString(), scheduledBy: userRef(s.scheduledBy.createdBy, s.scheduledBy.createdByUserId) },
  }
  return (await recordEvents(db, SYSTEM_ACTOR, now, [event], { alongside: [suspended], guarded: true })) > 0
}

export type ScheduledOutcome = { outcome: 'applied'; changes: number } | { outcome: 'skipped' } | { outcome: 'failed'; reason: string }

/**
 * Applies a due schedule with its author's access (`caller`): in one transaction, under the request's lock, only
 * while it is still Scheduled with the pending schedule read; with `change-request-applied` and
 * `change-request-scheduled-application-success`, attributed to the schedule's author. When a change no longer
 * applies nothing is applied: the schedule is marked failed with the reason, and
 * `change-request-scheduled-application-failure` (attributed to the author, data: the reason) tells them; the request
 * stays Scheduled, to reschedule, apply, reject or cancel. Another runner's work in between is `skipped`.
 */
export async function applySchedule(db: Db, caller: Caller, s: PendingSchedule): Promise<ScheduledOutcome> {
  const { actor, now } = caller
  const scheduledDate = s.scheduledAt.toISOString()
  try {
    const changes = await db.transaction(async (tx) => {
      const [read] = await tx
        .select({ row: changeRequests, schedule: changeRequestSchedules })
        .from(changeRequests)
        .innerJoin(changeRequestSchedules, eq(changeRequestSchedules.changeRequestId, changeRequests.id))
        .where(eq(changeRequests.id, s.id))
        .for('update', { of: changeRequests })
      if (!read || read.row.state !== 'Scheduled' || read.schedule.status !== 'pending' || read.schedule.scheduledAt.getTime() !== s.scheduledAt.getTime()) return undefined
      const count = await applyChanges(tx, caller, read.row)
      await recordEvents(tx, actor, now, [
        stateEvent(read.row, 'Applied', 'change-request-applied', { changes: count }),
        { ...scheduleEventBase(s), type: 'change-request-scheduled-application-success', data: { changeRequestId: s.id, state: 'Applied', scheduledDate, changes: count }, preData: { changeRequestId: s.id, state: 'Scheduled' } },
      ])
      return count
    })
    return changes === undefined ? { outcome: 'skipped' } : { outcome: 'applied', changes }
  } catch (error) {
    if (!(error instanceof ApiError) || error.name !== 'ConflictError') throw error
    const reason = error.message
    const failed = sql`update ${changeRequestSchedules} set status = 'failed', reason = ${reason}
      where ${stillPending(s)} and exists (select from ${changeRequests} where id = ${s.id} and state = 'Scheduled') returning 1`
    const event: NewEvent = { ...scheduleEventBase(s), type: 'change-request-scheduled-application-failure', data: { changeRequestId: s.id, scheduledDate, failureReason: reason, reason } }
    const written = await recordEvents(db, actor, now, [event], { alongside: [failed], guarded: true })
    return written > 0 ? { outcome: 'failed', reason } : { outcome: 'skipped' }
  }
}

// ---- editing and discarding ------------------------------------------------------------------

/** A change of a change request of the project, with the request (as text, for the write's check), its change and approval counts. */
async function readChange(db: Db, projectId: string, id: string, changeId: string) {
  const numeric = requestId(projectId, id)
  const changeNumber = parseId(changeId) ?? 0
  const [read] = await db
    .select({
      cr: changeRequests,
      snapshot: rowText(changeRequests),
      change: changeRequestChanges,
      changes: changeCount(sql`${changeRequests.id}`).mapWith(Number),
      approvals: sql<number>`(select count(*)::int from ${changeRequestApprovals} a where a.change_request_id = ${changeRequests.id})`.mapWith(Number),
    })
    .from(changeRequests)
    .leftJoin(changeRequestChanges, and(eq(changeRequestChanges.changeRequestId, changeRequests.id), eq(changeRequestChanges.id, changeNumber)))
    .where(inProject(projectId, numeric))
  if (!read) throw notFoundIn(projectId, id)
  if (!read.change) throw notFound(`Could not find change ${changeId} in change request ${id} of project ${projectId}`)
  return { ...read, change: read.change }
}

/**
 * What editing or discarding a change does to the request's review: approvals given are withdrawn (they were for
 * what the request held), and an Approved request goes back to In review. The event's data and preData carry both.
 */
function reviewReset(cr: ChangeRequestRow, approvals: number) {
  const state: ChangeRequestState = cr.state === 'Approved' ? 'In review' : (cr.state as ChangeRequestState)
  const moved = state !== cr.state
  return {
    state,
    data: { ...(moved ? { state } : {}), ...(approvals > 0 ? { approvalsWithdrawn: approvals } : {}) },
    preData: moved ? { state: cr.state } : {},
    withdraw: sql`delete from ${changeRequestApprovals} where change_request_id = ${cr.id} and ${guardPassed}`,
  }
}

/**
 * PUT …/change-requests/{id}/changes/{changeId}: replaces the payload of one change (its flag and action stay: 400
 * otherwise) of a Draft, In review or Approved request, checked as adding it is. `authorize` is the route's check
 * (the author or an admin, with the action's permission). Emits `change-edited` (data and preData: the change after
 * and before). Reads, then one batch written only while the request is as read.
 */
export async function editChange(db: Db, caller: Caller, { projectId, id, changeId, change }: { projectId: string; id: string; changeId: string; change: ChangeInput }, authorize: AuthorizeMove): Promise<ChangeRequestView> {
  const { actor, now } = caller
  return untilUnchanged(`Change request ${id}`, async () => {
    const read = await readChange(db, projectId, id, changeId)
    const { cr } = read
    authorize(partiesOf(cr))
    requireState(cr, EDITABLE_STATES, 'edited')
    if (change.feature !== read.change.feature || change.action !== read.change.action) {
      throw validationError(`Change ${changeId} is ${read.change.action} on ${read.change.feature}: its flag and action cannot change (discard it and add another)`, [
        { path: 'body', message: `must be ${read.change.action} on ${read.change.feature}` },
      ])
    }
    checkChanges(await together(db, changeFactReads(cr.environment, [change])), projectId, cr.environment, [change])
    const payload = change.payload ?? {}
    const reset = reviewReset(cr, read.approvals)
    const event: NewEvent = {
      type: 'change-edited',
      project: cr.project,
      environment: cr.environment,
      featureName: read.change.feature,
      data: { changeRequestId: cr.id, change: { id: read.change.id, action: read.change.action, payload }, ...reset.data },
      preData: { changeRequestId: cr.id, change: { id: read.change.id, action: read.change.action, payload: read.change.payload }, ...reset.preData },
    }
    const requestWrite = sql`update ${changeRequests} set state = ${reset.state}::text, updated_at = ${now.toISOString()}::timestamptz
      where id = ${cr.id} and ${rowText(changeRequests)} = ${read.snapshot} returning id`
    const changeWrite = sql`update ${changeRequestChanges} set payload = ${JSON.stringify(payload)}::jsonb where id = ${read.change.id} and change_request_id = ${cr.id} and ${guardPassed} returning id`
    const [, written, ...view] = await batch(db, [
      (q) => q.select({ id: changeRequests.id }).from(changeRequests).where(eq(changeRequests.id, cr.id)).for('update'),
      (q) => recordEvents(q, actor, now, [event], { alongside: [requestWrite, changeWrite], guarded: true, unguarded: [reset.withdraw] }),
      ...viewReads(projectId, cr.id),
    ])
    return written > 0 ? oneView(view, projectId, id) : undefined
  })
}

/**
 * DELETE …/change-requests/{id}/changes/{changeId}: discards one change of a Draft, In review or Approved request
 * (not its only one: 409, discard or cancel the request instead). `authorize`: the author or an admin. Emits
 * `change-discarded` (preData: the change). Read, then one batch written only while the request is as read.
 */
export async function discardChange(db: Db, caller: Caller, { projectId, id, changeId }: { projectId: string; id: string; changeId: string }, authorize: AuthorizeMove): Promise<ChangeRequestView> {
  const { actor, now } = caller
  return untilUnchanged(`Change request ${id}`, async () => {
    const read = await readChange(db, projectId, id, changeId)
    const { cr } = read
    authorize(partiesOf(cr))
    requireState(cr, EDITABLE_STATES, 'changed')
    if (read.changes <= 1) throw conflict(`Change ${changeId} is the only change of change request ${cr.id}: ${cr.state === 'Draft' ? 'discard' : 'cancel'} the change request instead`)
    const reset = reviewReset(cr, read.approvals)
    const discarded = { id: read.change.id, action: read.change.action, payload: read.change.payload }
    const event: NewEvent = {
      type: 'change-discarded',
      project: cr.project,
      environment: cr.environment,
      featureName: read.change.feature,
      data: { changeRequestId: cr.id, changeId: read.change.id, ...reset.data },
      preData: { changeRequestId: cr.id, change: discarded, ...reset.preData },
    }
    const requestWrite = sql`update ${changeRequests} set state = ${reset.state}::text, updated_at = ${now.toISOString()}::timestamptz
      where id = ${cr.id} and ${rowText(changeRequests)} = ${read.snapshot} and ${changeCount(cr.id)} = ${read.changes} returning id`
    const changeWrite = sql`delete from ${changeRequestChanges} where id = ${read.change.id} and change_request_id = ${cr.id} and ${guardPassed} returning id`
    const [, written, ...view] = await batch(db, [
      (q) => q.select({ id: changeRequests.id }).from(changeRequests).where(eq(changeRequests.id, cr.id)).for('update'),
      (q) => recordEvents(q, actor, now, [event], { alongside: [requestWrite, changeWrite], guarded: true, unguarded: [reset.withdraw] }),
      ...viewReads(projectId, cr.id),
    ])
    return written > 0 ? oneView(view, projectId, id) : undefined
  })
}

/**
 * DELETE …/change-requests/{id}: discards a Draft with its changes (409 for any other state: cancel it instead).
 * `authorize`: the author or an admin. Emits `change-request-discarded` (preData: the request as it was). Read, then
 * one statement that deletes it only while it is as read.
 */
export async function discardChangeRequest(db: Db, caller: Caller, { projectId, id }: { projectId: string; id: string }, authorize: AuthorizeMove): Promise<void> {
  const { actor, now } = caller
  const numeric = requestId(projectId, id)
  await untilUnchanged(`Change request ${id}`, async () => {
    const [[read], ...rest] = await together(db, [
      (q) => q.select({ row: changeRequests, snapshot: rowText(changeRequests), changes: changeCount(sql`${changeRequests.id}`).mapWith(Number) }).from(changeRequests).where(inProject(projectId, numeric)),
      ...viewReads(projectId, numeric),
    ])
    if (!read) throw notFoundIn(projectId, id)
    authorize(partiesOf(read.row))
    requireState(read.row, ['Draft'], 'discarded')
    const view = oneView(rest, projectId, id)
    const event: NewEvent = { type: 'change-request-discarded', project: read.row.project, environment: read.row.environment, data: null, preData: { changeRequestId: read.row.id, ...view } }
    const deleted = sql`delete from ${changeRequests} where id = ${read.row.id} and ${rowText(changeRequests)} = ${read.snapshot} and ${changeCount(read.row.id)} = ${read.changes} returning id`
    return (await recordEvents(db, actor, now, [event], { alongside: [deleted], guarded: true })) > 0 ? true : undefined
  })
}
