// Mustache templates (a webhook's body template) as mustache.js 4 reads and renders them: the same tokens, standalone
// lines, set delimiters, dotted names, the same error messages. Our own few lines instead of the package, to keep the
// worker's bundle small; test/mustache.test.ts holds it equal to mustache.js on many templates and views. Partials
// render nothing (a webhook has none); a section whose value is a function renders its content (mustache.js's
// lambdas: a JSON view holds none, its methods' results are no functions).

type Token = [type: string, value: string, start: number, end: number, children?: Token[]]

const escapeRegExp = (text: string) => text.replace(/[-[\]{}()*+?.,\\^$|#\s]/g, '\\$&')

/** A template's tokens, nested by section; throws mustache.js's errors on a template it refuses. */
export function parseMustache(template: string): Token[] {
  const tokens: (Token | undefined)[] = []
  const sections: Token[] = []
  let spaces: number[] = []
  let hasTag = false
  let nonSpace = false
  let opening!: RegExp
  let closing!: RegExp
  let closingCurly!: RegExp
  const compileTags = (tags: string | string[]) => {
    const pair = typeof tags === 'string' ? tags.split(/\s+/, 2) : tags
    if (pair.length !== 2) throw new Error(`Invalid tags: ${pair}`)
    opening = new RegExp(`${escapeRegExp(pair[0]!)}\\s*`)
    closing = new RegExp(`\\s*${escapeRegExp(pair[1]!)}`)
    closingCurly = new RegExp(`\\s*${escapeRegExp(`}${pair[1]}`)}`)
  }
  const stripSpace = () => {
    if (hasTag && !nonSpace) while (spaces.length) delete tokens[spaces.pop()!]
    else spaces = []
    hasTag = nonSpace = false
  }
  let tail = template
  let pos = 0
  const scan = (re: RegExp) => {
    const match = tail.match(re)
    if (!match || match.index !== 0) return ''
    tail = tail.slice(match[0].length)
    pos += match[0].length
    return match[0]
  }
  const scanUntil = (re: RegExp) => {
    const index = tail.search(re)
    const match = index === -1 ? tail : tail.slice(0, index)
    tail = index === -1 ? '' : tail.slice(index)
    pos += match.length
    return match
  }
  compileTags(['{{', '}}'])
  while (tail !== '') {
    let start = pos
    for (const chr of scanUntil(opening)) {
      if (/\S/.test(chr)) nonSpace = true
      else spaces.push(tokens.length)
      tokens.push(['text', chr, start, start + 1])
      start += 1
      if (chr === '\n') stripSpace()
    }
    if (!scan(opening)) break
    hasTag = true
    let type = scan(/[#^/>{&=!]/) || 'name'
    scan(/\s*/)
    let value: string
    if (type === '=') {
      value = scanUntil(/\s*=/)
      scan(/\s*=/)
      scanUntil(closing)
    } else if (type === '{') {
      value = scanUntil(closingCurly)
      scan(/\s*\}/)
      scanUntil(closing)
      type = '&'
    } else value = scanUntil(closing)
    if (!scan(closing)) throw new Error(`Unclosed tag at ${pos}`)
    const token: Token = [type, value, start, pos]
    tokens.push(token)
    if (type === '#' || type === '^') sections.push(token)
    else if (type === '/') {
      const open = sections.pop()
      if (!open) throw new Error(`Unopened section "${value}" at ${start}`)
      if (open[1] !== value) throw new Error(`Unclosed section "${open[1]}" at ${start}`)
    } else if (type === 'name' || type === '&') nonSpace = true
    else if (type === '=') compileTags(value)
  }
  stripSpace()
  const unclosed = sections.pop()
  if (unclosed) throw new Error(`Unclosed section "${unclosed[1]}" at ${pos}`)
  // Adjacent text joined, then sections nested.
  const nested: Token[] = []
  let collector = nested
  const open: Token[] = []
  let last: Token | undefined
  for (const token of tokens) {
    if (!token) continue
    if (token[0] === 'text' && last?.[0] === 'text') {
      last[1] += token[1]
      last[3] = token[3]
      continue
    }
    last = token
    if (token[0] === '#' || token[0] === '^') {
      collector.push(token)
      open.push(token)
      collector = token[4] = []
    } else if (token[0] === '/') {
      open.pop()
      collector = open.length > 0 ? open[open.length - 1]![4]! : nested
    } else collector.push(token)
  }
  return nested
}

interface Context {
  view: unknown
  parent?: Context
}

const hasProperty = (value: unknown, name: string) => value !== null && typeof value === 'object' && name in value
const primitiveHasOwn = (value: unknown, name: string) => value != null && typeof value !== 'object' && Object.prototype.hasOwnProperty.call(value, name)

function lookup(context: Context, name: string): unknown {
  let value: unknown
  if (name === '.') value = context.view
  else {
    for (let at: Context | undefined = context; at; at = at.parent) {
      let found: unknown
      let hit = false
      if (name.indexOf('.') > 0) {
        found = at.view
        const names = name.split('.')
        for (let i = 0; found != null && i < names.length; i++) {
          if (i === names.length - 1) hit = hasProperty(found, names[i]!) || primitiveHasOwn(found, names[i]!)
          found = (found as Record<string, unknown>)[names[i]!]
        }
      } else {
        found = (at.view as Record<string, unknown>)[name]
        hit = hasProperty(at.view, name)
      }
      if (hit) {
        value = found
        break
      }
    }
  }
  return typeof value === 'function' ? value.call(context.view) : value
}

function renderTokens(tokens: Token[], context: Context, escape: (value: unknown) => string): string {
  let out = ''
  for (const token of tokens) {
    const [type, name] = token
    if (type === 'text') out += name
    else if (type === 'name' || type === '&') {
      const value = lookup(context, name)
      if (value != null) out += type === '&' ? value : escape(value)
    } else if (type === '#') {
      const value = lookup(context, name)
      if (!value) continue
      if (Array.isArray(value)) for (const item of value) out += renderTokens(token[4]!, { view: item, parent: context }, escape)
      else if (typeof value === 'object' || typeof value === 'string' || typeof value === 'number') out += renderTokens(token[4]!, { view: value, parent: context }, escape)
      else out += renderTokens(token[4]!, context, escape)
    } else if (type === '^') {
      const value = lookup(context, name)
      if (!value || (Array.isArray(value) && value.length === 0)) out += renderTokens(token[4]!, context, escape)
    }
  }
  return out
}

/** `template` rendered over `view`, each `{{name}}` through `escape` (`{{{name}}}` and `{{&name}}` as they are). */
export function renderMustache(template: string, view: unknown, escape: (value: unknown) => string): string {
  return renderTokens(parseMustache(template), { view }, escape)
}
