import { and, eq, ne } from 'drizzle-orm'
import { featureDependencies } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { lockFeature, lockFlags, tagsOf } from '../flags/lock.js'
import type { CreateDependency } from './schemas.js'

type DependencyRow = typeof featureDependencies.$inferSelect

const viewOf = (row: DependencyRow) => ({ feature: row.parent, enabled: row.enabled, variants: row.variants as string[] })

/**
 * Makes `child` depend on `input.feature`. As in Unleash a flag has one parent: adding a dependency on
 * another parent replaces the current one, and re-adding the same parent replaces its enabled/variants.
 */
export async function addDependency(db: Db, caller: Author, projectId: string, child: string, input: CreateDependency): Promise<void> {
  const { actor, now } = caller
  const parent = input.feature
  const enabled = input.enabled ?? true
  const dependency = { feature: parent, enabled, variants: enabled ? [...new Set(input.variants ?? [])] : [] }
  await db.transaction(async (tx) => {
    // Both rows in one statement, in name order: two requests linking the same flags the other way round
    // queue up instead of deadlocking, and the chain checks below see each other's result.
    const rows = await lockFlags(tx, [child, parent])
    const childRow = rows.find((r) => r.name === child)
    if (!childRow || childRow.project !== projectId || childRow.archivedAt) throw notFound(`Could not find feature flag ${child} in project ${projectId}`)
    if (parent === child) throw validationError('A feature flag cannot depend on itself', [{ path: 'body.feature', message: 'must name another flag' }])
    const parentRow = rows.find((r) => r.name === parent)
    if (!parentRow || parentRow.archivedAt) throw validationError(`The parent flag ${parent} does not exist or is archived`, [{ path: 'body.feature', message: `no live flag named ${parent}` }])
    if (parentRow.project !== projectId) {
      throw validationError(`The parent flag ${parent} is in project ${parentRow.project}: a flag can only depend on a flag of its own project (${projectId})`, [
        { path: 'body.feature', message: 'must be a flag of the same project' },
      ])
    }

    const [grandparent] = await tx.select({ parent: featureDependencies.parent }).from(featureDependencies).where(eq(featureDependencies.child, parent)).limit(1)
    if (grandparent) throw validationError(`${parent} itself depends on ${grandparent.parent}: dependencies cannot be chained, so ${parent} cannot be a parent`)
    const [grandchild] = await tx.select({ child: featureDependencies.child }).from(featureDependencies).where(eq(featureDependencies.parent, child)).limit(1)
    if (grandchild) throw validationError(`${grandchild.child} depends on ${child}: dependencies cannot be chained, so ${child} cannot get a parent`)

    const [replaced] = await tx.delete(featureDependencies).where(and(eq(featureDependencies.child, child), ne(featureDependencies.parent, parent))).returning()
    const [previous] = await tx.select().from(featureDependencies).where(and(eq(featureDependencies.child, child), eq(featureDependencies.parent, parent)))
    await tx
      .insert(featureDependencies)
      .values({ child, parent, enabled: dependency.enabled, variants: dependency.variants })
      .onConflictDoUpdate({ target: [featureDependencies.child, featureDependencies.parent], set: { enabled: dependency.enabled, variants: dependency.variants } })
    const before = previous ?? replaced
    await recordEvents(tx, actor, now, [
      { type: 'feature-dependency-added', project: projectId, featureName: child, data: dependency, preData: before ? viewOf(before) : null, tags: await tagsOf(tx, child) },
    ])
  })
}

export async function removeDependency(db: Db, caller: Author, projectId: string, child: string, parent: string): Promise<void> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    await lockFeature(tx, projectId, child)
    const [removed] = await tx.delete(featureDependencies).where(and(eq(featureDependencies.child, child), eq(featureDependencies.parent, parent))).returning()
    if (!removed) throw notFound(`Feature flag ${child} does not depend on ${parent}`)
    await recordEvents(tx, actor, now, [{ type: 'feature-dependency-removed', project: projectId, featureName: child, data: null, preData: viewOf(removed), tags: await tagsOf(tx, child) }])
  })
}

/** Removes every parent of the flag; an event only when there was one. */
export async function removeDependencies(db: Db, caller: Author, projectId: string, child: string): Promise<void> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    await lockFeature(tx, projectId, child)
    const removed = await tx.delete(featureDependencies).where(eq(featureDependencies.child, child)).returning()
    if (removed.length === 0) return
    await recordEvents(tx, actor, now, [
      { type: 'feature-dependencies-removed', project: projectId, featureName: child, data: null, preData: removed.map(viewOf), tags: await tagsOf(tx, child) },
    ])
  })
}
