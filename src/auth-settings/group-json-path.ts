import { parseJsonPath, queryJsonPath } from './json-path.js'

/**
 * The single sign-on setting `groupJsonPath`: where in the provider's claims (the ID token's, else UserInfo's) the
 * groups of the person signing in are. A JSONPath (RFC 9535 without filter selectors: ./json-path.ts), e.g. `$.groups` or
 * `$.realm_access.roles`; as in Unleash, where it is usually the claim's name, a path without the leading `$` starts
 * at the claims (`groups` is `$.groups`), and a name that is no such path is one claim's whole name (`cognito:groups`).
 */
export function groupJsonPathQuery(path: string): string {
  const trimmed = path.trim()
  if (trimmed.startsWith('$')) return trimmed
  const dotted = `$.${trimmed}`
  if (parses(dotted)) return dotted
  return `$[${JSON.stringify(trimmed)}]`
}

const parses = (expression: string) => describeParseError(expression) === undefined

/** Why `expression` is no JSONPath (the parser's message), or undefined when it is one. */
function describeParseError(expression: string): string | undefined {
  try {
    parseJsonPath(expression)
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/** Why `path` cannot be a `groupJsonPath`, or undefined when it can. */
export const groupJsonPathError = (path: string): string | undefined => describeParseError(groupJsonPathQuery(path))

/**
 * The group names the path finds in `claims`: the strings it selects, and the strings of the lists it selects (a
 * provider's `groups` claim is a list). Undefined when it selects no string nor list, as when the claim is absent: the
 * groups are then left as they are rather than emptied (Unleash syncs only a claim that is a list).
 */
export function groupsAt(claims: Record<string, unknown>, path: string): string[] | undefined {
  const found = queryJsonPath(claims, groupJsonPathQuery(path))
  if (!found.some((value) => typeof value === 'string' || Array.isArray(value))) return undefined
  const names = found.flatMap((value) => (Array.isArray(value) ? value : [value])).filter((v): v is string => typeof v === 'string')
  return [...new Set(names)]
}
