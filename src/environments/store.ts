import { asc, count, eq, inArray, sql } from 'drizzle-orm'
import { apiTokens, environments, projectEnvironments } from '../../schema/index.js'
import type { Db } from '../db.js'
import { nameExists } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import type { CreateEnvironment, Environment } from './schemas.js'

export async function listEnvironments(db: Db): Promise<Environment[]> {
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
