// The constraint rules as the server checks them (src/strategies/schemas.ts), so the editor can say what is
// wrong before saving. REGEX is left to the server: it compiles patterns as RE2, which the browser cannot.
// test/console-constraints.test.ts holds these to the server's schema.

export const OPERATORS = [
  'IN', 'NOT_IN', 'STR_CONTAINS', 'STR_STARTS_WITH', 'STR_ENDS_WITH',
  'NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE',
  'DATE_AFTER', 'DATE_BEFORE', 'SEMVER_EQ', 'SEMVER_GT', 'SEMVER_LT', 'SEMVER_GTE', 'SEMVER_LTE',
  'REGEX', 'IN_CIDR',
] as const
export type Operator = (typeof OPERATORS)[number]

export interface ConstraintDraft {
  contextName: string
  operator: Operator
  caseInsensitive: boolean
  inverted: boolean
  values: string[]
  value: string
}

export const OPERATOR_LABELS: Record<Operator, string> = {
  IN: 'is one of', NOT_IN: 'is not one of',
  STR_CONTAINS: 'contains', STR_STARTS_WITH: 'starts with', STR_ENDS_WITH: 'ends with',
  NUM_EQ: '= (number)', NUM_GT: '> (number)', NUM_GTE: '≥ (number)', NUM_LT: '< (number)', NUM_LTE: '≤ (number)',
  DATE_AFTER: 'is after (date)', DATE_BEFORE: 'is before (date)',
  SEMVER_EQ: '= (semver)', SEMVER_GT: '> (semver)', SEMVER_LT: '< (semver)', SEMVER_GTE: '≥ (semver)', SEMVER_LTE: '≤ (semver)',
  REGEX: 'matches regex (RE2)', IN_CIDR: 'is in IP range (CIDR)',
}

/** Operators whose values are a list (`values`); the others take one `value`. */
export const isMultiValue = (op: Operator) => op === 'IN' || op === 'NOT_IN' || op.startsWith('STR_') || op === 'IN_CIDR'
/** Operators that may ignore case. */
export const takesCaseInsensitive = (op: Operator) => op.startsWith('STR_') || op === 'REGEX'

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/
// semver.valid: an optional leading v or =, spaces trimmed; pre-release and build parts.
const SEMVER = /^[v=\s]*(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][a-zA-Z0-9-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][a-zA-Z0-9-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\s*$/
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
const IPV6 = /^[0-9a-fA-F:.]+$/

function isCidrOrAddress(v: string): boolean {
  const [address, bits, ...rest] = v.split('/')
  if (rest.length > 0 || address === undefined) return false
  const v4 = IPV4.test(address)
  const v6 = !v4 && address.includes(':') && IPV6.test(address) && (address.match(/::/g)?.length ?? 0) <= 1
  if (!v4 && !v6) return false
  if (bits === undefined) return true
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (v4 ? 32 : 128)
}

/** What is wrong with the constraint as the server would see it, or undefined. */
export function constraintProblem(c: ConstraintDraft): string | undefined {
  if (!c.contextName.trim()) return 'Name the context field'
  // An IN_CIDR entry that is no address or range is accepted, as Unleash accepts it (constraintWarning says so).
  if (isMultiValue(c.operator)) return undefined
  const value = c.value
  if (value === '') return `${c.operator} needs a value`
  if (c.operator.startsWith('NUM_')) return value.trim() !== '' && Number.isFinite(Number(value)) ? undefined : `${c.operator} needs a number, got "${value}"`
  if (c.operator.startsWith('DATE_')) return ISO_DATE.test(value) && !Number.isNaN(Date.parse(value)) ? undefined : `${c.operator} needs an ISO 8601 date, got "${value}"`
  if (c.operator.startsWith('SEMVER_')) return SEMVER.test(value) ? undefined : `${c.operator} needs a semantic version, got "${value}"`
  return undefined
}

/**
 * What the SDKs make of a constraint the server accepts, or undefined: an IN_CIDR entry that is no address or range is
 * skipped. (A REGEX pattern that is not RE2 syntax never matches: the server says so, the browser has no RE2.)
 */
export function constraintWarning(c: ConstraintDraft): string | undefined {
  if (c.operator !== 'IN_CIDR') return undefined
  const skipped = c.values.filter((v) => v.trim() !== '' && !isCidrOrAddress(v.trim()))
  return skipped.length === 0 ? undefined : `SDKs skip ${skipped.map((v) => `"${v}"`).join(', ')}: no IP address or CIDR range`
}

/** The constraint as the API takes it: `values` for list operators, `value` for the others. */
export function toApiConstraint(c: ConstraintDraft) {
  const multi = isMultiValue(c.operator)
  return {
    contextName: c.contextName.trim(),
    operator: c.operator,
    inverted: c.inverted,
    caseInsensitive: takesCaseInsensitive(c.operator) ? c.caseInsensitive : false,
    ...(multi ? { values: c.values } : { value: c.value }),
  }
}

export function fromApiConstraint(c: { contextName: string; operator: Operator; caseInsensitive: boolean; inverted: boolean; values: string[]; value?: string }): ConstraintDraft {
  return { contextName: c.contextName, operator: c.operator, caseInsensitive: c.caseInsensitive, inverted: c.inverted, values: c.values, value: c.value ?? '' }
}

export const newConstraint = (): ConstraintDraft => ({ contextName: 'userId', operator: 'IN', caseInsensitive: false, inverted: false, values: [], value: '' })
