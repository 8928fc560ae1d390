import { describe, expect, it } from 'vitest'
import { constraintWarnings, ConstraintInputSchema } from '../src/strategies/schemas.js'
import { constraintProblem, constraintWarning, isMultiValue, toApiConstraint, type ConstraintDraft, type Operator } from '../console/src/constraints.js'

const draft = (operator: Operator, values: string | string[]): ConstraintDraft => ({
  contextName: 'field',
  operator,
  caseInsensitive: false,
  inverted: false,
  values: Array.isArray(values) ? values : [],
  value: Array.isArray(values) ? '' : values,
})

// Each case is checked by the console's editor and by the server's schema: both must accept or both refuse.
// REGEX is left out: the console leaves it to the server (RE2, which the browser does not have).
const CASES: ConstraintDraft[] = [
  draft('IN', ['a', 'b']), draft('IN', []), draft('NOT_IN', ['x']), draft('NOT_IN', []),
  draft('STR_CONTAINS', ['abc']), draft('STR_STARTS_WITH', []), draft('STR_ENDS_WITH', ['.com']),
  draft('NUM_EQ', '42'), draft('NUM_GT', '-3.5'), draft('NUM_GTE', '1e3'), draft('NUM_LT', 'forty'), draft('NUM_LTE', ' '), draft('NUM_EQ', ''), draft('NUM_GT', 'Infinity'),
  draft('DATE_AFTER', '2026-12-31'), draft('DATE_AFTER', '2026-12-31T23:59:00Z'), draft('DATE_BEFORE', '2026-12-31T23:59:00.123+02:00'), draft('DATE_BEFORE', '31/12/2026'), draft('DATE_AFTER', '2026-13-45'),
  draft('SEMVER_EQ', '1.2.3'), draft('SEMVER_GT', '1.2.3-beta.1+build.5'), draft('SEMVER_LT', 'v1.2.3'), draft('SEMVER_EQ', '1.2'), draft('SEMVER_GT', '01.2.3'), draft('SEMVER_LT', 'latest'),
  draft('IN_CIDR', ['10.0.0.0/8']), draft('IN_CIDR', ['192.168.1.1']), draft('IN_CIDR', ['2001:db8::/32']), draft('IN_CIDR', ['::1']), draft('IN_CIDR', ['10.0.0.0/33']), draft('IN_CIDR', ['300.1.1.1']), draft('IN_CIDR', ['not-an-ip']), draft('IN_CIDR', []), draft('IN_CIDR', ['10.0.0.0/8', 'not-an-ip', ' 10.1.2.3 ']),
]

describe("the console's constraint editor", () => {
  it.each(CASES.map((c) => [c.operator, isMultiValue(c.operator) ? JSON.stringify(c.values) : JSON.stringify(c.value), c] as const))(
    'judges %s %s as the server does',
    (_operator, _values, c) => {
      const server = ConstraintInputSchema.safeParse(toApiConstraint(c)).success
      expect(constraintProblem(c) === undefined).toBe(server)
    },
  )

  it.each(CASES.filter((c) => c.operator === 'IN_CIDR').map((c) => [JSON.stringify(c.values), c] as const))('warns about IN_CIDR %s exactly when the server does (an entry the SDKs skip)', (_values, c) => {
    expect(constraintWarning(c) !== undefined).toBe(constraintWarnings(toApiConstraint(c)).length > 0)
  })

  it('warns about each IN_CIDR entry that is no address, and accepts the constraint', () => {
    const c = draft('IN_CIDR', ['10.0.0.0/8', 'example.com', '10.0.0.0/33'])
    expect(constraintProblem(c)).toBeUndefined()
    expect(constraintWarning(c)).toContain('"example.com", "10.0.0.0/33"')
  })

  it('asks for a context field name', () => {
    expect(constraintProblem({ ...draft('IN', ['a']), contextName: ' ' })).toBe('Name the context field')
  })
})
