import { eq, isNull, or, Placeholder, sql, type SQL } from 'drizzle-orm'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'
import type { MiddlewareHandler } from 'hono'
import { events, features, projects } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import type { Principal } from '../core/principal.js'
import type { AppContext, AppEnv } from '../http/context.js'
import { notFound } from '../core/errors.js'
import { hasPermission, Permission } from '../core/permissions.js'

/*
 * Who reads a private project (mode `private`): its members (any role in it, their own or a group's) and whoever sees every project.
 * As in Unleash, a project a caller may not read does not exist for them: lists leave it out, and a route
 * naming it (or one of its flags, change requests…) answers 404 NotFoundError, as for an unknown id.
 */

/**
 * Admins, admin tokens and root roles that may change flags in every project (Editor; Owner and Member as
 * root roles) read every project: Unleash limits only Viewers. Hiding a project from someone who may write to
 * it would protect nothing.
 */
export function seesAllProjects(principal: Principal): boolean {
  return principal.kind === 'admin-token' || hasPermission(principal, Permission.ADMIN) || hasPermission(principal, Permission.UPDATE_FEATURE)
}

/**
 * The ids of every private project, archived ones included, and of private projects deleted (from their
 * `project-deleted` event, whose events outlive them) while no project has their id again: one statement, to read
 * along with others in a batch.
 */
export async function privateProjectIds(db: Db): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select id from ${projects} where mode = 'private'
      union select e.project from ${events} e where e.type = 'project-deleted' and e.pre_data->>'mode' = 'private' and not exists (select from ${projects} pr where pr.id = e.project)`,
  )
  return rows.map((r) => r.id)
}

/** Of the private projects, those the principal may not read, sorted; empty for those who see all. */
function hiddenOf(principal: Principal, privateIds: readonly string[]): string[] {
  if (seesAllProjects(principal)) return []
  const memberOf = principal.kind === 'user' ? principal.grants.projects : undefined
  return privateIds.filter((id) => !memberOf?.has(id)).sort()
}

/** The private projects the principal may not read, archived ones included, sorted; empty for those who see all. */
export async function hiddenProjects(db: Db, principal: Principal): Promise<string[]> {
  return seesAllProjects(principal) ? [] : hiddenOf(principal, await privateProjectIds(db))
}

// One look-up per request, however many read paths of the request ask; authentication may have made it already.
const perRequest = new WeakMap<Request, Promise<string[]>>()
const privatePerRequest = new WeakMap<Request, readonly string[]>()

/** The private projects as read this request (with its caller's credential, in one batch), so visibility does not read them again. */
export function knownPrivateProjects(c: AppContext, privateIds: readonly string[]): void {
  privatePerRequest.set(c.req.raw, privateIds)
}

/** `hiddenProjects` of the request's caller, read once per request. */
export function hiddenProjectsOf(c: AppContext): Promise<string[]> {
  let hidden = perRequest.get(c.req.raw)
  if (!hidden) {
    const known = privatePerRequest.get(c.req.raw)
    hidden = known ? Promise.resolve(hiddenOf(c.get('principal'), known)) : hiddenProjects(c.get('db'), c.get('principal'))
    perRequest.set(c.req.raw, hidden)
  }
  return hidden
}

/**
 * SQL keeping the rows whose project (`column`) is not hidden: undefined when nothing is hidden. Rows with no
 * project (instance-level events, global segments) are kept. `hidden` may be a prepared statement's placeholder
 * (an array, maybe empty).
 */
export function visibleProjectCondition(column: AnyPgColumn, hidden: readonly string[] | Placeholder): SQL | undefined {
  if (hidden instanceof Placeholder) return or(isNull(column), sql`${column} <> all(${hidden}::text[])`)
  // One array parameter, so the statement's text is the same however many are hidden.
  return hidden.length === 0 ? undefined : or(isNull(column), sql`${column} <> all(${sql.param([...hidden])}::text[])`)
}

export const projectNotFound = (projectId: string) => notFound(`Could not find project ${projectId}`)

/*
 * For a caller from whom some project is hidden, an unknown id is a 404 before anything else too: otherwise a
 * write the caller may not make would answer 403 for an unknown id and 404 for a hidden one, telling them apart.
 */

/** 404, as for an unknown project, when the caller may not read it (or, when projects are hidden from them, it does not exist). */
export async function requireVisibleProject(c: AppContext, projectId: string): Promise<void> {
  const hidden = await hiddenProjectsOf(c)
  if (hidden.length === 0) return
  if (hidden.includes(projectId)) throw projectNotFound(projectId)
  const [project] = await c.get('db').select({ id: projects.id }).from(projects).where(eq(projects.id, projectId))
  if (!project) throw projectNotFound(projectId)
}

/** 404, as for an unknown flag, when the flag (archived or not) belongs to a project the caller may not read (or does not exist). */
export async function requireVisibleFlag(c: AppContext, featureName: string): Promise<void> {
  const hidden = await hiddenProjectsOf(c)
  if (hidden.length === 0) return
  const [flag] = await c.get('db').select({ project: features.project }).from(features).where(eq(features.name, featureName))
  if (!flag || hidden.includes(flag.project)) throw notFound(`Could not find feature flag ${featureName}`)
}

/** A path segment as the route's parameter reads it (a malformed escape is left as it is: no project has that id). */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

// Here the middleware's own `projectId` would be `archive` or `revive`.
const LIFECYCLE_PATH = /^\/api\/admin\/projects\/(?:archive|revive)\/([^/]+)\/?$/
// A role's projects (`GET /api/admin/projects/roles/{roleId}/access`, for admins) name no project: `roles` is no project id.
const ROLE_ACCESS_PATH = /^\/api\/admin\/projects\/roles\/[^/]+\/access\/?$/

/** For every route under `/api/admin/projects/{projectId}`: a project the caller may not read is a 404 for every method. */
export const projectVisibility: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method === 'GET' && ROLE_ACCESS_PATH.test(c.req.path)) return next()
  // POST /api/admin/projects/archive/{projectId} and /revive/{projectId} name their project second.
  const lifecycle = c.req.method === 'POST' ? LIFECYCLE_PATH.exec(c.req.path) : null
  const projectId = lifecycle ? decodedSegment(lifecycle[1]!) : c.req.param('projectId')
  if (projectId !== undefined) await requireVisibleProject(c, projectId)
  await next()
}

/** For routes naming a flag outside a project path (`/api/admin/features/{featureName}/…`, client metrics of a flag). */
export const flagVisibility =
  (param: string): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const name = c.req.param(param)
    if (name !== undefined) await requireVisibleFlag(c, name)
    await next()
  }
