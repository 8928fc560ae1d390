/**
 * JSONPath (RFC 9535) without filter selectors: the root `$`, child and descendant (`..`) segments, and name, wildcard,
 * index and slice selectors, as RFC 9535 writes and evaluates them (test/json-path.test.ts compares it with
 * jsonpath-rfc9535 on many paths and documents; where that library's slices contradict RFC 9535, with a negative bound
 * beyond the array's start, this follows the RFC). Filters (`[?…]`) are refused: group sync reads a claim, which needs
 * none, and their parser and functions would weigh ~9 KiB in the worker (docs/ARCHITECTURE.md, single sign-on).
 */
type Json = unknown
type Selector = { name: string } | { index: number } | { slice: [number | undefined, number | undefined, number | undefined] } | '*'
type Segment = { descendant: boolean; selectors: Selector[] }

const BLANK = /[ \t\n\r]/
const NAME_FIRST = /[A-Za-z_\u0080-\uffff]/
const NAME_CHAR = /[A-Za-z_0-9\u0080-\uffff]/
const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', '/': '/', '\\': '\\' }

export class JsonPathSyntaxError extends Error {}

/** The segments of `expression`; throws JsonPathSyntaxError (its message says where and why) when it is no such JSONPath. */
export function parseJsonPath(expression: string): Segment[] {
  let i = 0
  const fail = (why: string): never => {
    throw new JsonPathSyntaxError(`${why} at position ${i}`)
  }
  const blanks = () => {
    while (i < expression.length && BLANK.test(expression[i]!)) i++
  }
  const shorthand = (): string => {
    const start = i
    if (i >= expression.length || !NAME_FIRST.test(expression[i]!) || isLoneSurrogate(expression, i)) fail('expected a member name')
    while (i < expression.length && NAME_CHAR.test(expression[i]!)) {
      if (isLoneSurrogate(expression, i)) fail('lone surrogate in a member name')
      i++
    }
    return expression.slice(start, i)
  }
  const integer = (): number | undefined => {
    const m = /^(?:0|-?[1-9]\d*)/.exec(expression.slice(i))
    if (!m) return undefined
    i += m[0].length
    return Number(m[0])
  }
  const string = (): string => {
    const quote = expression[i++]!
    let out = ''
    for (;;) {
      if (i >= expression.length) fail('unterminated string')
      const ch = expression[i]!
      if (ch === quote) {
        i++
        return out
      }
      if (ch === '\\') {
        const next = expression[i + 1]
        if (next === quote) out += quote
        else if (next !== undefined && next in ESCAPES) out += ESCAPES[next]
        else if (next === 'u') {
          const unit = hex4(i + 2)
          i += 4
          if (unit >= 0xd800 && unit <= 0xdbff) {
            if (expression.slice(i + 2, i + 4) !== '\\u') fail('lone high surrogate escape')
            const low = hex4(i + 4)
            if (low < 0xdc00 || low > 0xdfff) fail('high surrogate escape without its low surrogate')
            out += String.fromCharCode(unit, low)
            i += 6
          } else if (unit >= 0xdc00 && unit <= 0xdfff) fail('lone low surrogate escape')
          else out += String.fromCharCode(unit)
        } else fail('invalid escape')
        i += 2
        continue
      }
      if (ch < ' ' || isLoneSurrogate(expression, i)) fail('invalid character in a string')
      out += ch
      i++
    }
  }
  const hex4 = (at: number): number => {
    const digits = expression.slice(at, at + 4)
    if (!/^[0-9A-Fa-f]{4}$/.test(digits)) fail('invalid \\u escape')
    return parseInt(digits, 16)
  }
  const selector = (): Selector => {
    const ch = expression[i]
    if (ch === "'" || ch === '"') return { name: string() }
    if (ch === '*') {
      i++
      return '*'
    }
    if (ch === '?') fail('filter selectors are not supported')
    const start = integer()
    blanks()
    if (expression[i] !== ':') {
      if (start === undefined) fail('expected a selector')
      return { index: start! }
    }
    i++
    blanks()
    const end = integer()
    blanks()
    let step: number | undefined
    if (expression[i] === ':') {
      i++
      blanks()
      step = integer()
    }
    return { slice: [start, end, step] }
  }
  if (expression[0] !== '$') fail('a JSONPath starts with $')
  i = 1
  const segments: Segment[] = []
  for (;;) {
    const before = i
    blanks()
    if (i >= expression.length) {
      if (i > before) fail('trailing blank space')
      return segments
    }
    const ch = expression[i]
    let descendant = false
    if (ch === '.' && expression[i + 1] === '.') {
      descendant = true
      i += 2
    } else if (ch === '.') i++
    else if (ch !== '[') fail('expected a segment')
    if (expression[i] === '[' && (descendant || ch === '[')) {
      i++
      blanks()
      const selectors = [selector()]
      for (;;) {
        blanks()
        if (expression[i] === ']') break
        if (expression[i] !== ',') fail('expected , or ]')
        i++
        blanks()
        selectors.push(selector())
      }
      i++
      segments.push({ descendant, selectors })
    } else if (expression[i] === '*') {
      i++
      segments.push({ descendant, selectors: ['*'] })
    } else segments.push({ descendant, selectors: [{ name: shorthand() }] })
  }
}

const isLoneSurrogate = (text: string, at: number): boolean => {
  const code = text.charCodeAt(at)
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = text.charCodeAt(at + 1)
    return !(next >= 0xdc00 && next <= 0xdfff)
  }
  if (code >= 0xdc00 && code <= 0xdfff) {
    const previous = text.charCodeAt(at - 1)
    return !(previous >= 0xd800 && previous <= 0xdbff)
  }
  return false
}

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v)

function select(node: Json, selector: Selector, out: Json[]) {
  if (selector === '*') {
    if (Array.isArray(node)) out.push(...node)
    else if (isObject(node)) out.push(...Object.values(node))
  } else if ('name' in selector) {
    if (isObject(node) && Object.hasOwn(node, selector.name)) out.push(node[selector.name])
  } else if (!Array.isArray(node)) return
  else if ('index' in selector) {
    const at = selector.index < 0 ? node.length + selector.index : selector.index
    if (at >= 0 && at < node.length) out.push(node[at])
  } else {
    const [start, end, step = 1] = selector.slice
    const n = node.length
    if (step === 0) return
    const bound = (v: number) => (v >= 0 ? v : n + v)
    if (step > 0) {
      const lower = Math.min(Math.max(bound(start ?? 0), 0), n)
      const upper = Math.min(Math.max(bound(end ?? n), 0), n)
      for (let k = lower; k < upper; k += step) out.push(node[k])
    } else {
      const upper = Math.min(Math.max(bound(start ?? n - 1), -1), n - 1)
      const lower = Math.min(Math.max(end === undefined ? -1 : bound(end), -1), n - 1)
      for (let k = upper; lower < k; k += step) out.push(node[k])
    }
  }
}

type Node = [value: Json, depth: number]

/** The values `expression` selects in `document`, in jsonpath-rfc9535's order; throws JsonPathSyntaxError as parseJsonPath. */
export function queryJsonPath(document: Json, expression: string): Json[] {
  let nodes: Node[] = [[document, 0]]
  for (const segment of parseJsonPath(expression)) {
    let inputs = nodes
    if (segment.descendant) {
      // The nodes and all their descendants, level by level; the nodes selected, by their depth in the document.
      inputs = []
      for (let level = nodes; level.length > 0; ) {
        inputs.push(...level)
        level = level.flatMap(([node, depth]) => (Array.isArray(node) ? node : isObject(node) ? Object.values(node) : []).map((v): Node => [v, depth + 1]))
      }
    }
    const next: Node[] = []
    for (const [node, depth] of inputs) {
      const values: Json[] = []
      for (const selector of segment.selectors) select(node, selector, values)
      for (const value of values) next.push([value, depth + 1])
    }
    nodes = segment.descendant ? next.sort((a, b) => a[1] - b[1]) : next
  }
  return nodes.map(([value]) => value)
}
