import type { EvaluationContext } from '../evaluation/index.js'
import type { SdkContext } from './schemas.js'

const STANDARD_FIELDS = new Set(['appName', 'currentTime', 'environment', 'remoteAddress', 'sessionId', 'userId'])

/** A context ready for evaluation: its fields as strings, what was left out, and how many combinations it makes. */
export interface PlaygroundContext {
  /** Top-level string fields (standard and custom), in the order given. */
  fields: [string, string][]
  properties: [string, string][]
  /** Top-level fields that are not strings: left out of the evaluation, reported as warnings. */
  invalid: string[]
}

/** One combination: what the engine evaluates, and what the response shows (properties flattened in). */
export interface ContextCombination {
  evaluation: EvaluationContext
  shown: Record<string, string>
}

/** Keeps the string fields of the context; other top-level values (objects, numbers…) are reported, as Unleash does. */
export function cleanContext(context: SdkContext): PlaygroundContext {
  const fields: [string, string][] = []
  const invalid: string[] = []
  for (const [key, value] of Object.entries(context)) {
    if (key === 'properties') continue
    if (typeof value === 'string') fields.push([key, value])
    else if (value !== undefined) invalid.push(key)
  }
  return { fields, properties: Object.entries(context.properties ?? {}), invalid }
}

/** The values of a comma-separated field, trimmed; a field with none keeps its value as it is. */
function splitValues(value: string): string[] {
  const values = value.split(',').map((v) => v.trim()).filter((v) => v !== '')
  return values.length > 0 ? [...new Set(values)] : [value]
}

interface Axis {
  key: string
  property: boolean
  values: string[]
}

const axesOf = (context: PlaygroundContext, split: boolean): Axis[] => [
  ...context.fields.map(([key, value]) => ({ key, property: false, values: split ? splitValues(value) : [value] })),
  ...context.properties.map(([key, value]) => ({ key, property: true, values: split ? splitValues(value) : [value] })),
]

/**
 * How many combinations `contextCombinations` would make, from the number of values of each field,
 * without making any. The product stops at the first field that takes it past what a double counts
 * exactly (Infinity then): 40 fields of "a,b" are 2^40 combinations, and 2,000 would overflow.
 */
export function combinationCount(context: PlaygroundContext): number {
  let count = 1
  for (const axis of axesOf(context, true)) {
    count *= axis.values.length
    if (count > Number.MAX_SAFE_INTEGER) return Infinity
  }
  return count
}

/**
 * Every combination of the comma-separated values of every field (properties too), the first field
 * varying slowest; with `split` false, the context as it is. Custom top-level fields are looked up
 * like properties, and win over a property of the same name (as the SDKs resolve context fields).
 */
export function contextCombinations(context: PlaygroundContext, split = true): ContextCombination[] {
  const axes = axesOf(context, split)
  const count = axes.reduce((n, axis) => n * axis.values.length, 1)
  const result: ContextCombination[] = new Array(count)
  for (let i = 0; i < count; i++) {
    const evaluation: EvaluationContext = {}
    const properties: Record<string, string> = {}
    const custom: Record<string, string> = {}
    const top: Record<string, string> = {}
    let rest = i
    for (let a = axes.length - 1; a >= 0; a--) {
      const axis = axes[a]!
      const value = axis.values[rest % axis.values.length]!
      rest = Math.floor(rest / axis.values.length)
      if (axis.property) properties[axis.key] = value
      else {
        top[axis.key] = value
        if (STANDARD_FIELDS.has(axis.key)) (evaluation as Record<string, string>)[axis.key] = value
        else custom[axis.key] = value
      }
    }
    evaluation.properties = { ...properties, ...custom }
    // Display order: the fields as given, then the properties.
    const shown: Record<string, string> = {}
    for (const axis of axes) if (!axis.property) shown[axis.key] = top[axis.key]!
    for (const axis of axes) if (axis.property && !(axis.key in shown)) shown[axis.key] = properties[axis.key]!
    result[i] = { evaluation, shown }
  }
  return result
}

/**
 * The values the engine will see, `[path, value]` for checkContextValues: with `split`, each comma-separated value
 * of a field on its own (each is evaluated on its own), otherwise the field as it is; the names of custom fields and
 * properties, and currentTime whole, too.
 */
export function* evaluatedValues(context: PlaygroundContext, split = true): Generator<readonly [string, string, 'name'?]> {
  for (const axis of axesOf(context, split)) {
    // A name is held to the same limit as a value (a standard field's name is short).
    if (!STANDARD_FIELDS.has(axis.key) || axis.property) yield [axis.property ? 'context.properties' : 'context', axis.key, 'name']
    const path = axis.property ? `context.properties.${axis.key.slice(0, 100)}` : `context.${axis.key.slice(0, 100)}`
    // currentTime is read whole (its comma-separated times are checked by the schema), the others value by value.
    if (axis.key === 'currentTime' && !axis.property) {
      const whole = context.fields.find(([key]) => key === 'currentTime')?.[1]
      if (whole !== undefined) yield [path, whole]
    }
    for (const value of axis.values) yield [path, value]
  }
}
