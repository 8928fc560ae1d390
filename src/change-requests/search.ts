import { and, desc, eq, inArray, ne, notExists, sql, type SQL } from 'drizzle-orm'
import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { changeRequestApprovals, changeRequestChanges, changeRequestSchedules, changeRequests } from '../../schema/index.js'
import { together, type Db } from '../db.js'
import { validationError } from '../core/errors.js'
import { hasPermission } from '../core/permissions.js'
import { principalKey, SYSTEM_USER_ID, type Principal } from '../core/principal.js'
import { hiddenProjectsOf, visibleProjectCondition } from '../projects/visibility.js'
import { CHANGE_REQUEST_STATES, ChangeRequestScheduleSchema, type ChangeRequestState } from './schemas.js'
import { scheduleView } from './store.js'
import { REVIEW_PERMISSION } from './permissions.js'

const id = z.string().regex(/^-?\d{1,10}$/, 'must be a user id').optional()

export const ChangeRequestSearchQuery = z.object({
  createdBy: id,
  requestedApproverId: id,
  offset: z.string().regex(/^\d{1,9}$/, 'must be a whole number from 0').optional(),
  limit: z.string().regex(/^(1000|[1-9]\d{0,2})$/, 'must be a whole number from 1 to 1000').optional(),
})

const SearchItemSchema = z
  .object({
    id: z.number().int(),
    title: z.string(),
    createdAt: z.string(),
    createdBy: z.object({ id: z.number().int(), username: z.string().nullable(), imageUrl: z.string().nullable().optional() }),
    environment: z.string(),
    project: z.string(),
    features: z.array(z.string()).openapi({ description: 'The flags its changes are about' }),
    segments: z.array(z.string()).openapi({ description: 'The segments it changes: always empty (a Flagpost change request changes flags only)' }),
    state: z.enum(CHANGE_REQUEST_STATES),
    schedule: ChangeRequestScheduleSchema.optional().openapi({ description: 'Only while it is Scheduled' }),
  })
  .openapi('changeRequestSearchItemSchema')

export const ChangeRequestSearchResponseSchema = z
  .object({ changeRequests: z.array(SearchItemSchema), total: z.number().int().openapi({ description: 'All matches the caller may read' }) })
  .openapi('changeRequestSearchResponseSchema')
type SearchResponse = z.infer<typeof ChangeRequestSearchResponseSchema>

export interface ChangeRequestSearch {
  createdBy?: number
  /** The caller, when only the change requests waiting for their approval are asked for. */
  approver?: Principal
  offset: number
  limit: number
}

/**
 * GET /api/admin/search/change-requests across the projects the caller may read (`hidden`: those they may not), newest
 * first. Waiting for an approver: In review, not theirs, not approved by them, and they hold the review permission in
 * its project and environment (checked here, as the approve route checks it: few requests are In review at a time).
 */
export async function searchChangeRequests(db: Db, hidden: readonly string[], query: ChangeRequestSearch): Promise<SearchResponse> {
  const filters: (SQL | undefined)[] = [visibleProjectCondition(changeRequests.project, hidden)]
  if (query.createdBy !== undefined) filters.push(eq(changeRequests.createdByUserId, query.createdBy))
  const approver = query.approver
  if (approver) {
    const key = principalKey(approver)
    filters.push(
      eq(changeRequests.state, 'In review'),
      ne(changeRequests.createdByPrincipal, key),
      notExists(db.select({ one: sql`1` }).from(changeRequestApprovals).where(and(eq(changeRequestApprovals.changeRequestId, changeRequests.id), eq(changeRequestApprovals.principal, key)))),
    )
  }
  const where = and(...filters)
  let ids: number[]
  let total: number
  if (approver) {
    const candidates = await db.select({ id: changeRequests.id, project: changeRequests.project, environment: changeRequests.environment }).from(changeRequests).where(where).orderBy(desc(changeRequests.id))
    const waiting = candidates.filter((r) => hasPermission(approver, REVIEW_PERMISSION, { project: r.project, environment: r.environment }))
    total = waiting.length
    ids = waiting.slice(query.offset, query.offset + query.limit).map((r) => r.id)
  } else {
    const [page, [count]] = await together(db, [
      (q: Db) => q.select({ id: changeRequests.id }).from(changeRequests).where(where).orderBy(desc(changeRequests.id)).limit(query.limit).offset(query.offset),
      (q: Db) => q.select({ n: sql<number>`count(*)::int` }).from(changeRequests).where(where),
    ] as const)
    ids = page.map((r) => r.id)
    total = count?.n ?? 0
  }
  if (ids.length === 0) return { changeRequests: [], total }
  const [rows, features, schedules] = await together(db, [
    (q: Db) => q.select().from(changeRequests).where(inArray(changeRequests.id, ids)).orderBy(desc(changeRequests.id)),
    (q: Db) => q.selectDistinct({ id: changeRequestChanges.changeRequestId, feature: changeRequestChanges.feature }).from(changeRequestChanges).where(inArray(changeRequestChanges.changeRequestId, ids)),
    (q: Db) => q.select().from(changeRequestSchedules).where(inArray(changeRequestSchedules.changeRequestId, ids)),
  ] as const)
  return {
    total,
    changeRequests: rows.map((cr) => {
      const schedule = schedules.find((s) => s.changeRequestId === cr.id)
      return {
        id: cr.id,
        title: cr.title ?? `Change request #${cr.id}`,
        createdAt: cr.createdAt.toISOString(),
        createdBy: { id: cr.createdByUserId ?? SYSTEM_USER_ID, username: cr.createdBy },
        environment: cr.environment,
        project: cr.project,
        features: features.filter((f) => f.id === cr.id).map((f) => f.feature).sort(),
        segments: [],
        state: cr.state as ChangeRequestState,
        ...(cr.state === 'Scheduled' && schedule ? { schedule: scheduleView(schedule) } : {}),
      }
    }),
  }
}

const searchRoute = adminRoute({
  method: 'get',
  path: '/api/admin/search/change-requests',
  operationId: 'searchChangeRequests',
  tags: ['Change requests'],
  summary: 'Search change requests',
  description:
    "The change requests of every project the caller may read (a private project's only for its members and those who see every project), newest first, with `total`; " +
    '`offset`, and `limit` (default 50, at most 1000). `createdBy` (a user id) keeps those a user created. `requestedApproverId` keeps those waiting for that user\'s approval; Unleash lists those the user was asked to review, Flagpost, which has no requested ' +
    "approvers, those the user may approve (In review, not theirs, not yet approved by them, the review permission in their environment), and only for the caller's own id: another user's " +
    'permissions are not the caller\'s to read (400). A malformed id, offset or limit is a 400.',
  request: { query: ChangeRequestSearchQuery },
  responses: { 200: { description: 'The matching change requests', content: jsonContent(ChangeRequestSearchResponseSchema) }, ...pickErrors(400, 401, 403) },
})

export const changeRequestSearchRoutes = createRouter().openapi(searchRoute, async (c) => {
  const q = c.req.valid('query')
  const principal = c.var.principal
  let approver: Principal | undefined
  if (q.requestedApproverId !== undefined) {
    if (principal.kind !== 'user' || principal.userId !== Number(q.requestedApproverId))
      throw validationError("requestedApproverId must be your own user id: Flagpost lists the change requests the caller may approve, not another user's", [
        { path: 'query.requestedApproverId', message: "must be the caller's own user id" },
      ])
    approver = principal
  }
  const result = await searchChangeRequests(c.var.db, await hiddenProjectsOf(c), {
    createdBy: q.createdBy === undefined ? undefined : Number(q.createdBy),
    approver,
    offset: Number(q.offset ?? 0),
    limit: Number(q.limit ?? 50),
  })
  return c.json(result, 200)
})
