import { describe, expect, it } from 'vitest'
import { isEnabled, prepareFlag, type ConstraintDefinition, type EvaluateOptions, type EvaluationContext, type SegmentDefinition } from '../../src/evaluation/index.js'

/** A flag on for everyone but for the given constraints (and segments). */
const gated = (constraints: ConstraintDefinition[], segmentIds: number[] = [], segments: SegmentDefinition[] = []) =>
  prepareFlag({ name: 'f', enabled: true, strategies: [{ name: 'default', constraints, segments: segmentIds }] }, segments)

const c = (contextName: string, operator: string, values: string[] | string, more: Partial<ConstraintDefinition> = {}): ConstraintDefinition =>
  typeof values === 'string' ? { contextName, operator, value: values, ...more } : { contextName, operator, values, ...more }

type Row = [title: string, constraint: ConstraintDefinition, context: EvaluationContext, expected: boolean, options?: EvaluateOptions]

const props = (properties: Record<string, string | null>): EvaluationContext => ({ properties })
const NOON = Date.parse('2024-06-01T12:00:00Z')

const rows: Row[] = [
  // IN / NOT_IN
  ['IN matches a listed value', c('userId', 'IN', ['1', '2']), { userId: '2' }, true],
  ['IN does not match an unlisted value', c('userId', 'IN', ['1', '2']), { userId: '3' }, false],
  ['IN is false for a missing field', c('userId', 'IN', ['1']), {}, false],
  ['IN treats an empty string as missing', c('userId', 'IN', ['1']), { userId: '' }, false],
  ['IN trims and drops empty constraint values', c('userId', 'IN', [' 7 ', '']), { userId: '7' }, true],
  ['IN is case sensitive even with caseInsensitive (as the SDKs)', c('environment', 'IN', ['prod'], { caseInsensitive: true }), { environment: 'PROD' }, false],
  ['NOT_IN holds for an unlisted value', c('environment', 'NOT_IN', ['dev']), { environment: 'prod' }, true],
  ['NOT_IN fails for a listed value', c('environment', 'NOT_IN', ['dev']), { environment: 'dev' }, false],
  ['NOT_IN holds for a missing field', c('environment', 'NOT_IN', ['dev']), {}, true],
  ['NOT_IN holds for a null property', c('tier', 'NOT_IN', ['gold']), props({ tier: null }), true],
  ['inverted IN on a missing field is true (inversion always applies)', c('tier', 'IN', ['gold'], { inverted: true }), {}, true],
  ['inverted NOT_IN on a missing field is false', c('tier', 'NOT_IN', ['gold'], { inverted: true }), {}, false],
  // context field lookup
  ['standard fields come first', c('userId', 'IN', ['a']), { userId: 'a', properties: { userId: 'b' } }, true],
  ['a standard field falls back to properties', c('userId', 'IN', ['b']), { properties: { userId: 'b' } }, true],
  ['custom fields come from properties', c('country', 'IN', ['NO']), props({ country: 'NO' }), true],
  ['appName is a standard field', c('appName', 'IN', ['web']), { appName: 'web' }, true],
  // strings
  ['STR_STARTS_WITH', c('email', 'STR_STARTS_WITH', ['adm', 'root']), props({ email: 'root@x.io' }), true],
  ['STR_ENDS_WITH is case sensitive by default', c('email', 'STR_ENDS_WITH', ['@x.io']), props({ email: 'a@X.IO' }), false],
  ['STR_ENDS_WITH with caseInsensitive', c('email', 'STR_ENDS_WITH', ['@x.io'], { caseInsensitive: true }), props({ email: 'a@X.IO' }), true],
  ['STR_CONTAINS', c('email', 'STR_CONTAINS', ['@x.']), props({ email: 'a@x.io' }), true],
  ['STR_CONTAINS is false for a missing field', c('email', 'STR_CONTAINS', ['@']), {}, false],
  ['inverted STR_CONTAINS on a missing field is true', c('email', 'STR_CONTAINS', ['@'], { inverted: true }), {}, true],
  // numbers
  ['NUM_EQ compares as numbers', c('n', 'NUM_EQ', '12'), props({ n: '12.0' }), true],
  ['NUM_GT', c('n', 'NUM_GT', '12'), props({ n: '12.5' }), true],
  ['NUM_GTE at the bound', c('n', 'NUM_GTE', '12'), props({ n: '12' }), true],
  ['NUM_LT with negatives', c('n', 'NUM_LT', '-1'), props({ n: '-2' }), true],
  ['NUM_LTE above the bound', c('n', 'NUM_LTE', '3'), props({ n: '4' }), false],
  ['NUM_* is false for a non-number', c('n', 'NUM_LT', '3'), props({ n: 'abc' }), false],
  ['NUM_* is false for a missing field', c('n', 'NUM_LTE', '3'), {}, false],
  ['NUM_* is false when the constraint value is not a number', c('n', 'NUM_EQ', 'x'), props({ n: '1' }), false],
  ['inverted NUM_EQ on a missing field is true', c('n', 'NUM_EQ', '1', { inverted: true }), {}, true],
  // dates
  ['DATE_AFTER uses the context currentTime', c('currentTime', 'DATE_AFTER', '2024-01-01T00:00:00Z'), { currentTime: '2024-06-01T00:00:00Z' }, true],
  ['DATE_AFTER is exclusive', c('currentTime', 'DATE_AFTER', '2024-06-01T12:00:00Z'), { currentTime: '2024-06-01T12:00:00.000Z' }, false],
  ['DATE_BEFORE accepts a Date in the context', c('currentTime', 'DATE_BEFORE', '2024-06-02T00:00:00Z'), { currentTime: new Date(NOON) }, true],
  ['currentTime defaults to options.now', c('currentTime', 'DATE_AFTER', '2024-06-01T11:59:59Z'), {}, true, { now: NOON }],
  ['options.now may be a Date', c('currentTime', 'DATE_BEFORE', '2024-06-01T11:59:59Z'), {}, false, { now: new Date(NOON) }],
  ['the context currentTime wins over options.now', c('currentTime', 'DATE_BEFORE', '2024-06-01T00:00:00Z'), { currentTime: '2023-01-01T00:00:00Z' }, true, { now: NOON }],
  ['DATE_* respects time zone offsets', c('currentTime', 'DATE_AFTER', '2024-06-01T13:00:00+02:00'), { currentTime: '2024-06-01T11:30:00Z' }, true],
  // As the Node SDK: a DATE_ operator compares currentTime whatever field it names.
  ['DATE_* on another field compares currentTime, not that field', c('signupDate', 'DATE_BEFORE', '2024-01-01T00:00:00Z'), { ...props({ signupDate: '2023-05-05T00:00:00Z' }), currentTime: '2025-01-01T00:00:00Z' }, false],
  ['DATE_* on another field holds for currentTime without that field', c('signupDate', 'DATE_BEFORE', '2024-01-01T00:00:00Z'), { currentTime: '2023-01-01T00:00:00Z' }, true],
  ['DATE_* with an unparseable context time is false', c('currentTime', 'DATE_BEFORE', '2024-01-01T00:00:00Z'), { currentTime: 'yesterday' }, false],
  // semver
  ['SEMVER_EQ ignores build metadata', c('version', 'SEMVER_EQ', '1.2.2'), props({ version: '1.2.2+build.5' }), true],
  ['SEMVER_GT with prereleases', c('version', 'SEMVER_GT', '2.0.0-alpha.1'), props({ version: '2.0.0-beta' }), true],
  ['SEMVER_LT', c('version', 'SEMVER_LT', '1.10.0'), props({ version: '1.9.9' }), true],
  ['SEMVER_GTE at the bound', c('version', 'SEMVER_GTE', '1.2.2'), props({ version: '1.2.2' }), true],
  ['SEMVER_LTE below the bound', c('version', 'SEMVER_LTE', '1.2.2'), props({ version: '1.2.3' }), false],
  ['SEMVER_* rejects a leading v in the context', c('version', 'SEMVER_EQ', '1.0.0'), props({ version: 'v1.0.0' }), false],
  ['SEMVER_* rejects a partial version', c('version', 'SEMVER_LT', '2.0.0'), props({ version: '1.2' }), false],
  ['SEMVER_* takes a leading v in the constraint (the SDK\'s semver does)', c('version', 'SEMVER_EQ', 'v1.0.0'), props({ version: '1.0.0' }), true],
  ['SEMVER_GTE holds for the same version', c('version', 'SEMVER_GTE', '1.0.0'), props({ version: '1.0.0' }), true],
  ['SEMVER_LTE is false for a later version', c('version', 'SEMVER_LTE', '1.0.0'), props({ version: '1.0.1' }), false],
  ['NUM_EQ 0 holds for an empty string (Number(\'\') is 0, as in the SDK)', c('n', 'NUM_EQ', '0'), props({ n: '' }), true],
  // regex
  ['REGEX matches anywhere unless anchored', c('email', 'REGEX', '@example\\.(com|org)'), props({ email: 'a@example.org' }), true],
  ['REGEX with caseInsensitive', c('userId', 'REGEX', '^abc$', { caseInsensitive: true }), { userId: 'ABC' }, true],
  ['REGEX is false for a missing field', c('userId', 'REGEX', '.*'), {}, false],
  ['an invalid REGEX is false, so true when inverted (the Node SDK catches the compile error as a non-match)', c('userId', 'REGEX', '(unclosed', { inverted: true }), { userId: 'x' }, true],
  ['RE2 syntax JavaScript lacks: POSIX classes', c('userId', 'REGEX', '^[[:digit:]]+$'), { userId: '123' }, true],
  // CIDR
  ['IN_CIDR matches an IPv4 range', c('remoteAddress', 'IN_CIDR', ['10.0.0.0/8']), { remoteAddress: '10.20.30.40' }, true],
  ['IN_CIDR /0 matches every IPv4 address', c('remoteAddress', 'IN_CIDR', ['0.0.0.0/0']), { remoteAddress: '203.0.113.9' }, true],
  ['IN_CIDR does not match an IPv4 address against an IPv6 range', c('remoteAddress', 'IN_CIDR', ['::/0']), { remoteAddress: '10.0.0.1' }, false],
  ['IN_CIDR matches IPv6 in any spelling', c('remoteAddress', 'IN_CIDR', ['2001:db8::1']), { remoteAddress: '2001:0db8:0:0:0:0:0:1' }, true],
  ['IN_CIDR ignores invalid entries', c('remoteAddress', 'IN_CIDR', ['nonsense', '192.168.0.0/33', '192.168.1.1']), { remoteAddress: '192.168.1.1' }, true],
  ['IN_CIDR is false for an invalid address', c('remoteAddress', 'IN_CIDR', ['10.0.0.0/8']), { remoteAddress: '10.0.0' }, false],
  ['IN_CIDR on a custom field', c('clientIp', 'IN_CIDR', ['172.16.0.0/12']), props({ clientIp: '172.20.1.1' }), true],
  // unknown operators
  ['an unknown operator is false', c('userId', 'STR_MATCHES', ['x']), { userId: 'x' }, false],
  ['an unknown operator is false even when inverted', c('userId', 'STR_MATCHES', ['x'], { inverted: true }), { userId: 'x' }, false],
]

describe('constraint operators', () => {
  it.each(rows)('%s', (_title, constraint, context, expected, options) => {
    expect(isEnabled(gated([constraint]), context, options)).toBe(expected)
  })
})

describe('constraints and segments together', () => {
  const segments: SegmentDefinition[] = [
    { id: 1, constraints: [c('country', 'IN', ['NO', 'SE'])] },
    { id: 2, constraints: [c('plan', 'IN', ['pro']), c('seats', 'NUM_GTE', '5')] },
  ]
  const table: [string, number[], EvaluationContext, boolean][] = [
    ['every constraint of every segment must hold', [1, 2], { appName: 'web', ...props({ country: 'NO', plan: 'pro', seats: '5' }) }, true],
    ['one failing segment constraint turns the strategy off', [1, 2], { appName: 'web', ...props({ country: 'NO', plan: 'pro', seats: '4' }) }, false],
    ['a segment id that does not exist turns the strategy off', [1, 404], { appName: 'web', ...props({ country: 'NO' }) }, false],
    ['the strategy\'s own constraints apply as well', [1], { appName: 'mobile', ...props({ country: 'SE' }) }, false],
  ]
  it.each(table)('%s', (_title, ids, context, expected) => {
    expect(isEnabled(gated([c('appName', 'IN', ['web'])], ids, segments), context)).toBe(expected)
  })
})
