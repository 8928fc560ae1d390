import { describe, expect, it } from 'vitest'
import { compileRe2, Re2SyntaxError } from '../../src/evaluation/re2-regex.js'

describe('RE2 patterns', () => {
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
    ['', 'anything', true],
    ['\\Aab\\z', 'ab', true],
  ]
  it.each(matches)('%j on %j is %s', (pattern, input, expected, caseInsensitive) => {
    expect(compileRe2(pattern, { caseInsensitive }).test(input)).toBe(expected)
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
    ['(?)', 'empty flags'],
  ]
  it.each(rejected)('rejects %j (%s)', (pattern) => {
    expect(() => compileRe2(pattern)).toThrow(Re2SyntaxError)
  })

  it('runs in linear time where a backtracking engine would not finish', () => {
    const started = performance.now()
    expect(compileRe2('^(a+)+$').test('a'.repeat(50_000) + '!')).toBe(false)
    expect(compileRe2('(x+x+)+y').test('x'.repeat(20_000))).toBe(false)
    expect(performance.now() - started).toBeLessThan(2000)
  })
})
