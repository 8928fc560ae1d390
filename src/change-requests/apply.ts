import type { Db } from '../db.js'
import type { Actor } from '../events/store.js'
import { addDependency, removeDependency } from '../dependencies/store.js'
import type { CreateDependency } from '../dependencies/schemas.js'
import { archiveFeature, setEnvironmentEnabled } from '../flags/store.js'
import type { StrategyInput } from '../strategies/schemas.js'
import { deleteStrategy, insertStrategy, updateStrategy, withLockedTarget } from '../strategies/store.js'
import { setEnvironmentVariants } from '../variants/store.js'
import type { StoredChange } from './store.js'

/**
 * Applies one stored change with the direct route's own write function, inside the caller's
 * transaction: each of those opens a nested transaction (a savepoint), so its checks, locks and
 * events are exactly the direct route's, and a failure rolls the whole change request back.
 */
export async function applyChange(tx: Db, actor: Actor, principal: string, now: Date, where: { project: string; environment: string }, change: StoredChange): Promise<void> {
  const target = { projectId: where.project, featureName: change.feature, environment: where.environment }
  const payload = change.payload
  switch (change.action) {
    case 'updateEnabled':
      await setEnvironmentEnabled(tx, actor, now, principal, target, payload.enabled === true)
      return
    case 'addStrategy':
      await withLockedTarget(tx, { actor, now }, target, (t, locked) => insertStrategy(t, actor, now, locked, payload as unknown as StrategyInput))
      return
    case 'updateStrategy':
      await withLockedTarget(tx, { actor, now }, target, (t, locked) => updateStrategy(t, actor, now, locked, String(payload.id), payload as unknown as StrategyInput))
      return
    case 'deleteStrategy':
      await withLockedTarget(tx, { actor, now }, target, (t, locked) => deleteStrategy(t, actor, now, locked, String(payload.id)))
      return
    case 'patchVariant':
      await setEnvironmentVariants(tx, actor, now, target, { replace: payload.variants })
      return
    case 'addDependency':
      await addDependency(tx, actor, now, where.project, change.feature, payload as unknown as CreateDependency)
      return
    case 'deleteDependency':
      await removeDependency(tx, actor, now, where.project, change.feature, String(payload.feature))
      return
    case 'archiveFeature':
      await archiveFeature(tx, actor, now, where.project, change.feature)
      return
  }
}
