import type { StoredChange } from '../change-requests/apply.js'
import type { CreateDependency } from '../dependencies/schemas.js'
import { defaultStrategyFor } from '../flags/store.js'
import { conflict } from '../core/errors.js'
import type { StrategyInput } from '../strategies/schemas.js'
import { normalizeStrategy } from '../strategies/store.js'
import type { VariantInput } from '../variants/schemas.js'
import { normalizeVariants } from '../variants/weights.js'
import type { PlaygroundFlag, PlaygroundStrategy } from './loader.js'

/** Strategies a preview adds have no id yet: they get one naming the change that adds them. */
export const previewStrategyId = (change: StoredChange) => `change-${change.id}`

/** The order the database returns strategies in: sortOrder, then creation (a new one comes after its equals). */
function place(strategies: PlaygroundStrategy[], strategy: PlaygroundStrategy): PlaygroundStrategy[] {
  const at = strategies.findIndex((s) => s.sortOrder > strategy.sortOrder)
  return at === -1 ? [...strategies, strategy] : [...strategies.slice(0, at), strategy, ...strategies.slice(at)]
}

function toStrategy(input: StrategyInput, featureName: string, id: string, sortOrder: number): PlaygroundStrategy {
  const s = normalizeStrategy(input, featureName)
  return { id, sortOrder, ...s, title: s.title ?? undefined }
}

/**
 * Applies a change request's changes, in order, to an in-memory copy of one environment's flags, as
 * applying it would change the rows: nothing is written. A change that could not be applied (its
 * flag archived, its strategy or dependency gone) is a 409, as applying the request would be.
 */
export function applyChangesInMemory(flags: readonly PlaygroundFlag[], changes: readonly StoredChange[], defaultStrategy: StrategyInput | null): PlaygroundFlag[] {
  const byName = new Map(flags.map((f) => [f.name, f]))
  const fail = (change: StoredChange, why: string) =>
    conflict(`Change ${change.id} (${change.action} on ${change.feature}) no longer applies: ${why}`)
  for (const change of changes) {
    const flag = byName.get(change.feature)
    if (!flag) throw fail(change, `there is no live flag ${change.feature} in this project`)
    const payload = change.payload
    const strategyIndex = () => {
      const id = String(payload.id).toLowerCase()
      const i = flag.strategies.findIndex((s) => s.id === id)
      if (i === -1) throw fail(change, `strategy ${id} does not exist`)
      return i
    }
    let next: PlaygroundFlag = flag
    switch (change.action) {
      case 'updateEnabled': {
        const enabled = payload.enabled === true
        next = { ...flag, enabled }
        // Enabling a flag without an enabled strategy adds the default one, as the on operation does.
        if (enabled && !flag.enabled && !flag.strategies.some((s) => s.disabled !== true)) {
          const sortOrder = Math.max(-1, ...flag.strategies.map((s) => s.sortOrder)) + 1
          next.strategies = place(flag.strategies, toStrategy(defaultStrategyFor(defaultStrategy, flag.name), flag.name, previewStrategyId(change), sortOrder))
        }
        break
      }
      case 'addStrategy': {
        const input = payload as unknown as StrategyInput
        const sortOrder = input.sortOrder ?? Math.max(-1, ...flag.strategies.map((s) => s.sortOrder)) + 1
        next = { ...flag, strategies: place(flag.strategies, toStrategy(input, flag.name, previewStrategyId(change), sortOrder)) }
        break
      }
      case 'updateStrategy': {
        const i = strategyIndex()
        const before = flag.strategies[i]!
        const input = payload as unknown as StrategyInput
        const rest = flag.strategies.filter((_, j) => j !== i)
        const updated = toStrategy(input, flag.name, before.id, input.sortOrder ?? before.sortOrder)
        next = { ...flag, strategies: input.sortOrder === undefined ? flag.strategies.map((s, j) => (j === i ? updated : s)) : place(rest, updated) }
        break
      }
      case 'deleteStrategy': {
        const i = strategyIndex()
        next = { ...flag, strategies: flag.strategies.filter((_, j) => j !== i) }
        break
      }
      case 'patchVariant':
        next = { ...flag, variants: normalizeVariants(payload.variants as VariantInput[], { sortByName: true, path: 'variants' }) }
        break
      case 'addDependency': {
        const input = payload as unknown as CreateDependency
        const parent = byName.get(input.feature)
        if (!parent) throw fail(change, `there is no live flag ${input.feature} in this project`)
        const enabled = input.enabled ?? true
        // A flag has one parent: the dependency replaces any other.
        next = { ...flag, dependencies: [{ feature: input.feature, enabled, variants: enabled ? [...new Set(input.variants ?? [])] : [] }] }
        break
      }
      case 'deleteDependency': {
        const parent = String(payload.feature)
        if (!flag.dependencies.some((d) => d.feature === parent)) throw fail(change, `${change.feature} does not depend on ${parent}`)
        next = { ...flag, dependencies: flag.dependencies.filter((d) => d.feature !== parent) }
        break
      }
      case 'archiveFeature':
        byName.delete(change.feature)
        continue
    }
    // As applying does (src/strategies/store.ts): a strategy change that leaves no enabled strategy switches the environment off.
    if (next.enabled && next.strategies !== flag.strategies && !next.strategies.some((s) => s.disabled !== true)) next = { ...next, enabled: false }
    byName.set(change.feature, next)
  }
  return flags.filter((f) => byName.has(f.name)).map((f) => byName.get(f.name)!)
}
