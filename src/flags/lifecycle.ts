import { and, desc, eq, sql } from 'drizzle-orm'
import { featureLifecycles } from '../../schema/index.js'
import type { Db } from '../db.js'

/** Breaks ties between stages entered at the same instant: the later stage in the lifecycle wins. `column` is SQL naming a stage. */
export const stageRankOf = (column: string) => sql.raw(`array_position(array['initial','pre-live','live','completed','archived'], ${column})`)
export const stageRank = stageRankOf('"feature_lifecycles"."stage"')

export async function currentStage(tx: Db, featureName: string): Promise<string> {
  const [row] = await tx.select({ stage: featureLifecycles.stage }).from(featureLifecycles).where(eq(featureLifecycles.featureName, featureName)).orderBy(desc(featureLifecycles.enteredStageAt), desc(stageRank)).limit(1)
  return row?.stage ?? 'initial'
}

export async function enterStage(tx: Db, featureName: string, stage: string, now: Date, status?: { status: string; statusValue?: string | undefined }) {
  await tx
    .insert(featureLifecycles)
    .values({ featureName, stage, enteredStageAt: now, status: status?.status ?? null, statusValue: status?.statusValue ?? null })
    .onConflictDoUpdate({
      target: [featureLifecycles.featureName, featureLifecycles.stage],
      set: { enteredStageAt: now, status: status?.status ?? null, statusValue: status?.statusValue ?? null },
    })
}

export async function leaveStage(tx: Db, featureName: string, stage: string) {
  await tx.delete(featureLifecycles).where(and(eq(featureLifecycles.featureName, featureName), eq(featureLifecycles.stage, stage)))
}

/** Enabling moves a flag forward only: initial → pre-live (any non-production environment) → live (production). */
export async function advanceOnEnable(tx: Db, featureName: string, environmentType: string, now: Date, knownStage?: string) {
  const stage = knownStage ?? (await currentStage(tx, featureName))
  if (environmentType === 'production' && (stage === 'initial' || stage === 'pre-live')) await enterStage(tx, featureName, 'live', now)
  else if (environmentType !== 'production' && stage === 'initial') await enterStage(tx, featureName, 'pre-live', now)
}
