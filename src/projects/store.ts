import { and, asc, eq, isNotNull, isNull, sql } from 'drizzle-orm'
import { environments, featureEnvironments, features, featureStrategies, keptChangeRequestSettings, projectEnvironments, projectMembers, projects, segments } from '../../schema/index.js'
import { batch, queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed, recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import type { NewEvent } from '../events/types.js'
import { MAX_APPROVALS, MIN_APPROVALS, type AddProjectEnvironment, type CreateProject, type ProjectCreated, type UpdateProject } from './schemas.js'
import { prepareDefaultStrategy } from '../strategies/store.js'
import { lockProjectFlags } from '../flags/lock.js'
import { accessAddedEvent, OWNER_ROLE_ID } from './access.js'
import { visibleProjectCondition } from './visibility.js'
import type { StrategyInput } from '../strategies/schemas.js'

const p = (name: string) => sql.placeholder(name)

const clampApprovals = (n: number | undefined) => Math.min(MAX_APPROVALS, Math.max(MIN_APPROVALS, n ?? 1))

/** A project id from its name: lower-case, URL-friendly, never empty. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_~.-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 90)
  // `.` and `..` are resolved away in URLs: no route could reach a project so named.
  return slug === '' || slug === '.' || slug === '..' ? 'project' : slug
}

/** `slug`, or `slug-N` with the next free N when it is taken. */
async function freeProjectId(tx: Db, slug: string): Promise<string> {
  const taken = await tx
    .select({ id: projects.id })
    .from(projects)
    .where(sql`${projects.id} = ${slug} or starts_with(${projects.id}, ${slug + '-'})`)
  if (!taken.some((t) => t.id === slug)) return slug
  const suffix = new RegExp(`^${slug.replace(/[.~]/g, '\\$&')}-(\\d+)$`)
  const used = taken.map((t) => Number(suffix.exec(t.id)?.[1] ?? 0))
  return `${slug}-${Math.max(0, ...used) + 1}`
}

/**
 * How many times a creation chooses a generated id. Each time but the last, another creation took the id first (its
 * read and write are two round trips apart), so N concurrent creations of one name need up to N.
 */
const ID_ATTEMPTS = 20

/**
 * POST /api/admin/projects: a read (the environments, and the ids taken when the id is made from the name), then
 * the project, its environments, its creator's Owner role and the events in one statement, made only if the id is
 * still free. A generated id taken meanwhile is chosen again from a fresh read.
 */
export async function createProject(db: Db, caller: Author, input: CreateProject): Promise<ProjectCreated> {
  const { actor, now } = caller
  const changeRequestEnvironments = dedupeBy(input.changeRequestEnvironments ?? [], (e) => e.name).map((e) => ({
    name: e.name,
    requiredApprovals: clampApprovals(e.requiredApprovals),
  }))
  const named = input.environments ? [...new Set(input.environments)] : undefined
  const values = {
    name: input.name,
    description: input.description ?? null,
    mode: input.mode ?? 'open',
    defaultStickiness: input.defaultStickiness ?? 'default',
    createdAt: now,
  }
  for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
    const [all, id] = await together(db, [
      (q) => q.select({ name: environments.name, enabled: environments.enabled }).from(environments).orderBy(asc(environments.sortOrder), asc(environments.name)),
      (q) => (input.id ? Promise.resolve(input.id) : freeProjectId(q, slugify(input.name))),
    ])
    const unknown = [...new Set([...(named ?? []), ...changeRequestEnvironments.map((e) => e.name)])].filter((name) => !all.some((e) => e.name === name))
    if (unknown.length > 0) throw validationError(`Unknown environment(s): ${unknown.join(', ')}`, unknown.map((name) => ({ path: 'body.environments', message: `environment ${name} does not exist` })))
    const enabled = named ?? all.filter((e) => e.enabled).map((e) => e.name)
    const projectEnvs = [...new Set([...enabled, ...changeRequestEnvironments.map((e) => e.name)])]
    if (projectEnvs.length === 0) throw validationError('There is no environment to enable: create an environment first or name one in `environments`')

    const created: ProjectCreated = {
      id,
      name: values.name,
      description: values.description,
      featureLimit: null,
      mode: values.mode,
      defaultStickiness: values.defaultStickiness,
      environments: projectEnvs,
      changeRequestEnvironments,
    }
    const rows = projectEnvs.map((environment) => {
      const cr = changeRequestEnvironments.find((e) => e.name === environment)
      return { environment, changeRequestsEnabled: cr !== undefined, requiredApprovals: cr?.requiredApprovals ?? 1 }
    })
    const alongside = [
      db.insert(projects).values({ id, ...values }).onConflictDoNothing().returning({ id: projects.id }),
      sql`insert into ${projectEnvironments} (project_id, environment_name, change_requests_enabled, required_approvals)
        select w0.id, e."environment", e."changeRequestsEnabled", e."requiredApprovals" from w0, jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as e ("environment" text, "changeRequestsEnabled" boolean, "requiredApprovals" integer)
        returning project_id`,
    ]
    const events: NewEvent[] = [{ type: 'project-created', project: id, data: created }]
    // A user who creates a project owns it (an API token is nobody to own it).
    if (actor.createdByUserId > 0) {
      alongside.push(sql`insert into ${projectMembers} (project_id, user_id, role_id, created_at) select w0.id, ${actor.createdByUserId}::int, ${OWNER_ROLE_ID}::int, ${now.toISOString()}::timestamptz from w0 returning project_id`)
      events.push(accessAddedEvent(id, [OWNER_ROLE_ID], [actor.createdByUserId]))
    }
    if ((await recordEvents(db, actor, now, events, { alongside, guarded: true })) > 0) return created
    if (input.id) throw nameExists(`A project with id ${input.id} already exists`)
  }
  throw nameExists(`Could not find a free project id for ${input.name}: give one explicitly`)
}

/** Live projects (or, with `archived`, archived ones), but for the private ones the caller may not read (`hidden`, see visibility.ts). */
export async function listProjects(db: Db, hidden: readonly string[], archived = false) {
  const rows = await db
    .select({
      id: projects.id,
      name: projects.name,
      description: projects.description,
      mode: projects.mode,
      defaultStickiness: projects.defaultStickiness,
      featureLimit: projects.featureLimit,
      createdAt: projects.createdAt,
      updatedAt: projects.updatedAt,
      archivedAt: projects.archivedAt,
      environments: sql<string[]>`coalesce(array_agg(${projectEnvironments.environment} order by ${environments.sortOrder}, ${environments.name}) filter (where ${projectEnvironments.environment} is not null), '{}')`,
    })
    .from(projects)
    .leftJoin(projectEnvironments, eq(projectEnvironments.projectId, projects.id))
    .leftJoin(environments, eq(environments.name, projectEnvironments.environment))
    .where(and(archived ? isNotNull(projects.archivedAt) : isNull(projects.archivedAt), visibleProjectCondition(projects.id, hidden)))
    .groupBy(projects.id)
    .orderBy(asc(projects.name), asc(projects.id))
  return rows.map((r) => ({
    ...r,
    mode: r.mode as ProjectCreated['mode'],
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt?.toISOString() ?? null,
    archivedAt: r.archivedAt?.toISOString() ?? null,
  }))
}

/**
 * The environment added to the project, and to each of its flags (switched off), with its event, made only if the
 * project is live and does not have it yet. After the project's lock and its flags' (a change to each flag: their
 * versions move on), in the same batch.
 */
const addEnvironmentStatement = eventsStatement('flagpost_add_project_environment', {
  alongside: [
    sql`insert into ${projectEnvironments} (project_id, environment_name, change_requests_enabled, required_approvals)
      select ${p('project')}, ${p('environment')}, ${p('changeRequestsEnabled')}::boolean, ${p('requiredApprovals')}::integer
      where exists (select from ${projects} where id = ${p('project')} and archived_at is null)
        and (select required_approvals from ${keptChangeRequestSettings} where project_id = ${p('project')} and environment_name = ${p('environment')}) is not distinct from ${p('kept')}::integer
      on conflict do nothing
      returning project_id, environment_name`,
  ],
  guarded: true,
  unguarded: [
    sql`insert into ${featureEnvironments} (feature_name, environment) select f.name, w0.environment_name from w0 join ${features} f on f.project = w0.project_id on conflict do nothing`,
    sql`delete from ${keptChangeRequestSettings} where project_id = ${p('project')} and environment_name = ${p('environment')} and ${guardPassed}`,
  ],
})

/**
 * POST /api/admin/projects/{projectId}/environments: a read (404 for an unknown project or environment, 409 when the
 * project has it), then one batch: the project's lock (flag creations in it queue behind it, so every flag gets the
 * environment), its flags' lock, and the statement that adds the environment if still not there.
 */
export async function addEnvironmentToProject(db: Db, caller: Author, projectId: string, input: AddProjectEnvironment, authorizeLifting: (environment: string) => void) {
  const { actor, now } = caller
  await untilUnchanged(`Project ${projectId}`, async () => {
    const [state] = await queryRows<{ live: boolean; known: boolean; added: boolean; kept: number | null }>(
      db,
      sql`select exists (select from ${projects} where id = ${projectId} and archived_at is null) as live,
        exists (select from ${environments} where name = ${input.environment}) as known,
        exists (select from ${projectEnvironments} where project_id = ${projectId} and environment_name = ${input.environment}) as added,
        (select required_approvals from ${keptChangeRequestSettings} where project_id = ${projectId} and environment_name = ${input.environment}) as kept`,
    )
    if (!state!.live) throw notFound(`Could not find project ${projectId}`)
    if (!state!.known) throw notFound(`Could not find environment ${input.environment}`)
    if (state!.added) throw nameExists(`Environment ${input.environment} is already enabled in project ${projectId}`)
    const kept = state!.kept
    // An environment that required change requests when it was taken out comes back requiring them (with its
    // approvals); coming back without them lifts that protection, which needs SKIP_CHANGE_REQUEST there.
    if (kept !== null && input.changeRequestsEnabled === false) authorizeLifting(input.environment)
    const changeRequestsEnabled = input.changeRequestsEnabled ?? kept !== null
    // A new project environment needs one approval (the column's default), as Unleash.
    const requiredApprovals = changeRequestsEnabled && kept !== null ? kept : 1
    const event: NewEvent = {
      type: 'project-environment-added',
      project: projectId,
      environment: input.environment,
      data: { environment: input.environment, changeRequestsEnabled, requiredApprovals },
    }
    const [, , { written }] = await batch(db, [
      (q) => q.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).for('update'),
      (q) => lockProjectFlags(q, projectId),
      (q) => addEnvironmentStatement(q, actor, now, [event], { project: projectId, environment: input.environment, changeRequestsEnabled, requiredApprovals, kept }),
    ])
    return written > 0 || undefined
  })
}

/**
 * The environment taken out of the project with its event, made only while the project environment is as read and
 * the project keeps another; with it go the configuration of the project's flags in it (switches, variants,
 * strategies), so adding it back starts from off. After the project's lock and its flags' (their versions move on).
 */
const removeEnvironmentStatement = eventsStatement('flagpost_remove_project_environment', {
  alongside: [
    sql`delete from ${projectEnvironments} where project_id = ${p('project')} and environment_name = ${p('environment')} and ${rowText(projectEnvironments)} = ${p('snapshot')}
      and exists (select from ${projectEnvironments} other where other.project_id = ${p('project')} and other.environment_name <> ${p('environment')})
      returning project_id`,
  ],
  guarded: true,
  unguarded: [
    // The statement sees the project environment as it was before w0 deleted it.
    sql`insert into ${keptChangeRequestSettings} (project_id, environment_name, required_approvals)
      select project_id, environment_name, required_approvals from ${projectEnvironments}
      where project_id = ${p('project')} and environment_name = ${p('environment')} and change_requests_enabled and ${guardPassed}
      on conflict (project_id, environment_name) do update set required_approvals = excluded.required_approvals`,
    sql`delete from ${featureStrategies} where environment = ${p('environment')} and feature_name in (select name from ${features} where project = ${p('project')}) and ${guardPassed}`,
    sql`delete from ${featureEnvironments} where environment = ${p('environment')} and feature_name in (select name from ${features} where project = ${p('project')}) and ${guardPassed}`,
  ],
})

/**
 * DELETE /api/admin/projects/{projectId}/environments/{environment}: 404 for an unknown project or an environment the
 * project does not have, 400 for its last environment (a project always has one). A read, then one batch: the
 * project's lock, its flags' lock and the statement. `check` is told whether the environment requires change requests.
 */
export async function removeEnvironmentFromProject(db: Db, caller: Author, projectId: string, environment: string, check: (protectedIn: { project: string; environment: string }[]) => void) {
  const { actor, now } = caller
  await untilUnchanged(`Project ${projectId}`, async () => {
    const [state] = await queryRows<{ live: boolean; row: { change_requests_enabled: boolean; required_approvals: number; default_strategy: unknown } | null; snapshot: string | null; others: number }>(
      db,
      sql`select exists (select from ${projects} where id = ${projectId} and archived_at is null) as live,
        (select to_jsonb(${projectEnvironments}) from ${projectEnvironments} where project_id = ${projectId} and environment_name = ${environment}) as row,
        (select ${rowText(projectEnvironments)} from ${projectEnvironments} where project_id = ${projectId} and environment_name = ${environment}) as snapshot,
        (select count(*) from ${projectEnvironments} where project_id = ${projectId} and environment_name <> ${environment})::int as others`,
    )
    if (!state!.live) throw notFound(`Could not find project ${projectId}`)
    if (!state!.row || state!.snapshot === null) throw notFound(`Could not find environment ${environment} in project ${projectId}`)
    if (state!.others === 0) throw validationError(`Environment ${environment} is the last environment of project ${projectId}: a project always has one`)
    check(state!.row.change_requests_enabled ? [{ project: projectId, environment }] : [])
    const event: NewEvent = {
      type: 'project-environment-removed',
      project: projectId,
      environment,
      preData: { environment, changeRequestsEnabled: state!.row.change_requests_enabled, requiredApprovals: state!.row.required_approvals, defaultStrategy: state!.row.default_strategy ?? null },
    }
    const [, , { written }] = await batch(db, [
      (q) => q.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).for('update'),
      (q) => lockProjectFlags(q, projectId),
      (q) => removeEnvironmentStatement(q, actor, now, [event], { project: projectId, environment, snapshot: state!.snapshot }),
    ])
    return written > 0 || undefined
  })
}

function dedupeBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Map<string, T>()
  for (const item of items) seen.set(key(item), item)
  return [...seen.values()]
}

export async function projectExists(db: Db, projectId: string): Promise<boolean> {
  const [row] = await db.select({ id: projects.id }).from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt)))
  return row !== undefined
}

type ProjectRow = typeof projects.$inferSelect

const settingsOf = (p: ProjectRow) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  mode: p.mode,
  defaultStickiness: p.defaultStickiness,
  featureLimit: p.featureLimit,
  featureNaming: { pattern: p.featureNamingPattern, example: p.featureNamingExample, description: p.featureNamingDescription },
})

/**
 * PUT /api/admin/projects/{projectId}: replaces the project's settings; fields left out keep their value. A read, then
 * the change and its event in one statement made only if the project is still as read. Emits `project-updated`.
 */
export async function updateProject(db: Db, caller: Author, projectId: string, input: UpdateProject) {
  const { actor, now } = caller
  await untilUnchanged(`Project ${projectId}`, async () => {
    const [found] = await db.select({ row: projects, snapshot: rowText(projects) }).from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt)))
    if (!found) throw notFound(`Could not find project ${projectId}`)
    const { row: before, snapshot } = found
    const naming = input.featureNaming
    const set = {
      name: input.name,
      description: input.description === undefined ? before.description : input.description,
      mode: input.mode ?? before.mode,
      defaultStickiness: input.defaultStickiness ?? before.defaultStickiness,
      featureLimit: input.featureLimit === undefined ? before.featureLimit : input.featureLimit,
      ...(naming ? { featureNamingPattern: naming.pattern, featureNamingExample: naming.example ?? null, featureNamingDescription: naming.description ?? null } : {}),
      updatedAt: now,
    }
    const update = db.update(projects).set(set).where(and(eq(projects.id, projectId), sql`${rowText(projects)} = ${snapshot}`)).returning({ id: projects.id })
    const event: NewEvent = { type: 'project-updated', project: projectId, data: settingsOf({ ...before, ...set }), preData: settingsOf(before) }
    return (await recordEvents(db, actor, now, [event], { alongside: [update], guarded: true })) > 0 || undefined
  })
}

/** The segments a default strategy names all exist (checked again as it is written: it names them by id). */
const segmentsExist = (ids: number[]) => sql`(select count(*) from ${segments} where id = any(${sql.param(ids)}::int[])) = ${ids.length}`

/**
 * PUT or POST /api/admin/projects/{projectId}/environments/{environment}/default-strategy: sets the strategy a flag
 * gets when enabled in this environment with none. A read (the project environment, and the segments the strategy
 * names), then the change and its event in one statement made only if the project environment is still as read and
 * the segments still exist. It is not part of the project's flags (no version moves: the switch that adds it checks
 * it is still the one it read). Emits `default-strategy-updated`.
 */
export async function setDefaultStrategy(db: Db, caller: Author, projectId: string, environment: string, input: StrategyInput) {
  const { actor, now } = caller
  return untilUnchanged(`The default strategy of ${environment} in project ${projectId}`, async () => {
    const [[found], prepared] = await together(db, [
      (q) =>
        q
          .select({ defaultStrategy: projectEnvironments.defaultStrategy, snapshot: rowText(projectEnvironments) })
          .from(projectEnvironments)
          .innerJoin(projects, eq(projects.id, projectEnvironments.projectId))
          .where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environment, environment), isNull(projects.archivedAt))),
      // Its 400 (an unknown segment) comes after the 404 of an unknown project environment.
      (q) => prepareDefaultStrategy(q, projectId, input).then((strategy) => ({ strategy }), (refused: unknown) => ({ refused })),
    ])
    if (!found) throw notFound(`Could not find environment ${environment} in project ${projectId}`)
    let outcome = prepared
    // Refused: judged again against the stored one (the error path only), since a value written back as it was is never refused.
    const stored = found.defaultStrategy as { name: string; parameters: Record<string, string> } | null
    if ('refused' in outcome && stored) outcome = await prepareDefaultStrategy(db, projectId, input, stored).then((strategy) => ({ strategy }), (refused: unknown) => ({ refused }))
    if ('refused' in outcome) throw outcome.refused
    const { strategy } = outcome
    const alongside = [
      db
        .update(projectEnvironments)
        .set({ defaultStrategy: strategy })
        .where(
          and(
            eq(projectEnvironments.projectId, projectId),
            eq(projectEnvironments.environment, environment),
            sql`${rowText(projectEnvironments)} = ${found.snapshot}`,
            sql`exists (select from ${projects} where id = ${projectId} and archived_at is null)`,
            segmentsExist(strategy.segments),
          ),
        )
        .returning({ projectId: projectEnvironments.projectId }),
      db.update(projects).set({ updatedAt: now }).where(and(eq(projects.id, projectId), guardPassed)).returning({ id: projects.id }),
    ]
    const event: NewEvent = { type: 'default-strategy-updated', project: projectId, environment, data: strategy, preData: found.defaultStrategy ?? null }
    return (await recordEvents(db, actor, now, [event], { alongside, guarded: true })) > 0 ? strategy : undefined
  })
}
