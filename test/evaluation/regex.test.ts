import { describe, expect, it } from 'vitest'
import { isEnabled, prepareFlag } from '../../src/evaluation/index.js'
import { constraintWarnings, ConstraintInputSchema } from '../../src/strategies/schemas.js'

/** The REGEX operator as the engine runs it (RE2 syntax, linear time), on the property `text`. */
function regexMatches(pattern: string, input: string, caseInsensitive = false): boolean {
  const flag = prepareFlag({
    name: 'f',
    enabled: true,
    strategies: [{ name: 'default', constraints: [{ contextName: 'text', operator: 'REGEX', value: pattern, caseInsensitive }] }],
  })
  return isEnabled(flag, { properties: { text: input } })
}

const serverAccepts = (pattern: string) => ConstraintInputSchema.safeParse({ contextName: 'text', operator: 'REGEX', value: pattern }).success

describe('REGEX constraints (RE2 syntax)', () => {
  const matches: [pattern: string, input: string, expected: boolean, caseInsensitive?: boolean][] = [
    ['^user\\d{3}$', 'user123', true],
    ['^[[:alpha:]]+$', 'Alpha1', false],
    ['[[:^digit:]]', '123', false],
    ['\\bcat\\b', 'concatenate', false],
    ['^a{2,4}$', 'aaaaa', false],
    ['^(?i)abc$', 'AbC', true],
    ['^abc$', 'AbC', true, true],
    ['(?i:a)b', 'AB', false],
    ['a(?i)b|c', 'C', true],
    ['(?i)[^a]', 'A', false],
    ['(?i)k', '\u212a', true],
    ['(?m)^foo$', 'x\nfoo\ny', true],
    ['^foo$', 'foo\n', false],
    ['^(?s)a.b$', 'a\nb', true],
    ['^a.b$', 'a\nb', false],
    ['^a.b$', 'a\rb', true],
    ['a\\sb', 'a\u00a0b', false],
    ['^.$', '😀', true],
    ['\\x{1F600}', 'x😀', true],
    ['\\p{Greek}+', 'αβγ', true],
    ['\\PL', 'abc', false],
    ['\\Qa.b\\E+', 'a.bbb', true],
    ['\\Qa.b\\E', 'axb', false],
    ['[]a]', ']', true],
    ['\\141', 'a', true],
    ['x{,2}', 'x{,2}', true],
    ['(?P<first>a)(?<second>b)', 'ab', true],
    ['\\Aab\\z', 'ab', true],
  ]
  it.each(matches)('%j on %j is %s', (pattern, input, expected, caseInsensitive) => {
    expect(serverAccepts(pattern)).toBe(true)
    expect(regexMatches(pattern, input, caseInsensitive)).toBe(expected)
  })

  const rejected: [pattern: string, why: string][] = [
    ['(regex', 'unclosed group'],
    ['^(?=a)b$', 'lookahead'],
    ['(?<!a)b', 'lookbehind'],
    ['^(a)\\1$', 'backreference'],
    ['a**', 'stacked repetition'],
    ['*a', 'repetition without argument'],
    ['a{1001}', 'repetition count over 1000'],
    ['(a{100}){100}', 'nested repetition counts over 1000'],
    ['[z-a]', 'reversed range'],
    ['[[:nope:]]', 'unknown POSIX class'],
    ['\\p{Nope}', 'unknown Unicode class'],
    ['\\e', 'unknown escape'],
    ['\\Z', 'unsupported anchor'],
    ['(?-)', 'a minus with no flag'],
  ]
  it.each(rejected)('the server accepts %j (%s) as Unleash 8.2 does, warns it never matches, and the engine treats it as false, so true when inverted (as the Node SDK)', (pattern) => {
    expect(serverAccepts(pattern)).toBe(true)
    expect(constraintWarnings({ operator: 'REGEX', value: pattern })).toEqual([expect.stringContaining('SDKs never match it')])
    expect(constraintWarnings({ operator: 'REGEX', value: pattern, inverted: true })[0]).toContain('always holds')
    expect(regexMatches(pattern, 'anything')).toBe(false)
    const inverted = prepareFlag({ name: 'f', enabled: true, strategies: [{ name: 'default', constraints: [{ contextName: 'text', operator: 'REGEX', value: pattern, inverted: true }] }] })
    expect(isEnabled(inverted, { properties: { text: 'anything' } })).toBe(true)
  })

  it('compiles RE2 patterns that JavaScript RegExp refuses, and warns about JavaScript-only ones', () => {
    expect(constraintWarnings({ operator: 'REGEX', value: '(?i)abc' })).toEqual([])
    expect(constraintWarnings({ operator: 'REGEX', value: '\\p{Greek}' })).toEqual([])
    expect(constraintWarnings({ operator: 'REGEX', value: '(?<=a)b' })).toHaveLength(1)
  })

  // A backtracking engine would not finish these before the test's timeout; the RE2 matcher is linear.
  it('matches in linear time where a backtracking engine would not finish', () => {
    expect(regexMatches('^(a+)+$', 'a'.repeat(50_000) + '!')).toBe(false)
    expect(regexMatches('(x+x+)+y', 'x'.repeat(20_000))).toBe(false)
  })
})
