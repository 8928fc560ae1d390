import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_REGEX_WORK_BUDGET } from '../src/http/evaluation-limits.js'
import { MAX_ANSWER_BYTES } from '../src/playground/service.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { budgetSpent as budgetSpentOf, counted, okCaller } from './helpers/evaluation-work.js'

/**
 * What an evaluating request costs is charged as it is incurred: the advanced playground tests each constraint once,
 * makes each distinct evaluation's JSON once (charged by its size) and bounds its answer's bytes, so a realistic call
 * answers and an abusive one is a 400 before anything is streamed. Proven by counting work (regexWorkDone counts every
 * step a meter draws), not by timing.
 */
let t: TestApp
const BUDGET = DEFAULT_REGEX_WORK_BUDGET
const SLACK = 100_000
const ADVANCED = '/api/admin/playground/advanced'

const ok = okCaller(() => t)

/** `flags` flags of `project`, on in development, each with `strategies` default strategies holding `constraints`: stored by SQL (quicker than thousands of requests). */
async function storedFlags(project: string, flags: number, strategies: number, constraints: object[]) {
  await ok('POST', '/api/admin/projects', { id: project, name: project, environments: ['development'] })
  await t.query(`insert into features (name, project, created_by) select $1 || '-' || n, $1, 'test' from generate_series(1, $2::int) n`, [project, flags])
  await t.query(`insert into feature_environments (feature_name, environment, enabled) select $1 || '-' || n, 'development', true from generate_series(1, $2::int) n`, [project, flags])
  await t.query(
    `insert into feature_strategies (id, feature_name, environment, strategy_name, constraints, sort_order)
     select gen_random_uuid(), $1 || '-' || n, 'development', 'default', $3::jsonb, s from generate_series(1, $2::int) n, generate_series(1, $4::int) s`,
    [project, flags, JSON.stringify(constraints), strategies],
  )
}
const dateAfter = (i: number) => ({ contextName: 'currentTime', operator: 'DATE_AFTER', inverted: false, caseInsensitive: false, values: [], value: new Date(Date.UTC(2000, 0, 1) + i * 1000).toISOString() })
const budgetSpent = budgetSpentOf(BUDGET)

beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

describe('the advanced playground charges what its answer costs', () => {
  it('answers 1,000 flags × 10 DATE_AFTER constraints for 2 currentTime values, within the budget', async () => {
    await storedFlags('dates', 1000, 1, Array.from({ length: 10 }, (_, i) => dateAfter(i)))
    // One value before the dates (every constraint fails), one after (every one passes).
    const body = { environments: ['development'], projects: ['dates'], context: { appName: 'web', currentTime: '1999-01-01T00:00:00.000Z,2026-01-01T00:00:00.000Z' } }
    for (const run of ['cold', 'warm']) {
      const { work, res } = await counted(() => t.call('POST', ADVANCED, { body }))
      expect(res.status, `${run}: ${res.text.slice(0, 300)}`).toBe(200)
      expect(work).toBeLessThanOrEqual(BUDGET)
      const features = res.body.features as { name: string; environments: { development: { context: { currentTime: string }; isEnabled: boolean; strategies: { data: { constraints: { result: boolean }[] }[] } }[] } }[]
      expect(features).toHaveLength(1000)
      for (const feature of features) {
        const [before, after] = feature.environments.development
        expect([before!.context.currentTime, before!.isEnabled, after!.context.currentTime, after!.isEnabled]).toEqual(['1999-01-01T00:00:00.000Z', false, '2026-01-01T00:00:00.000Z', true])
        expect(before!.strategies.data[0]!.constraints.map((c) => c.result)).toEqual(Array(10).fill(false))
        expect(after!.strategies.data[0]!.constraints.map((c) => c.result)).toEqual(Array(10).fill(true))
      }
    }
  })

  it('refuses with 400 at the budget 15 flags × 30 strategies × 30 DATE_AFTER constraints for 1,000 userIds', async () => {
    await storedFlags('dates30', 15, 30, Array.from({ length: 30 }, (_, i) => dateAfter(i)))
    const userIds = Array.from({ length: 1000 }, (_, i) => `u${i}`).join(',')
    const context = { appName: 'web', currentTime: '2026-01-01T00:00:00.000Z', userId: userIds }
    const { work, res } = await counted(() => t.call('POST', ADVANCED, { body: { environments: ['development'], projects: ['dates30'], context } }))
    expect(res).toMatchObject(budgetSpent)
    expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
  })

  it('refuses with 400 an answer of more than MAX_ANSWER_BYTES, cheap to evaluate but large to show', async () => {
    // 20 flags of one strategy with 5 IN constraints of 250 values: one lookup each, about 20 KB of JSON each to show.
    const values = (i: number) => Array.from({ length: 250 }, (_, v) => `member-${i}-${v}`)
    await storedFlags('large', 20, 1, Array.from({ length: 5 }, (_, i) => ({ contextName: 'userId', operator: 'IN', inverted: false, caseInsensitive: false, values: values(i) })))
    const context = (n: number) => ({ appName: 'web', userId: Array.from({ length: n }, (_, i) => `u${i}`).join(',') })
    // One combination: about 400 KB, answered; 100 (2,000 evaluations) are more than 32 MiB.
    const one = await t.call('POST', ADVANCED, { body: { environments: ['development'], projects: ['large'], context: context(1) } })
    expect(one.status, one.text.slice(0, 300)).toBe(200)
    expect(one.text.length).toBeGreaterThan(MAX_ANSWER_BYTES / 100)
    const { work, res } = await counted(() => t.call('POST', ADVANCED, { body: { environments: ['development'], projects: ['large'], context: context(100) } }))
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ id: expect.any(String), name: 'ValidationError', message: expect.stringContaining(`its answer would be more than ${MAX_ANSWER_BYTES} bytes`) })
    expect(work).toBeLessThanOrEqual(BUDGET)
  })
})

describe('the advanced playground tests each constraint once', () => {
  // Four inverted STR_CONTAINS of 250 values scan them all: 1,000 × (the value's length + 1) steps an evaluation.
  const scan = (i: number) => ({ contextName: 'userId', operator: 'STR_CONTAINS', inverted: true, caseInsensitive: false, values: Array.from({ length: 250 }, (_, v) => `needle-${i}-${v}`) })
  const userId = 'u'.repeat(49)
  const TEST = 1000 * (userId.length + 1)

  beforeAll(async () => {
    await ok('POST', '/api/admin/projects', { id: 'once', name: 'once', environments: ['development'] })
    await ok('POST', '/api/admin/projects/once/features', { name: 'scanned' })
    await ok('POST', '/api/admin/projects/once/features/scanned/environments/development/strategies', { name: 'default', constraints: [0, 1, 2, 3].map(scan) })
    await ok('POST', '/api/admin/projects/once/features/scanned/environments/development/on')
  })

  it('one combination: one test of the constraint, not two or three', async () => {
    const { work, res } = await counted(() => t.call('POST', ADVANCED, { body: { environments: ['development'], projects: ['once'], context: { appName: 'web', userId } } }))
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expect(res.body.features[0].environments.development[0].isEnabled).toBe(true)
    expect(work).toBeGreaterThanOrEqual(TEST)
    // The rest: the flag, its strategy and evaluation visited, and its JSON made (the definition's size, halved).
    expect(work - TEST).toBeLessThan(TEST / 2)
  })

  it('three combinations: three tests', async () => {
    const { work, res } = await counted(() => t.call('POST', ADVANCED, { body: { environments: ['development'], projects: ['once'], context: { appName: 'web', userId: `${userId},${userId.slice(1)}v,${userId.slice(1)}w` } } }))
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expect(work).toBeGreaterThanOrEqual(3 * TEST)
    expect(work - 3 * TEST).toBeLessThan(TEST / 2)
  })

  it('answers as the basic playground does, for every combination', async () => {
    await ok('POST', '/api/admin/projects', { id: 'same', name: 'same', environments: ['development'] })
    const segment = await ok('POST', '/api/admin/segments', { name: 'adults', constraints: [{ contextName: 'age', operator: 'NUM_GTE', values: [], value: '18' }] })
    await ok('POST', '/api/admin/projects/same/features', { name: 'mixed' })
    const S = '/api/admin/projects/same/features/mixed/environments/development/strategies'
    await ok('POST', S, { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'userId', groupId: 'g' }, constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }], segments: [segment.id] })
    await ok('POST', S, {
      name: 'userWithId',
      parameters: { userIds: 'u1,u3' },
      variants: [
        { name: 'a', weight: 500, weightType: 'variable', stickiness: 'userId' },
        { name: 'b', weight: 500, weightType: 'variable', stickiness: 'userId', payload: { type: 'string', value: 'B' } },
      ],
    })
    await ok('POST', S, { name: 'default', constraints: [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2025-01-01T00:00:00.000Z' }, { contextName: 'userId', operator: 'STR_ENDS_WITH', values: ['9'] }] })
    await ok('POST', '/api/admin/projects/same/features/mixed/environments/development/on')
    const users = ['u1', 'u2', 'u3', 'u4', 'u9', 'u19']
    const regions = ['eu', 'us']
    const ages = ['30', '12']
    const times = ['2024-06-01T00:00:00.000Z', '2026-06-01T00:00:00.000Z']
    const advanced = await t.call('POST', ADVANCED, {
      body: { environments: ['development'], projects: ['same'], context: { appName: 'web', userId: users.join(','), currentTime: times.join(','), properties: { region: regions.join(','), age: ages.join(',') } } },
    })
    expect(advanced.status, advanced.text.slice(0, 300)).toBe(200)
    const evaluations = advanced.body.features[0].environments.development as { context: Record<string, string> }[]
    expect(evaluations).toHaveLength(users.length * regions.length * ages.length * times.length)
    for (const { context, ...evaluated } of evaluations) {
      const basic = await t.call('POST', '/api/admin/playground', {
        body: { environment: 'development', projects: ['same'], context: { appName: 'web', userId: context.userId, currentTime: context.currentTime, properties: { region: context.region, age: context.age } } },
      })
      expect(basic.status).toBe(200)
      const { name: _, projectId, hasUnsatisfiedDependency: __, ...expected } = basic.body.features[0]
      expect({ projectId: 'same', ...evaluated }, JSON.stringify(context)).toEqual({ projectId, environment: 'development', name: 'mixed', ...expected })
    }
  })

  it('a spent budget is a 400 before anything is streamed', async () => {
    const many = Array.from({ length: 60 }, (_, i) => `${userId.slice(2)}${String(i).padStart(2, '0')}`).join(',')
    const { work, res } = await counted(() => t.call('POST', ADVANCED, { body: { environments: ['development'], projects: ['once'], context: { appName: 'web', userId: many } } }))
    expect(res).toMatchObject(budgetSpent)
    expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
  })
})

describe('the frontend API and OFREP charge preparing the stored lists of values', () => {
  /** A flag of 30 strategies of 30 constraints of 250 values (Unleash's limits): 29 NOT_IN that pass, then an IN that fails, so every one is tested. */
  async function listsAtTheLimits(project: string) {
    await ok('POST', '/api/admin/projects', { id: project, name: project, environments: ['development'] })
    await ok('POST', `/api/admin/projects/${project}/features`, { name: `${project}-flag` })
    const values = (s: number, c: number) => Array.from({ length: 250 }, (_, v) => `member-${s}-${c}-${v}`)
    for (let s = 0; s < 30; s++) {
      const constraints = Array.from({ length: 30 }, (_, c) => ({ contextName: 'userId', operator: c === 29 ? 'IN' : 'NOT_IN', inverted: false, caseInsensitive: false, values: values(s, c) }))
      await ok('POST', `/api/admin/projects/${project}/features/${project}-flag/environments/development/strategies`, { name: 'default', constraints })
    }
    await ok('POST', `/api/admin/projects/${project}/features/${project}-flag/environments/development/on`)
    return (await ok('POST', '/api/admin/api-tokens', { tokenName: project, type: 'frontend', environment: 'development', projects: [project] })).secret as string
  }

  it('the frontend API: the first request prepares within the budget (400 past it), the next one goes on from there', async () => {
    const token = await listsAtTheLimits('lists')
    // 225,000 values to prepare, 10 steps each: more than one request's budget.
    const first = await counted(() => t.call('GET', '/api/frontend?appName=web&userId=u1', { token }))
    expect(first.res).toMatchObject(budgetSpent)
    expect(first.work).toBeLessThanOrEqual(BUDGET + SLACK)
    const second = await counted(() => t.call('GET', '/api/frontend?appName=web&userId=u1', { token }))
    expect(second.res.status, second.res.text.slice(0, 300)).toBe(200)
    expect(second.res.body.toggles).toEqual([])
    // What was left to prepare, and the 900 tests.
    expect(second.work).toBeGreaterThan(900)
    expect(second.work).toBeLessThan(BUDGET)
    // Everything prepared: a request is its tests.
    const third = await counted(() => t.call('GET', '/api/frontend?appName=web&userId=u2', { token }))
    expect(third.res.status).toBe(200)
    expect(third.work).toBeLessThan(900 * 2 + 1000)
  })

  it('OFREP the same', async () => {
    const token = await listsAtTheLimits('lists-ofrep')
    const evaluate = () => t.call('POST', '/ofrep/v1/evaluate/flags', { token, body: { context: { targetingKey: 'u1' } } })
    const first = await counted(evaluate)
    expect(first.res.status).toBe(400)
    expect(first.res.body.message ?? JSON.stringify(first.res.body)).toContain(`more than ${BUDGET} matching steps`)
    expect(first.work).toBeLessThanOrEqual(BUDGET + SLACK)
    const second = await counted(evaluate)
    expect(second.res.status, second.res.text.slice(0, 300)).toBe(200)
    expect(second.work).toBeLessThan(BUDGET)
  })
})

describe('namePrefix payloads the cache does not hold are charged to the API token', () => {
  it('a token cycling heavy prefixes past the payload cache gets 429 with Retry-After; one prefix polled again, and another token, do not', async () => {
    // A cache of 1 MiB holds one heavy prefix's payload at a time (each is 3.4 MB): every prefix polled in turn is derived again.
    const app = await createTestApp({ sdk: { maxPayloadBytes: 1024 * 1024 } })
    try {
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await app.call(method, path, { body })
        expect(res.status, `${method} ${path}: ${res.text.slice(0, 300)}`).toBeLessThan(300)
        return res.body
      }
      await call('POST', '/api/admin/projects', { id: 'heavy', name: 'heavy', environments: ['development'] })
      await call('POST', '/api/admin/projects/heavy/features', { name: 'heavy-flag' })
      const s = await call('POST', '/api/admin/projects/heavy/features/heavy-flag/environments/development/strategies', { name: 'default' })
      const constraints = Array.from({ length: 900 }, (_, c) => ({ contextName: 'userId', operator: 'IN', inverted: false, caseInsensitive: false, values: Array.from({ length: 250 }, (_, v) => `member-${c}-${v}`) }))
      await app.query('update feature_strategies set constraints = $1 where id = $2', [JSON.stringify(constraints), s.id])
      await call('POST', '/api/admin/projects/heavy/features/heavy-flag/environments/development/on')
      const token = async (name: string) => (await call('POST', '/api/admin/api-tokens', { tokenName: name, type: 'client', environment: 'development', projects: ['heavy'] })).secret as string
      const cycling = await token('cycling')
      const poll = (secret: string, prefix: string) => app.call('GET', `/api/client/features?namePrefix=${prefix}`, { token: secret })
      const first = await poll(cycling, 'h')
      expect(first.status).toBe(200)
      const size = first.text.length
      expect(size).toBeGreaterThan(3_000_000)
      // One prefix polled again is served from the cache, however often.
      for (let i = 0; i < 20; i++) expect((await poll(cycling, 'h')).status).toBe(200)
      const prefixes = ['h', 'he', 'hea', 'heav', 'heavy']
      let refused: { status: number; body: any; headers: Headers } | undefined
      let polls = 0
      for (let round = 0; round < 10 && !refused; round++) {
        for (const prefix of prefixes) {
          const res = await poll(cycling, prefix)
          polls++
          if (res.status !== 200) {
            refused = res
            break
          }
        }
      }
      expect(refused?.status).toBe(429)
      expect(refused?.body).toEqual({ id: expect.any(String), name: 'TooManyRequestsError', message: expect.stringContaining('narrowed by project, namePrefix or tag') })
      expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0)
      // Refused once 32 MiB were made: each prefix the cache did not hold was charged.
      expect(polls).toBeLessThanOrEqual(prefixes.length + Math.ceil((32 * 1024 * 1024) / size) + 1)
      // Another token of the same scope is not held to this one's charge.
      expect((await poll(await token('other'), 'heavy')).status).toBe(200)
    } finally {
      await app.close()
    }
  })
})
