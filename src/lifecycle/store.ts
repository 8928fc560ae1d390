import { asc, eq, sql } from 'drizzle-orm'
import { featureLifecycles, features } from '../../schema/index.js'
import { untilUnchanged, type Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { stageRank } from '../flags/lifecycle.js'
import { flagVersionRead, guardSql, guardValues } from '../flags/states.js'
import { LIFECYCLE_STAGES } from '../flags/schemas.js'
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

interface StageRow {
  stage: string
  status: string | null
  statusValue: string | null
  enteredAtMs: number
}

/** A flag as completing reads it: with the stages its lifecycle entered. */
const flagForLifecycle = flagVersionRead<{ stages: StageRow[] }>('flagpost_flag_for_lifecycle', {
  extra: sql`coalesce((select json_agg(json_build_object('stage', l.stage, 'status', l.status, 'statusValue', l.status_value, 'enteredAtMs', (extract(epoch from l.entered_stage_at) * 1000)::float8)) from ${featureLifecycles} l where l.feature_name = f.name), '[]') as stages`,
})

/** A stage's place in the lifecycle (as stageRankOf's). */
const rank = (stage: string) => (LIFECYCLE_STAGES as readonly string[]).indexOf(stage)

/** The current stage of these stages (the newest, the later in the lifecycle on a tie), as the events carry it. */
function currentOf(stages: StageRow[]) {
  const [row] = stages.toSorted((a, b) => b.enteredAtMs - a.enteredAtMs || rank(b.stage) - rank(a.stage))
  if (!row) return { stage: 'initial' }
  return { stage: row.stage, ...(row.status !== null ? { status: row.status } : {}), ...(row.statusValue !== null ? { statusValue: row.statusValue } : {}) }
}

/** A live flag of the project as completing reads it; 404 otherwise. */
async function readLiveFlag(db: Db, projectId: string, featureName: string) {
  const [flag] = await flagForLifecycle(db, { name: featureName })
  if (!flag || flag.feature.project !== projectId || flag.feature.archived) throw notFound(`Could not find feature flag ${featureName} in project ${projectId}`)
  return flag
}

const p = (name: string) => sql.placeholder(name)

/** Entering the completed stage (the version check moves the flag's version on: its stage is versioned), with the event. */
const completeFlag = eventsStatement('flagpost_complete_flag', {
  alongside: [
    guardSql(),
    sql`insert into ${featureLifecycles} (feature_name, stage, entered_stage_at, status, status_value)
      select ${p('name')}, 'completed', ${p('createdAt')}::timestamptz, ${p('status')}, ${p('statusValue')} where ${guardPassed}
      on conflict (feature_name, stage) do update set entered_stage_at = excluded.entered_stage_at, status = excluded.status, status_value = excluded.status_value
      returning feature_name`,
  ],
  guarded: true,
})

/** Leaving the completed stage, with the event. */
const uncompleteFlag = eventsStatement('flagpost_uncomplete_flag', {
  alongside: [guardSql(), sql`delete from ${featureLifecycles} where feature_name = ${p('name')} and stage = 'completed' and ${guardPassed} returning feature_name`],
  guarded: true,
})

/**
 * POST /api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete: moves the flag to `completed` from
 * any stage; completing a completed flag again records its new status. Read, then written in one statement checked
 * against the flag's version (read again when it moved).
 */
export async function completeFeature(db: Db, caller: Author, projectId: string, featureName: string, input: Complete): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Feature flag ${featureName}`, async () => {
    const flag = await readLiveFlag(db, projectId, featureName)
    const completed = { stage: 'completed', status: input.status, statusValue: input.statusValue ?? null, enteredAtMs: now.getTime() }
    const after = currentOf([...flag.stages.filter((s) => s.stage !== 'completed'), completed])
    const event: NewEvent = { type: 'feature-completed', project: projectId, featureName, data: after, preData: currentOf(flag.stages), tags: flag.tags }
    const { written } = await completeFlag(db, actor, now, [event], { ...guardValues(flag), status: completed.status, statusValue: completed.statusValue })
    return written > 0 || undefined
  })
}

/** POST …/lifecycle/uncomplete: drops the completed stage, so the flag is back in the stage it was in before. Written as completeFeature. */
export async function uncompleteFeature(db: Db, caller: Author, projectId: string, featureName: string): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Feature flag ${featureName}`, async () => {
    const flag = await readLiveFlag(db, projectId, featureName)
    const before = currentOf(flag.stages)
    if (before.stage !== 'completed') throw validationError(`Feature flag ${featureName} is not completed (its stage is ${before.stage}): there is nothing to uncomplete`)
    const after = currentOf(flag.stages.filter((s) => s.stage !== 'completed'))
    const event: NewEvent = { type: 'feature-uncompleted', project: projectId, featureName, data: after, preData: before, tags: flag.tags }
    const { written } = await uncompleteFlag(db, actor, now, [event], guardValues(flag))
    return written > 0 || undefined
  })
}
