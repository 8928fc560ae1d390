import { validationError } from '../core/errors.js'
import { exceedsLimit, resourceLimits } from '../strategies/schemas.js'

/*
 * The size of an import document, counted on the parsed JSON before its schema is checked: a document too large to
 * import is refused in a few milliseconds, before the schema walks it (a refused 8,000-strategy import took ~70 ms
 * of parsing alone; an accepted 1,000 × 9 one seconds). Each limit is above what the largest real export holds:
 * Unleash exports one environment of a project's flags, at most 30 strategies each (its resource limit); a project
 * of 1,000 flags averaging 9 strategies with 3 constraints each passes all of them.
 */
/** Flags and strategies: the schema's list limits (importTogglesSchema), counted earlier; constraints and values: across the document. */
export const IMPORT_DOCUMENT_LIMITS = { flags: 1_000, strategies: 10_000, constraints: 30_000, constraintValues: 150_000 } as const
/** The state restore's: its schema's list limits, and the constraints and values of all its strategies and segments. */
export const STATE_DOCUMENT_LIMITS = { features: 10_000, featureStrategies: 50_000, featureEnvironments: 50_000, featureTags: 50_000, featureStrategySegments: 50_000, featureLinks: 50_000, constraints: 150_000, constraintValues: 500_000 } as const

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const field = (value: unknown, key: string): unknown => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined)
const count = (n: number) => n.toLocaleString('en-US')

function tooLarge(what: string, found: number, limit: number, path: string): never {
  throw validationError(`The document is too large to import: ${count(found)} ${what}, more than the limit of ${count(limit)} in one document (import it in parts, e.g. by project or by tag)`, [
    { path, message: `${count(found)} ${what}: at most ${count(limit)}` },
  ])
}

/** Constraints and their values in a list of strategies (or segments). */
function constraintsOf(items: unknown[]): { constraints: number; values: number } {
  let constraints = 0
  let values = 0
  for (const item of items) {
    const list = asList(field(item, 'constraints'))
    constraints += list.length
    for (const c of list) values += asList(field(c, 'values')).length
  }
  return { constraints, values }
}

/**
 * POST /api/admin/features-batch/import and /validate: the document's flags, strategies, constraints and values;
 * on the import (`perFlag`), also the strategies of one flag past the resource limit (the import refuses it anyway,
 * after parsing it all; validate answers it among its errors).
 */
export function checkImportDocument(body: unknown, perFlag: boolean): void {
  const data = field(body, 'data')
  const flags = asList(field(data, 'features')).length
  if (flags > IMPORT_DOCUMENT_LIMITS.flags) tooLarge('flags', flags, IMPORT_DOCUMENT_LIMITS.flags, 'body.data.features')
  const strategies = asList(field(data, 'featureStrategies'))
  if (strategies.length > IMPORT_DOCUMENT_LIMITS.strategies) tooLarge('strategies', strategies.length, IMPORT_DOCUMENT_LIMITS.strategies, 'body.data.featureStrategies')
  const segments = asList(field(data, 'segments'))
  const { constraints, values } = constraintsOf([...strategies, ...segments])
  if (constraints > IMPORT_DOCUMENT_LIMITS.constraints) tooLarge('constraints', constraints, IMPORT_DOCUMENT_LIMITS.constraints, 'body.data.featureStrategies')
  if (values > IMPORT_DOCUMENT_LIMITS.constraintValues) tooLarge('constraint values', values, IMPORT_DOCUMENT_LIMITS.constraintValues, 'body.data.featureStrategies')
  if (!perFlag) return
  const limit = resourceLimits().featureEnvironmentStrategies
  const ofFlag = new Map<unknown, number>()
  for (const s of strategies) {
    const flag = field(s, 'featureName')
    const held = (ofFlag.get(flag) ?? 0) + 1
    ofFlag.set(flag, held)
    if (held > limit) throw validationError(`${exceedsLimit('strategy', limit)} The flag ${String(flag)} has more strategies in the import.`, [{ path: 'body.data.featureStrategies', message: `${String(flag)}: more than ${limit} strategies` }])
  }
}

/** POST /api/admin/state/import: each list and the constraints of every strategy and segment. */
export function checkStateDocument(body: unknown): void {
  for (const key of ['features', 'featureStrategies', 'featureEnvironments', 'featureTags', 'featureStrategySegments', 'featureLinks'] as const) {
    const n = asList(field(body, key)).length
    if (n > STATE_DOCUMENT_LIMITS[key]) tooLarge(key, n, STATE_DOCUMENT_LIMITS[key], `body.${key}`)
  }
  const { constraints, values } = constraintsOf([...asList(field(body, 'featureStrategies')), ...asList(field(body, 'segments'))])
  if (constraints > STATE_DOCUMENT_LIMITS.constraints) tooLarge('constraints', constraints, STATE_DOCUMENT_LIMITS.constraints, 'body.featureStrategies')
  if (values > STATE_DOCUMENT_LIMITS.constraintValues) tooLarge('constraint values', values, STATE_DOCUMENT_LIMITS.constraintValues, 'body.featureStrategies')
}
