import type { EvaluationContext } from './types.js'

/** Reads one context field as a non-empty string, or undefined when it is missing. */
export type FieldGetter = (context: EvaluationContext, now: number) => string | undefined

const text = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value === '' ? undefined : value
  if (value === null || value === undefined) return undefined
  // Properties that arrive as JSON numbers or booleans compare as the SDKs' stringified context does.
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return undefined
}

const fromProperties = (name: string): FieldGetter => (context) => {
  const properties = context.properties
  return properties === undefined || properties === null ? undefined : text(properties[name])
}

const orProperties = (name: string, own: (context: EvaluationContext) => unknown): FieldGetter => {
  const fallback = fromProperties(name)
  return (context, now) => text(own(context)) ?? fallback(context, now)
}

/** The epoch milliseconds of the context's currentTime, or `now` when it has none (NaN when unparseable). */
export function currentTimeOf(context: EvaluationContext, now: number): number {
  const value = context.currentTime
  if (value === undefined || value === null || value === '') return now
  if (value instanceof Date) return value.getTime()
  // Every DATE_ constraint of a request reads the same few texts: each is parsed once (thousands of checks re-parsed
  // it; the advanced playground's combinations take turns, flag after flag, so one remembered text was not enough).
  for (let i = 0; i < TIMES_KEPT; i++) if (timeTexts[i] === value) return times[i]!
  const time = Date.parse(value)
  timeTexts[nextTime] = value
  times[nextTime] = time
  nextTime = (nextTime + 1) % TIMES_KEPT
  return time
}

const TIMES_KEPT = 4
const timeTexts: (string | undefined)[] = new Array<string | undefined>(TIMES_KEPT).fill(undefined)
const times = new Float64Array(TIMES_KEPT)
let nextTime = 0

const currentTimeText: FieldGetter = (context, now) => {
  const value = context.currentTime
  if (typeof value === 'string' && value !== '') return value
  const time = value instanceof Date ? value.getTime() : now
  return Number.isNaN(time) ? undefined : new Date(time).toISOString()
}

/**
 * The getter for a context field: the standard fields of the Unleash context first, then
 * `properties`, as the SDKs resolve a constraint's contextName. Empty strings count as missing.
 */
export function fieldGetter(name: string): FieldGetter {
  switch (name) {
    case 'userId': return orProperties(name, (c) => c.userId)
    case 'sessionId': return orProperties(name, (c) => c.sessionId)
    case 'remoteAddress': return orProperties(name, (c) => c.remoteAddress)
    case 'environment': return orProperties(name, (c) => c.environment)
    case 'appName': return orProperties(name, (c) => c.appName)
    case 'currentTime': return currentTimeText
    default: return fromProperties(name)
  }
}

/**
 * The getter a constraint reads its field with, as the Node SDK resolves it: the context's own field of that name,
 * else the property, as text; an empty string is a value (NUM_EQ 0 holds for it, a REGEX runs on it). currentTime
 * as fieldGetter has it.
 */
export function constraintFieldGetter(name: string): FieldGetter {
  if (name === 'currentTime') return currentTimeText
  return (context) => {
    const own = (context as Record<string, unknown>)[name]
    const value = own ?? context.properties?.[name]
    if (typeof value === 'string') return value
    return typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined
  }
}
