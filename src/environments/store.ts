import { and, asc, count, eq, inArray, sql } from 'drizzle-orm'
import { apiTokens, environments, featureEnvironments, features, projectEnvironments, projects } from '../../schema/index.js'
import { queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed, recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import type { NewEvent } from '../events/types.js'
import { tokenDeletedEvent } from '../api-tokens/store.js'
import type { CreateEnvironment, Environment, EnvironmentProject, UpdateEnvironment } from './schemas.js'

export async function listEnvironments(db: Db, name?: string): Promise<Environment[]> {
  const projectCounts = db
    .select({ environment: projectEnvironments.environment, n: count().as('project_count') })
    .from(projectEnvironments)
    .groupBy(projectEnvironments.environment)
    .as('project_counts')
  const tokenCounts = db
    .select({ environment: apiTokens.environment, n: count().as('token_count') })
    .from(apiTokens)
    .groupBy(apiTokens.environment)
    .as('token_counts')
  const rows = await db
    .select({
      name: environments.name,
      type: environments.type,
      enabled: environments.enabled,
      protected: environments.protected,
      sortOrder: environments.sortOrder,
      projectCount: sql<number>`coalesce(${projectCounts.n}, 0)`.mapWith(Number),
      apiTokenCount: sql<number>`coalesce(${tokenCounts.n}, 0)`.mapWith(Number),
    })
    .from(environments)
    .leftJoin(projectCounts, eq(projectCounts.environment, environments.name))
    .leftJoin(tokenCounts, eq(tokenCounts.environment, environments.name))
    .where(name === undefined ? undefined : eq(environments.name, name))
    .orderBy(asc(environments.sortOrder), asc(environments.name))
  return rows
}

/** The names among `names` that are not environments. */
export async function unknownEnvironments(db: Db, names: string[]): Promise<string[]> {
  if (names.length === 0) return []
  const found = await db.select({ name: environments.name }).from(environments).where(inArray(environments.name, names))
  const known = new Set(found.map((f) => f.name))
  return names.filter((n) => !known.has(n))
}

/**
 * POST /api/admin/environments: the environment and its event in one statement (one round trip); the event is
 * written only if the name was free.
 */
export async function createEnvironment(db: Db, caller: Author, input: CreateEnvironment): Promise<Environment> {
  const { actor, now } = caller
  const values = { name: input.name, type: input.type, enabled: input.enabled ?? true, sortOrder: input.sortOrder ?? 0 }
  const insert = db.insert(environments).values({ ...values, createdAt: now }).onConflictDoNothing().returning({ name: environments.name })
  // A new environment is not protected (the column's default: no route sets it) and no project or token uses it yet.
  const environment = { name: values.name, type: values.type, enabled: values.enabled, protected: false, sortOrder: values.sortOrder, projectCount: 0, apiTokenCount: 0 }
  const written = await recordEvents(db, actor, now, [{ type: 'environment-created', environment: input.name, data: environment }], { alongside: [insert], guarded: true })
  if (written === 0) throw nameExists(`An environment named ${input.name} already exists`)
  return environment
}

/** GET /api/admin/environments/{name}: 404 for an unknown name. */
export async function getEnvironment(db: Db, name: string): Promise<Environment> {
  const [environment] = await listEnvironments(db, name)
  if (!environment) throw notFound(`Could not find environment ${name}`)
  return environment
}

/**
 * GET /api/admin/environments/project/{projectId}: every environment, `visible` where the project has it, with the
 * project's tokens and enabled flags in it and its default strategy there (as Unleash). 404 for an unknown project.
 */
export async function projectEnvironmentsOf(db: Db, projectId: string): Promise<EnvironmentProject[]> {
  const rows = await queryRows<EnvironmentProject & { live: boolean; defaultStrategy: Record<string, unknown> | null }>(
    db,
    sql`select e.name, e.type, e.enabled, e.protected, e.sort_order as "sortOrder",
        (select count(*) from ${apiTokens} t where t.environment = e.name and t.type in ('client', 'backend', 'frontend') and (${projectId} = any(t.projects) or '*' = any(t.projects)))::int as "projectApiTokenCount",
        (select count(*) from ${featureEnvironments} fe join ${features} f on f.name = fe.feature_name where fe.environment = e.name and fe.enabled and f.project = ${projectId} and f.archived_at is null)::int as "projectEnabledToggleCount",
        pe.default_strategy as "defaultStrategy", pe.project_id is not null as visible,
        exists (select from ${projects} where id = ${projectId} and archived_at is null) as live
      from ${environments} e left join ${projectEnvironments} pe on pe.environment_name = e.name and pe.project_id = ${projectId}
      order by e.sort_order, e.name`,
  )
  if (!rows[0]?.live) throw notFound(`Could not find project ${projectId}`)
  return rows.map(({ live: _, defaultStrategy, ...row }) => ({ ...row, ...(defaultStrategy ? { defaultStrategy } : {}) }))
}

type EnvironmentRow = typeof environments.$inferSelect


/**
 * A change of one environment's own fields (PUT, on, off): a read, then the change and its `environment-updated`
 * in one statement made only while the row is still as read. Answers the environment after the change.
 */
async function changeEnvironment(db: Db, caller: Author, name: string, decide: (row: EnvironmentRow) => Partial<Pick<EnvironmentRow, 'type' | 'sortOrder' | 'enabled'>>): Promise<Environment> {
  const { actor, now } = caller
  return untilUnchanged(`Environment ${name}`, async () => {
    const [found] = await listEnvironmentsWithSnapshot(db, [name])
    if (!found) throw notFound(`Could not find environment ${name}`)
    const { snapshot, view } = found
    const before = { ...view, createdAt: new Date(0) }
    const set = decide(before)
    const after = { ...view, ...set }
    if (after.type === view.type && after.sortOrder === view.sortOrder && after.enabled === view.enabled) return view
    const update = db.update(environments).set(set).where(and(eq(environments.name, name), sql`${rowText(environments)} = ${snapshot}`)).returning({ name: environments.name })
    // Its events carry the environment as its routes answer it, counts included, as environment-created does.
    const event: NewEvent = { type: 'environment-updated', environment: name, data: after, preData: view }
    return (await recordEvents(db, actor, now, [event], { alongside: [update], guarded: true })) > 0 ? after : undefined
  })
}

/** The environments named, with their counts and their rows' text (for a write made only while they are as read). */
async function listEnvironmentsWithSnapshot(db: Db, names: string[]): Promise<{ view: Environment; snapshot: string }[]> {
  const rows = await queryRows<Environment & { snapshot: string }>(
    db,
    sql`select name, type, enabled, protected, sort_order as "sortOrder",
        (select count(*) from ${projectEnvironments} pe where pe.environment_name = ${environments}.name)::int as "projectCount",
        (select count(*) from ${apiTokens} t where t.environment = ${environments}.name)::int as "apiTokenCount",
        ${rowText(environments)} as snapshot
      from ${environments} where name = any(${sql.param(names)}::text[]) order by name`,
  )
  return rows.map(({ snapshot, ...view }) => ({ view, snapshot }))
}

/** PUT /api/admin/environments/{name}: its type and sort order (fields left out keep their value); a protected one is refused. */
export function updateEnvironment(db: Db, caller: Author, name: string, input: UpdateEnvironment): Promise<Environment> {
  return changeEnvironment(db, caller, name, (row) => {
    if (row.protected) throw validationError(`Environment ${name} is protected: it cannot be changed`)
    return { type: input.type ?? row.type, sortOrder: input.sortOrder ?? row.sortOrder }
  })
}

/** POST /api/admin/environments/{name}/on and /off: switching to the state it is in changes nothing and records nothing. */
export function setEnvironmentEnabled(db: Db, caller: Author, name: string, enabled: boolean): Promise<Environment> {
  return changeEnvironment(db, caller, name, () => ({ enabled }))
}

/**
 * PUT /api/admin/environments/sort-order: the sort orders of the environments named (404 naming any unknown), one
 * `environment-updated` per environment whose order changes, all in one statement made only while every one of them
 * is still as read.
 */
export async function setSortOrder(db: Db, caller: Author, orders: Record<string, number>) {
  const { actor, now } = caller
  const names = Object.keys(orders)
  if (names.length === 0) return
  await untilUnchanged('The environments', async () => {
    const found = await listEnvironmentsWithSnapshot(db, names)
    const unknown = names.filter((name) => !found.some((f) => f.view.name === name))
    if (unknown.length > 0) throw notFound(`Could not find environment(s) ${unknown.join(', ')}`)
    const changed = found.filter((f) => f.view.sortOrder !== orders[f.view.name])
    if (changed.length === 0) return true
    const rows = JSON.stringify(changed.map((f) => ({ name: f.view.name, sortOrder: orders[f.view.name], snapshot: f.snapshot })))
    const update = sql`update ${environments} set sort_order = v."sortOrder" from jsonb_to_recordset(${rows}::jsonb) as v (name text, "sortOrder" integer, snapshot text)
      where ${environments}.name = v.name
        and (select count(*) from ${environments} e join jsonb_to_recordset(${rows}::jsonb) as s (name text, snapshot text) on s.name = e.name and e::text = s.snapshot) = ${changed.length}
      returning ${environments}.name`
    const events: NewEvent[] = changed.map((f) => ({ type: 'environment-updated', environment: f.view.name, data: { ...f.view, sortOrder: orders[f.view.name]! }, preData: f.view }))
    return (await recordEvents(db, actor, now, events, { alongside: [update], guarded: true })) > 0 || undefined
  })
}

/**
 * The environment deleted with everything in it, made only while it, its tokens and the projects having it are as
 * read: the flags' configuration in it (switches, variants, strategies) and the projects' settings of it go with it
 * (foreign keys), every flag that had it moves its version on (cached flag states are read again), and its API
 * tokens are deleted with their events.
 */
const deleteEnvironmentStatement = eventsStatement('flagpost_delete_environment', {
  alongside: [
    sql`delete from ${environments} where name = ${sql.placeholder('name')} and ${rowText(environments)} = ${sql.placeholder('snapshot')}
      and (select coalesce(array_agg(t.id order by t.id), '{}') from ${apiTokens} t where t.environment = ${sql.placeholder('name')}) = ${sql.placeholder('tokenIds')}::int[]
      and (select coalesce(array_agg(pe.project_id || ':' || pe.change_requests_enabled order by pe.project_id), '{}') from ${projectEnvironments} pe where pe.environment_name = ${sql.placeholder('name')}) = ${sql.placeholder('projects')}::text[]
      and not exists (select from ${projectEnvironments} pe where pe.environment_name = ${sql.placeholder('name')}
        and not exists (select from ${projectEnvironments} other where other.project_id = pe.project_id and other.environment_name <> pe.environment_name))
      returning name`,
  ],
  guarded: true,
  unguarded: [
    sql`delete from ${apiTokens} where environment = ${sql.placeholder('name')} and ${guardPassed}`,
    sql`update ${features} set version = ${features.version} + 1 where name in (
      select f.name from ${features} f where f.name in (select fe.feature_name from ${featureEnvironments} fe where fe.environment = ${sql.placeholder('name')}) and ${guardPassed}
      order by f.name for update)`,
  ],
})

/**
 * DELETE /api/admin/environments/{name}: refused (400) for a protected environment and for the only environment of
 * a project (a project always has one). `check` sees the projects where it requires change requests.
 */
export async function deleteEnvironment(db: Db, caller: Author, name: string, check: (protectedIn: { project: string; environment: string }[]) => void) {
  const { actor, now } = caller
  await untilUnchanged(`Environment ${name}`, async () => {
    const [[found], tokens, projectRows] = await together(db, [
      (q) => listEnvironmentsWithSnapshot(q, [name]),
      (q) => q.select().from(apiTokens).where(eq(apiTokens.environment, name)).orderBy(asc(apiTokens.id)),
      (q) => queryRows<{ project: string; changeRequestsEnabled: boolean; only: boolean }>(
        q,
        sql`select pe.project_id as project, pe.change_requests_enabled as "changeRequestsEnabled",
            not exists (select from ${projectEnvironments} other where other.project_id = pe.project_id and other.environment_name <> pe.environment_name) as only
          from ${projectEnvironments} pe where pe.environment_name = ${name} order by pe.project_id`,
      ),
    ])
    if (!found) throw notFound(`Could not find environment ${name}`)
    if (found.view.protected) throw validationError(`Environment ${name} is protected: it cannot be deleted`)
    const alone = projectRows.filter((r) => r.only).map((r) => r.project)
    if (alone.length > 0) throw validationError(`Environment ${name} is the only environment of project(s) ${alone.join(', ')}: add another to them first`)
    check(projectRows.filter((r) => r.changeRequestsEnabled).map((r) => ({ project: r.project, environment: name })))
    const events: NewEvent[] = [...tokens.map(tokenDeletedEvent), { type: 'environment-deleted', environment: name, data: null, preData: found.view }]
    const { written } = await deleteEnvironmentStatement(db, actor, now, events, {
      name,
      snapshot: found.snapshot,
      tokenIds: tokens.map((t) => t.id),
      projects: projectRows.map((r) => `${r.project}:${r.changeRequestsEnabled}`),
    })
    return written > 0 || undefined
  })
}
