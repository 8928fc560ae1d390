import * as z from '../http/zod.js'
import { sql } from 'drizzle-orm'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { featureLifecycles, features } from '../../schema/index.js'
import { queryRows } from '../db.js'
import { stageRank } from '../flags/lifecycle.js'
import { hiddenProjectsOf, visibleProjectCondition } from '../projects/visibility.js'

const FeatureLifecycleCountSchema = z
  .object({ initial: z.number().int(), preLive: z.number().int(), live: z.number().int(), completed: z.number().int(), archived: z.number().int() })
  .openapi('featureLifecycleCountSchema')

const getFeatureLifecycleStageCountRoute = adminRoute({
  method: 'get',
  path: '/api/admin/lifecycle/count',
  operationId: 'getFeatureLifecycleStageCount',
  tags: ['Lifecycle'],
  summary: 'Count flags in each lifecycle stage',
  description: "How many flags are in each stage now (a flag's newest stage; archived flags count as archived), over the projects the caller may read.",
  responses: { 200: { description: 'Flags per stage', content: jsonContent(FeatureLifecycleCountSchema) }, ...pickErrors(401, 403) },
})

export const lifecycleCountRoutes = createRouter().openapi(getFeatureLifecycleStageCountRoute, async (c) => {
  const visible = visibleProjectCondition(features.project, await hiddenProjectsOf(c))
  const rows = await queryRows<{ stage: string; count: number }>(
    c.var.db,
    sql`select stage, count(*)::int as count from (
      select distinct on (${featureLifecycles.featureName}) ${featureLifecycles.stage} as stage
      from ${featureLifecycles} join ${features} on ${features.name} = ${featureLifecycles.featureName}
      ${visible ? sql`where ${visible}` : sql``}
      order by ${featureLifecycles.featureName}, ${featureLifecycles.enteredStageAt} desc, ${stageRank} desc) current group by stage`,
  )
  const count = (stage: string) => rows.find((r) => r.stage === stage)?.count ?? 0
  return c.json({ initial: count('initial'), preLive: count('pre-live'), live: count('live'), completed: count('completed'), archived: count('archived') }, 200)
})
