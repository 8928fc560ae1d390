// The text of our sql`…` templates without the spaces and tabs that open its lines: Postgres reads it the same (a
// `--` comment still ends at its line's end, as the newline stays), and the worker bundle is about 1 KiB (gzipped)
// smaller. Only the text between `${…}` changes; an expression is copied as it is (a sql`…` nested in it is trimmed too).

/** `source` with every sql`…` template's lines unindented. */
export function sqlIndentationLeftOut(source: string): string {
  let out = ''
  let i = 0
  const copy = (n: number) => {
    out += source.slice(i, i + n)
    i += n
  }
  // In a template (after its opening backtick), up to and with its closing one.
  const template = (trim: boolean) => {
    while (i < source.length) {
      const c = source[i]
      if (c === '\\') copy(2)
      else if (c === '`') return copy(1)
      else if (c === '$' && source[i + 1] === '{') {
        copy(2)
        expression()
      } else if (c === '\n' && trim) {
        copy(1)
        while (source[i] === ' ' || source[i] === '\t') i++
      } else copy(1)
    }
  }
  // In a `${…}` (after its opening brace), up to and with its closing brace.
  const expression = () => {
    let depth = 1
    while (i < source.length) {
      const c = source[i]!
      if (c === "'" || c === '"') {
        const end = stringEnd(source, i)
        copy(end - i)
      } else if (c === '`') {
        const trim = out.endsWith('sql')
        copy(1)
        template(trim)
      } else {
        if (c === '{') depth++
        if (c === '}' && --depth === 0) return copy(1)
        copy(1)
      }
    }
  }
  while (i < source.length) {
    const at = source.indexOf('sql`', i)
    if (at < 0) break
    copy(at + 4 - i)
    template(true)
  }
  return out + source.slice(i)
}

/** Where the JS string opening at `start` ends (after its closing quote). */
function stringEnd(source: string, start: number): number {
  let i = start + 1
  while (i < source.length && source[i] !== source[start]) i += source[i] === '\\' ? 2 : 1
  return i + 1
}
