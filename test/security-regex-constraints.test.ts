import { RE2JS } from 're2js'
import { Strategy } from 'unleash-client/lib/strategy/strategy.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'

/**
 * The playground tells what the SDKs will do with a REGEX constraint: the server accepts exactly the
 * patterns re2js compiles, and answers what the Node SDK answers (test/evaluation/regex-differential
 * compares the engines on thousands of cases; these go through the API).
 */
let t: TestApp
const F = '/api/admin/projects/rx/features'

beforeAll(async () => {
  t = await createTestApp()
  expect((await t.call('POST', '/api/admin/projects', { body: { id: 'rx', name: 'Regex', environments: ['development'] } })).status).toBe(201)
})
afterAll(() => t.close())

const regex = (value: string, options: { caseInsensitive?: boolean; inverted?: boolean } = {}) => ({ contextName: 'userId', operator: 'REGEX', value, ...options })

async function flagWith(name: string, constraint: object) {
  expect((await t.call('POST', F, { body: { name } })).status).toBe(201)
  const res = await t.call('POST', `${F}/${name}/environments/development/strategies`, { body: { name: 'default', constraints: [constraint] } })
  expect(res.status, res.text).toBe(200)
  expect((await t.call('POST', `${F}/${name}/environments/development/on`)).status).toBe(200)
  return res.body.id as string
}

async function playground(name: string, userId: string): Promise<boolean> {
  const res = await t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: ['rx'], context: { appName: 'web', userId } } })
  expect(res.status, res.text).toBe(200)
  return res.body.features.find((f: any) => f.name === name).isEnabled
}

/** What the Node SDK answers for the constraint. */
const sdk = (constraint: object, userId: string) => new Strategy('default', true).isEnabledWithConstraints({}, { userId }, [{ values: [], ...constraint }] as never)

const re2jsCompiles = (pattern: string) => {
  try {
    RE2JS.compile(pattern)
    return true
  } catch {
    return false
  }
}

describe('REGEX constraints through the API', () => {
  let patterns = 0
  it.each([
    ['\\p{Lc}', true],
    ['\\p{Cn}', true],
    ['\\p{Emoji}', true],
    ['(?)team', true],
    ['a*(?i)*', true],
    ['\\p{Zzzz}', false],
    ['\\p{Grek}', false],
    ['[[:al{2,1}pha:]]', false],
  ])('a strategy with the pattern %j is accepted (as Unleash 8.2), and constraints/validate warns exactly when re2js does not compile it (%s)', async (pattern, compiles) => {
    expect(re2jsCompiles(pattern)).toBe(compiles)
    const name = `pattern-${++patterns}`
    expect((await t.call('POST', F, { body: { name } })).status).toBe(201)
    const res = await t.call('POST', `${F}/${name}/environments/development/strategies`, { body: { name: 'default', constraints: [regex(pattern)] } })
    expect(res.status, res.text).toBe(200)
    const validated = await t.call('POST', '/api/admin/constraints/validate', { body: regex(pattern) })
    expect(validated.status, validated.text).toBe(compiles ? 204 : 200)
    if (!compiles) expect(validated.body.warnings).toEqual([expect.stringContaining('SDKs never match it')])
  })

  it.each([
    ['final sigma', 'sigma', regex('(?i)σ'), 'ς'],
    ['caseInsensitive and the Kelvin sign', 'kelvin', regex('^k$', { caseInsensitive: true }), '\u212a'],
    ['a negated class folding k', 'not-k', regex('(?i)^[^k]$'), '\u212a'],
    ['\\W folding the long s', 'non-word', regex('(?i)\\W'), '\u017f'],
    ['a folded range up to U+10FFFF', 'range', regex('(?i)^[\\x{61}-\\x{10FFFF}]$'), 'A'],
    ['a titlecase digraph', 'digraph', regex('(?i)^ǆ$'), 'ǅ'],
  ])('the playground answers what the Node SDK answers: %s', async (_, name, constraint, userId) => {
    await flagWith(name, constraint)
    expect(await playground(name, userId)).toBe(sdk(constraint, userId))
  })

  it('a REGEX that does not compile is accepted, false, and true when inverted, as in the Node SDK', async () => {
    await flagWith('lookahead', regex('^(?=team)'))
    await flagWith('lookahead-inverted', regex('^(?=team)', { inverted: true }))
    expect(sdk(regex('^(?=team)'), 'team')).toBe(false)
    expect(sdk(regex('^(?=team)', { inverted: true }), 'team')).toBe(true)
    expect(await playground('lookahead', 'team')).toBe(false)
    expect(await playground('lookahead-inverted', 'team')).toBe(true)
    const frontend = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'fe', type: 'frontend', projects: ['rx'], environment: 'development' } })
    expect(frontend.status, frontend.text).toBe(201)
    const seen = await t.call('GET', '/api/frontend?userId=team', { token: frontend.body.secret })
    expect(seen.status, seen.text).toBe(200)
    const names = seen.body.toggles.map((f: any) => f.name)
    expect(names).toContain('lookahead-inverted')
    expect(names).not.toContain('lookahead')
  })

  it('a pattern over the program limit is still refused, on a strategy and on a segment', async () => {
    expect((await t.call('POST', F, { body: { name: 'huge' } })).status).toBe(201)
    const huge = regex('(a|b|c|d|e|f|g|h){1000}')
    const res = await t.call('POST', `${F}/huge/environments/development/strategies`, { body: { name: 'default', constraints: [huge] } })
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.text).toContain('FLAGPOST_REGEX_MAX_PROGRAM')
    const segment = await t.call('POST', '/api/admin/segments', { body: { name: 'huge', constraints: [huge] } })
    expect(segment.status, segment.text).toBe(400)
    expect((await t.call('POST', '/api/admin/constraints/validate', { body: huge })).status).toBe(400)
  })
})
