import type { EvaluationContext } from '../evaluation/index.js'

const STANDARD_FIELDS = new Set(['appName', 'environment', 'userId', 'sessionId', 'remoteAddress', 'currentTime', 'properties'])
const MAX_PROPERTIES = 100

/**
 * Context values arrive as strings (query), or as JSON values (body): numbers and booleans become strings, anything
 * else is dropped. Their length is checked after (contextValues), not cut: a cut value would evaluate wrongly.
 */
function asText(value: unknown): string | undefined {
  if (Array.isArray(value)) return asText(value[0])
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return undefined
}

function randomSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18))
  let hex = ''
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
  return hex
}

// Functions of their own, not closures made on every request (each costs a little on the frontend API's hot path).
function addProperty(properties: Record<string, string>, name: string, value: unknown) {
  const text = asText(value)
  if (text !== undefined && name !== '' && (name in properties || Object.keys(properties).length < MAX_PROPERTIES)) properties[name] = text
}

const fieldText = (fields: Record<string, unknown>, name: string) => asText(fields[name]) || undefined

/**
 * The evaluation context of a frontend API request, built as Unleash builds it (its create-context):
 * the standard fields, `properties` (an object in a body, `properties[name]=value` in a query), and any
 * other field moved into properties. `remoteAddress` defaults to the caller's address and `sessionId`
 * to a random one (unless `randomSessionId` is false); `environment` is always the token's, whatever the request says.
 */
export function frontendContext(fields: Record<string, unknown>, defaults: { environment: string; remoteAddress?: string; randomSessionId?: boolean }): EvaluationContext {
  const properties: Record<string, string> = {}
  // Other top-level fields first, so that explicit properties win over them (as in Unleash).
  for (const [key, value] of Object.entries(fields)) if (!STANDARD_FIELDS.has(key) && !key.startsWith('properties[')) addProperty(properties, key, value)
  for (const [key, value] of Object.entries(fields)) {
    const bracketed = /^properties\[(.+)\]$/.exec(key)
    if (bracketed) addProperty(properties, bracketed[1]!, value)
  }
  const nested = fields.properties
  if (nested !== null && typeof nested === 'object' && !Array.isArray(nested)) {
    for (const [key, value] of Object.entries(nested)) addProperty(properties, key, value)
  }
  const currentTime = fieldText(fields, 'currentTime')
  const sessionId = fieldText(fields, 'sessionId') ?? (defaults.randomSessionId === false ? undefined : randomSessionId())
  return {
    environment: defaults.environment,
    ...(fieldText(fields, 'appName') ? { appName: fieldText(fields, 'appName') } : {}),
    ...(fieldText(fields, 'userId') ? { userId: fieldText(fields, 'userId') } : {}),
    ...(sessionId ? { sessionId } : {}),
    ...((fieldText(fields, 'remoteAddress') ?? defaults.remoteAddress) ? { remoteAddress: fieldText(fields, 'remoteAddress') ?? defaults.remoteAddress } : {}),
    ...(currentTime && !Number.isNaN(Date.parse(currentTime)) ? { currentTime } : {}),
    properties,
  }
}

