import { sql } from 'drizzle-orm'
import { featureLifecycles } from '../../schema/index.js'
import type { Db } from '../db.js'

/** Breaks ties between stages entered at the same instant: the later stage in the lifecycle wins. `column` is SQL naming a stage. */
export const stageRankOf = (column: string) => sql.raw(`array_position(array['initial','pre-live','live','completed','archived'], ${column})`)
export const stageRank = stageRankOf('"feature_lifecycles"."stage"')

export async function enterStage(tx: Db, featureName: string, stage: string, now: Date, status?: { status: string; statusValue?: string | undefined }) {
  await tx
    .insert(featureLifecycles)
    .values({ featureName, stage, enteredStageAt: now, status: status?.status ?? null, statusValue: status?.statusValue ?? null })
    .onConflictDoUpdate({
      target: [featureLifecycles.featureName, featureLifecycles.stage],
      set: { enteredStageAt: now, status: status?.status ?? null, statusValue: status?.statusValue ?? null },
    })
}

/** The stage enabling a flag in an environment of that type moves it to, if any: initial → pre-live (any non-production environment) → live (production). */
export function stageOnEnable(environmentType: string, stage: string): string | undefined {
  if (environmentType === 'production') return stage === 'initial' || stage === 'pre-live' ? 'live' : undefined
  return stage === 'initial' ? 'pre-live' : undefined
}
