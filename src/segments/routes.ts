import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission, requirePermission } from '../core/permissions.js'
import { segmentIdParam, SegmentListQuery, SegmentSchema, SegmentsSchema, UpsertSegmentSchema } from './schemas.js'
import { createSegment, deleteSegment, getSegment, listSegments, updateSegment } from './store.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import { segmentChangeCheck } from '../change-requests/guard.js'

const tags = ['Segments']

const getSegmentsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/segments',
  operationId: 'getSegments',
  tags,
  summary: 'Get all segments',
  description:
    'Every segment, by name. `usedInFeatures` and `usedInProjects` count the flags (archived ones included, since they also keep the segment from being deleted) ' +
    'whose strategies use the segment, and their projects. Segments of a private project are listed only for callers who may read that project. ' +
    'The query parameters (a Flagpost addition: without them the answer is Unleash\'s) narrow the list for pickers: `query` a part of the name, `project` the segments usable there, ' +
    '`id` given segments, `limit` at most so many, by name.',
  request: { query: SegmentListQuery },
  responses: { 200: { description: 'The segments', content: jsonContent(SegmentsSchema) }, ...pickErrors(401, 403) },
})

const getSegmentRoute = adminRoute({
  method: 'get',
  path: '/api/admin/segments/{id}',
  operationId: 'getSegment',
  tags,
  summary: 'Get a segment',
  description: 'The segment with its usage counts. 400 for an id that is not a positive integer, 404 for an unknown one or one of a private project the caller may not read.',
  request: { params: segmentIdParam },
  responses: { 200: { description: 'The segment', content: jsonContent(SegmentSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const createSegmentRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_SEGMENT, checkedBy: 'handler' },
  path: '/api/admin/segments',
  operationId: 'createSegment',
  tags,
  summary: 'Create a segment',
  description:
    'Creates a segment from `name` (1 to 100 characters, unique: 409 NameExistsError otherwise), an optional `description` and `project` ' +
    '(an existing project, 400 otherwise; absent or null makes a global segment) and `constraints`, each validated like a strategy constraint and stored normalized. ' +
    'Needs CREATE_SEGMENT. Emits `segment-created` (with `project` when the segment has one).',
  request: { body: { required: true, content: jsonContent(UpsertSegmentSchema) } },
  responses: {
    201: { description: 'The new segment', content: jsonContent(SegmentSchema), headers: { location: { schema: { type: 'string' }, description: 'The location of the new segment' } } },
    ...pickErrors(400, 401, 403, 409, 415),
  },
})

const updateSegmentRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_SEGMENT },
  path: '/api/admin/segments/{id}',
  operationId: 'updateSegment',
  tags,
  summary: 'Update a segment',
  description:
    'Replaces `name`, `project` (absent means global) and `constraints`; `description` is kept when absent. The same rules as creation apply; ' +
    'in addition a segment used by flags cannot be moved into a project other than theirs (400). Needs UPDATE_SEGMENT, and SKIP_CHANGE_REQUEST in every environment ' +
    'where a strategy uses the segment and its project requires change requests (403 otherwise), since every such strategy changes with it. Answers 204 as Unleash does. ' +
    'Emits `segment-updated` with the previous segment as preData.',
  request: { params: segmentIdParam, body: { required: true, content: jsonContent(UpsertSegmentSchema) } },
  responses: { 204: { description: 'The segment was updated' }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const deleteSegmentRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.DELETE_SEGMENT },
  path: '/api/admin/segments/{id}',
  operationId: 'removeSegment',
  tags,
  summary: 'Delete a segment',
  description:
    'Deletes a segment that no strategy uses; one in use (also by an archived flag) is a 409 ConflictError naming the flags. ' +
    'Unknown id: 404 (Unleash documents 409 here; a missing resource is a 404 everywhere else in this API). Needs DELETE_SEGMENT (and, like an update, SKIP_CHANGE_REQUEST where a strategy using it is protected). Emits `segment-deleted` with the segment as preData.',
  request: { params: segmentIdParam },
  responses: { 204: { description: 'The segment was deleted' }, ...pickErrors(400, 401, 403, 404, 409) },
})

export const segmentRoutes = createRouter()
  .openapi(getSegmentsRoute, async (c) => {
    const { query, project, id, limit } = c.req.valid('query')
    const filter = { query, project, ids: id?.split(',').map(Number), limit: limit === undefined ? undefined : Number(limit) }
    return c.json({ segments: await listSegments(c.var.db, await hiddenProjectsOf(c), filter) }, 200)
  })
  .openapi(getSegmentRoute, async (c) => c.json(await getSegment(c.var.db, Number(c.req.valid('param').id), await hiddenProjectsOf(c)), 200))
  .openapi(createSegmentRoute, async (c) => {
    const body = c.req.valid('json')
    requirePermission(c.var.principal, Permission.CREATE_SEGMENT, { project: body.project ?? undefined })
    const segment = await createSegment(c.var.db, c.var.caller, body)
    return c.json(segment, 201, { Location: `/api/admin/segments/${segment.id}` })
  })
  .openapi(updateSegmentRoute, async (c) => {
    await updateSegment(c.var.db, c.var.caller, Number(c.req.valid('param').id), c.req.valid('json'), segmentChangeCheck(c))
    return c.body(null, 204)
  })
  .openapi(deleteSegmentRoute, async (c) => {
    await deleteSegment(c.var.db, c.var.caller, Number(c.req.valid('param').id), segmentChangeCheck(c))
    return c.body(null, 204)
  })
