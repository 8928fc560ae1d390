import { query } from 'jsonpath-rfc9535'
import parse from 'jsonpath-rfc9535/parser'
import { describe, expect, it } from 'vitest'
import { parseJsonPath, queryJsonPath } from '../src/auth-settings/json-path.js'

/*
 * Group sync's JSONPath (src/auth-settings/json-path.ts: RFC 9535 without filter selectors) against jsonpath-rfc9535,
 * which it replaced in the worker (kept as a devDependency for this comparison): the same paths accepted and refused,
 * the same values selected in the same order.
 */

const DOCUMENTS: unknown[] = [
  { groups: ['a', 'b'], realm_access: { roles: ['r1', 'r2', { x: 'deep' }] }, 'cognito:groups': ['c'], n: null, e: {}, arr: [] },
  { a: { b: { c: ['x', 'y', 'z'], d: 'e' }, 'we ird': 1, 'quo\'te': 2, 'dq"': 3, ünï: 4, '\u{1F600}': 5 }, list: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] },
  [['a', ['b', 'c']], { groups: 'g', nested: { groups: ['h', 'i'] } }, 'top', 7, true, null],
  'scalar',
  null,
]

const SEGMENTS = [
  '.groups', '.realm_access', '.roles', '.*', '..*', '..groups', '.a', '.b', '.c', '.list', '.nested', '.ünï', '.\u{1F600}', '._x1',
  "['groups']", '["groups"]', "['cognito:groups']", "['we ird']", "['quo\\'te']", '["dq\\""]', '["\\u00fcn\\u00ef"]', '["\\ud83d\\ude00"]',
  '[0]', '[1]', '[-1]', '[-2]', '[9]', '[100]', '[*]', '[0,1]', "[0, 'a', *]", '[ 1 ]', '[1:]', '[:2]', '[::2]', '[::-1]', '[5:1:-2]',
  '[-3:]', '[:-3]', '[1:5:2]', '[ 1 : 5 : 2 ]', '[0:0]', '[::0]', '[-100:100]', '[100:-100:-1]', '..[0]', '..[*]', "..['c', 'd']", '..[::-1]',
]

const INVALID = [
  '', 'groups', '$.', '$..', '$.groups[', '$[', '$[]', "$['unclosed", '$["a\'', '$.1a', '$.-a', '$[01]', '$[-0]', '$[1.0]', '$[a]',
  '$.a ', ' $.a', '$. a', '$.[0]', '$...a', '$[0 1]', '$[0,]', '$[,0]', "$['\\x']",
  "$['\\u12']", "$['\\ud83d']", "$['\\ude00']", "$['\\ud83d\\u0041']", "$['a\u0001']", '$["\\\'"]', "$['\\\"']", '$[1:2:3:4]', '$.a.',
  '$a', '$$', '$.\ud800', '$*', '$[:-]', '$[--1]', '$[+1]', '$[ 0x1 ]',
]

/** A slice with a negative bound: compared on the 10-item list only (below), where the bounds stay inside it. */
const NEGATIVE_SLICE_BOUND = /\[[^\]'"]*-\d[^\]'"]*:|:[^\]'"]*-\d/

const accepted = (path: string, parser: (p: string) => unknown) => {
  try {
    parser(path)
    return true
  } catch {
    return false
  }
}

function* paths(): Generator<string> {
  yield '$'
  for (const a of SEGMENTS) {
    yield `$${a}`
    for (const b of SEGMENTS) yield `$${a}${b}`
  }
  for (const a of SEGMENTS) for (const b of SEGMENTS.slice(0, 12)) for (const c of SEGMENTS.slice(20, 32)) yield `$${a} ${b}\n${c}`
}

describe('group sync JSONPath compared with jsonpath-rfc9535', () => {
  it('accepts and refuses the same paths (filters aside, which it refuses)', () => {
    let count = 0
    for (const path of [...paths(), ...INVALID]) {
      expect(accepted(path, parseJsonPath), path).toBe(accepted(path, parse))
      count++
    }
    expect(count).toBeGreaterThan(5000)
    expect(accepted('$.groups[?@ == "a"]', parse)).toBe(true)
    expect(() => parseJsonPath('$.groups[?@ == "a"]')).toThrow(/filter selectors are not supported/)
  })

  it('selects the same values in the same order', () => {
    for (const path of paths()) {
      if (!accepted(path, parse) || NEGATIVE_SLICE_BOUND.test(path)) continue
      for (const document of DOCUMENTS) expect(queryJsonPath(document, path), `${path} in ${JSON.stringify(document)}`).toEqual(query(document as never, path))
    }
  })

  it('reads slices with negative bounds inside the array as the library does, and beyond its start as RFC 9535 says', () => {
    const list = Array.from({ length: 10 }, (_, i) => i)
    for (const slice of ['[-3:]', '[:-3]', '[-10:]', '[:-10:-1]', '[-1::-1]', '[-2:-8:-2]', '[-8:-2:3]', '[1:-1]', '[-5:]'])
      expect(queryJsonPath(list, `$${slice}`), slice).toEqual(query(list, `$${slice}`))
    // jsonpath-rfc9535 answers ['b'], [0] and [9, …, 1]: RFC 9535 (2.3.4.2.2) clamps such a bound to the array's ends.
    expect(queryJsonPath(['a', 'b'], '$[-3:]')).toEqual(['a', 'b'])
    expect(queryJsonPath(list, '$[-20::-1]')).toEqual([])
    expect(queryJsonPath(list, '$[:-20:-1]')).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
  })
})
