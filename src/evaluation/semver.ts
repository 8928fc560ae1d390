/*
 * Semantic versions as node-semver 7 reads them without options (`parse`, `valid`, `coerce`, `compare`), which Unleash
 * and its SDKs use for the SEMVER_ constraint operators: a few lines instead of the library in the worker's bundle.
 */

export interface Version {
  major: number
  minor: number
  patch: number
  prerelease: (string | number)[]
}

const MAX_LENGTH = 256
const IDENTIFIER = '(?:\\d*[a-zA-Z-][a-zA-Z0-9-]*|0|[1-9]\\d*)'
const FULL = new RegExp(`^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-(${IDENTIFIER}(?:\\.${IDENTIFIER})*))?(?:\\+[a-zA-Z0-9-]+(?:\\.[a-zA-Z0-9-]+)*)?$`)
const COERCE = /(^|[^\d])(\d{1,16})(?:\.(\d{1,16}))?(?:\.(\d{1,16}))?(?:$|[^\d])/
const NUMERIC = /^[0-9]+$/

/** The version `text` is (surrounding blanks and a leading `v` allowed, as node-semver), or null. */
export function parseVersion(text: string): Version | null {
  if (text.length > MAX_LENGTH) return null
  const m = FULL.exec(text.trim())
  if (!m) return null
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (major > Number.MAX_SAFE_INTEGER || minor > Number.MAX_SAFE_INTEGER || patch > Number.MAX_SAFE_INTEGER) return null
  const prerelease = m[4] ? m[4].split('.').map((id) => (NUMERIC.test(id) && Number(id) < Number.MAX_SAFE_INTEGER ? Number(id) : id)) : []
  return { major, minor, patch, prerelease }
}

export const isValidVersion = (text: string) => parseVersion(text) !== null

/** The first `major[.minor[.patch]]` in `text`, as a version (node-semver's coerce), or null. */
export function coerceVersion(text: string): Version | null {
  const m = COERCE.exec(text)
  return m ? parseVersion(`${m[2]}.${m[3] ?? '0'}.${m[4] ?? '0'}`) : null
}

function compareIdentifiers(a: string | number, b: string | number): number {
  const aNumeric = typeof a === 'number' || NUMERIC.test(a)
  const bNumeric = typeof b === 'number' || NUMERIC.test(b)
  const [x, y] = aNumeric && bNumeric ? [Number(a), Number(b)] : [a, b]
  return x === y ? 0 : aNumeric && !bNumeric ? -1 : bNumeric && !aNumeric ? 1 : x < y ? -1 : 1
}

/** -1, 0 or 1 as `a` precedes, equals or follows `b` (build metadata ignored). */
export function compareVersions(a: Version, b: Version): number {
  for (const key of ['major', 'minor', 'patch'] as const) if (a[key] !== b[key]) return a[key] < b[key] ? -1 : 1
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return a.prerelease.length === b.prerelease.length ? 0 : a.prerelease.length === 0 ? 1 : -1
  for (let i = 0; ; i++) {
    const [x, y] = [a.prerelease[i], b.prerelease[i]]
    if (x === undefined || y === undefined) return x === y ? 0 : x === undefined ? -1 : 1
    if (x !== y) return compareIdentifiers(x, y)
  }
}
