import { prepareConstraint } from '../evaluation/index.js'
import type { Filter } from './schemas.js'

/**
 * A signal's payload as flat parameters, as Unleash flattens it: nested keys joined with dots, array items as
 * `key[0]` (their objects flattened below that). A payload that is not an object has no parameters.
 */
export function flattenPayload(payload: unknown, parentKey = '', into: Record<string, unknown> = {}): Record<string, unknown> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return into
  for (const [key, value] of Object.entries(payload)) {
    const name = parentKey ? `${parentKey}.${key}` : key
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (typeof item === 'object' && item !== null) flattenPayload(item, `${name}[${index}]`, into)
        else into[`${name}[${index}]`] = item
      })
    } else if (typeof value === 'object' && value !== null) flattenPayload(value, name, into)
    else into[name] = value
  }
  return into
}

/** Parameters compared as text, as a context's properties are: numbers and booleans as written, null as missing. */
const asText = (value: unknown): string | undefined => (value === null || value === undefined ? undefined : String(value))

/**
 * Whether a payload passes every filter (none: it does). Each filter is a strategy constraint on its parameter, evaluated
 * by the flag engine (src/evaluation/), so operators mean here what they mean in strategies: a missing parameter fails
 * every operator but NOT_IN, and `inverted` then negates the result.
 */
export function payloadMatches(filters: Record<string, Filter>, payload: unknown): boolean {
  const entries = Object.entries(filters)
  if (entries.length === 0) return true
  const flat = flattenPayload(payload)
  const properties: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(flat)) properties[name] = asText(value)
  const context = { properties, currentTime: properties.currentTime }
  const now = Date.now()
  return entries.every(([parameter, filter]) => prepareConstraint({ contextName: parameter, ...filter }).test(context, now))
}
