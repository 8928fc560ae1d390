import { RE2JS } from 're2js'
import { Strategy } from 'unleash-client/lib/strategy/strategy.js'
import { describe, expect, it } from 'vitest'
import { isEnabled, prepareFlag, regexProblem } from '../../src/evaluation/index.js'

/**
 * The server's REGEX engine (src/evaluation/re2-regex.ts) against what the SDKs run: re2js for whether a
 * pattern compiles, and the Node SDK's own constraint check (unleash-client, which compiles with re2js,
 * CASE_INSENSITIVE from `caseInsensitive`, and treats a pattern that does not compile as no match) for
 * every answer. Cases are generated from a seeded PRNG, so a failure names a reproducible pattern.
 */

const SEED = 0x5eed_0b
const PATTERNS = 2500
const INPUTS_PER_PATTERN = 6

/** mulberry32: small, fast and good enough to spread cases. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// Letters whose case folding is irregular (Kelvin sign, long s, final sigma, titlecase digraphs, dotless i,
// Greek symbols), non-ASCII and astral characters, line breaks and ASCII punctuation.
const LETTERS = ['a', 'b', 'c', 'x', 'A', 'B', 'X', 'k', 'K', '\u212a', 's', 'S', '\u017f', 'σ', 'ς', 'Σ', 'é', 'É', 'ß', 'ẞ', 'ǅ', 'ǆ', 'Ǆ', 'θ', 'ϑ', 'Θ', 'ı', 'İ', 'i', 'I', 'ͅ', 'ι', 'α', 'Ω', 'Ω', 'ж', 'Ж', 'ᲀ', 'в', '中', '😀', '𐐀', '𐐨', 'ﬅ', 'ﬆ']
const OTHERS = ['0', '1', '9', '_', '-', ' ', '\t', '\n', '\r', '.', ',', '@', '/', '\u00a0', '\u2028', '\u0000', '\u007f']
const CHARS = [...LETTERS, ...OTHERS]
const ESCAPED_META = ['\\.', '\\*', '\\+', '\\?', '\\(', '\\)', '\\[', '\\]', '\\{', '\\}', '\\|', '\\\\', '\\^', '\\$', '\\-', '\\/', '\\ ', '\\#', '\\&', '\\~', '\\"']
const ESCAPES = [
  '\\d', '\\D', '\\w', '\\W', '\\s', '\\S', '\\b', '\\B', '\\A', '\\z', '\\pL', '\\PL', '\\pN', '\\p{Lu}', '\\p{Ll}', '\\p{Lt}', '\\p{^Lu}', '\\P{Ll}',
  '\\P{^Ll}', '\\p{Greek}', '\\p{Latin}', '\\p{Cyrillic}', '\\p{Han}', '\\p{Nd}', '\\p{Zs}', '\\p{Any}', '\\p{L}', '\\pZ', '\\p{Lm}', '\\p{Lo}',
  '\\x41', '\\x6B', '\\x{1F600}', '\\x{3c3}', '\\x{212A}', '\\x{17F}', '\\x{0}', '\\101', '\\0', '\\07', '\\t', '\\n', '\\f', '\\r', '\\v', '\\a',
  '\\Qa.b\\E', '\\Q*\\E', '\\Qk\\E',
]
const CLASS_ITEMS = [
  'a', 'k', 'K', 's', 'σ', 'ǅ', 'é', '😀', '-', ']', '^', '\\]', '\\-', '\\\\', '.', '$', '|', '(', 'a-c', 'A-Z', 'a-z', 'j-l', 'r-t', 'α-ω', 'Α-Ω',
  '\\x{100}-\\x{17F}', '\\x{1F600}-\\x{1F64F}', '\\x{61}-\\x{10FFFF}', '\\x{0}-\\x{60}', '0-9', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S', '\\pL', '\\PL',
  '\\p{Lu}', '\\P{Lu}', '\\p{^Ll}', '\\p{Greek}', '[:alpha:]', '[:^alpha:]', '[:upper:]', '[:^upper:]', '[:lower:]', '[:digit:]', '[:^digit:]',
  '[:word:]', '[:^word:]', '[:space:]', '[:punct:]', '[:xdigit:]', '\\x41-\\x5A', '\\n', '\\t',
]
const GROUP_OPENERS = ['(', '(?:', '(?i:', '(?s:', '(?m:', '(?-i:', '(?i-s:', '(?U:', '(?is:', '(?im:']
const FLAG_SETTERS = ['(?i)', '(?s)', '(?m)', '(?-i)', '(?U)', '(?i-m)']
const REPEATS = ['*', '+', '?', '{0}', '{1}', '{2}', '{3}', '{0,}', '{1,}', '{2,}', '{0,1}', '{1,3}', '{2,2}', '{,2}']
// What turns a pattern invalid for RE2 (some of it valid in JavaScript) or keeps it valid in ways JavaScript would not.
const BREAKERS = [
  '(', ')', '[', ']', '{', '}', '*', '+', '?', '\\', '|', '**', '+*', '\\1', '\\2', '(a)\\1', '(?=a)', '(?!a)', '(?<=a)', '(?<!a)', '\\Z', '\\e', '\\k<n>',
  '(?P=g)', '(?P>g)', '\\p{Nope}', '\\pX', '\\p{Zzzz}', '\\p{IsGreek}', '\\p{Script=Greek}', '\\p{greek}', '\\p{Lc}', '\\p{L&}', '\\p{Cn}', '\\p{Cs}',
  '\\p{Co}', '[[:nope:]]', '[[.a.]]', '[[=a=]]', '(?x)', '(?#c)', '\\8', '\\9', '{2,1}', 'a{1001}', 'a{1000}', '(a{30}){40}', '[b-a]', '[]', '[^]',
  '\\x{110000}', '\\x{}', '\\x4', '\\xZZ', '(?', '(?)', '(?-)', '(?i-)', '(?z)', '(?i', '\\c', '\\cA', '\\u0041', '\\G', '\\X', '\\R', '\\C', '\\h', '\\K',
  '\\N', '\\o{101}', '\\_', '\\<', '\\é', '\\E', '\\Q', '(?<n>a)', '(?P<n>a)', '(?<1a>b)', '(?P<>a)', '(?<n>a)(?<n>b)', 'x{2}{3}', 'x{2}*', 'x*?', 'x+?', 'x??',
  'x*+', 'x?+', '^*', '$+', '\\b+', '(|)', '()', '(?:)', 'a|', '|a', '[a-\\d]', '[\\d-z]', '[a-]', '[-a]', '[\\pL-z]', '[\\b]', '[\\B]', '[\\A]', '[\\Q]\\E]',
  '\\x{D800}', '[\\x{D800}-\\x{DFFF}]', '.{1001}', '(?P<name>x)', '(?U)x*', '\\z{2}',
]

const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)]!

function generatePattern(random: () => number, depth = 0): string {
  const alternatives = random() < 0.2 && depth < 3 ? 2 + Math.floor(random() * 2) : 1
  const branches: string[] = []
  for (let a = 0; a < alternatives; a++) {
    const pieces = 1 + Math.floor(random() * 4)
    let branch = ''
    for (let p = 0; p < pieces; p++) {
      branch += atom(random, depth)
      if (random() < 0.3) branch += pick(random, REPEATS) + (random() < 0.2 ? '?' : '')
    }
    branches.push(branch)
  }
  let pattern = branches.join('|')
  if (depth === 0) {
    if (random() < 0.15) pattern = '^' + pattern
    if (random() < 0.15) pattern += '$'
    if (random() < 0.25) pattern = pick(random, FLAG_SETTERS) + pattern
    if (random() < 0.25) {
      const at = Math.floor(random() * (pattern.length + 1))
      pattern = pattern.slice(0, at) + pick(random, BREAKERS) + pattern.slice(at)
    }
    if (random() < 0.05 && pattern.length > 1) {
      const at = Math.floor(random() * pattern.length)
      pattern = pattern.slice(0, at) + pattern.slice(at + 1)
    }
  }
  return pattern
}

function atom(random: () => number, depth: number): string {
  const r = random()
  if (r < 0.35) return pick(random, CHARS)
  if (r < 0.42) return pick(random, ESCAPED_META)
  if (r < 0.58) return pick(random, ESCAPES)
  if (r < 0.63) return pick(random, ['.', '^', '$'])
  if (r < 0.8) {
    let items = ''
    const n = 1 + Math.floor(random() * 3)
    for (let i = 0; i < n; i++) items += pick(random, CLASS_ITEMS)
    return '[' + (random() < 0.35 ? '^' : '') + items + ']'
  }
  if (r < 0.85) return pick(random, FLAG_SETTERS)
  if (depth >= 3) return pick(random, CHARS)
  return pick(random, GROUP_OPENERS) + generatePattern(random, depth + 1) + ')'
}

/**
 * Inputs built from the pattern's own characters (so that literals meet) and from the whole alphabet.
 * Never empty: the server reads an empty context value as a missing field for every operator (a
 * choice of its context resolution, not of the REGEX engine), where the Node SDK tests it.
 */
function generateInput(random: () => number, pattern: string): string {
  const own = [...pattern].filter((c) => !'\\()[]{}|*+?^$'.includes(c))
  const length = 1 + Math.floor(random() * 8)
  let input = ''
  for (let i = 0; i < length; i++) input += own.length > 0 && random() < 0.5 ? pick(random, own) : pick(random, CHARS)
  return input
}

function re2jsCompiles(pattern: string, caseInsensitive: boolean): boolean {
  try {
    RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : undefined)
    return true
  } catch {
    return false
  }
}

interface Case {
  pattern: string
  caseInsensitive: boolean
  inverted: boolean
}

/** The Node SDK's own answer for the constraint on the property `text`. */
function sdkAnswer(c: Case, text: string): boolean {
  const strategy = new Strategy('default', true)
  return strategy.isEnabledWithConstraints({}, { properties: { text } }, [
    { contextName: 'text', operator: 'REGEX', value: c.pattern, caseInsensitive: c.caseInsensitive, inverted: c.inverted, values: [] },
  ] as never)
}

function serverFlag(c: Case) {
  return prepareFlag({
    name: 'f',
    enabled: true,
    strategies: [{ name: 'default', constraints: [{ contextName: 'text', operator: 'REGEX', value: c.pattern, caseInsensitive: c.caseInsensitive, inverted: c.inverted }] }],
  })
}

interface Disagreement {
  pattern: string
  caseInsensitive: boolean
  inverted?: boolean
  input?: string
  sdk: boolean | string
  server: boolean | string
}

/** Every pattern × input on which the server and the SDK answer differently (and every validity mismatch). */
function disagreements(patterns: readonly string[], inputsOf: (pattern: string) => readonly string[]) {
  const found: Disagreement[] = []
  let pairs = 0
  let invalid = 0
  let matches = 0
  for (const pattern of patterns) {
    const problem = regexProblem(pattern)
    if (problem !== undefined) invalid++
    for (const caseInsensitive of [false, true]) {
      const sdkValid = re2jsCompiles(pattern, caseInsensitive)
      if (sdkValid !== (problem === undefined)) found.push({ pattern, caseInsensitive, sdk: sdkValid ? 'valid' : 'invalid', server: problem ?? 'valid' })
      for (const inverted of [false, true]) {
        // Inversion only negates the match; one inverted pass per pattern checks how an invalid pattern is treated.
        const inputs = inverted ? inputsOf(pattern).slice(0, 1) : inputsOf(pattern)
        const server = serverFlag({ pattern, caseInsensitive, inverted })
        for (const input of inputs) {
          pairs++
          const sdk = sdkAnswer({ pattern, caseInsensitive, inverted }, input)
          if (sdk && !inverted) matches++
          const ours = isEnabled(server, { properties: { text: input } })
          if (sdk !== ours) found.push({ pattern, caseInsensitive, inverted, input, sdk, server: ours })
        }
      }
    }
  }
  return { found, pairs, invalid, matches }
}

/** Hand-picked patterns for every kind of syntax, each with the inputs that tell engines apart. */
const HAND_PICKED: Record<string, [pattern: string, inputs: string[]][]> = {
  'flags and case folding': [
    ['(?i)k', ['k', 'K', '\u212a', 'x']],
    ['(?i)\\x{212A}', ['k', 'K']],
    ['(?i)σ', ['ς', 'Σ', 's']],
    ['(?i)ǆ', ['ǅ', 'Ǆ', 'dž']],
    ['(?i)θ', ['ϑ', 'ϴ', 'Θ']],
    ['(?i)ı', ['i', 'I', 'ı']],
    ['(?i)i', ['ı', 'İ', 'I']],
    ['(?i)ß', ['ẞ', 'ss', 'SS']],
    ['(?i)ﬅ', ['ﬆ', 'st']],
    ['(?i)ͅ', ['ι', 'Ι', 'ι']],
    ['(?i)\\w', ['ſ', '\u212a', 'é']],
    ['(?i)\\W', ['ſ', '\u212a', 'k']],
    ['(?i)[^k]', ['K', '\u212a', 'j']],
    ['(?i)[^\\W]', ['\u212a', '!']],
    ['(?i)[[:^upper:]]', ['a', 'A', '1']],
    ['(?i)[[:upper:]]', ['a', 'ſ', '1']],
    ['(?i)\\p{Lu}', ['a', 'ǅ', '1']],
    ['(?i)\\P{Lu}', ['a', 'A', '1']],
    ['(?i)\\p{^Ll}', ['A', 'a', '1']],
    ['(?i)[\\x{61}-\\x{10FFFF}]', ['A', 'Z', '@']],
    ['(?i)[^\\x{0}-\\x{60}]', ['A', 'a']],
    ['(?i:a)b', ['AB', 'Ab']],
    ['a(?i)b|c', ['aB', 'C']],
    ['(?i)a(?-i)b', ['Ab', 'AB']],
    ['(?s)a.b', ['a\nb']],
    ['a.b', ['a\nb', 'a\rb']],
    ['(?m)^b$', ['a\nb\nc', 'ab']],
    ['(?U)a+', ['aaa']],
    ['(?)a', ['a']],
    ['a*(?i)*', ['a']],
  ],
  'classes': [
    ['^[[:alpha:]]+$', ['Alpha', 'Alpha1']],
    ['[[:^digit:]]', ['123', '12a']],
    ['[[:word:]]', ['_', '-']],
    ['[^a]', ['\n', 'a']],
    ['[]a]', [']', 'a', 'b']],
    ['[^]a]', [']', 'b']],
    ['[a-]', ['-', 'b']],
    ['[\\d-z]', ['-', 'z', 'y']],
    ['\\pL', ['é', '1']],
    ['\\p{Greek}', ['α', 'a']],
    ['\\p{Lc}', ['a', 'ǅ', '1']],
    ['\\p{LC}', ['a', 'ǅ', '1']],
    ['\\p{Cn}', ['\u0378', 'a']],
    ['\\p{Assigned}', ['\u0378', 'a']],
    ['\\p{Ascii}', ['a', 'é']],
    ['\\p{Emoji}', ['😀', 'a']],
    ['\\p{White_Space}', ['\u00a0', 'a']],
    ['\\p{Unknown}', ['\u0378', 'a']],
    ['\\p{Any}', ['a', '\n']],
    ['\\pN', ['Ⅷ', 'a']],
    ['\\p{Thai}', ['ก', 'a']],
    ['\\s', ['\u00a0', '\v', '\t']],
    ['\\d', ['١', '1']],
  ],
  'anchors and boundaries': [
    ['^abc$', ['abc', 'abc\n', 'xabc']],
    ['\\Aabc\\z', ['abc', 'abc\n']],
    ['(?m)^b', ['a\nb', 'ab']],
    ['(?m)a$', ['a\nb', 'ab']],
    ['\\bcat\\b', ['a cat b', 'concatenate', 'é cat']],
    ['\\Bat', ['cat', 'at']],
    ['\\bé', ['é', 'xé']],
    ['^*a', ['a']],
  ],
  'repetition': [
    ['^a{2,4}$', ['a', 'aa', 'aaaaa']],
    ['a{,2}', ['a{,2}', 'aa']],
    ['^xa{0}$', ['x', 'xa']],
    ['a{1000}', ['a'.repeat(1000), 'a'.repeat(999)]],
    ['^(?:a{10}){100}$', ['a'.repeat(1000), 'a']],
    ['^(a|ab)(c|bcd)(d*)$', ['abcd', 'abcdd']],
    ['x*?y', ['xxy']],
    ['^(a+)+$', ['a'.repeat(40) + '!', 'aaa']],
  ],
  'Unicode': [
    ['^.$', ['😀', 'a', '\ud800']],
    ['^..$', ['😀']],
    ['\\x{1F600}', ['x😀']],
    ['^\\x{D800}$', ['\ud800', '😀']],
    ['[😀-😂]', ['😁', 'a']],
    ['中+', ['中中']],
    ['\\p{Han}', ['中', 'a']],
    ['^[^a]$', ['😀', '\udc00']],
  ],
  'invalid for RE2': [
    ['(?=a)b', ['ab']],
    ['(?!a)b', ['b']],
    ['(?<=a)b', ['ab']],
    ['(?<!a)b', ['b']],
    ['(a)\\1', ['aa']],
    ['(?<n>a)\\k<n>', ['aa']],
    ['(?P=n)', ['a']],
    ['a**', ['a']],
    ['*a', ['a']],
    ['(?i)*', ['a']],
    ['a{1001}', ['a']],
    ['(a{30}){40}', ['a']],
    ['(?:(a{30}){40}(?U){1})', ['a']],
    ['\\Z', ['a']],
    ['\\e', ['a']],
    ['\\cA', ['\u0001']],
    ['\\u0041', ['A']],
    ['\\8', ['8']],
    ['\\G', ['a']],
    ['\\X', ['a']],
    ['\\R', ['\n']],
    ['\\h', [' ']],
    ['\\N', ['a']],
    ['\\_', ['_']],
    ['[[:nope:]]', ['n']],
    ['[[:al{2,1}pha:]]', ['a']],
    ['\\p{Grek}', ['α']],
    ['\\p{Zzzz}', ['\u0378']],
    ['\\p{punct}', ['!']],
    ['\\p{greek}', ['α']],
    ['\\p{Script=Greek}', ['α']],
    ['\\p{Katakana_Or_Hiragana}', ['a']],
    ['\\p{L&}', ['a']],
    ['\\p{constructor}', ['a']],
    ['[[:constructor:]]', ['a']],
    ['(?x)a', ['a']],
    ['(?#c)a', ['a']],
    ['(?-)a', ['a']],
    ['(?i-)a', ['a']],
    ['(?P<n>a)(?P<n>b)', ['ab']],
    ['[b-a]', ['a']],
    ['\\x{110000}', ['a']],
    ['(regex', ['regex']],
    ['a)', ['a']],
    ['[a', ['a']],
    ['a\\', ['a']],
  ],
}

/** Accepted by JavaScript's RegExp (the naming patterns' old engine) but not by RE2. */
const JAVASCRIPT_ONLY = ['(?=a)b', '(?<!a)b', '(a)\\1', '(?<n>a)\\k<n>', '\\cA', '\\u0041', '\\Z', '\\e', '[[:nope:]]', '\\8', '\\p{Grek}']
/** Accepted by RE2 but not by JavaScript's RegExp. */
const RE2_ONLY = ['(?i)abc', '(?P<n>a)', '(?U)a+', '\\Q(\\E', '(?)a', 'a{2}(?i){3}']

const acceptedByJavaScript = (pattern: string) => {
  try {
    new RegExp(pattern)
    return true
  } catch {
    return false
  }
}

describe('REGEX: the server answers what the SDKs answer (differential against re2js and unleash-client)', () => {
  it.each(Object.entries(HAND_PICKED))('hand-picked %s: the same validity and the same answer on every input', (_, cases) => {
    const inputs = new Map(cases)
    const { found } = disagreements([...inputs.keys()], (p) => inputs.get(p)!)
    expect(found).toEqual([])
  })

  it('what JavaScript accepts and RE2 refuses is refused; what RE2 accepts and JavaScript refuses is accepted', () => {
    for (const pattern of JAVASCRIPT_ONLY) {
      expect({ pattern, javascript: acceptedByJavaScript(pattern), re2js: re2jsCompiles(pattern, false), server: regexProblem(pattern) === undefined }).toEqual({ pattern, javascript: true, re2js: false, server: false })
    }
    for (const pattern of RE2_ONLY) {
      expect({ pattern, javascript: acceptedByJavaScript(pattern), re2js: re2jsCompiles(pattern, false), server: regexProblem(pattern) === undefined }).toEqual({ pattern, javascript: false, re2js: true, server: true })
    }
  })

  it(`generated patterns (seed ${SEED}): the same validity and the same answer on every input`, () => {
    const random = prng(SEED)
    const patterns: string[] = []
    const inputs = new Map<string, string[]>()
    for (let i = 0; i < PATTERNS; i++) {
      const pattern = generatePattern(random)
      patterns.push(pattern)
      inputs.set(pattern, Array.from({ length: INPUTS_PER_PATTERN }, () => generateInput(random, pattern)))
    }
    const { found, pairs, invalid, matches } = disagreements(patterns, (p) => inputs.get(p)!)
    // The generator reaches both sides of every question: thousands of pairs, invalid patterns, matches and misses.
    expect(pairs).toBeGreaterThan(20_000)
    expect(invalid).toBeGreaterThan(PATTERNS / 10)
    expect(invalid).toBeLessThan(PATTERNS / 2)
    expect(matches).toBeGreaterThan(pairs / 10)
    expect(matches).toBeLessThan(pairs / 2)
    expect(found.slice(0, 50)).toEqual([])
  })
})
