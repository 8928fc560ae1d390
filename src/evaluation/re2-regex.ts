/**
 * Regular expressions in RE2 syntax (what the Unleash SDKs use for the REGEX operator), matched in
 * linear time by a Pike VM over a Thompson NFA. Own implementation rather than a translation to
 * JavaScript's RegExp: patterns come from admins and inputs from end users, and a backtracking
 * engine would let one pattern like `(a+)+$` stall the server on a crafted context value.
 *
 * Only "is there a match anywhere" is needed, so greediness and captures play no part.
 */

export class Re2SyntaxError extends Error {
  override name = 'Re2SyntaxError'
}
/** RE2's own program limit: the pattern is valid syntax, but its program would be too large. */
export class Re2ProgramTooLarge extends Re2SyntaxError {}

/**
 * What one request may still spend on matching, in steps (an instruction of the program visited for one
 * character of the input: the unit the matcher's time is linear in).
 */
export interface WorkMeter {
  /** The request's whole budget, for the message when it is spent. */
  readonly budget: number
  remaining: number
}

/** A match would take more steps than the meter has left: the request is refused rather than left running. */
export class RegexWorkExceeded extends Error {
  override name = 'RegexWorkExceeded'
  constructor(readonly budget: number) {
    super(`Evaluating the constraints for this request takes more than ${budget} matching steps, the limit per request (FLAGPOST_EVALUATION_WORK_BUDGET): shorten the context values or simplify the constraints`)
  }
}

/** Steps every match of this process has taken: tests read it to count the work a request did. */
let totalWork = 0
export const regexWorkDone = () => totalWork
/** Counts work other than matching (the other operators', compiling) that a meter drew, in the same total. */
export const addWorkDone = (steps: number) => {
  totalWork += steps
}

export interface Re2Options {
  caseInsensitive?: boolean
  /**
   * Match the whole text rather than anywhere in it. Anchored in the syntax tree, not by wrapping the
   * source in ^(?:...)$, which a pattern like `\Qa` (a quote running to the end) would swallow.
   */
  wholeText?: boolean
}

const MAX_REPEAT = 1000
/** RE2 refuses patterns whose program would be too large; ours is about as generous. */
const MAX_INSTRUCTIONS = 50_000
const MAX_CODE_POINT = 0x10ffff

// ---- character sets ----------------------------------------------------------------------------

/** A set given by a JavaScript RegExp that matches one whole code point (a Unicode property, or a case-folded class). */
interface Predicate {
  re: RegExp
  negate: boolean
}

/**
 * RegExp tests the sets have made (their predicates'), counted into a match's steps: one costs about as much as four
 * steps of the matcher (bench/regex.ts), and a class may hold dozens.
 */
let predicateTests = 0
const PREDICATE_WEIGHT = 4

/** Sets of up to this many ranges and no predicates are scanned directly: as fast as any cache. */
const SMALL_SET_RANGES = 4

class CharSet {
  /** Whether the set is a few ranges and no predicate: then `has` scans them, with no cache. */
  private readonly small: boolean
  /** Answers for ASCII, filled on first use for sets that are not small: 1 in, 2 out. */
  private readonly ascii: Int8Array | null
  /**
   * The last code point past ASCII asked and its answer: in one step of a match every thread asks about the same
   * character, and a repeated class (`\pL{100}`) is one set shared by all its copies, so one lookup (a binary search,
   * then RegExp tests) answers them all. A step then costs about the same whatever the class.
   */
  private lastCp = -1
  private lastFound = false

  constructor(
    /** Sorted, non-overlapping [lo, hi] pairs. */
    readonly ranges: Int32Array,
    readonly negated: boolean,
    readonly predicates: Predicate[],
  ) {
    this.small = predicates.length === 0 && ranges.length <= 2 * SMALL_SET_RANGES
    this.ascii = this.small ? null : new Int8Array(128)
  }

  has(cp: number): boolean {
    if (this.small) return this.scan(cp) !== this.negated
    if (cp < 128) {
      const ascii = this.ascii!
      const known = ascii[cp]!
      if (known !== 0) return known === 1
      const found = this.lookup(cp)
      ascii[cp] = found ? 1 : 2
      return found
    }
    if (cp !== this.lastCp) {
      this.lastFound = this.lookup(cp)
      this.lastCp = cp
    }
    return this.lastFound
  }

  private scan(cp: number): boolean {
    const ranges = this.ranges
    for (let i = 0; i < ranges.length; i += 2) {
      if (cp < ranges[i]!) return false
      if (cp <= ranges[i + 1]!) return true
    }
    return false
  }

  /** Binary search: a class may list hundreds of ranges. */
  private inRanges(cp: number): boolean {
    const ranges = this.ranges
    let lo = 0
    let hi = (ranges.length >> 1) - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (cp < ranges[2 * mid]!) hi = mid - 1
      else if (cp > ranges[2 * mid + 1]!) lo = mid + 1
      else return true
    }
    return false
  }

  private lookup(cp: number): boolean {
    let found = this.inRanges(cp)
    if (!found && this.predicates.length > 0) {
      const char = String.fromCodePoint(cp)
      for (const p of this.predicates) {
        predicateTests++
        if (p.re.test(char) !== p.negate) {
          found = true
          break
        }
      }
    }
    return found !== this.negated
  }
}

/**
 * Case folding is RE2's: a character matches every character with the same simple case folding
 * (Unicode's CaseFolding.txt, statuses C and S: k K and the Kelvin sign, σ ς Σ, ǆ ǅ Ǆ, ...). JavaScript's
 * RegExp with the `iu` flags compares characters by exactly that folding, so a folded set is its raw
 * ranges plus a RegExp of them with `iu`: no case tables of our own, and no gaps for large ranges.
 */
const hex = (cp: number) => `\\u{${cp.toString(16)}}`

function foldedClass(pairs: readonly number[]): RegExp {
  let source = ''
  for (let i = 0; i < pairs.length; i += 2) source += pairs[i] === pairs[i + 1] ? hex(pairs[i]!) : `${hex(pairs[i]!)}-${hex(pairs[i + 1]!)}`
  return new RegExp(`^[${source}]$`, 'iu')
}

/**
 * The case variants of ASCII code points, listed rather than matched through a RegExp (the common
 * case stays as fast as a plain range): the other case, and the only two non-ASCII characters whose
 * folding is ASCII, the Kelvin sign (k) and the long s (s).
 */
function asciiFolds(pairs: readonly number[]): number[] {
  const out: number[] = []
  for (let i = 0; i < pairs.length; i += 2) {
    for (let cp = pairs[i]!; cp <= pairs[i + 1]!; cp++) {
      const lower = cp | 0x20
      if (lower < 0x61 || lower > 0x7a) continue
      out.push(lower, lower, lower - 0x20, lower - 0x20)
      if (lower === 0x6b) out.push(0x212a, 0x212a)
      if (lower === 0x73) out.push(0x17f, 0x17f)
    }
  }
  return out
}

/** Whether a code point has other case forms (every member of a folding orbit changes when case-mapped). */
const CASED = /^\p{Changes_When_Casemapped}$/u

/**
 * Collects a class's members as RE2 does under its flags: with case folding, what is added positively
 * is added with its case variants, and a negated group (\W, \P{Lu}, [:^upper:]) is the complement of
 * the group with its variants, so (?i)\W does not match the Kelvin sign (a variant of k).
 */
class RangeBuilder {
  private readonly pairs: number[] = []
  private readonly folded: number[] = []
  private readonly predicates: Predicate[] = []

  constructor(private readonly fold: boolean) {}

  add(lo: number, hi: number) {
    this.pairs.push(lo, hi)
    if (this.fold && (lo !== hi || CASED.test(String.fromCodePoint(lo)))) this.folded.push(lo, hi)
  }

  addGroup(pairs: readonly number[], negated: boolean) {
    if (!negated) {
      for (let i = 0; i < pairs.length; i += 2) this.add(pairs[i]!, pairs[i + 1]!)
    } else if (this.fold) {
      this.predicates.push({ re: foldedClass(normalize(pairs)), negate: true })
    } else {
      this.pairs.push(...complement(pairs))
    }
  }

  /** A Unicode property (\pL, \p{Greek}); `source` is its JavaScript spelling. */
  addProperty(source: string, negate: boolean) {
    this.predicates.push({ re: new RegExp(`^\\p{${source}}$`, this.fold ? 'iu' : 'u'), negate })
  }

  build(negated: boolean): CharSet {
    let predicates = this.predicates
    if (this.folded.length > 0 && Math.max(...this.folded) < 0x80) this.pairs.push(...asciiFolds(this.folded))
    else if (this.folded.length > 0) predicates = [...predicates, { re: foldedClass(normalize(this.folded)), negate: false }]
    return new CharSet(Int32Array.from(normalize(this.pairs)), negated, predicates)
  }
}

function normalize(pairs: readonly number[]): number[] {
  const list: [number, number][] = []
  for (let i = 0; i < pairs.length; i += 2) list.push([pairs[i]!, pairs[i + 1]!])
  list.sort((a, b) => a[0] - b[0])
  const out: number[] = []
  for (const [lo, hi] of list) {
    const last = out.length - 1
    if (last > 0 && lo <= out[last]! + 1) out[last] = Math.max(out[last]!, hi)
    else out.push(lo, hi)
  }
  return out
}

function complement(sorted: readonly number[]): number[] {
  const pairs = normalize(sorted)
  const out: number[] = []
  let next = 0
  for (let i = 0; i < pairs.length; i += 2) {
    if (pairs[i]! > next) out.push(next, pairs[i]! - 1)
    next = pairs[i + 1]! + 1
  }
  if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT)
  return out
}

const DIGIT = [0x30, 0x39]
const WORD = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a]
const PERL_SPACE = [0x09, 0x0a, 0x0c, 0x0d, 0x20, 0x20]

const POSIX_CLASSES = new Map<string, number[]>([
  ['alnum', [0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a]],
  ['alpha', [0x41, 0x5a, 0x61, 0x7a]],
  ['ascii', [0x00, 0x7f]],
  ['blank', [0x09, 0x09, 0x20, 0x20]],
  ['cntrl', [0x00, 0x1f, 0x7f, 0x7f]],
  ['digit', DIGIT],
  ['graph', [0x21, 0x7e]],
  ['lower', [0x61, 0x7a]],
  ['print', [0x20, 0x7e]],
  ['punct', [0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e]],
  ['space', [0x09, 0x0d, 0x20, 0x20]],
  ['upper', [0x41, 0x5a]],
  ['word', WORD],
  ['xdigit', [0x30, 0x39, 0x41, 0x46, 0x61, 0x66]],
])

/**
 * The names \p{...} accepts are those of re2js, which the SDKs run: general categories, a few binary
 * properties, and scripts by their long names only; JavaScript's RegExp answers membership. It also
 * knows short aliases (Grek, Zzzz, punct) that re2js refuses, which is why names are checked here.
 */
const GENERAL_CATEGORIES = new Set([
  'C', 'Cc', 'Cf', 'Cn', 'Co', 'Cs', 'L', 'LC', 'Ll', 'Lm', 'Lo', 'Lt', 'Lu', 'M', 'Mc', 'Me', 'Mn', 'N', 'Nd', 'Nl', 'No',
  'P', 'Pc', 'Pd', 'Pe', 'Pf', 'Pi', 'Po', 'Ps', 'S', 'Sc', 'Sk', 'Sm', 'So', 'Z', 'Zl', 'Zp', 'Zs',
])
const BINARY_PROPERTIES = new Set([
  'ASCII_Hex_Digit', 'Alphabetic', 'Dash', 'Emoji', 'Emoji_Component', 'Emoji_Modifier', 'Emoji_Modifier_Base', 'Emoji_Presentation',
  'Extended_Pictographic', 'Hex_Digit', 'Lowercase', 'Math', 'Quotation_Mark', 'Terminal_Punctuation', 'Uppercase', 'White_Space',
])
const SPECIAL_CLASSES = new Map([['Any', 'Any'], ['Ascii', 'ASCII'], ['Assigned', 'Assigned'], ['Lc', 'LC']])
/** Every script alias is four letters; these are the scripts whose long name is too. */
const FOUR_LETTER_SCRIPTS = new Set(['Ahom', 'Cham', 'Kawi', 'Lisu', 'Miao', 'Modi', 'Newa', 'Thai', 'Toto'])

/** The JavaScript spelling of the Unicode class \p{name}; throws for a name re2js does not know. */
function unicodeClass(name: string): string {
  let property = SPECIAL_CLASSES.get(name)
  if (property === undefined && GENERAL_CATEGORIES.has(name)) property = `General_Category=${name}`
  if (property === undefined && BINARY_PROPERTIES.has(name)) property = name
  // Katakana_Or_Hiragana is a script value JavaScript knows (with no characters) and re2js does not.
  if (property === undefined && /^[A-Z][A-Za-z_]*$/.test(name) && (name.length !== 4 || FOUR_LETTER_SCRIPTS.has(name)) && name !== 'Katakana_Or_Hiragana') {
    property = `Script=${name}`
    try {
      new RegExp(`\\p{${property}}`, 'u')
    } catch {
      property = undefined
    }
  }
  if (property === undefined) throw new Re2SyntaxError(`invalid character class range: \\p{${name}}`)
  return property
}

// ---- syntax tree -------------------------------------------------------------------------------

const enum Assertion {
  BeginText,
  EndText,
  BeginLine,
  EndLine,
  WordBoundary,
  NotWordBoundary,
}

type Node =
  | { kind: 'empty' }
  | { kind: 'set'; set: CharSet }
  | { kind: 'assert'; assertion: Assertion }
  | { kind: 'concat'; items: Node[] }
  | { kind: 'alternate'; items: Node[] }
  | { kind: 'repeat'; item: Node; min: number; max: number }

interface Flags {
  i: boolean
  m: boolean
  s: boolean
  U: boolean
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'
const isOctal = (c: string | undefined) => c !== undefined && c >= '0' && c <= '7'
const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c)
const isAlnum = (c: string) => /^[0-9A-Za-z]$/.test(c)

/** An escape inside or outside a class: one code point, or a set (\d, \pL, ...). */
type Escape = { cp: number } | { pairs: readonly number[]; negated: boolean } | { property: string; negate: boolean }

class Parser {
  private pos = 0
  private readonly names = new Set<string>()

  constructor(private readonly src: string) {}

  parse(flags: Flags): Node {
    const node = this.alternation(flags)
    if (this.pos < this.src.length) throw new Re2SyntaxError(`unexpected ): ${this.src}`)
    return node
  }

  private peek(offset = 0): string | undefined {
    return this.src[this.pos + offset]
  }

  private startsWith(s: string): boolean {
    return this.src.startsWith(s, this.pos)
  }

  /** Reads one code point. */
  private next(): number {
    const cp = this.src.codePointAt(this.pos)!
    this.pos += cp > 0xffff ? 2 : 1
    return cp
  }

  /** Alternatives up to an unmatched ) or the end; `flags` changes with (?flags) for the rest of the group. */
  private alternation(flags: Flags): Node {
    const items = [this.concat(flags)]
    while (this.peek() === '|') {
      this.pos++
      items.push(this.concat(flags))
    }
    return items.length === 1 ? items[0]! : { kind: 'alternate', items }
  }

  private concat(flags: Flags): Node {
    const items: Node[] = []
    // The node the next repetition operator applies to; null right after | ( (?flags) or at the start.
    let last: Node | null = null
    let lastRepeated = false
    while (this.pos < this.src.length) {
      const c = this.peek()!
      if (c === '|' || c === ')') break
      if (c === '*' || c === '+' || c === '?' || (c === '{' && this.repetitionAhead())) {
        const op = this.src.slice(this.pos, this.pos + 2)
        if (last === null) throw new Re2SyntaxError(`missing argument to repetition operator: ${op}`)
        if (lastRepeated) throw new Re2SyntaxError(`bad repetition operator: ${op}`)
        const [min, max] = this.repetition()
        if (this.peek() === '?') this.pos++
        last = { kind: 'repeat', item: last, min, max }
        items[items.length - 1] = last
        lastRepeated = true
        continue
      }
      if (this.startsWith('\\Q')) {
        this.pos += 2
        const end = this.src.indexOf('\\E', this.pos)
        const literal = this.src.slice(this.pos, end === -1 ? undefined : end)
        this.pos = end === -1 ? this.src.length : end + 2
        for (const ch of literal) {
          last = this.literal(ch.codePointAt(0)!, flags)
          items.push(last)
        }
        lastRepeated = false
        continue
      }
      const atom = this.atom(flags)
      lastRepeated = false
      // A (?flags) group adds nothing: a repetition after it applies to what came before, as in RE2.
      if (atom) {
        last = atom
        items.push(atom)
      }
    }
    if (items.length === 0) return { kind: 'empty' }
    return items.length === 1 ? items[0]! : { kind: 'concat', items }
  }

  private repetitionAhead(): boolean {
    return /^\{\d+(,\d*)?\}/.test(this.src.slice(this.pos, this.pos + 24))
  }

  private repetition(): [number, number] {
    const c = this.src[this.pos++]
    if (c === '*') return [0, -1]
    if (c === '+') return [1, -1]
    if (c === '?') return [0, 1]
    const m = /^(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos))!
    this.pos += m[0].length
    const min = Number(m[1])
    const max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3])
    if (min > MAX_REPEAT || max > MAX_REPEAT || (max !== -1 && max < min)) throw new Re2SyntaxError(`bad repetition operator: {${m[0]}`)
    return [min, max]
  }

  /** One atom, or null for a (?flags) group that only changes flags. */
  private atom(flags: Flags): Node | null {
    const c = this.peek()!
    switch (c) {
      case '(':
        return this.group(flags)
      case '[':
        this.pos++
        return { kind: 'set', set: this.charClass(flags) }
      case '.':
        this.pos++
        return { kind: 'set', set: new CharSet(flags.s ? new Int32Array() : Int32Array.of(10, 10), true, []) }
      case '^':
        this.pos++
        return { kind: 'assert', assertion: flags.m ? Assertion.BeginLine : Assertion.BeginText }
      case '$':
        this.pos++
        return { kind: 'assert', assertion: flags.m ? Assertion.EndLine : Assertion.EndText }
      case '\\':
        return this.escapeAtom(flags)
      default:
        return this.literal(this.next(), flags)
    }
  }

  private literal(cp: number, flags: Flags): Node {
    const ranges = new RangeBuilder(flags.i)
    ranges.add(cp, cp)
    return { kind: 'set', set: ranges.build(false) }
  }

  private group(flags: Flags): Node | null {
    this.pos++ // (
    let inner = { ...flags }
    if (this.peek() === '?') {
      const rest = this.src.slice(this.pos + 1)
      const named = /^P?<(\w+)>/.exec(rest)
      if (named) {
        if (this.names.has(named[1]!)) throw new Re2SyntaxError(`duplicate capture group name: ${named[1]}`)
        this.names.add(named[1]!)
        this.pos += 1 + named[0].length
      } else if (/^(=|!|<=|<!|P=|P>)/.test(rest)) {
        throw new Re2SyntaxError(`invalid or unsupported Perl syntax: (?${rest.slice(0, 2)}`)
      } else {
        const m = /^([imsU]*)(-([imsU]*))?([:)])/.exec(rest)
        // `(?)` changes nothing but is valid for re2js; `(?-)` and `(?i-)` are not.
        if (!m || m[3] === '') {
          throw new Re2SyntaxError(`invalid or unsupported Perl syntax: (?${rest.slice(0, 2)}`)
        }
        const changed = { ...flags }
        for (const f of m[1]!) changed[f as keyof Flags] = true
        for (const f of m[3] ?? '') changed[f as keyof Flags] = false
        this.pos += 1 + m[0].length
        if (m[4] === ')') {
          Object.assign(flags, changed)
          return null
        }
        inner = changed
      }
    }
    const node = this.alternation(inner)
    if (this.peek() !== ')') throw new Re2SyntaxError(`missing closing ): ${this.src}`)
    this.pos++
    return node
  }

  private escapeAtom(flags: Flags): Node {
    const c = this.peek(1)
    const assertion = c === 'A' ? Assertion.BeginText : c === 'z' ? Assertion.EndText : c === 'b' ? Assertion.WordBoundary : c === 'B' ? Assertion.NotWordBoundary : undefined
    if (assertion !== undefined) {
      this.pos += 2
      return { kind: 'assert', assertion }
    }
    const escape = this.escape()
    if ('cp' in escape) return this.literal(escape.cp, flags)
    const ranges = new RangeBuilder(flags.i)
    if ('property' in escape) ranges.addProperty(escape.property, escape.negate)
    else ranges.addGroup(escape.pairs, escape.negated)
    return { kind: 'set', set: ranges.build(false) }
  }

  /** An escape sequence at this.pos (which is at the backslash). */
  private escape(): Escape {
    this.pos++ // \
    if (this.pos >= this.src.length) throw new Re2SyntaxError('trailing \\')
    const c = this.src[this.pos]!
    this.pos++
    switch (c) {
      case 'd': return { pairs: DIGIT, negated: false }
      case 'D': return { pairs: DIGIT, negated: true }
      case 'w': return { pairs: WORD, negated: false }
      case 'W': return { pairs: WORD, negated: true }
      case 's': return { pairs: PERL_SPACE, negated: false }
      case 'S': return { pairs: PERL_SPACE, negated: true }
      case 'p':
      case 'P': {
        let name: string
        if (this.peek() === '{') {
          const end = this.src.indexOf('}', this.pos)
          if (end === -1) throw new Re2SyntaxError(`invalid character class range: \\${c}`)
          name = this.src.slice(this.pos + 1, end)
          this.pos = end + 1
        } else {
          if (this.pos >= this.src.length) throw new Re2SyntaxError(`invalid character class range: \\${c}`)
          name = String.fromCodePoint(this.next())
        }
        let negate = c === 'P'
        if (name.startsWith('^')) {
          negate = !negate
          name = name.slice(1)
        }
        return { property: unicodeClass(name), negate }
      }
      case 'a': return { cp: 0x07 }
      case 'f': return { cp: 0x0c }
      case 't': return { cp: 0x09 }
      case 'n': return { cp: 0x0a }
      case 'r': return { cp: 0x0d }
      case 'v': return { cp: 0x0b }
      case 'x': {
        if (this.peek() === '{') {
          const m = /^\{([0-9A-Fa-f]+)\}/.exec(this.src.slice(this.pos))
          const cp = m ? parseInt(m[1]!, 16) : NaN
          if (!m || cp > MAX_CODE_POINT) throw new Re2SyntaxError('invalid escape sequence: \\x{')
          this.pos += m[0].length
          return { cp }
        }
        if (!isHex(this.peek()) || !isHex(this.peek(1))) throw new Re2SyntaxError('invalid escape sequence: \\x')
        const cp = parseInt(this.src.slice(this.pos, this.pos + 2), 16)
        this.pos += 2
        return { cp }
      }
    }
    if (c >= '1' && c <= '7' && !isOctal(this.peek())) throw new Re2SyntaxError(`invalid escape sequence: \\${c} (backreferences are not supported)`)
    if (isOctal(c)) {
      let digits = c
      while (digits.length < 3 && isOctal(this.peek())) digits += this.src[this.pos++]
      return { cp: parseInt(digits, 8) }
    }
    if (c.charCodeAt(0) < 0x80 && !isAlnum(c) && !isDigit(c)) return { cp: c.charCodeAt(0) }
    throw new Re2SyntaxError(`invalid escape sequence: \\${c}`)
  }

  /** A bracket expression; this.pos is just after the [. */
  private charClass(flags: Flags): CharSet {
    const ranges = new RangeBuilder(flags.i)
    let negated = false
    if (this.peek() === '^') {
      negated = true
      this.pos++
    }
    let first = true
    for (;;) {
      if (this.pos >= this.src.length) throw new Re2SyntaxError(`missing closing ]: ${this.src}`)
      const c = this.peek()!
      if (c === ']' && !first) {
        this.pos++
        break
      }
      first = false
      if (this.startsWith('[:')) {
        // As RE2: everything up to the next :] is the name of a POSIX class, known or not.
        const end = this.src.indexOf(':]', this.pos + 2)
        if (end !== -1) {
          const name = this.src.slice(this.pos + 2, end)
          const negated = name.startsWith('^')
          const pairs = POSIX_CLASSES.get(negated ? name.slice(1) : name)
          if (!pairs) throw new Re2SyntaxError(`invalid character class range: [:${name}:]`)
          ranges.addGroup(pairs, negated)
          this.pos = end + 2
          continue
        }
      }
      const lo = this.classChar()
      if (typeof lo !== 'number') {
        if ('property' in lo) ranges.addProperty(lo.property, lo.negate)
        else ranges.addGroup(lo.pairs, lo.negated)
        continue
      }
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.pos++
        const hi = this.classChar()
        if (typeof hi !== 'number' || hi < lo) throw new Re2SyntaxError(`invalid character class range: ${String.fromCodePoint(lo)}-`)
        ranges.add(lo, hi)
      } else {
        ranges.add(lo, lo)
      }
    }
    return ranges.build(negated)
  }

  private classChar(): number | Exclude<Escape, { cp: number }> {
    if (this.peek() !== '\\') return this.next()
    const c = this.peek(1)
    if (c === 'b' || c === 'B' || c === 'A' || c === 'z' || c === 'Q' || c === 'E') throw new Re2SyntaxError(`invalid escape sequence: \\${c}`)
    const escape = this.escape()
    return 'cp' in escape ? escape.cp : escape
  }
}

/** RE2 refuses nested counted repetitions whose counts multiply past 1000. */
function checkRepeatNesting(node: Node, budget: number): void {
  if (node.kind === 'repeat') {
    if (node.max === 0) return
    let count = node.max === -1 ? node.min : node.max
    if (count > budget) throw new Re2SyntaxError('bad repetition operator: nested repetition counts exceed 1000')
    if (count < 1) count = 1
    checkRepeatNesting(node.item, Math.floor(budget / count))
  } else if (node.kind === 'concat' || node.kind === 'alternate') {
    for (const item of node.items) checkRepeatNesting(item, budget)
  }
}

// ---- program and VM ----------------------------------------------------------------------------

const enum Op {
  Char,
  Split,
  Assert,
  Match,
}

interface Instruction {
  op: Op
  out: number
  out1: number
  set: CharSet | null
  assertion: Assertion
}

class Compiler {
  readonly program: Instruction[] = []

  private push(op: Op, out: number, out1 = -1, set: CharSet | null = null, assertion = Assertion.BeginText): number {
    if (this.program.length >= MAX_INSTRUCTIONS) throw new Re2ProgramTooLarge('pattern too large - compile failed')
    this.program.push({ op, out, out1, set, assertion })
    return this.program.length - 1
  }

  match(): number {
    return this.push(Op.Match, -1)
  }

  /** Emits code matching `node` that continues at `next`; returns its entry point. */
  compile(node: Node, next: number): number {
    switch (node.kind) {
      case 'empty':
        return next
      case 'set':
        return this.push(Op.Char, next, -1, node.set)
      case 'assert':
        return this.push(Op.Assert, next, -1, null, node.assertion)
      case 'concat':
        for (let i = node.items.length - 1; i >= 0; i--) next = this.compile(node.items[i]!, next)
        return next
      case 'alternate': {
        let entry = this.compile(node.items[node.items.length - 1]!, next)
        for (let i = node.items.length - 2; i >= 0; i--) entry = this.push(Op.Split, this.compile(node.items[i]!, next), entry)
        return entry
      }
      case 'repeat': {
        let tail = next
        if (node.max === -1) {
          const loop = this.push(Op.Split, -1, next)
          this.program[loop]!.out = this.compile(node.item, loop)
          tail = loop
        } else {
          for (let k = node.min; k < node.max; k++) tail = this.push(Op.Split, this.compile(node.item, tail), next)
        }
        for (let k = 0; k < node.min; k++) tail = this.compile(node.item, tail)
        return tail
      }
    }
  }
}

const isWordChar = (cp: number) => (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || cp === 0x5f || (cp >= 0x61 && cp <= 0x7a)

function holds(assertion: Assertion, prev: number, next: number): boolean {
  switch (assertion) {
    case Assertion.BeginText: return prev === -1
    case Assertion.EndText: return next === -1
    case Assertion.BeginLine: return prev === -1 || prev === 0x0a
    case Assertion.EndLine: return next === -1 || next === 0x0a
    case Assertion.WordBoundary: return isWordChar(prev) !== isWordChar(next)
    case Assertion.NotWordBoundary: return isWordChar(prev) === isWordChar(next)
  }
}

export class Re2Regex {
  private readonly program: Instruction[]
  private readonly start: number
  private readonly anchored: boolean
  // Work space reused across calls: evaluation is synchronous, so one match runs at a time.
  private current: Int32Array
  private following: Int32Array
  private readonly marks: Int32Array
  private readonly stack: Int32Array
  private generation = 0
  /** Steps of the match under way. */
  private work = 0

  constructor(readonly source: string, options: Re2Options = {}) {
    const parsed = new Parser(source).parse({ i: options.caseInsensitive === true, m: false, s: false, U: false })
    checkRepeatNesting(parsed, MAX_REPEAT)
    const root: Node = options.wholeText
      ? { kind: 'concat', items: [{ kind: 'assert', assertion: Assertion.BeginText }, parsed, { kind: 'assert', assertion: Assertion.EndText }] }
      : parsed
    const compiler = new Compiler()
    this.start = compiler.compile(root, compiler.match())
    this.program = compiler.program
    this.anchored = startsAnchored(root)
    const size = this.program.length
    this.current = new Int32Array(size)
    this.following = new Int32Array(size)
    this.marks = new Int32Array(size).fill(-1)
    this.stack = new Int32Array(2 * size + 2)
  }

  /** Instructions in the program: a match costs at most this many steps per character of its input. */
  get programSize(): number {
    return this.program.length
  }

  /**
   * Whether the pattern matches anywhere in `input`. With a meter, the steps are drawn from it, and a match that
   * would take more than it has left stops there with RegexWorkExceeded (checked after each character).
   */
  test(input: string, meter?: WorkMeter): boolean {
    this.work = 0
    predicateTests = 0
    try {
      return this.run(input, meter)
    } finally {
      // The RegExp tests of a step the match ended in.
      this.work += predicateTests * PREDICATE_WEIGHT
      predicateTests = 0
      totalWork += this.work
      if (meter !== undefined) meter.remaining = Math.max(0, meter.remaining - this.work)
    }
  }

  private run(input: string, meter: WorkMeter | undefined): boolean {
    const limit = meter === undefined ? Infinity : meter.remaining
    if (this.generation > 0x3fffffff) {
      this.marks.fill(-1)
      this.generation = 0
    }
    const length = input.length
    let pos = 0
    let prev = -1
    let cur = length > 0 ? input.codePointAt(0)! : -1
    let count = 0
    let generation = ++this.generation
    for (;;) {
      if (!this.anchored || pos === 0) {
        const added = this.addThread(this.current, count, this.start, prev, cur, generation)
        if (added < 0) return true
        count = added
      }
      if (count === 0 && (this.anchored || pos >= length)) return false
      if (pos >= length) return false
      const nextPos = pos + (cur > 0xffff ? 2 : 1)
      const nextCp = nextPos < length ? input.codePointAt(nextPos)! : -1
      generation = ++this.generation
      let nextCount = 0
      for (let i = 0; i < count; i++) {
        const inst = this.program[this.current[i]!]!
        if (inst.set!.has(cur)) {
          nextCount = this.addThread(this.following, nextCount, inst.out, cur, nextCp, generation)
          if (nextCount < 0) return true
        }
      }
      this.work += count + 1
      if (predicateTests !== 0) {
        // Past ASCII, the sets' RegExp tests of this step count too.
        this.work += predicateTests * PREDICATE_WEIGHT
        predicateTests = 0
      }
      if (this.work > limit) throw new RegexWorkExceeded(meter!.budget)
      const swap = this.current
      this.current = this.following
      this.following = swap
      count = nextCount
      pos = nextPos
      prev = cur
      cur = nextCp
    }
  }

  /** Adds the threads reachable from pc without consuming input; returns the new count, or -1 on a match. */
  private addThread(list: Int32Array, count: number, pc: number, prev: number, next: number, generation: number): number {
    const stack = this.stack
    const marks = this.marks
    let top = 0
    let visited = 0
    stack[top++] = pc
    while (top > 0) {
      visited++
      const at = stack[--top]!
      if (marks[at] === generation) continue
      marks[at] = generation
      const inst = this.program[at]!
      switch (inst.op) {
        case Op.Char:
          list[count++] = at
          break
        case Op.Split:
          stack[top++] = inst.out1
          stack[top++] = inst.out
          break
        case Op.Assert:
          if (holds(inst.assertion, prev, next)) stack[top++] = inst.out
          break
        case Op.Match:
          this.work += visited
          return -1
      }
    }
    this.work += visited
    return count
  }
}

function startsAnchored(node: Node): boolean {
  if (node.kind === 'assert') return node.assertion === Assertion.BeginText
  if (node.kind === 'concat') return startsAnchored(node.items[0]!)
  if (node.kind === 'alternate') return node.items.every(startsAnchored)
  return false
}

/** Compiles an RE2 pattern; throws Re2SyntaxError for what RE2 rejects (lookarounds, backreferences, ...). */
export function compileRe2(pattern: string, options: Re2Options = {}): Re2Regex {
  return new Re2Regex(pattern, options)
}
