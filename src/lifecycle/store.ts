import { asc, desc, eq } from 'drizzle-orm'
import { featureLifecycles, features } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { lockFeature, tagsOf } from '../flags/lock.js'
import { enterStage, leaveStage, stageRank } from '../flags/lifecycle.js'
import type { Complete, LifecycleStage } from './schemas.js'

/** The stages the flag went through, oldest first. Archived flags too: their last stage is `archived`. */
export async function getLifecycle(db: Db, projectId: string, featureName: string): Promise<LifecycleStage[]> {
  const [flag] = await db.select({ project: features.project, createdAt: features.createdAt }).from(features).where(eq(features.name, featureName))
  if (!flag || flag.project !== projectId) throw notFound(`Could not find feature flag ${featureName} in project ${projectId}`)
  const rows = await db.select().from(featureLifecycles).where(eq(featureLifecycles.featureName, featureName)).orderBy(asc(featureLifecycles.enteredStageAt), asc(stageRank))
  // A flag with no recorded stage is in its initial stage since creation, as the Feature object says.
  if (rows.length === 0) return [{ stage: 'initial', enteredStageAt: flag.createdAt.toISOString() }]
  return rows.map((r) => ({
    stage: r.stage as LifecycleStage['stage'],
    enteredStageAt: r.enteredStageAt.toISOString(),
    ...(r.status !== null ? { status: r.status } : {}),
  }))
}

/** The current stage row (the newest), as the events carry it. */
async function currentState(tx: Db, featureName: string) {
  const [row] = await tx.select().from(featureLifecycles).where(eq(featureLifecycles.featureName, featureName)).orderBy(desc(featureLifecycles.enteredStageAt), desc(stageRank)).limit(1)
  if (!row) return { stage: 'initial' }
  return { stage: row.stage, ...(row.status !== null ? { status: row.status } : {}), ...(row.statusValue !== null ? { statusValue: row.statusValue } : {}) }
}

/** Moves the flag to `completed` from any stage; completing a completed flag again records its new status. */
export async function completeFeature(db: Db, caller: Author, projectId: string, featureName: string, input: Complete): Promise<void> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    await lockFeature(tx, projectId, featureName)
    const before = await currentState(tx, featureName)
    await enterStage(tx, featureName, 'completed', now, input)
    await recordEvents(tx, actor, now, [
      { type: 'feature-completed', project: projectId, featureName, data: await currentState(tx, featureName), preData: before, tags: await tagsOf(tx, featureName) },
    ])
  })
}

/** Drops the completed stage, so the flag is back in the stage it was in before. */
export async function uncompleteFeature(db: Db, caller: Author, projectId: string, featureName: string): Promise<void> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    await lockFeature(tx, projectId, featureName)
    const before = await currentState(tx, featureName)
    if (before.stage !== 'completed') throw validationError(`Feature flag ${featureName} is not completed (its stage is ${before.stage}): there is nothing to uncomplete`)
    await leaveStage(tx, featureName, 'completed')
    await recordEvents(tx, actor, now, [
      { type: 'feature-uncompleted', project: projectId, featureName, data: await currentState(tx, featureName), preData: before, tags: await tagsOf(tx, featureName) },
    ])
  })
}
