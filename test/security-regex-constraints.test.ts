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
  ])('a strategy with the pattern %j is accepted exactly when re2js compiles it (%s)', async (pattern, compiles) => {
    expect(re2jsCompiles(pattern)).toBe(compiles)
    const name = `pattern-${++patterns}`
    expect((await t.call('POST', F, { body: { name } })).status).toBe(201)
    const res = await t.call('POST', `${F}/${name}/environments/development/strategies`, { body: { name: 'default', constraints: [regex(pattern)] } })
    expect(res.status, res.text).toBe(compiles ? 200 : 400)
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

  it('a REGEX that does not compile (saved before the server checked) is false, and true when inverted, as in the Node SDK', async () => {
    const strategyId = await flagWith('legacy', regex('^team$', { inverted: true }))
    // Written behind the API's back: the API refuses a pattern re2js does not compile.
    await t.query('update feature_strategies set constraints = $1 where id = $2', [JSON.stringify([regex('^(?=team)', { inverted: true })]), strategyId])
    expect(sdk(regex('^(?=team)', { inverted: true }), 'anyone')).toBe(true)
    expect(await playground('legacy', 'anyone')).toBe(true)
  })
})
