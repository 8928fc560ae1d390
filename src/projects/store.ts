import { and, asc, eq, isNull, sql } from 'drizzle-orm'
import { environments, projectEnvironments, projects } from '../../schema/index.js'
import type { Db } from '../db.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { unknownEnvironments } from '../environments/store.js'
import { MAX_APPROVALS, MIN_APPROVALS, type AddProjectEnvironment, type CreateProject, type ProjectCreated, type UpdateProject } from './schemas.js'
import { prepareDefaultStrategy } from '../strategies/store.js'
import { lockProjectFlags } from '../flags/lock.js'
import { grantAccess, OWNER_ROLE_ID } from './access.js'
import { visibleProjectCondition } from './visibility.js'
import type { StrategyInput } from '../strategies/schemas.js'

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
  return slug || 'project'
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

export async function createProject(db: Db, caller: Author, input: CreateProject): Promise<ProjectCreated> {
  const { actor, now } = caller
  const changeRequestEnvironments = dedupeBy(input.changeRequestEnvironments ?? [], (e) => e.name).map((e) => ({
    name: e.name,
    requiredApprovals: clampApprovals(e.requiredApprovals),
  }))
  const named = input.environments ? [...new Set(input.environments)] : undefined
  const unknown = await unknownEnvironments(db, [...new Set([...(named ?? []), ...changeRequestEnvironments.map((e) => e.name)])])
  if (unknown.length > 0) throw validationError(`Unknown environment(s): ${unknown.join(', ')}`, unknown.map((name) => ({ path: 'body.environments', message: `environment ${name} does not exist` })))

  return db.transaction(async (tx) => {
    const enabled = named ?? (await tx.select({ name: environments.name }).from(environments).where(eq(environments.enabled, true)).orderBy(asc(environments.sortOrder), asc(environments.name))).map((e) => e.name)
    const projectEnvs = [...new Set([...enabled, ...changeRequestEnvironments.map((e) => e.name)])]
    if (projectEnvs.length === 0) throw validationError('There is no environment to enable: create an environment first or name one in `environments`')

    const values = {
      name: input.name,
      description: input.description ?? null,
      mode: input.mode ?? 'open',
      defaultStickiness: input.defaultStickiness ?? 'default',
      createdAt: now,
    }
    let id: string | undefined
    for (let attempt = 0; attempt < 5 && !id; attempt++) {
      const candidate = input.id || (await freeProjectId(tx, slugify(input.name)))
      const [row] = await tx.insert(projects).values({ id: candidate, ...values }).onConflictDoNothing().returning({ id: projects.id })
      if (row) id = row.id
      else if (input.id) throw nameExists(`A project with id ${input.id} already exists`)
    }
    if (!id) throw nameExists(`Could not find a free project id for ${input.name}: give one explicitly`)

    await tx.insert(projectEnvironments).values(
      projectEnvs.map((environment) => {
        const cr = changeRequestEnvironments.find((e) => e.name === environment)
        return { projectId: id, environment, changeRequestsEnabled: cr !== undefined, requiredApprovals: cr?.requiredApprovals ?? 1 }
      }),
    )
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
    await recordEvents(tx, actor, now, [{ type: 'project-created', project: id, data: created }])
    // A user who creates a project owns it (an API token is nobody to own it).
    if (actor.createdByUserId > 0) await grantAccess(tx, { actor, now }, id, [OWNER_ROLE_ID], [actor.createdByUserId])
    return created
  })
}

/** Live projects, but for the private ones the caller may not read (`hidden`, see visibility.ts). */
export async function listProjects(db: Db, hidden: readonly string[]) {
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
      environments: sql<string[]>`coalesce(array_agg(${projectEnvironments.environment} order by ${environments.sortOrder}, ${environments.name}) filter (where ${projectEnvironments.environment} is not null), '{}')`,
    })
    .from(projects)
    .leftJoin(projectEnvironments, eq(projectEnvironments.projectId, projects.id))
    .leftJoin(environments, eq(environments.name, projectEnvironments.environment))
    .where(and(isNull(projects.archivedAt), visibleProjectCondition(projects.id, hidden)))
    .groupBy(projects.id)
    .orderBy(asc(projects.name), asc(projects.id))
  return rows.map((r) => ({
    ...r,
    mode: r.mode as ProjectCreated['mode'],
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt?.toISOString() ?? null,
  }))
}

export async function addEnvironmentToProject(db: Db, caller: Author, projectId: string, input: AddProjectEnvironment) {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    const [project] = await tx.select({ id: projects.id }).from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt))).for('update')
    if (!project) throw notFound(`Could not find project ${projectId}`)
    const [environment] = await tx.select({ name: environments.name }).from(environments).where(eq(environments.name, input.environment))
    if (!environment) throw notFound(`Could not find environment ${input.environment}`)
    const [row] = await tx
      .insert(projectEnvironments)
      .values({ projectId, environment: input.environment, changeRequestsEnabled: input.changeRequestsEnabled ?? false })
      .onConflictDoNothing()
      .returning()
    if (!row) throw nameExists(`Environment ${input.environment} is already enabled in project ${projectId}`)
    // Every flag of the project gets the new environment, switched off (a change to each: under its lock).
    await lockProjectFlags(tx, projectId)
    await tx.execute(sql`insert into feature_environments (feature_name, environment) select name, ${input.environment} from features where project = ${projectId} on conflict do nothing`)
    await recordEvents(tx, actor, now, [
      {
        type: 'project-environment-added',
        project: projectId,
        environment: input.environment,
        data: { environment: row.environment, changeRequestsEnabled: row.changeRequestsEnabled, requiredApprovals: row.requiredApprovals },
      },
    ])
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

/** Replaces the project's settings; fields left out keep their value. Emits `project-updated`. */
export async function updateProject(db: Db, caller: Author, projectId: string, input: UpdateProject) {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    const [before] = await tx.select().from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt))).for('update')
    if (!before) throw notFound(`Could not find project ${projectId}`)
    const naming = input.featureNaming
    const [after] = await tx
      .update(projects)
      .set({
        name: input.name,
        description: input.description === undefined ? before.description : input.description,
        mode: input.mode ?? before.mode,
        defaultStickiness: input.defaultStickiness ?? before.defaultStickiness,
        featureLimit: input.featureLimit === undefined ? before.featureLimit : input.featureLimit,
        ...(naming ? { featureNamingPattern: naming.pattern, featureNamingExample: naming.example ?? null, featureNamingDescription: naming.description ?? null } : {}),
        updatedAt: now,
      })
      .where(eq(projects.id, projectId))
      .returning()
    await recordEvents(tx, actor, now, [{ type: 'project-updated', project: projectId, data: settingsOf(after!), preData: settingsOf(before) }])
  })
}

/** Sets the strategy a flag gets when enabled in this environment with none. Emits `default-strategy-updated`. */
export async function setDefaultStrategy(db: Db, caller: Author, projectId: string, environment: string, input: StrategyInput) {
  const { actor, now } = caller
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(projectEnvironments)
      .innerJoin(projects, eq(projects.id, projectEnvironments.projectId))
      .where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environment, environment), isNull(projects.archivedAt)))
      .for('update')
    if (!row) throw notFound(`Could not find environment ${environment} in project ${projectId}`)
    const strategy = await prepareDefaultStrategy(tx, input)
    await tx.update(projectEnvironments).set({ defaultStrategy: strategy }).where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environment, environment)))
    await tx.update(projects).set({ updatedAt: now }).where(eq(projects.id, projectId))
    await recordEvents(tx, actor, now, [
      { type: 'default-strategy-updated', project: projectId, environment, data: strategy, preData: row.project_environments.defaultStrategy ?? null },
    ])
    return strategy
  })
}
