import { and, asc, desc, eq, isNull, or, sql, type SQL } from 'drizzle-orm'
import { actionSetEvents, actionSets, featureTags, features, projectEnvironments, projects, signalEndpoints, tags, users } from '../../schema/index.js'
import { queryRows, together, type Db } from '../db.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import { derivedEventsStatement } from '../events/store.js'
import { describeEvent } from '../events/describe.js'
import type { EventType } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { Permission } from '../core/permissions.js'
import { MAX_ACTION_SETS_PER_PROJECT, parseTag, type ActionSet, type ActionSetEvent, type CreateActions } from './schemas.js'

/*
 * A project's action sets (Unleash's "actions", ADMIN's). Every write is one statement that decides alone (as banners'):
 * it checks in SQL what the action set names (the project live, the signal endpoint, the service account, each action's
 * environment in the project and its flag live in it, or its tag registered, the limit) and writes only if all of it holds, with its event built
 * from what the change returns; when it writes nothing, a read names what failed.
 */

const p = (name: string) => sql.placeholder(name)
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** An action set row (under `alias`) as JSON, as the API and its events show it. */
export const actionSetJson = (alias: string) =>
  sql.raw(`jsonb_build_object('id', ${alias}.id, 'project', ${alias}.project, 'name', ${alias}.name, 'description', ${alias}.description, 'enabled', ${alias}.enabled,
    'actorId', ${alias}.actor_id, 'match', jsonb_build_object('source', ${alias}.source, 'sourceId', ${alias}.source_id, 'payload', ${alias}.payload),
    'actions', ${alias}.actions, 'createdAt', ${iso(`${alias}.created_at`)}, 'createdByUserId', ${alias}.created_by_user_id)`)

/** The actions of the request (`actions`, JSON) as stored: each given an id, and when and by whom it was written. */
const storedActions = sql`(select coalesce(jsonb_agg(a.value || jsonb_build_object('id', nextval('action_ids'), 'createdAt', ${p('createdAtText')}::text, 'createdByUserId', ${p('createdByUserId')}::integer) order by a.ordinality), '[]')
  from jsonb_array_elements(${p('actions')}::jsonb) with ordinality a)`

/** SQL true while what the action set names holds (see the note at the top). */
const namesHold = sql`exists (select from ${projects} pr where pr.id = ${p('project')}::text and pr.archived_at is null)
  and exists (select from ${signalEndpoints} se where se.id = ${p('sourceId')}::integer)
  and exists (select from ${users} u where u.id = ${p('actorId')}::integer and u.is_service and u.deleted_at is null)
  and not exists (select from jsonb_array_elements(${p('actions')}::jsonb) a
    where not exists (select from ${projectEnvironments} pe where pe.project_id = ${p('project')}::text and pe.environment_name = a.value->'executionParams'->>'environment')
      or (a.value->'executionParams'->>'featureName' is not null
        and not exists (select from ${features} f where f.name = a.value->'executionParams'->>'featureName' and f.project = ${p('project')}::text and f.archived_at is null))
      or (a.value->'executionParams'->>'tag' is not null
        and not exists (select from ${tags} t where t.type = split_part(a.value->'executionParams'->>'tag', ':', 1)
          and t.value = substr(a.value->'executionParams'->>'tag', strpos(a.value->'executionParams'->>'tag', ':') + 1))))`

const eventOf = (type: EventType, data: SQL | null, preData: SQL | null, from: string) =>
  sql`(select coalesce(jsonb_agg(jsonb_build_object('type', ${type}::text, 'project', ${p('project')}::text, 'data', ${data ?? sql`null::jsonb`}, 'pre_data', ${preData ?? sql`null::jsonb`}, 'tags', '[]'::jsonb,
    'label', ${p('label')}::text, 'summary', ${p('summary')}::text)), '[]') from ${sql.raw(from)})`

const createStatement = derivedEventsStatement<ActionSet>('flagpost_create_action_set', {
  alongside: [
    sql`insert into ${actionSets} (project, name, description, enabled, actor_id, source, source_id, payload, actions, created_at, created_by_user_id)
      select ${p('project')}::text, ${p('name')}::text, ${p('description')}::text, ${p('enabled')}::boolean, ${p('actorId')}::integer, 'signal-endpoint', ${p('sourceId')}::integer,
        ${p('payload')}::jsonb, ${storedActions}, ${p('createdAt')}::timestamptz, ${p('createdByUserId')}::integer
      where ${namesHold} and (select count(*) from ${actionSets} x where x.project = ${p('project')}::text) < ${MAX_ACTION_SETS_PER_PROJECT}
      on conflict (project, name) do nothing
      returning ${actionSetJson('action_sets')} as action_set`,
  ],
  events: eventOf('actions-created', sql`w0.action_set`, null, 'w0'),
  returning: sql<ActionSet>`(select action_set from w0)`,
})

// The action set as it was (locked, so the event's preData is what the change replaced).
const locked = sql`select ${actionSetJson('a')} as action_set, a.id from ${actionSets} a where a.id = ${p('id')}::integer and a.project = ${p('project')}::text for update`

const updateStatement = derivedEventsStatement<ActionSet>('flagpost_update_action_set', {
  alongside: [
    locked,
    sql`update ${actionSets} a set name = ${p('name')}::text, description = ${p('description')}::text, enabled = coalesce(${p('enabled')}::boolean, a.enabled),
        actor_id = ${p('actorId')}::integer, source_id = ${p('sourceId')}::integer, payload = ${p('payload')}::jsonb, actions = ${storedActions}
      from w0 where a.id = w0.id and ${namesHold}
      returning ${actionSetJson('a')} as action_set`,
  ],
  events: eventOf('actions-updated', sql`w1.action_set`, sql`w0.action_set`, 'w1, w0'),
  returning: sql<ActionSet>`(select action_set from w1)`,
})

// Switching on or off: an update only where it changes something (no event otherwise), answering the action set either way.
const switchStatement = derivedEventsStatement<ActionSet>('flagpost_switch_action_set', {
  alongside: [
    locked,
    sql`update ${actionSets} a set enabled = ${p('enabled')}::boolean from w0 where a.id = w0.id and a.enabled <> ${p('enabled')}::boolean returning ${actionSetJson('a')} as action_set`,
  ],
  events: eventOf('actions-updated', sql`w1.action_set`, sql`w0.action_set`, 'w1, w0'),
  returning: sql<ActionSet>`coalesce((select action_set from w1), (select action_set from w0))`,
})

const deleteStatement = derivedEventsStatement<number>('flagpost_delete_action_set', {
  alongside: [sql`delete from ${actionSets} a where a.id = ${p('id')}::integer and a.project = ${p('project')}::text returning ${actionSetJson('a')} as action_set`],
  events: eventOf('actions-deleted', null, sql`w0.action_set`, 'w0'),
  returning: sql<number>`(select count(*)::int from w0)`,
})

// Drivers hand jsonb back parsed or as text.
const parsed = <T>(value: unknown): T | undefined => (value === null || value === undefined ? undefined : typeof value === 'string' ? (JSON.parse(value) as T) : (value as T))

const missingSet = (id: number) => notFound(`Could not find action set ${id}`)
const label = (caller: Author, type: EventType, project: string) => describeEvent(caller.actor, { type, project })

function values(caller: Author, project: string, input: CreateActions) {
  for (const action of input.actions) {
    if (action.executionParams.project !== undefined && action.executionParams.project !== project) {
      throw validationError(`An action runs in its action set's project: executionParams.project must be ${project} or left out`, [{ path: 'body.actions', message: `project must be ${project}` }])
    }
  }
  return {
    project,
    name: input.name,
    description: input.description ?? null,
    actorId: input.actorId,
    sourceId: input.match.sourceId,
    payload: JSON.stringify(input.match.payload),
    actions: JSON.stringify(input.actions.map((a) => ({ action: a.action, sortOrder: a.sortOrder, executionParams: { ...a.executionParams, project } }))),
    createdAtText: caller.now.toISOString(),
  }
}

/** When a write wrote nothing: the first thing it names that does not hold (404 for the project, 400 otherwise). */
async function whyRefused(db: Db, project: string, input: CreateActions, ownId?: number): Promise<Error> {
  const named = input.actions.flatMap((a) => (a.executionParams.tag ? [parseTag(a.executionParams.tag)!] : []))
  const [[live], [endpoint], [actor], environments, flags, sets, registered] = await together(db, [
    (q) => q.select({ id: projects.id }).from(projects).where(and(eq(projects.id, project), isNull(projects.archivedAt))),
    (q) => q.select({ id: signalEndpoints.id }).from(signalEndpoints).where(eq(signalEndpoints.id, input.match.sourceId)),
    (q) => q.select({ id: users.id }).from(users).where(and(eq(users.id, input.actorId), eq(users.isService, true), isNull(users.deletedAt))),
    (q) => q.select({ name: projectEnvironments.environment }).from(projectEnvironments).where(eq(projectEnvironments.projectId, project)),
    (q) => q.select({ name: features.name }).from(features).where(and(eq(features.project, project), isNull(features.archivedAt))),
    (q) => q.select({ id: actionSets.id, name: actionSets.name }).from(actionSets).where(eq(actionSets.project, project)),
    (q) => (named.length === 0 ? Promise.resolve([]) : q.select({ type: tags.type, value: tags.value }).from(tags).where(or(...named.map((t) => and(eq(tags.type, t.type), eq(tags.value, t.value)))))),
  ])
  if (!live) return notFound(`Could not find project ${project}`)
  if (ownId !== undefined && !sets.some((s) => s.id === ownId)) return missingSet(ownId)
  if (!endpoint) return validationError(`Unknown signal endpoint: ${input.match.sourceId}`, [{ path: 'body.match.sourceId', message: 'there is no such signal endpoint' }])
  if (!actor) return validationError(`The actions run as a service account: ${input.actorId} is none`, [{ path: 'body.actorId', message: 'must be a service account' }])
  for (const action of input.actions) {
    const { environment, featureName, tag } = action.executionParams
    if (!environments.some((e) => e.name === environment)) return validationError(`Project ${project} has no environment ${environment}`, [{ path: 'body.actions', message: `unknown environment ${environment}` }])
    if (featureName !== undefined && !flags.some((f) => f.name === featureName)) return validationError(`Project ${project} has no live flag ${featureName}`, [{ path: 'body.actions', message: `unknown flag ${featureName}` }])
    if (tag !== undefined && !registered.some((t) => `${t.type}:${t.value}` === tag)) return validationError(`There is no tag ${tag}`, [{ path: 'body.actions', message: `unknown tag ${tag}` }])
  }
  if (sets.some((s) => s.name === input.name && s.id !== ownId)) return nameExists(`Project ${project} already has an action set named ${input.name}`)
  if (ownId === undefined && sets.length >= MAX_ACTION_SETS_PER_PROJECT) return validationError(`A project has at most ${MAX_ACTION_SETS_PER_PROJECT} action sets`)
  return validationError('The action set changed meanwhile: try again')
}

/** Renaming onto a taken name fails on the unique name. */
async function namedUniquely<T>(project: string, name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code
    if (code === '23505') throw nameExists(`Project ${project} already has an action set named ${name}`)
    throw error
  }
}

export async function listActionSets(db: Db, project: string): Promise<ActionSet[]> {
  const rows = await db.select({ set: sql<unknown>`${actionSetJson('action_sets')}` }).from(actionSets).where(eq(actionSets.project, project)).orderBy(asc(actionSets.id))
  return rows.map((r) => parsed<ActionSet>(r.set)!)
}

/** POST /api/admin/projects/{projectId}/actions: one statement with `actions-created`. */
export async function createActionSet(db: Db, caller: Author, project: string, input: CreateActions): Promise<ActionSet> {
  const { returned } = await createStatement(db, caller.actor, caller.now, { ...values(caller, project, input), enabled: input.enabled ?? true, ...label(caller, 'actions-created', project) })
  const created = parsed<ActionSet>(returned)
  if (created) return created
  throw await whyRefused(db, project, input)
}

/** PUT /api/admin/projects/{projectId}/actions/{actionSetId}: replaces it (`enabled` kept when left out); one statement with `actions-updated`. */
export async function updateActionSet(db: Db, caller: Author, project: string, id: number, input: CreateActions): Promise<ActionSet> {
  const { returned } = await namedUniquely(project, input.name, () =>
    updateStatement(db, caller.actor, caller.now, { id, ...values(caller, project, input), enabled: input.enabled ?? null, ...label(caller, 'actions-updated', project) }),
  )
  const updated = parsed<ActionSet>(returned)
  if (updated) return updated
  throw await whyRefused(db, project, input, id)
}

/** POST …/actions/{actionSetId}/on and /off: `actions-updated` only when it changes. */
export async function switchActionSet(db: Db, caller: Author, project: string, id: number, enabled: boolean): Promise<ActionSet> {
  const { returned } = await switchStatement(db, caller.actor, caller.now, { id, project, enabled, ...label(caller, 'actions-updated', project) })
  const set = parsed<ActionSet>(returned)
  if (!set) throw missingSet(id)
  return set
}

/** DELETE …/actions/{actionSetId}: its run log goes with it; one statement with `actions-deleted`. */
export async function deleteActionSet(db: Db, caller: Author, project: string, id: number): Promise<void> {
  const { returned } = await deleteStatement(db, caller.actor, caller.now, { id, project, ...label(caller, 'actions-deleted', project) })
  if (!returned) throw missingSet(id)
}

/** GET …/actions/{actionSetId}/events: the action set's runs, newest first (one round trip). */
export async function listActionSetEvents(db: Db, project: string, id: number, page: { limit: number; offset: number }): Promise<ActionSetEvent[]> {
  const [set, runs] = await together(db, [
    (q) => q.select({ id: actionSets.id }).from(actionSets).where(and(eq(actionSets.id, id), eq(actionSets.project, project))),
    (q) => q.select().from(actionSetEvents).where(eq(actionSetEvents.actionSetId, id)).orderBy(desc(actionSetEvents.id)).limit(page.limit).offset(page.offset),
  ])
  if (set.length === 0) throw missingSet(id)
  return runs.map((run) => ({
    id: run.id,
    actionSetId: run.actionSetId,
    signalId: run.signalId,
    createdAt: run.createdAt.toISOString(),
    state: run.state as ActionSetEvent['state'],
    signal: parsed<ActionSetEvent['signal']>(run.signal)!,
    actionSet: parsed<ActionSetEvent['actionSet']>(run.actionSet)!,
  }))
}

/** GET …/actions/config: what each action does and takes, with the project's environments, live flags and the tags (`TYPE:VALUE`) to choose from. */
export async function actionDefinitions(db: Db, project: string) {
  const [[live], environments, flags, registered] = await together(db, [
    (q) => q.select({ id: projects.id }).from(projects).where(eq(projects.id, project)),
    (q) => q.select({ name: projectEnvironments.environment }).from(projectEnvironments).where(eq(projectEnvironments.projectId, project)).orderBy(asc(projectEnvironments.environment)),
    (q) => q.select({ name: features.name }).from(features).where(and(eq(features.project, project), isNull(features.archivedAt))).orderBy(asc(features.name)),
    (q) => q.select({ type: tags.type, value: tags.value }).from(tags).orderBy(asc(tags.type), asc(tags.value)),
  ])
  if (!live) throw notFound(`Could not find project ${project}`)
  const projectParameter = { name: 'project' as const, label: 'Project', type: 'hidden' as const }
  const environmentParameter = { name: 'environment' as const, label: 'Environment', type: 'select' as const, options: environments.map((e) => e.name) }
  const flagParameters = [projectParameter, environmentParameter, { name: 'featureName' as const, label: 'Flag name', type: 'select' as const, options: flags.map((f) => f.name) }]
  const tagParameters = [projectParameter, environmentParameter, { name: 'tag' as const, label: 'Tag', type: 'select' as const, options: registered.map((t) => `${t.type}:${t.value}`) }]
  const protection = '(where the project requires change requests there, only for a service account that may skip them)'
  const definition = (on: boolean) => ({
    label: on ? 'Enable flag' : 'Disable flag',
    description: `${on ? 'Enables' : 'Disables'} a feature flag in an environment ${protection}`,
    category: 'Feature flags',
    permissions: [Permission.UPDATE_FEATURE_ENVIRONMENT],
    parameters: flagParameters,
  })
  const byTag = (on: boolean) => ({
    label: on ? 'Enable flags by tag' : 'Disable flags by tag',
    description: `${on ? 'Enables' : 'Disables'} every live flag of the project carrying the tag in an environment ${protection}`,
    category: 'Feature flags',
    permissions: [Permission.UPDATE_FEATURE_ENVIRONMENT],
    parameters: tagParameters,
  })
  return { TOGGLE_FEATURE_ON: definition(true), TOGGLE_FEATURE_OFF: definition(false), TOGGLE_FEATURES_ON_BY_TAG: byTag(true), TOGGLE_FEATURES_OFF_BY_TAG: byTag(false) }
}

/** The live flags of the project carrying the tag (`TYPE:VALUE`), by name: what a by-tag action switches when it runs. 404 once the tag is gone. */
export async function flagsTagged(db: Db, project: string, tag: string): Promise<string[]> {
  const { type, value } = parseTag(tag) ?? { type: '', value: '' }
  const rows = await queryRows<{ name: string | null }>(
    db,
    sql`select f.name from ${tags} t
      left join ${featureTags} ft on ft.tag_type = t.type and ft.tag_value = t.value
      left join ${features} f on f.name = ft.feature_name and f.project = ${project} and f.archived_at is null
      where t.type = ${type} and t.value = ${value}
      order by f.name`,
  )
  if (rows.length === 0) throw notFound(`There is no tag ${tag} any more`)
  return rows.flatMap((r) => (r.name === null ? [] : [r.name]))
}
