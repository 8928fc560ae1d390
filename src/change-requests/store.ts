import { and, asc, desc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm'
import {
  changeRequestApprovals,
  changeRequestChanges,
  changeRequests,
  environments,
  featureDependencies,
  featureEnvironments,
  features,
  featureStrategies,
  featureStrategySegments,
  projectEnvironments,
  projects,
  segments,
} from '../../schema/index.js'
import type { Db } from '../db.js'
import { ApiError, conflict, fromDatabaseError, notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import { SYSTEM_USER_ID, type Author, type Caller } from '../core/principal.js'
import { MAX_APPROVALS, MIN_APPROVALS } from '../projects/schemas.js'
import { normalizeVariants } from '../variants/weights.js'
import { applyChange, type StoredChange } from './apply.js'
import {
  MAX_CHANGES_PER_REQUEST,
  OPEN_STATES,
  type ChangeInput,
  type ChangeRequestConfigEntry,
  type ChangeRequestState,
  type ChangeRequestView,
} from './schemas.js'

type ChangeRequestRow = typeof changeRequests.$inferSelect
type ChangeRow = typeof changeRequestChanges.$inferSelect


const clampApprovals = (n: number) => Math.min(MAX_APPROVALS, Math.max(MIN_APPROVALS, n))

// ---- configuration ---------------------------------------------------------------------------

/** The environments of the project (all, or the one given) where direct changes need SKIP_CHANGE_REQUEST. */
export async function environmentsRequiringChangeRequests(db: Db, projectId: string, environment?: string): Promise<string[]> {
  const filter = [eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.changeRequestsEnabled, true)]
  if (environment !== undefined) filter.push(eq(projectEnvironments.environment, environment))
  const rows = await db.select({ environment: projectEnvironments.environment }).from(projectEnvironments).where(and(...filter))
  return rows.map((r) => r.environment)
}

/**
 * Every project environment requiring change requests where a strategy uses the segment (disabled
 * strategies and archived flags included: either can come back without touching the segment), in one query.
 */
export async function protectedEnvironmentsUsingSegment(db: Db, segmentId: number): Promise<{ project: string; environment: string }[]> {
  return db
    .selectDistinct({ project: projectEnvironments.projectId, environment: projectEnvironments.environment })
    .from(featureStrategySegments)
    .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegments.strategyId))
    .innerJoin(features, eq(features.name, featureStrategies.featureName))
    .innerJoin(
      projectEnvironments,
      and(eq(projectEnvironments.projectId, features.project), eq(projectEnvironments.environment, featureStrategies.environment), eq(projectEnvironments.changeRequestsEnabled, true)),
    )
    .where(eq(featureStrategySegments.segmentId, segmentId))
    .orderBy(asc(projectEnvironments.projectId), asc(projectEnvironments.environment))
}

export async function getChangeRequestConfig(db: Db, projectId: string) {
  await requireProject(db, projectId)
  const rows = await db
    .select({ environment: projectEnvironments.environment, type: environments.type, changeRequestsEnabled: projectEnvironments.changeRequestsEnabled, requiredApprovals: projectEnvironments.requiredApprovals })
    .from(projectEnvironments)
    .innerJoin(environments, eq(environments.name, projectEnvironments.environment))
    .where(eq(projectEnvironments.projectId, projectId))
    .orderBy(asc(environments.sortOrder), asc(environments.name))
  return rows
}

async function requireProject(db: Db, projectId: string) {
  const [row] = await db.select({ id: projects.id }).from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt)))
  if (!row) throw notFound(`Could not find project ${projectId}`)
}

/**
 * Turns change requests on or off per environment of the project. Emits `change-request-configuration-updated`
 * per environment that changed. `authorizeWeakening` is asked, under the lock, for each protected environment
 * whose protection the entry would lift or lower.
 */
export async function setChangeRequestConfig(db: Db, caller: Author, projectId: string, entries: ChangeRequestConfigEntry[], authorizeWeakening: (environment: string) => void) {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    await requireProject(tx, projectId)
    const names = [...new Set(entries.map((e) => e.environment))]
    const rows = await tx
      .select()
      .from(projectEnvironments)
      .where(and(eq(projectEnvironments.projectId, projectId), inArray(projectEnvironments.environment, names)))
      .for('update')
    const list: NewEvent[] = []
    for (const entry of entries) {
      const before = rows.find((r) => r.environment === entry.environment)
      if (!before) throw notFound(`Environment ${entry.environment} is not enabled in project ${projectId}`)
      const after = { changeRequestsEnabled: entry.changeRequestsEnabled, requiredApprovals: clampApprovals(entry.requiredApprovals ?? before.requiredApprovals) }
      const previous = { changeRequestsEnabled: before.changeRequestsEnabled, requiredApprovals: before.requiredApprovals }
      if (after.changeRequestsEnabled === previous.changeRequestsEnabled && after.requiredApprovals === previous.requiredApprovals) continue
      if (previous.changeRequestsEnabled && (!after.changeRequestsEnabled || after.requiredApprovals < previous.requiredApprovals)) authorizeWeakening(entry.environment)
      await tx.update(projectEnvironments).set(after).where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environment, entry.environment)))
      Object.assign(before, after)
      list.push({ type: 'change-request-configuration-updated', project: projectId, environment: entry.environment, data: after, preData: previous })
    }
    await recordEvents(tx, actor, now, list)
  })
  return getChangeRequestConfig(db, projectId)
}

// ---- reading ---------------------------------------------------------------------------------

const userRef = (name: string, userId: number | null) => ({ id: userId ?? SYSTEM_USER_ID, username: name })

/** Change requests with their changes and approvals, in three queries however many there are. */
async function views(db: Db, where: SQL): Promise<ChangeRequestView[]> {
  const rows = await db
    .select({ cr: changeRequests, requiredApprovals: projectEnvironments.requiredApprovals })
    .from(changeRequests)
    .leftJoin(projectEnvironments, and(eq(projectEnvironments.projectId, changeRequests.project), eq(projectEnvironments.environment, changeRequests.environment)))
    .where(where)
    .orderBy(desc(changeRequests.id))
  if (rows.length === 0) return []
  const ids = rows.map((r) => r.cr.id)
  const [changeRows, approvalRows] = await Promise.all([
    db.select().from(changeRequestChanges).where(inArray(changeRequestChanges.changeRequestId, ids)).orderBy(asc(changeRequestChanges.id)),
    db.select().from(changeRequestApprovals).where(inArray(changeRequestApprovals.changeRequestId, ids)).orderBy(asc(changeRequestApprovals.createdAt)),
  ])
  return rows.map(({ cr, requiredApprovals }) => {
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
    }
  })
}

/** Change request ids are whole numbers; anything else is simply not found. */
function parseId(id: string): number | undefined {
  return /^[1-9]\d{0,9}$/.test(id) && Number(id) <= 2147483647 ? Number(id) : undefined
}

export async function getChangeRequest(db: Db, projectId: string, id: string): Promise<ChangeRequestView> {
  const numeric = parseId(id)
  const [view] = numeric === undefined ? [] : await views(db, and(eq(changeRequests.project, projectId), eq(changeRequests.id, numeric))!)
  if (!view) throw notFound(`Could not find change request ${id} in project ${projectId}`)
  return view
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

// ---- adding changes --------------------------------------------------------------------------

/**
 * Checks what the direct routes would check before any write: the flag is live in the project and
 * has the environment, named strategies and dependencies exist, segments exist, variant weights add
 * up. What can still change before the request is applied is checked again then.
 */
async function checkChanges(tx: Db, projectId: string, environment: string, changes: ChangeInput[]) {
  const names = [...new Set(changes.flatMap((c) => (c.action === 'addDependency' ? [c.feature, c.payload.feature] : [c.feature])))]
  const segmentIds = [...new Set(changes.flatMap((c) => (c.action === 'addStrategy' || c.action === 'updateStrategy' ? (c.payload.segments ?? []) : [])))]
  const [flagRows, envRows, strategyRows, dependencyRows, segmentRows] = await Promise.all([
    tx.select({ name: features.name, project: features.project, archivedAt: features.archivedAt }).from(features).where(inArray(features.name, names)),
    tx.select({ featureName: featureEnvironments.featureName }).from(featureEnvironments).where(and(inArray(featureEnvironments.featureName, names), eq(featureEnvironments.environment, environment))),
    tx.select({ id: featureStrategies.id, featureName: featureStrategies.featureName }).from(featureStrategies).where(and(inArray(featureStrategies.featureName, names), eq(featureStrategies.environment, environment))),
    tx.select({ child: featureDependencies.child, parent: featureDependencies.parent }).from(featureDependencies).where(inArray(featureDependencies.child, names)),
    segmentIds.length > 0 ? tx.select({ id: segments.id }).from(segments).where(inArray(segments.id, segmentIds)) : Promise.resolve([]),
  ])
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
        if (change.action === 'updateStrategy' && !strategyRows.some((s) => s.id === change.payload.id.toLowerCase() && s.featureName === change.feature)) {
          throw notFound(`Could not find strategy ${change.payload.id} of ${change.feature} in ${environment}`)
        }
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
 * is none. Emits `change-request-created` for a new one and `change-added` per change.
 */
export async function addChanges(db: Db, caller: Caller, { projectId, environment, changes }: { projectId: string; environment: string; changes: ChangeInput[] }): Promise<ChangeRequestView> {
  const { now } = caller
  const id = await db.transaction(async (tx) => {
    // Locking the project environment serializes a caller's concurrent requests onto one draft.
    const [pe] = await tx
      .select({ enabled: projectEnvironments.changeRequestsEnabled })
      .from(projectEnvironments)
      .innerJoin(projects, eq(projects.id, projectEnvironments.projectId))
      .where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environment, environment), isNull(projects.archivedAt)))
      .for('update', { of: projectEnvironments })
    if (!pe) throw notFound(`Could not find environment ${environment} in project ${projectId}`)
    if (!pe.enabled) throw validationError(`Change requests are not enabled in environment ${environment} of project ${projectId}: change the flags directly`)
    await checkChanges(tx, projectId, environment, changes)

    const events: NewEvent[] = []
    let [draft] = await tx
      .select()
      .from(changeRequests)
      .where(and(eq(changeRequests.project, projectId), eq(changeRequests.environment, environment), eq(changeRequests.createdByPrincipal, caller.key), eq(changeRequests.state, 'Draft')))
      .orderBy(asc(changeRequests.id))
      .limit(1)
    if (draft) {
      const [{ n } = { n: 0 }] = await tx.select({ n: sql<number>`count(*)::int` }).from(changeRequestChanges).where(eq(changeRequestChanges.changeRequestId, draft.id))
      if (n + changes.length > MAX_CHANGES_PER_REQUEST) throw validationError(`A change request holds at most ${MAX_CHANGES_PER_REQUEST} changes: send change request ${draft.id} to review first`)
      await tx.update(changeRequests).set({ updatedAt: now }).where(eq(changeRequests.id, draft.id))
    } else {
      ;[draft] = await tx
        .insert(changeRequests)
        .values({ project: projectId, environment, state: 'Draft', createdBy: caller.actor.createdBy, createdByUserId: caller.actor.createdByUserId, createdByPrincipal: caller.key, createdAt: now, updatedAt: now })
        .returning()
      events.push({ type: 'change-request-created', project: projectId, environment, data: { changeRequestId: draft!.id, state: 'Draft' } })
    }
    const crId = draft!.id
    const inserted = await tx
      .insert(changeRequestChanges)
      .values(changes.map((c) => ({ changeRequestId: crId, feature: c.feature, action: c.action, payload: c.payload ?? {}, createdBy: caller.actor.createdBy, createdByUserId: caller.actor.createdByUserId, createdAt: now })))
      .returning()
    for (const change of inserted) {
      events.push({ type: 'change-added', project: projectId, environment, featureName: change.feature, data: { changeRequestId: crId, change: { id: change.id, action: change.action, payload: change.payload } } })
    }
    await recordEvents(tx, caller.actor, now, events)
    return crId
  })
  return getChangeRequest(db, projectId, String(id))
}

// ---- review and apply ------------------------------------------------------------------------

/** Who wrote a change request, and for which environment: what deciding who may move it on needs (404 when it does not exist). */
export async function changeRequestParties(db: Db, projectId: string, id: string): Promise<{ id: number; project: string; environment: string; authorKey: string; author: string }> {
  const numeric = parseId(id)
  const [row] =
    numeric === undefined
      ? []
      : await db
          .select({ id: changeRequests.id, project: changeRequests.project, environment: changeRequests.environment, authorKey: changeRequests.createdByPrincipal, author: changeRequests.createdBy })
          .from(changeRequests)
          .where(and(eq(changeRequests.project, projectId), eq(changeRequests.id, numeric)))
  if (!row) throw notFound(`Could not find change request ${id} in project ${projectId}`)
  return row
}

async function lockChangeRequest(tx: Db, projectId: string, id: string): Promise<ChangeRequestRow> {
  const numeric = parseId(id)
  const [row] = numeric === undefined ? [] : await tx.select().from(changeRequests).where(and(eq(changeRequests.project, projectId), eq(changeRequests.id, numeric))).for('update')
  if (!row) throw notFound(`Could not find change request ${id} in project ${projectId}`)
  return row
}

function requireState(row: ChangeRequestRow, allowed: ChangeRequestState[], doing: string) {
  if (!allowed.includes(row.state as ChangeRequestState)) {
    throw conflict(`Change request ${row.id} is ${row.state}: it can only be ${doing} when it is ${allowed.join(' or ')}`)
  }
}

async function setState(tx: Db, caller: Caller, now: Date, row: ChangeRequestRow, state: ChangeRequestState, type: NewEvent['type'], extra: Record<string, unknown> = {}) {
  await tx.update(changeRequests).set({ state, updatedAt: now }).where(eq(changeRequests.id, row.id))
  await recordEvents(tx, caller.actor, now, [
    { type, project: row.project, environment: row.environment, data: { changeRequestId: row.id, state, ...extra }, preData: { changeRequestId: row.id, state: row.state } },
  ])
}

/**
 * Moves a change request on: `In review` (its author, from Draft), `Approved` (as approve),
 * `Applied` (from Approved), `Rejected` (a reviewer, from In review or Approved), `Cancelled`
 * (its author or an admin, while open).
 */
export async function changeState(db: Db, caller: Caller, { projectId, id, state, comment }: { projectId: string; id: string; state: Exclude<ChangeRequestState, 'Draft'>; comment?: string | undefined }) {
  const { now } = caller
  if (state === 'Approved') return approve(db, caller, { projectId, id })
  if (state === 'Applied') return apply(db, caller, { projectId, id })
  await db.transaction(async (tx) => {
    const row = await lockChangeRequest(tx, projectId, id)
    const withComment = comment ? { comment } : {}
    switch (state) {
      case 'In review':
        requireState(row, ['Draft'], 'sent to review')
        await setState(tx, caller, now, row, state, 'change-request-sent-to-review', withComment)
        break
      case 'Rejected':
        requireState(row, ['In review', 'Approved'], 'rejected')
        await setState(tx, caller, now, row, state, 'change-request-rejected', withComment)
        break
      case 'Cancelled':
        requireState(row, ['Draft', 'In review', 'Approved'], 'cancelled')
        await setState(tx, caller, now, row, state, 'change-request-cancelled', withComment)
        break
    }
  })
  return getChangeRequest(db, projectId, id)
}

/**
 * Adds the caller's approval. Never its author's, and once per approver. With the environment's
 * required approvals reached the request is Approved (`change-request-approved`); before that each
 * approval is `change-request-approval-added`.
 */
export async function approve(db: Db, caller: Caller, { projectId, id }: { projectId: string; id: string }) {
  const { now } = caller
  await db.transaction(async (tx) => {
    const row = await lockChangeRequest(tx, projectId, id)
    requireState(row, ['In review'], 'approved')
    const [added] = await tx
      .insert(changeRequestApprovals)
      .values({ changeRequestId: row.id, principal: caller.key, createdBy: caller.actor.createdBy, createdByUserId: caller.actor.createdByUserId, createdAt: now })
      .onConflictDoNothing()
      .returning()
    if (!added) throw conflict(`You have already approved change request ${row.id}`)
    const [[{ n } = { n: 0 }], [pe]] = await Promise.all([
      tx.select({ n: sql<number>`count(*)::int` }).from(changeRequestApprovals).where(eq(changeRequestApprovals.changeRequestId, row.id)),
      tx.select({ required: projectEnvironments.requiredApprovals }).from(projectEnvironments).where(and(eq(projectEnvironments.projectId, row.project), eq(projectEnvironments.environment, row.environment))),
    ])
    const required = pe?.required ?? 1
    if (n >= required) {
      await setState(tx, caller, now, row, 'Approved', 'change-request-approved', { approvals: n, minApprovals: required })
    } else {
      await tx.update(changeRequests).set({ updatedAt: now }).where(eq(changeRequests.id, row.id))
      await recordEvents(tx, caller.actor, now, [
        { type: 'change-request-approval-added', project: row.project, environment: row.environment, data: { changeRequestId: row.id, approvals: n, minApprovals: required } },
      ])
    }
  })
  return getChangeRequest(db, projectId, id)
}

/**
 * Applies every change in order in one transaction, each through the same write path as the direct
 * route (so each writes its usual events, attributed to the caller). A change that no longer
 * applies fails the whole request with 409 and nothing is written.
 */
export async function apply(db: Db, caller: Caller, { projectId, id }: { projectId: string; id: string }) {
  const { now } = caller
  await db.transaction(async (tx) => {
    const row = await lockChangeRequest(tx, projectId, id)
    requireState(row, ['Approved'], 'applied')
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
    await setState(tx, caller, now, row, 'Applied', 'change-request-applied', { changes: changes.length })
  })
  return getChangeRequest(db, projectId, id)
}
