import { and, eq } from 'drizzle-orm'
import { featureEnvironments } from '../../schema/index.js'
import type { Db } from '../db.js'
import { zodValidationError } from '../http/openapi.js'
import { recordEvents, type Actor } from '../events/store.js'
import { featureEnvironmentOf, lockForChange, requireFeature } from '../flags/lock.js'
import { applyJsonPatch } from '../flags/store.js'
import type { PatchOperation } from '../flags/schemas.js'
import { VariantsInputSchema, type Variant } from './schemas.js'
import { normalizeVariants } from './weights.js'

/** Validates a whole variant list as clients send it and returns it normalized (weights computed, sorted by name). */
function toVariants(candidate: unknown): Variant[] {
  const parsed = VariantsInputSchema.safeParse(candidate)
  if (!parsed.success) throw zodValidationError(parsed.error, 'variants')
  return normalizeVariants(parsed.data, { sortByName: true, path: 'variants' })
}

/**
 * Operation 4: patches the flag's variants (those of its first environment) and stores the result in
 * every environment, in one transaction (unlike Unleash, all environments or none). One
 * `feature-variants-updated` event per environment, each with that environment's old variants.
 */
export async function patchFeatureVariants(db: Db, actor: Actor, now: Date, projectId: string, featureName: string, operations: PatchOperation[]) {
  return db.transaction(async (tx) => {
    const { row, tags, environments: envs } = await lockForChange(tx, projectId, featureName)
    const current = (envs[0]?.variants ?? []) as Variant[]
    const variants = toVariants(applyJsonPatch(current, operations))
    await recordEvents(
      tx,
      actor,
      now,
      envs.map((e) => ({ type: 'feature-variants-updated', project: row.project, featureName, environment: e.environment, data: { variants }, preData: { variants: e.variants }, tags })),
      { alongside: [tx.update(featureEnvironments).set({ variants }).where(eq(featureEnvironments.featureName, featureName))] },
    )
    return variants
  })
}

export async function getEnvironmentVariants(db: Db, projectId: string, featureName: string, environment: string): Promise<Variant[]> {
  await requireFeature(db, projectId, featureName)
  return (await featureEnvironmentOf(db, featureName, environment)).fe.variants as Variant[]
}

/** Sets one environment's variants, from a whole list (PUT) or a patch of the current one (PATCH). */
export async function setEnvironmentVariants(
  db: Db,
  actor: Actor,
  now: Date,
  target: { projectId: string; featureName: string; environment: string },
  change: { replace: unknown } | { patch: PatchOperation[] },
) {
  return db.transaction(async (tx) => {
    const { row, tags, fe } = await lockForChange(tx, target.projectId, target.featureName, target.environment)
    const before = fe.variants as Variant[]
    const variants = toVariants('replace' in change ? change.replace : applyJsonPatch(before, change.patch))
    const update = tx
      .update(featureEnvironments)
      .set({ variants })
      .where(and(eq(featureEnvironments.featureName, target.featureName), eq(featureEnvironments.environment, target.environment)))
    const event = {
      type: 'feature-environment-variants-updated',
      project: row.project,
      featureName: target.featureName,
      environment: target.environment,
      data: { variants },
      preData: { variants: before },
      tags,
    } as const
    await recordEvents(tx, actor, now, [event], { alongside: [update] })
    return variants
  })
}
