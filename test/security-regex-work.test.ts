import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMPILE_STEPS_PER_INSTRUCTION, DEFAULT_REGEX_MAX_PROGRAM, compileRegex, setRegexMaxProgram } from '../src/evaluation/index.js'
import { DEFAULT_CONTEXT_VALUE_MAX_LENGTH, DEFAULT_REGEX_WORK_BUDGET, evaluationLimitsFromEnv } from '../src/http/evaluation-limits.js'
import { readConfig } from '../src/server.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { budgetSpent as budgetSpentOf, counted, okCaller } from './helpers/evaluation-work.js'

/**
 * REGEX matching is linear in (program size × text length), and both come from callers: a Member's pattern, a
 * Viewer's or an end user's context. `(a|b|…|t){1000}x` compiles to 39,002 instructions; against a 50,000-character
 * userId it took 13–15 s of the only thread, /health included. Each bound is proven here by counting the matcher's
 * steps (regexWorkDone), not by timing: the pattern is refused where it is saved; a longer value is refused before
 * evaluation; and a request's matching stops at its budget, also for a pattern stored before the limit existed.
 */
let t: TestApp
const P = '/api/admin/projects/rx'
const F = `${P}/features`
const GUARDED = '/api/admin/projects/rx-guarded'

const ALTERNATION = 'abcdefghijklmnopqrst'.split('').join('|')
/** The review's pattern: 39,002 instructions, far past the limit. */
const PATHOLOGICAL = `(${ALTERNATION}){1000}x`
/** Just under the limit (4,682 instructions) and as slow per character as a pattern that size can be. */
const HEAVY_LEGAL = `(${ALTERNATION}){120}x`
/** One character may cost up to two steps per instruction of the largest program the matcher compiles (50,000). */
const SLACK = 100_000
const BUDGET = DEFAULT_REGEX_WORK_BUDGET
const MAX_LENGTH = DEFAULT_CONTEXT_VALUE_MAX_LENGTH

const regex = (value: string) => ({ contextName: 'userId', operator: 'REGEX', value })
const a = (n: number) => 'a'.repeat(n)

let frontendToken: string
let changeRequestId: number
let strategyId: string

const ok = okCaller(() => t)

/** A flag on in development whose one strategy has `constraint`; the strategy's id. */
async function flagWith(name: string, constraint: object, project = 'rx', environment = 'development') {
  await ok('POST', `/api/admin/projects/${project}/features`, { name })
  const strategy = await ok('POST', `/api/admin/projects/${project}/features/${name}/environments/${environment}/strategies`, { name: 'default', constraints: [constraint] })
  await ok('POST', `/api/admin/projects/${project}/features/${name}/environments/${environment}/on`)
  return strategy.id as string
}


const playground = (userId: string, projects = ['rx-stored']) =>
  t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects, context: { appName: 'web', userId } } })
const advanced = (context: Record<string, unknown>, projects = ['rx-stored']) =>
  t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], projects, context: { appName: 'web', ...context } } })
const frontendGet = (userId: string) => t.call('GET', `/api/frontend?appName=web&userId=${userId}`, { token: frontendToken })
const frontendPost = (userId: string) => t.call('POST', '/api/frontend', { token: frontendToken, body: { context: { appName: 'web', userId } } })

const budgetSpent = budgetSpentOf(BUDGET)
const tooLong = (path: string, length: number) => ({
  status: 400,
  body: {
    id: expect.any(String),
    name: 'ValidationError',
    message: `${path} is ${length} characters long, more than the limit of ${MAX_LENGTH} for a context value (FLAGPOST_CONTEXT_VALUE_MAX_LENGTH)`,
    details: [{ path, message: `must be at most ${MAX_LENGTH} characters` }],
  },
})

beforeAll(async () => {
  t = await createTestApp()
  await ok('POST', '/api/admin/projects', { id: 'rx', name: 'Regex', environments: ['development'] })
  await ok('POST', '/api/admin/projects', { id: 'rx-stored', name: 'Stored before the limit', environments: ['development'] })
  await ok('POST', '/api/admin/projects', { id: 'rx-guarded', name: 'Guarded', environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] })
  strategyId = await flagWith('existing', regex('^team-'))

  // Patterns saved before the limit existed: written behind the API's back, before anything is evaluated (and cached).
  const stored = await flagWith('stored', regex('^placeholder$'), 'rx-stored')
  await t.query('update feature_strategies set constraints = $1 where id = $2', [JSON.stringify([regex(PATHOLOGICAL)]), stored])
  const segment = await ok('POST', '/api/admin/segments', { name: 'stored-segment', constraints: [regex('^placeholder$')] })
  await t.query('update segments set constraints = $1 where id = $2', [JSON.stringify([{ ...regex(PATHOLOGICAL), values: [], inverted: true, caseInsensitive: false }]), segment.id])
  await ok('POST', '/api/admin/projects/rx-stored/features', { name: 'stored-in-segment' })
  await ok('POST', '/api/admin/projects/rx-stored/features/stored-in-segment/environments/development/strategies', { name: 'default', segments: [segment.id] })
  await ok('POST', '/api/admin/projects/rx-stored/features/stored-in-segment/environments/development/on')

  // A change request adding a strategy whose pattern is then made pathological in its stored payload.
  await ok('POST', `${GUARDED}/features`, { name: 'guarded-flag' })
  const created = await ok('POST', `${GUARDED}/environments/production/change-requests`, { feature: 'guarded-flag', action: 'addStrategy', payload: { name: 'default', constraints: [regex('^placeholder$')] } })
  changeRequestId = created.id
  await t.query('update change_request_changes set payload = $1 where change_request_id = $2', [JSON.stringify({ name: 'default', constraints: [regex(PATHOLOGICAL)] }), changeRequestId])

  const token = await ok('POST', '/api/admin/api-tokens', { tokenName: 'web', type: 'frontend', environment: 'development', projects: ['rx-stored'] })
  frontendToken = token.secret
})
afterAll(() => t.close())

describe('a REGEX pattern is held to the program limit wherever a constraint enters', () => {
  const refusal = (res: { status: number; body: any; text: string }) => {
    expect(res.status, res.text.slice(0, 300)).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(JSON.stringify(res.body)).toContain(`it compiles to 39002 instructions, more than the limit of ${DEFAULT_REGEX_MAX_PROGRAM} (FLAGPOST_REGEX_MAX_PROGRAM)`)
  }

  it('the review pattern compiles to 39,002 instructions and the heavy legal one to fewer than the limit', () => {
    expect(compileRegex(PATHOLOGICAL).programSize).toBe(39_002)
    expect(compileRegex(HEAVY_LEGAL).programSize).toBeLessThanOrEqual(DEFAULT_REGEX_MAX_PROGRAM)
  })

  it('refuses it in a new strategy and in an updated one (POST and PUT …/strategies), naming the limit', async () => {
    await ok('POST', `${F}`, { name: 'refused' })
    refusal(await t.call('POST', `${F}/refused/environments/development/strategies`, { body: { name: 'default', constraints: [regex(PATHOLOGICAL)] } }))
    refusal(await t.call('PUT', `${F}/existing/environments/development/strategies/${strategyId}`, { body: { name: 'default', constraints: [regex(PATHOLOGICAL)] } }))
  })

  it('refuses it in a segment, new or updated', async () => {
    refusal(await t.call('POST', '/api/admin/segments', { body: { name: 'slow', constraints: [regex(PATHOLOGICAL)] } }))
    const segment = await ok('POST', '/api/admin/segments', { name: 'fine', constraints: [regex('^ok$')] })
    refusal(await t.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: 'fine', constraints: [regex(PATHOLOGICAL)] } }))
  })

  it("refuses it in a change request's addStrategy and updateStrategy", async () => {
    const path = `${GUARDED}/environments/production/change-requests`
    refusal(await t.call('POST', path, { body: { feature: 'guarded-flag', action: 'addStrategy', payload: { name: 'default', constraints: [regex(PATHOLOGICAL)] } } }))
    refusal(await t.call('POST', path, { body: { feature: 'guarded-flag', action: 'updateStrategy', payload: { id: 'any', name: 'default', constraints: [regex(PATHOLOGICAL)] } } }))
  })

  it("refuses it in a project environment's default strategy", async () => {
    refusal(await t.call('PUT', `${P}/environments/development/default-strategy`, { body: { name: 'default', constraints: [regex(PATHOLOGICAL)] } }))
  })

  it("refuses it in a state restore's strategies and segments", async () => {
    refusal(
      await t.call('POST', '/api/admin/state/import', {
        body: { version: 4, features: [{ name: 'restored', project: 'rx' }], featureStrategies: [{ featureName: 'restored', environment: 'development', strategyName: 'default', constraints: [regex(PATHOLOGICAL)] }] },
      }),
    )
    refusal(await t.call('POST', '/api/admin/state/import', { body: { version: 4, segments: [{ id: 1, name: 'restored-segment', constraints: [regex(PATHOLOGICAL)] }] } }))
  })

  it("refuses it as a project's flag naming pattern (flag names are matched with it)", async () => {
    refusal(await t.call('PUT', P, { body: { name: 'Regex', featureNaming: { pattern: PATHOLOGICAL } } }))
  })

  it.each([
    ['the heavy legal pattern', HEAVY_LEGAL],
    ['a bounded-length check', '^[a-z0-9._-]{1,1000}$'],
    ['an alternation of 199 user ids (998 characters)', `^(${Array.from({ length: 199 }, (_, i) => `u${String(i).padStart(3, '0')}`).join('|')})$`],
    ['an e-mail domain', '^[^@\\s]+@(example\\.com|example\\.org)$'],
  ])('accepts %s', async (_, pattern) => {
    expect(pattern.length).toBeLessThanOrEqual(1000)
    await ok('PUT', `${F}/existing/environments/development/strategies/${strategyId}`, { name: 'default', constraints: [regex(pattern)] })
  })
})

describe('context values are held to the length limit before anything is evaluated', () => {
  it('the playground refuses a 50,000-character userId with 400 naming the limit, matching nothing', async () => {
    const { work, res } = await counted(() => playground(a(50_000)))
    expect(res).toMatchObject(tooLong('context.userId', 50_000))
    expect(work).toBe(0)
  })

  it('the advanced playground checks each comma-separated value on its own, properties too', async () => {
    expect(await advanced({ properties: { note: `short,${a(MAX_LENGTH + 1)}` } })).toMatchObject(tooLong('context.properties.note', MAX_LENGTH + 1))
    // A list longer than the limit is fine when each of its values is within it.
    const many = Array.from({ length: 200 }, (_, i) => `user${i}`).join(',')
    expect(many.length).toBeGreaterThan(MAX_LENGTH)
    expect((await advanced({ userId: many }, ['rx'])).status).toBe(200)
  })

  it('the change-request playground refuses it too', async () => {
    const res = await t.call('POST', `/api/admin/playground/change-request/${changeRequestId}`, { body: { context: { appName: 'web', sessionId: a(MAX_LENGTH + 1) } } })
    expect(res).toMatchObject(tooLong('context.sessionId', MAX_LENGTH + 1))
  })

  it('the frontend API refuses a longer value with 400 (GET and POST), rather than evaluate a cut one', async () => {
    expect(await frontendGet(a(MAX_LENGTH + 1))).toMatchObject(tooLong('userId', MAX_LENGTH + 1))
    expect(await frontendPost(a(MAX_LENGTH + 1))).toMatchObject(tooLong('userId', MAX_LENGTH + 1))
    const res = await t.call('POST', '/api/frontend', { token: frontendToken, body: { context: { appName: 'web', properties: { url: a(MAX_LENGTH + 5) } } } })
    expect(res).toMatchObject(tooLong('properties.url', MAX_LENGTH + 5))
  })
})

describe('a request matches within its budget, whatever the stored patterns', () => {
  it('the playground stops a stored 39,002-instruction pattern at the budget and answers 400', async () => {
    const { work, res } = await counted(() => playground(a(MAX_LENGTH)))
    expect(res).toMatchObject(budgetSpent)
    expect(work).toBeGreaterThanOrEqual(BUDGET)
    expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
  })

  it('the advanced and change-request playgrounds answer 400 before streaming anything', async () => {
    const { work, res } = await counted(() => advanced({ userId: a(MAX_LENGTH) }))
    expect(res).toMatchObject(budgetSpent)
    expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
    const preview = await counted(() => t.call('POST', `/api/admin/playground/change-request/${changeRequestId}`, { body: { context: { appName: 'web', userId: a(MAX_LENGTH) } } }))
    expect(preview.res).toMatchObject(budgetSpent)
    expect(preview.work).toBeLessThanOrEqual(BUDGET + SLACK)
  })

  it('the frontend API answers 400 (GET and POST) within the budget', async () => {
    for (const request of [frontendGet, frontendPost]) {
      const { work, res } = await counted(() => request(a(MAX_LENGTH)))
      expect(res).toMatchObject(budgetSpent)
      expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
    }
  })

  it('a short value is evaluated as before (the stored pattern does not match it, the inverted segment does)', async () => {
    const res = await playground(a(20))
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expect(Object.fromEntries(res.body.features.map((f: any) => [f.name, f.isEnabled]))).toEqual({ stored: false, 'stored-in-segment': true })
    const frontend = await frontendGet(a(20))
    expect(frontend.body.toggles.map((f: any) => f.name)).toEqual(['stored-in-segment'])
  })

  it('/health answers while heavy requests come in, and each of them stops at the budget', async () => {
    const { work, res } = await counted(() => Promise.all([playground(a(MAX_LENGTH)), frontendGet(a(MAX_LENGTH)), frontendPost(a(MAX_LENGTH)), t.call('GET', '/health', { token: null })]))
    expect(res.map((r) => r.status)).toEqual([400, 400, 400, 200])
    expect(work).toBeLessThanOrEqual(3 * (BUDGET + SLACK))
  })
})

describe('the budget is per request, across every pattern it matches', () => {
  // [a-z]{1,500}x: 1,001 instructions, legal; 1,502,998 steps on 1,000 letters, so one fits in the budget and six do not.
  const LEGAL_SLOW = '[a-z]{1,500}x'

  beforeAll(async () => {
    await ok('POST', '/api/admin/projects', { id: 'rx-many', name: 'Many', environments: ['development'] })
    for (let i = 0; i < 6; i++) await flagWith(`many-${i}`, regex(LEGAL_SLOW), 'rx-many')
    await ok('POST', '/api/admin/projects', { id: 'rx-one', name: 'One', environments: ['development'] })
    await flagWith('one', regex(LEGAL_SLOW), 'rx-one')
  })

  it('one such pattern on a value at the length limit is evaluated, its steps counted', async () => {
    const { work, res } = await counted(() => playground(a(MAX_LENGTH), ['rx-one']))
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expect(res.body.features[0].isEnabled).toBe(false)
    // 1,502,998 matching steps, plus the compile when the process has not compiled the pattern yet (charged too).
    const compile = LEGAL_SLOW.length + compileRegex(LEGAL_SLOW).programSize * COMPILE_STEPS_PER_INSTRUCTION
    // Besides: the strategy visited and its detail's size, a few hundred steps per combination at most.
    const matched = work - 1_502_998 >= compile ? 1_502_998 + compile : 1_502_998
    expect(work - matched).toBeGreaterThanOrEqual(0)
    expect(work - matched).toBeLessThan(1_000)
  })

  it('six flags of it are refused with 400 once the sum passes the budget', async () => {
    const { work, res } = await counted(() => playground(a(MAX_LENGTH), ['rx-many']))
    expect(res).toMatchObject(budgetSpent)
    expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
  })

  it('the advanced playground matches a pattern once per distinct value, however many combinations repeat it', async () => {
    const combinations = Array.from({ length: 200 }, (_, i) => `v${i}`).join(',')
    const { work, res } = await counted(() => advanced({ userId: a(MAX_LENGTH), properties: { n: combinations } }, ['rx-one']))
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expect(res.body.features[0].environments.development).toHaveLength(200)
    // Once for the value, not 200 times (which would be 300 million steps, past the budget).
    // 1,502,998 matching steps, plus the compile when the process has not compiled the pattern yet (charged too).
    const compile = LEGAL_SLOW.length + compileRegex(LEGAL_SLOW).programSize * COMPILE_STEPS_PER_INSTRUCTION
    // Besides: the strategy visited and its detail's size, a few hundred steps per combination at most.
    const matched = work - 1_502_998 >= compile ? 1_502_998 + compile : 1_502_998
    expect(work - matched).toBeGreaterThanOrEqual(0)
    expect(work - matched).toBeLessThan(200 * 1_000)
  })
})

describe('the limits are configurable', () => {
  let small: TestApp
  beforeAll(async () => {
    small = await createTestApp({ evaluation: { regexMaxProgram: 100, contextValueMaxLength: 10, regexWorkBudget: 100 } })
    const res = await small.call('POST', '/api/admin/projects', { body: { id: 'small', name: 'Small', environments: ['development'] } })
    expect(res.status).toBe(201)
    expect((await small.call('POST', '/api/admin/projects/small/features', { body: { name: 'f' } })).status).toBe(201)
  })
  afterAll(async () => {
    await small.close()
    // The program limit is one per process (the schemas are module data): back to what the other tests expect.
    setRegexMaxProgram(DEFAULT_REGEX_MAX_PROGRAM)
  })

  it('the Node server and the worker read them from the environment, and refuse anything but a whole number at start', () => {
    const env = { FLAGPOST_REGEX_MAX_PROGRAM: '800', FLAGPOST_CONTEXT_VALUE_MAX_LENGTH: '4000', FLAGPOST_REGEX_WORK_BUDGET: '500000' }
    expect(readConfig(env).evaluation).toEqual({ regexMaxProgram: 800, contextValueMaxLength: 4000, regexWorkBudget: 500_000 })
    expect(evaluationLimitsFromEnv(env)).toEqual({ regexMaxProgram: 800, contextValueMaxLength: 4000, regexWorkBudget: 500_000 })
    expect(readConfig({}).evaluation).toEqual({})
    for (const name of Object.keys(env)) {
      for (const bad of ['0', '-1', '1.5', 'lots']) expect(() => readConfig({ [name]: bad })).toThrow(name)
    }
  })

  it('FLAGPOST_REGEX_MAX_PROGRAM, FLAGPOST_CONTEXT_VALUE_MAX_LENGTH and FLAGPOST_REGEX_WORK_BUDGET set through createApp', async () => {
    const strategies = '/api/admin/projects/small/features/f/environments/development/strategies'
    const refused = await small.call('POST', strategies, { body: { name: 'default', constraints: [regex('[a-z]{1,60}')] } })
    expect(refused.status).toBe(400)
    expect(refused.text).toContain('it compiles to 120 instructions, more than the limit of 100 (FLAGPOST_REGEX_MAX_PROGRAM)')
    expect((await small.call('POST', strategies, { body: { name: 'default', constraints: [regex('[a-z]{1,40}x')] } })).status).toBe(200)
    expect((await small.call('POST', '/api/admin/projects/small/features/f/environments/development/on')).status).toBe(200)

    const play = (userId: string) => small.call('POST', '/api/admin/playground', { body: { environment: 'development', context: { appName: 'web', userId } } })
    const long = await play(a(11))
    expect(long.status).toBe(400)
    expect(long.body.message).toContain('more than the limit of 10 for a context value')
    const { work, res } = await counted(() => play(a(10)))
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('more than 100 matching steps, the limit per request')
    expect(work).toBeLessThanOrEqual(100 + 200)
  })
})

describe('a counted step costs about the same whatever the class', () => {
  /** How many times `run` calls RegExp.prototype.test (the Unicode classes' membership tests). */
  function regexpTests(run: () => void): number {
    const original = RegExp.prototype.test
    let calls = 0
    RegExp.prototype.test = function (this: RegExp, text: string) {
      calls++
      return original.call(this, text)
    }
    try {
      run()
    } finally {
      RegExp.prototype.test = original
    }
    return calls
  }

  it('a class of twenty Unicode properties is asked once per character, not once per thread', () => {
    const scripts = ['Greek', 'Latin', 'Cyrillic', 'Han', 'Arabic', 'Hebrew', 'Thai', 'Armenian', 'Georgian', 'Hangul', 'Khmer', 'Lao', 'Tibetan', 'Sinhala', 'Tamil', 'Telugu', 'Bengali', 'Lu', 'Nd']
    const re = compileRegex(`[${scripts.map((s) => `\\p{${s}}`).join('')}\\p{Sc}]{1000}x`)
    // '€' is only in the last class asked: every thread would make twenty RegExp tests per character.
    const calls = regexpTests(() => expect(re.test('€'.repeat(200))).toBe(false))
    expect(calls).toBeLessThanOrEqual(20 * 200)
  })
})
