import { and, eq, sql } from 'drizzle-orm'
import { featureEnvironments } from '../../schema/index.js'
import type { Db } from '../db.js'
import { recordEvents } from '../events/store.js'
import type { EventTag, NewEvent } from '../events/types.js'
import type { Actor } from '../core/principal.js'

/** The event of switching a flag on or off in an environment: the same whoever switches it. */
export function switchedEvent(project: string, featureName: string, environment: string, enabled: boolean, tags: EventTag[]): NewEvent {
  return { type: enabled ? 'feature-environment-enabled' : 'feature-environment-disabled', project, featureName, environment, data: { enabled }, preData: { enabled: !enabled }, tags }
}

/**
 * An enabled environment never serves an empty strategy list (SDKs read it as on for everyone): when a
 * change leaves the flag's enabled environment with no enabled strategy, the same transaction switches it
 * off with its `feature-environment-disabled` event, as Unleash does. Call it under the flag's lock, after
 * the change. True when it switched the environment off.
 */
export async function switchOffWithoutEnabledStrategy(
  tx: Db,
  actor: Actor,
  now: Date,
  target: { project: string; featureName: string; environment: string; tags: EventTag[] },
): Promise<boolean> {
  const switchedOff = await tx
    .update(featureEnvironments)
    .set({ enabled: false })
    .where(
      and(
        eq(featureEnvironments.featureName, target.featureName),
        eq(featureEnvironments.environment, target.environment),
        eq(featureEnvironments.enabled, true),
        sql`not exists (select 1 from feature_strategies s where s.feature_name = ${target.featureName} and s.environment = ${target.environment} and not s.disabled)`,
      ),
    )
    .returning({ environment: featureEnvironments.environment })
  if (switchedOff.length === 0) return false
  await recordEvents(tx, actor, now, [switchedEvent(target.project, target.featureName, target.environment, false, target.tags)])
  return true
}
