import { validationError } from '../core/errors.js'
import { exceedsLimit, resourceLimits } from '../strategies/schemas.js'

/*
 * The size of an import document, counted on the parsed JSON before its schema is checked: a document too large to
 * import is refused in a few milliseconds, before the schema walks it (a refused 8,000-strategy import took ~0.3 s of
 * parsing and checks; an accepted 1,000 × 9 one seconds). Each limit is above what the largest real export holds:
 * Unleash exports one environment of a project's flags, at most 30 strategies each (its resource limit); a project of
 * 1,000 flags averaging 9 strategies with 3 constraints each passes all of them.
 */

/**
 * Flags and strategies: the schema's list limits (importTogglesSchema), counted earlier; constraints and values: across
 * the document; dependencies: the parents named across all flags (a flag has at most one, so a real export names at
 * most one per flag; the schema alone would let 1,000 × 100 through).
 */
export const IMPORT_DOCUMENT_LIMITS = { flags: 1_000, strategies: 10_000, constraints: 30_000, constraintValues: 150_000, dependencies: 10_000 } as const
/** The state restore's: its schema's list limits, and the constraints and values of all its strategies and segments. */
export const STATE_DOCUMENT_LIMITS = { features: 10_000, featureStrategies: 50_000, featureEnvironments: 50_000, featureTags: 50_000, featureStrategySegments: 50_000, featureLinks: 50_000, constraints: 150_000, constraintValues: 500_000 } as const

const list = (value: unknown, key: string): unknown[] => {
  const found = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined
  return Array.isArray(found) ? found : []
}

/**
 * Tags of one flag in a document, and the tags its tag events would carry: each `feature-tagged` event holds the flag's
 * tags (as Unleash's), so n tags on a flag make n events of n tags — 2,000 on one flag took 37 s and ended in a 500.
 */
export const TAG_LIMITS = { perFlag: 50, carriedByEvents: 500_000 } as const

/** The [what, found, limit, path] counts of a document's tags per flag (`featureTags` items name their flag). */
function tagCounts(tags: unknown[], path: string): [string, number, number, string][] {
  const perFlag = new Map<unknown, number>()
  for (const t of tags) {
    const flag = (t as { featureName?: unknown } | null)?.featureName
    perFlag.set(flag, (perFlag.get(flag) ?? 0) + 1)
  }
  let most = 0
  let carried = 0
  for (const n of perFlag.values()) {
    most = Math.max(most, n)
    carried += n * n
  }
  return [
    ['tags on one flag', most, TAG_LIMITS.perFlag, path],
    ['tags carried by the tag events (the tags of each flag, once per tag event)', carried, TAG_LIMITS.carriedByEvents, path],
  ]
}

/** Throws the 400 of the first count over its limit: `counts` are [what, found, limit, path]. */
function within(counts: [string, number, number, string][]): void {
  for (const [what, found, limit, path] of counts) {
    if (found <= limit) continue
    const [n, max] = [found.toLocaleString('en-US'), limit.toLocaleString('en-US')]
    throw validationError(`The document is too large to import: ${n} ${what}, more than the limit of ${max} in one document`, [{ path, message: `${n} ${what}: at most ${max}` }])
  }
}

/** Constraints and their values in lists of strategies and segments. */
function constraintsOf(items: unknown[]): [number, number] {
  let constraints = 0
  let values = 0
  for (const item of items) {
    const all = list(item, 'constraints')
    constraints += all.length
    for (const c of all) values += list(c, 'values').length
  }
  return [constraints, values]
}

/**
 * POST /api/admin/features-batch/import and /validate: the document's flags, strategies, constraints and values;
 * on the import (`perFlag`), also the strategies of one flag past the resource limit (the import refuses it anyway,
 * after parsing it all; validate answers it among its errors).
 */
export function checkImportDocument(body: unknown, perFlag: boolean): void {
  const data = (body as { data?: unknown } | null)?.data
  const strategies = list(data, 'featureStrategies')
  const [constraints, values] = constraintsOf([...strategies, ...list(data, 'segments')])
  const L = IMPORT_DOCUMENT_LIMITS
  const at = 'body.data.featureStrategies'
  const parents = list(data, 'dependencies').reduce((n: number, d) => n + list(d, 'dependencies').length, 0)
  within([
    ['flags', list(data, 'features').length, L.flags, 'body.data.features'],
    ['strategies', strategies.length, L.strategies, at],
    ['constraints', constraints, L.constraints, at],
    ['constraint values', values, L.constraintValues, at],
    ['dependencies', parents, L.dependencies, 'body.data.dependencies'],
    ...tagCounts(list(data, 'featureTags'), 'body.data.featureTags'),
  ])
  if (!perFlag) return
  const limit = resourceLimits().featureEnvironmentStrategies
  const ofFlag = new Map<unknown, number>()
  for (const s of strategies) {
    const flag = (s as { featureName?: unknown } | null)?.featureName
    const held = (ofFlag.get(flag) ?? 0) + 1
    ofFlag.set(flag, held)
    if (held > limit) throw validationError(`${exceedsLimit('strategy', limit)} The flag ${String(flag)} has more strategies in the import.`, [{ path: at, message: `${String(flag)}: more than ${limit}` }])
  }
}

/** POST /api/admin/state/import: each list and the constraints of every strategy and segment. */
export function checkStateDocument(body: unknown): void {
  const [constraints, values] = constraintsOf([...list(body, 'featureStrategies'), ...list(body, 'segments')])
  const { constraints: C, constraintValues: V, ...lists } = STATE_DOCUMENT_LIMITS
  within([...Object.entries(lists).map(([key, limit]): [string, number, number, string] => [key, list(body, key).length, limit, `body.${key}`]), ['constraints', constraints, C, 'body.featureStrategies'], ['constraint values', values, V, 'body.featureStrategies'], ...tagCounts(list(body, 'featureTags'), 'body.featureTags')])
}
