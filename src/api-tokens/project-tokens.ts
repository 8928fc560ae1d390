import { and, asc, eq, inArray, isNull, or, sql, type SQL } from 'drizzle-orm'
import { apiTokens, environments, projects } from '../../schema/index.js'
import { together, untilUnchanged, type Db } from '../db.js'
import type { Author } from '../core/principal.js'
import { notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import { hashSecret, newSecret } from './secrets.js'
import { namedToken, newTokenRow, tokenCreatedEvent, tokenDeletedEvent, tokenView, type TokenType } from './store.js'

/*
 * A project's API tokens (Unleash's `/api/admin/projects/{projectId}/api-tokens`): client and frontend tokens of the
 * same table as the instance's, made for exactly that project. Listed are the client and frontend tokens that name
 * the project (alone or among others, as Unleash lists them); only a token for exactly the project is deleted here.
 */

export type ProjectTokenType = Exclude<TokenType, 'admin'>

export interface NewProjectToken {
  tokenName: string
  type: ProjectTokenType
  environment: string
  expiresAt: Date | null
}

const projectNotFound = (project: string) => notFound(`Could not find project with id ${project}`)

/** The project as the routes see it: 404 when it does not exist (an archived one still lists its tokens). */
const projectRead = (q: Db, project: string) => q.select({ id: projects.id, archivedAt: projects.archivedAt }).from(projects).where(eq(projects.id, project))

/** The client and frontend tokens (not a user's) that name the project, and `also`. */
const projectTokensWhere = (project: string, also: SQL | undefined) =>
  and(inArray(apiTokens.type, ['client', 'frontend']), isNull(apiTokens.userId), sql`${apiTokens.projects} @> array[${project}]::text[]`, also)

/**
 * Client and frontend tokens naming the project, oldest first (secrets masked); 404 for an unknown project. A token that
 * also names a project the caller may not read (`hidden`) is left out, as the instance's list leaves it out.
 */
export async function listProjectTokens(db: Db, project: string, hidden: readonly string[] = []) {
  const [[found], rows] = await together(db, [
    (q) => projectRead(q, project),
    (q) =>
      q
        .select()
        .from(apiTokens)
        .where(projectTokensWhere(project, hidden.length === 0 ? undefined : sql`not (${apiTokens.projects} && ${sql.param([...hidden])}::text[])`))
        .orderBy(asc(apiTokens.createdAt), asc(apiTokens.id)),
  ])
  if (!found) throw projectNotFound(project)
  return rows.map((row) => tokenView(row))
}

/**
 * POST /api/admin/projects/{projectId}/api-tokens: a client or frontend token for exactly this project, with
 * `api-token-created`, in one statement made only while the project is live and the environment exists (the insert
 * decides, holding the project's row against its archiving or deletion, which take its lock, until it commits); when it wrote nothing, a read says why: 404 for an unknown or archived project, 400 for an unknown
 * environment. The secret is in the answer only.
 */
export async function createProjectToken(db: Db, caller: Author, project: string, token: NewProjectToken) {
  const { actor, now } = caller
  const secret = newSecret([project], token.environment)
  const row = await newTokenRow({ ...token, projects: [project] }, secret, now)
  const insert = sql`insert into ${apiTokens} (secret_hash, display_secret, token_name, type, projects, environment, expires_at, created_at)
    select ${row.secretHash}, ${row.displaySecret}, ${row.tokenName}, ${row.type}, array[${project}]::text[], ${row.environment}, ${row.expiresAt?.toISOString() ?? null}::timestamptz, ${now.toISOString()}::timestamptz
    where exists (select from ${projects} where id = ${project} and archived_at is null for key share)
      and exists (select from ${environments} where name = ${row.environment})
    returning id`
  await untilUnchanged('The project', async () => {
    if ((await recordEvents(db, actor, now, [tokenCreatedEvent(row)], { alongside: [insert], guarded: true })) > 0) return true
    const [[live], [environment]] = await together(db, [
      (q) => q.select({ id: projects.id }).from(projects).where(and(eq(projects.id, project), isNull(projects.archivedAt))),
      (q) => q.select({ name: environments.name }).from(environments).where(eq(environments.name, token.environment)),
    ])
    if (!live) throw projectNotFound(project)
    if (!environment) throw validationError(`Unknown environment: ${token.environment}`, [{ path: 'body.environment', message: `there is no environment ${token.environment}` }])
    // Both are there now: one of them came while the insert was made; it is made again.
    return undefined
  })
  return tokenView(row, secret)
}

/**
 * DELETE /api/admin/projects/{projectId}/api-tokens/{token}: the token named by its full secret, or by the masked
 * secret listings show when that names one token of the project. 404 for an unknown project or a token that is not
 * one of its client or frontend tokens; 400 for a token that names other projects too (delete it through
 * `/api/admin/api-tokens`), as Unleash. A read, then the deletion and `api-token-deleted` in one statement.
 */
export async function deleteProjectToken(db: Db, caller: Author, project: string, secretOrDisplay: string): Promise<void> {
  const { actor, now } = caller
  const hash = await hashSecret(secretOrDisplay)
  await untilUnchanged('The API token', async () => {
    const [[found], matches] = await together(db, [
      (q) => projectRead(q, project),
      (q) =>
        q
          .select()
          .from(apiTokens)
          .where(projectTokensWhere(project, or(eq(apiTokens.secretHash, hash), eq(apiTokens.displaySecret, secretOrDisplay)))),
    ])
    if (!found) throw projectNotFound(project)
    const row = namedToken(matches, hash)
    if (row === 'ambiguous') throw validationError('More than one token of the project is listed as that secret: delete it with its full secret')
    if (!row) throw notFound(`Could not find an API token of project ${project} with that secret`)
    if (row.projects.length !== 1) throw validationError(`The token names other projects too: delete it through /api/admin/api-tokens`)
    const written = await recordEvents(db, actor, now, [tokenDeletedEvent(row)], {
      alongside: [db.delete(apiTokens).where(eq(apiTokens.id, row.id)).returning({ id: apiTokens.id })],
      guarded: true,
    })
    return written > 0 || undefined
  })
}
