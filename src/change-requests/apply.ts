import type { Db } from '../db.js'
import type { Caller } from '../core/principal.js'
import { addDependency, removeDependency } from '../dependencies/store.js'
import type { CreateDependency } from '../dependencies/schemas.js'
import { archiveFeature, setEnvironmentEnabled } from '../flags/store.js'
import type { StrategyInput } from '../strategies/schemas.js'
import { addFlagStrategy, deleteFlagStrategy, updateFlagStrategy } from '../strategies/store.js'
import { setEnvironmentVariants } from '../variants/store.js'
import type { ChangeInput } from './schemas.js'


/** A stored change: what apply and the playground preview act on. */
export interface StoredChange {
  id: number
  feature: string
  action: ChangeInput['action']
  payload: Record<string, unknown>
}

/**
 * Applies one stored change with the direct route's own write function, inside the caller's
 * transaction: each of those opens a nested transaction (a savepoint), so its checks, locks and
 * events are exactly the direct route's, and a failure rolls the whole change request back.
 */
export async function applyChange(tx: Db, caller: Caller, where: { project: string; environment: string }, change: StoredChange): Promise<void> {
  const target = { projectId: where.project, featureName: change.feature, environment: where.environment }
  const payload = change.payload
  switch (change.action) {
    case 'updateEnabled':
      await setEnvironmentEnabled(tx, caller, { ...target, enabled: payload.enabled === true })
      return
    case 'addStrategy':
      await addFlagStrategy(tx, caller, target, payload as unknown as StrategyInput)
      return
    case 'updateStrategy':
      await updateFlagStrategy(tx, caller, { ...target, strategyId: String(payload.id) }, payload as unknown as StrategyInput)
      return
    case 'deleteStrategy':
      await deleteFlagStrategy(tx, caller, { ...target, strategyId: String(payload.id) })
      return
    case 'patchVariant':
      await setEnvironmentVariants(tx, caller, target, { replace: payload.variants })
      return
    case 'addDependency':
      await addDependency(tx, caller, where.project, change.feature, payload as unknown as CreateDependency)
      return
    case 'deleteDependency':
      await removeDependency(tx, caller, where.project, change.feature, String(payload.feature))
      return
    case 'archiveFeature':
      await archiveFeature(tx, caller, where.project, change.feature)
      return
  }
}
