import * as z from '../http/zod.js'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { nameExists, notFound } from '../core/errors.js'
import { Permission, requirePermission } from '../core/permissions.js'
import { changeRequestChanges, changeRequests, features, featureStrategies, featureStrategySegments, segments } from '../../schema/index.js'
import { OPEN_STATES } from '../change-requests/schemas.js'
import { hiddenProjectsOf, requireVisibleProject, visibleProjectCondition } from '../projects/visibility.js'
import { StrategySegmentsSchema } from '../strategies/schemas.js'
import { rewriteStrategy } from '../strategies/patch-routes.js'
import { segmentIdParam, SegmentsSchema } from './schemas.js'
import { listSegments } from './store.js'

const tags = ['Segments']

const StrategyUseSchema = z.object({ id: z.string(), featureName: z.string(), projectId: z.string(), environment: z.string(), strategyName: z.string() })
const SegmentStrategiesSchema = z
  .object({
    strategies: z.array(StrategyUseSchema),
    changeRequestStrategies: z.array(StrategyUseSchema.extend({ id: z.string().optional() })).openapi({ description: 'Strategies using the segment in open change requests' }),
  })
  .openapi('segmentStrategiesSchema')
const UpsertStrategySegmentsSchema = z
  .object({ projectId: z.string().min(1).max(100), strategyId: z.string().max(100), environmentId: z.string().min(1).max(100), segmentIds: StrategySegmentsSchema })
  .openapi('upsertStrategySegmentsSchema')

const validateSegmentRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': 'any-caller',
  path: '/api/admin/segments/validate',
  operationId: 'validateSegment',
  tags,
  summary: 'Validate a segment name',
  description: 'Writes nothing: 204 when no segment has the name, 409 when one has (segment names are unique in the instance, so a private project\'s segment counts too, as creating it would be refused).',
  request: { body: { required: true, content: jsonContent(z.object({ name: z.string().min(1).max(100) }).openapi('nameSchema')) } },
  responses: { 204: { description: 'The name is free' }, ...pickErrors(400, 401, 403, 409, 415) },
})

const getSegmentsByStrategyIdRoute = adminRoute({
  method: 'get',
  path: '/api/admin/segments/strategies/{strategyId}',
  operationId: 'getSegmentsByStrategyId',
  tags,
  summary: 'Get strategy segments',
  description: "The segments the strategy uses; an empty list for an unknown strategy, as in Unleash, and for one of a private project the caller may not read.",
  request: { params: z.object({ strategyId: z.string().max(100).openapi({ param: { name: 'strategyId', in: 'path' } }) }) },
  responses: { 200: { description: 'The segments', content: jsonContent(SegmentsSchema) }, ...pickErrors(401, 403) },
})

const getStrategiesBySegmentIdRoute = adminRoute({
  method: 'get',
  path: '/api/admin/segments/{id}/strategies',
  operationId: 'getStrategiesBySegmentId',
  tags,
  summary: 'Get strategies that reference segment',
  description:
    'The strategies using the segment, and those using it in open change requests, in the projects the caller may read. 404 for an unknown segment or one of a private project the caller may not read.',
  request: { params: segmentIdParam },
  responses: { 200: { description: 'The strategies', content: jsonContent(SegmentStrategiesSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const updateFeatureStrategySegmentsRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_FEATURE_STRATEGY, checkedBy: 'handler' },
  path: '/api/admin/segments/strategies',
  operationId: 'updateFeatureStrategySegments',
  tags,
  summary: 'Update strategy segments',
  description:
    "Sets the segments the strategy uses, written as replacing the strategy does (its checks, `feature-strategy-update`); needs UPDATE_FEATURE_STRATEGY in the body's project and environment, " +
    'and SKIP_CHANGE_REQUEST there where the project requires change requests (403 otherwise). 404 when the strategy is not one of that project and environment.',
  request: { body: { required: true, content: jsonContent(UpsertStrategySegmentsSchema) } },
  responses: { 201: { description: 'The segments were set', content: jsonContent(UpsertStrategySegmentsSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const isUuid = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)

export const segmentUsageRoutes = createRouter()
  .openapi(validateSegmentRoute, async (c) => {
    const { name } = c.req.valid('json')
    const [taken] = await c.var.db.select({ id: segments.id }).from(segments).where(eq(segments.name, name.trim()))
    if (taken) throw nameExists(`There already exists a segment with the name ${name.trim()}`)
    return c.body(null, 204)
  })
  .openapi(getSegmentsByStrategyIdRoute, async (c) => {
    const { strategyId } = c.req.valid('param')
    if (!isUuid(strategyId)) return c.json({ segments: [] }, 200)
    const hidden = await hiddenProjectsOf(c)
    const used = await c.var.db
      .select({ id: featureStrategySegments.segmentId })
      .from(featureStrategySegments)
      .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegments.strategyId))
      .innerJoin(features, eq(features.name, featureStrategies.featureName))
      .where(and(eq(featureStrategySegments.strategyId, strategyId), visibleProjectCondition(features.project, hidden)))
    const ids = new Set(used.map((u) => u.id))
    return c.json({ segments: ids.size === 0 ? [] : (await listSegments(c.var.db, hidden)).filter((s) => ids.has(s.id)) }, 200)
  })
  .openapi(getStrategiesBySegmentIdRoute, async (c) => {
    const id = Number(c.req.valid('param').id)
    const hidden = await hiddenProjectsOf(c)
    const [segment] = await c.var.db.select({ id: segments.id }).from(segments).where(and(eq(segments.id, id), visibleProjectCondition(segments.project, hidden)))
    if (!segment) throw notFound(`Could not find segment ${id}`)
    const [strategies, proposed] = await Promise.all([
      c.var.db
        .select({ id: featureStrategies.id, featureName: featureStrategies.featureName, projectId: features.project, environment: featureStrategies.environment, strategyName: featureStrategies.name })
        .from(featureStrategySegments)
        .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegments.strategyId))
        .innerJoin(features, eq(features.name, featureStrategies.featureName))
        .where(and(eq(featureStrategySegments.segmentId, id), visibleProjectCondition(features.project, hidden)))
        .orderBy(featureStrategies.featureName, featureStrategies.environment, featureStrategies.sortOrder),
      c.var.db
        .select({ payload: changeRequestChanges.payload, featureName: changeRequestChanges.feature, projectId: changeRequests.project, environment: changeRequests.environment })
        .from(changeRequestChanges)
        .innerJoin(changeRequests, eq(changeRequests.id, changeRequestChanges.changeRequestId))
        .where(
          and(
            inArray(changeRequests.state, [...OPEN_STATES]),
            inArray(changeRequestChanges.action, ['addStrategy', 'updateStrategy']),
            sql`${changeRequestChanges.payload}->'segments' @> ${JSON.stringify([id])}::jsonb`,
            visibleProjectCondition(changeRequests.project, hidden),
          ),
        )
        .orderBy(changeRequestChanges.id),
    ])
    const changeRequestStrategies = proposed.map(({ payload, ...where }) => {
      const p = payload as { id?: unknown; name?: unknown }
      return { ...(typeof p.id === 'string' ? { id: p.id } : {}), ...where, strategyName: typeof p.name === 'string' ? p.name : '' }
    })
    return c.json({ strategies, changeRequestStrategies }, 200)
  })
  .openapi(updateFeatureStrategySegmentsRoute, async (c) => {
    const body = c.req.valid('json')
    await requireVisibleProject(c, body.projectId)
    requirePermission(c.var.principal, Permission.UPDATE_FEATURE_STRATEGY, { project: body.projectId, environment: body.environmentId })
    const [strategy] = isUuid(body.strategyId)
      ? await c.var.db
          .select({ featureName: featureStrategies.featureName })
          .from(featureStrategies)
          .innerJoin(features, eq(features.name, featureStrategies.featureName))
          .where(and(eq(featureStrategies.id, body.strategyId), eq(featureStrategies.environment, body.environmentId), eq(features.project, body.projectId)))
      : []
    if (!strategy) throw notFound(`Could not find strategy ${body.strategyId} in environment ${body.environmentId} of project ${body.projectId}`)
    const target = { projectId: body.projectId, featureName: strategy.featureName, environment: body.environmentId, strategyId: body.strategyId }
    await rewriteStrategy(c, target, ({ id: _id, featureName: _featureName, ...current }) => ({ ...current, segments: body.segmentIds }))
    return c.json(body, 201)
  })
