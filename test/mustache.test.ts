import Mustache from 'mustache'
import { describe, expect, it } from 'vitest'
import { parseMustache, renderMustache } from '../src/integrations/mustache.js'

/*
 * src/integrations/mustache.ts against mustache.js 4, which it replaced in the webhook body templates: the same
 * templates refused with the same message, the same text rendered for the others (random templates over a view
 * like a webhook's { event }, with a custom escape as the delivery uses).
 */

let seed = 7
const random = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31
  return seed % n
}
const pick = <T>(list: readonly T[]) => list[random(list.length)]!

const NAMES = ['event', 'event.type', 'event.data', 'event.data.name', 'event.tags', 'name', 'value', '.', 'missing', 'event.missing.x', 'n', 'flag', 'list', 'empty', 'zero', 'no', 'toString']
const TEXT = ['', ' ', '  ', '\n', ' \n', 'a', '{', '}', '"', 'x y', '\r\n', '\t']
function piece(depth: number): string {
  switch (random(depth > 2 ? 7 : 10)) {
    case 0:
    case 1:
      return pick(TEXT)
    case 2:
      return `{{${pick(['', ' '])}${pick(NAMES)}${pick(['', ' '])}}}`
    case 3:
      return `{{{${pick(NAMES)}}}}`
    case 4:
      return `{{& ${pick(NAMES)}}}`
    case 5:
      return `{{! ${pick(TEXT)} }}`
    case 6:
      return pick(['{{', '}}', '{{#', '{{/x}}', '{{=<% %>=}}', '{{= | | =}}', '{{=x=}}', '{{> p}}', '<%name%>', '{{{name}}', '{{^}}'])
    default: {
      const name = pick(NAMES)
      const close = random(8) === 0 ? pick(NAMES) : name
      return `${pick(['', '\n', ' '])}{{${pick(['#', '^'])}${name}}}${pick(['', '\n'])}${template(depth + 1)}${pick(['', '\n', '  '])}{{/${close}}}${pick(['', '\n'])}`
    }
  }
}
function template(depth = 0): string {
  return Array.from({ length: random(6) }, () => piece(depth)).join('')
}

const view = {
  event: { type: 'feature-created', data: { name: 'a"b', n: 3 }, tags: [{ type: 't', value: 'v' }, { type: 'u', value: 'w' }], list: ['x', 'y'] },
  name: 'top',
  value: 1.5,
  n: 0,
  flag: true,
  no: false,
  list: [1, 'two', { name: 'three' }, [4]],
  empty: [],
  zero: 0,
}
const escape = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value).slice(1, -1) : JSON.stringify(value))

function outcome(run: () => string): { text?: string; error?: string } {
  try {
    return { text: run() }
  } catch (error) {
    return { error: (error as Error).message }
  }
}

describe('Mustache templates read and rendered as mustache.js does', () => {
  it('refuses and renders 20,000 random templates alike', () => {
    let rendered = 0
    for (let i = 0; i < 20_000; i++) {
      const text = template()
      const theirs = outcome(() => Mustache.render(text, view, {}, { escape }))
      const ours = outcome(() => renderMustache(text, view, escape))
      expect({ text, ...ours }).toEqual({ text, ...theirs })
      expect(outcome(() => (parseMustache(text), 'ok'))).toEqual(outcome(() => (Mustache.parse(text), 'ok')))
      if (theirs.text !== undefined) rendered++
    }
    expect(rendered).toBeGreaterThan(5_000)
  })

  it('renders the webhook example templates', () => {
    const body = '{\n  "flag": "{{event.data.name}}",\n  {{#event.tags}}\n  "tag": "{{type}}:{{value}}",\n  {{/event.tags}}\n  "n": {{event.data.n}}\n}'
    expect(renderMustache(body, view, escape)).toBe(Mustache.render(body, view, {}, { escape }))
    expect(renderMustache(body, view, escape)).toContain('"flag": "a\\"b"')
  })
})
