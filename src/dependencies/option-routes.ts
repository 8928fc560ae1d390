import * as z from '../http/zod.js'
import { and, eq, sql } from 'drizzle-orm'
import type { Db } from '../db.js'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { projectIdParam } from '../http/common-schemas.js'
import { notFound } from '../core/errors.js'
import { featureDependencies, featureEnvironments, features, featureStrategies } from '../../schema/index.js'
import { hiddenProjectsOf, visibleProjectCondition } from '../projects/visibility.js'

const tags = ['Dependencies']
const names = (schemaName: string) => z.array(z.string()).openapi(schemaName)

const checkDependenciesExistRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/dependencies',
  operationId: 'checkDependenciesExist',
  tags,
  summary: 'Check dependencies exist',
  description: 'Whether any flag depends on another, in any project the caller may read (Unleash answers for the whole instance).',
  request: { params: projectIdParam },
  responses: { 200: { description: 'Whether dependencies exist', content: jsonContent(z.boolean().openapi('dependenciesExistSchema')) }, ...pickErrors(401, 403, 404) },
})

const listParentOptionsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/features/{child}/parents',
  operationId: 'listParentOptions',
  tags,
  summary: 'List parent options',
  description: 'The flags the child may depend on: live flags of its project, other than itself, that depend on no flag (dependencies are one level deep), by name. 404 when the child is not a flag of the project.',
  request: { params: projectIdParam.extend({ child: z.string().openapi({ param: { name: 'child', in: 'path' } }) }) },
  responses: { 200: { description: 'Possible parents', content: jsonContent(names('parentFeatureOptionsSchema')) }, ...pickErrors(401, 403, 404) },
})

const listParentVariantOptionsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/features/{parent}/parent-variants',
  operationId: 'listParentVariantOptions',
  tags,
  summary: 'List parent feature variants',
  description: "The variant names a dependency on this flag may require: those of its environments' variants and of its strategies' variants, each once, by name. 404 when the flag is not in the project.",
  request: { params: projectIdParam.extend({ parent: z.string().openapi({ param: { name: 'parent', in: 'path' } }) }) },
  responses: { 200: { description: 'Possible parent variants', content: jsonContent(names('parentVariantOptionsSchema')) }, ...pickErrors(401, 403, 404) },
})

async function requireFlagIn(db: Db, projectId: string, name: string) {
  const [flag] = await db.select({ name: features.name }).from(features).where(and(eq(features.name, name), eq(features.project, projectId)))
  if (!flag) throw notFound(`Could not find feature flag ${name} in project ${projectId}`)
}

const variantNames = (lists: { variants: unknown }[]) => lists.flatMap((l) => (Array.isArray(l.variants) ? l.variants : []).map((v: { name?: unknown }) => v?.name)).filter((n): n is string => typeof n === 'string')

export const dependencyOptionRoutes = createRouter()
  .openapi(checkDependenciesExistRoute, async (c) => {
    const visible = visibleProjectCondition(features.project, await hiddenProjectsOf(c))
    const [row] = await c.var.db
      .select({ exists: sql<boolean>`true` })
      .from(featureDependencies)
      .innerJoin(features, sql`${features.name} = ${featureDependencies.child}`)
      .where(visible)
      .limit(1)
    return c.json(row !== undefined, 200)
  })
  .openapi(listParentOptionsRoute, async (c) => {
    const { projectId, child } = c.req.valid('param')
    await requireFlagIn(c.var.db, projectId, child)
    const rows = await c.var.db
      .select({ name: features.name })
      .from(features)
      .where(sql`${features.project} = ${projectId} and ${features.name} <> ${child} and ${features.archivedAt} is null
        and not exists (select from ${featureDependencies} d where d.child = ${features.name})`)
      .orderBy(features.name)
    return c.json(rows.map((r) => r.name), 200)
  })
  .openapi(listParentVariantOptionsRoute, async (c) => {
    const { projectId, parent } = c.req.valid('param')
    await requireFlagIn(c.var.db, projectId, parent)
    const [environmentVariants, strategyVariants] = await Promise.all([
      c.var.db.select({ variants: featureEnvironments.variants }).from(featureEnvironments).where(eq(featureEnvironments.featureName, parent)),
      c.var.db.select({ variants: featureStrategies.variants }).from(featureStrategies).where(eq(featureStrategies.featureName, parent)),
    ])
    return c.json([...new Set(variantNames([...environmentVariants, ...strategyVariants]))].sort(), 200)
  })
