import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { regexCacheStats } from '../src/evaluation/index.js'
import { PREPARE_STEPS_PER_VALUE } from '../src/evaluation/constraints.js'
import { DEFAULT_REGEX_WORK_BUDGET } from '../src/http/evaluation-limits.js'
import { DEFAULT_RESOURCE_LIMITS, exceedsLimit } from '../src/strategies/schemas.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { budgetSpent as budgetSpentOf, counted, okCaller } from './helpers/evaluation-work.js'
import { createSignedInUser } from './helpers/users.js'

/**
 * Every constraint operator, not only REGEX, draws on the request's evaluation budget; REGEX programs are compiled
 * lazily through one process-wide cache and the compile is charged; a project's naming pattern is matched only for a
 * caller who may import, under the same budget; and Unleash's resource limits hold on every path a strategy or
 * segment enters by. Proven by counting work (regexWorkDone counts every step a meter draws), not by timing.
 */
let t: TestApp
let frontendToken: string
const BUDGET = DEFAULT_REGEX_WORK_BUDGET
const SLACK = 100_000
const L = DEFAULT_RESOURCE_LIMITS
const x = (n: number) => 'x'.repeat(n)

const ok = okCaller(() => t)
const budgetSpent = budgetSpentOf(BUDGET)

/** A flag on in development of `project` with one default strategy, whose constraints are then set behind the API's back. */
async function storedFlag(project: string, name: string, constraints: object[], strategies = 1) {
  await ok('POST', `/api/admin/projects/${project}/features`, { name })
  for (let i = 0; i < strategies; i++) {
    const s = await ok('POST', `/api/admin/projects/${project}/features/${name}/environments/development/strategies`, { name: 'default' })
    await t.query('update feature_strategies set constraints = $1 where id = $2', [JSON.stringify(constraints), s.id])
  }
  await ok('POST', `/api/admin/projects/${project}/features/${name}/environments/development/on`)
}
const contains = (i: number, values: number) => ({ contextName: 'userId', operator: 'STR_CONTAINS', inverted: true, caseInsensitive: false, values: Array.from({ length: values }, (_, v) => `needle-${i}-${v}`) })

beforeAll(async () => {
  t = await createTestApp()
  await ok('POST', '/api/admin/projects', { id: 'str', name: 'Stored above the limits', environments: ['development'] })
  await ok('POST', '/api/admin/projects', { id: 'rxc', name: 'Distinct patterns', environments: ['development'] })
  await ok('POST', '/api/admin/projects', { id: 'lim', name: 'Limits', environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] })
  // What the penetration test stored: inverted STR_CONTAINS, so every value is scanned (here 6 × 2,000 values).
  await storedFlag('str', 'contains', Array.from({ length: 6 }, (_, i) => contains(i, 2_000)))
  const token = await ok('POST', '/api/admin/api-tokens', { tokenName: 'web', type: 'frontend', environment: 'development', projects: ['str'] })
  frontendToken = token.secret
})
afterAll(() => t.close())

describe('every operator draws on the request budget', () => {
  it('the frontend API refuses with 400 a long userId against thousands of stored STR_CONTAINS values', async () => {
    const { work, res } = await counted(() => t.call('GET', `/api/frontend?appName=web&userId=${x(1000)}`, { token: frontendToken }))
    expect(res).toMatchObject(budgetSpent)
    expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
  })

  it('the playground refuses it too, and the advanced playground before streaming comma-separated values', async () => {
    const basic = await t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: ['str'], context: { appName: 'web', userId: x(1000) } } })
    expect(basic).toMatchObject(budgetSpent)
    const { work, res } = await counted(() =>
      t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], projects: ['str'], context: { appName: 'web', userId: [x(1000), `${x(999)}y`, `${x(998)}z`].join(',') } } }),
    )
    expect(res).toMatchObject(budgetSpent)
    expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
  })

  it('data stored above the limits still evaluates for a realistic context, its work counted', async () => {
    // The first request prepares the lists of values the refused ones did not reach (10 steps a value), once.
    const first = await counted(() => t.call('GET', '/api/frontend?appName=web&userId=u-41', { token: frontendToken }))
    expect(first.res.status, first.res.text.slice(0, 300)).toBe(200)
    expect(first.work - 6 * 2_000 * 5).toBeLessThanOrEqual(6 * 2_000 * PREPARE_STEPS_PER_VALUE + 100)
    const { work, res } = await counted(() => t.call('GET', '/api/frontend?appName=web&userId=u-42', { token: frontendToken }))
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expect(res.body.toggles.map((f: { name: string }) => f.name)).toEqual(['contains'])
    // Six constraints of 2,000 values each against a 4-character value: 5 steps a value; then the flag and its strategy visited.
    expect(work - 6 * 2_000 * 5).toBeGreaterThanOrEqual(0)
    expect(work - 6 * 2_000 * 5).toBeLessThan(100)
  })

  it('IN is a set lookup: one step, whatever the number of values', async () => {
    await ok('POST', '/api/admin/projects', { id: 'inset', name: 'In', environments: ['development'] })
    const values = Array.from({ length: 5_000 }, (_, v) => `id-${v}`)
    await storedFlag('inset', 'in-many', [{ contextName: 'userId', operator: 'IN', inverted: false, caseInsensitive: false, values }])
    const play = () => t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: ['inset'], context: { appName: 'web', userId: 'id-4999' } } })
    // The first evaluation makes the set: 10 steps a value, once.
    const first = await counted(play)
    const { work, res } = await counted(play)
    expect(first.work - work).toBe(5_000 * PREPARE_STEPS_PER_VALUE)
    expect(res.status).toBe(200)
    expect(res.body.features[0].isEnabled).toBe(true)
    // One step for the lookup; the rest is the detail's copy of the strategy into the answer (its values), charged by size.
    const shown = JSON.stringify(values).length
    expect(work - shown).toBeGreaterThanOrEqual(1)
    expect(work - shown).toBeLessThan(300)
  })
})

describe('DATE constraints and segments shown under many strategies draw on the budget', () => {
  /** A segment whose constraints are set behind the API's back (above the limits, as stored data can be). */
  async function storedSegment(name: string, constraints: object[]): Promise<number> {
    const segment = await ok('POST', '/api/admin/segments', { name, constraints: [] })
    await t.query('update segments set constraints = $1 where id = $2', [JSON.stringify(constraints), segment.id])
    return segment.id
  }
  /** A flag on in development of `project` with `strategies` default strategies, each using `segments`. */
  async function flagWithSegments(project: string, name: string, segments: number[], strategies: number) {
    await ok('POST', `/api/admin/projects/${project}/features`, { name })
    for (let i = 0; i < strategies; i++) await ok('POST', `/api/admin/projects/${project}/features/${name}/environments/development/strategies`, { name: 'default', segments })
    await ok('POST', `/api/admin/projects/${project}/features/${name}/environments/development/on`)
  }
  const dateAfter = (i: number) => ({ contextName: 'currentTime', operator: 'DATE_AFTER', inverted: false, caseInsensitive: false, value: new Date(Date.UTC(2000, 0, 1) + i * 1000).toISOString() })

  it('thousands of DATE_AFTER checks with currentTime in the context: the frontend API and OFREP refuse at the budget', async () => {
    await ok('POST', '/api/admin/projects', { id: 'dat', name: 'Dates', environments: ['development'] })
    const segments: number[] = []
    // Every check passes but the very last one (a date still to come): each strategy reads all 25,000 before it fails.
    const future = { ...dateAfter(0), value: '2999-01-01T00:00:00.000Z' }
    for (let s = 0; s < 5; s++) segments.push(await storedSegment(`dates-${s}`, Array.from({ length: 5_000 }, (_, i) => (s === 4 && i === 4_999 ? future : dateAfter(i)))))
    for (let f = 0; f < 3; f++) await flagWithSegments('dat', `dated-${f}`, segments, 30)
    const token = (await ok('POST', '/api/admin/api-tokens', { tokenName: 'dates', type: 'frontend', environment: 'development', projects: ['dat'] })).secret
    const frontend = await counted(() => t.call('GET', '/api/frontend?appName=web&userId=u1&currentTime=2026-01-01T00:00:00.000Z', { token }))
    expect(frontend.res).toMatchObject(budgetSpent)
    expect(frontend.work).toBeLessThanOrEqual(BUDGET + SLACK)
    const ofrep = await counted(() => t.call('POST', '/ofrep/v1/evaluate/flags', { token, body: { context: { targetingKey: 'u1', currentTime: '2026-01-01T00:00:00.000Z' } } }))
    expect(ofrep.res.status).toBe(400)
    expect(ofrep.work).toBeLessThanOrEqual(BUDGET + SLACK)
  })

  it("the playground charges a segment's constraints each time it shows them under a strategy: refused before the answer grows", async () => {
    await ok('POST', '/api/admin/projects', { id: 'shown', name: 'Shown', environments: ['development'] })
    // Cheap to evaluate (one IN lookup), large to show: 50,000 values copied under each of 30 strategies.
    const values = Array.from({ length: 50_000 }, (_, v) => `member-${v}`)
    const segment = await storedSegment('members', [{ contextName: 'userId', operator: 'IN', inverted: false, caseInsensitive: false, values }])
    await flagWithSegments('shown', 'segmented', [segment], 30)
    const { work, res } = await counted(() => t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: ['shown'], context: { appName: 'web', userId: 'member-7' } } }))
    expect(res).toMatchObject(budgetSpent)
    expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
    // One strategy's worth is shown within the budget.
    expect(JSON.stringify(values).length).toBeLessThan(BUDGET)
  })
})

describe('REGEX programs are compiled once per pattern, lazily, and the compile is charged', () => {
  const heavy = (i: number) => `(${'abcdefghijklmnopqrst'.split('').join('|')}){128}${i}`

  it('many distinct programs at the limit stop at the budget instead of compiling them all', async () => {
    const constraints = Array.from({ length: 40 }, (_, i) => ({ contextName: 'userId', operator: 'REGEX', inverted: false, caseInsensitive: false, values: [], value: heavy(i) }))
    await storedFlag('rxc', 'distinct', constraints)
    const before = regexCacheStats().compiles
    const { work, res } = await counted(() => t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: ['rxc'], context: { appName: 'web', userId: 'a' } } }))
    expect(res).toMatchObject(budgetSpent)
    expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
    expect(regexCacheStats().compiles - before).toBeLessThan(10)
  })

  it('one pattern held by many strategies and flags is compiled once', async () => {
    await ok('POST', '/api/admin/projects', { id: 'rxs', name: 'Shared pattern', environments: ['development'] })
    const shared = { contextName: 'userId', operator: 'REGEX', inverted: false, caseInsensitive: false, values: [], value: '^shared-[0-9]+$' }
    await storedFlag('rxs', 'one', [shared], 3)
    await storedFlag('rxs', 'two', [shared], 3)
    const before = regexCacheStats().compiles
    const res = await t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: ['rxs'], context: { appName: 'web', userId: 'shared-1' } } })
    expect(res.status).toBe(200)
    expect(res.body.features.every((f: { isEnabled: boolean }) => f.isEnabled)).toBe(true)
    expect(regexCacheStats().compiles - before).toBe(1)
  })
})

describe("a project's naming pattern in the import's validation", () => {
  const body = { project: 'named', environment: 'development', data: { features: Array.from({ length: 1000 }, (_, i) => ({ name: `${'a'.repeat(90)}${String(i).padStart(10, '0')}`, type: 'release' })), featureStrategies: [], tagTypes: [] } }

  beforeAll(async () => {
    await ok('POST', '/api/admin/projects', { id: 'named', name: 'Named', environments: ['development'] })
    await ok('PUT', '/api/admin/projects/named', { name: 'Named', featureNaming: { pattern: '(.*){1000}' } })
  })

  it('is not matched for a Viewer, who is told the permissions they lack', async () => {
    const viewer = await createSignedInUser(t, 'viewer-named', 'Viewer')
    const { work, res } = await counted(() => viewer.call('POST', '/api/admin/features-batch/validate', { body }))
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expect(res.body.permissions.length).toBe(1)
    expect(work).toBe(0)
  })

  it('is matched under the budget for an admin: 400 when spent (validate and import)', async () => {
    const { work, res } = await counted(() => t.call('POST', '/api/admin/features-batch/validate', { body }))
    expect(res).toMatchObject(budgetSpent)
    expect(work).toBeLessThanOrEqual(BUDGET + SLACK)
    expect(await t.call('POST', '/api/admin/features-batch/import', { body })).toMatchObject(budgetSpent)
  })
})

describe("Unleash's resource limits hold wherever a strategy or segment enters", () => {
  const refused = (res: { status: number; body: any; text: string }, message: string) => {
    expect(res.status, res.text.slice(0, 300)).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(JSON.stringify(res.body)).toContain(message)
  }
  const constraint = (values: number) => ({ contextName: 'userId', operator: 'IN', values: Array.from({ length: values }, (_, v) => `u${v}`) })
  const tooManyConstraints = { name: 'default', constraints: Array.from({ length: L.constraints + 1 }, () => constraint(1)) }
  const tooManyValues = { name: 'default', constraints: [constraint(L.constraintValues + 1)] }
  const S = '/api/admin/projects/lim/features/limited/environments/development/strategies'

  beforeAll(async () => {
    await ok('POST', '/api/admin/projects/lim/features', { name: 'limited' })
  })

  it('strategies: at the limits accepted, past them refused with Unleash’s message (POST and PUT)', async () => {
    const atLimit = await ok('POST', S, { name: 'default', constraints: [...Array.from({ length: L.constraints - 1 }, () => constraint(1)), constraint(L.constraintValues)] })
    refused(await t.call('POST', S, { body: tooManyConstraints }), exceedsLimit('constraints', 30))
    refused(await t.call('POST', S, { body: tooManyValues }), exceedsLimit('constraint values for userId', 250))
    refused(await t.call('PUT', `${S}/${atLimit.id}`, { body: tooManyConstraints }), exceedsLimit('constraints', 30))
    const segments = []
    for (let i = 0; i < L.strategySegments + 1; i++) segments.push((await ok('POST', '/api/admin/segments', { name: `lim-${i}`, constraints: [constraint(1)] })).id)
    refused(await t.call('POST', S, { body: { name: 'default', segments } }), exceedsLimit('strategy segments', 5))
  })

  it('segments: values across the constraints at most the segment values limit (POST and PUT)', async () => {
    const over = [constraint(250), constraint(250), constraint(250), constraint(250), constraint(1)]
    refused(await t.call('POST', '/api/admin/segments', { body: { name: 'big', constraints: over } }), exceedsLimit('segment values', 1000))
    const segment = await ok('POST', '/api/admin/segments', { name: 'big', constraints: over.slice(0, 4) })
    refused(await t.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: 'big', constraints: over } }), exceedsLimit('segment values', 1000))
  })

  it('strategies in one flag environment: the 31st is refused with Unleash’s message, directly and when a change request is applied (409, nothing applied)', async () => {
    await ok('POST', '/api/admin/projects/lim/features', { name: 'crowded' })
    const C = '/api/admin/projects/lim/features/crowded/environments/development/strategies'
    for (let i = 0; i < L.featureEnvironmentStrategies; i++) await ok('POST', C, { name: 'default' })
    refused(await t.call('POST', C, { body: { name: 'default' } }), exceedsLimit('strategy', 30))
    await ok('PUT', '/api/admin/projects/lim/change-requests/config', { environment: 'development', changeRequestsEnabled: true, requiredApprovals: 1 })
    const cr = await ok('POST', '/api/admin/projects/lim/environments/development/change-requests', { feature: 'crowded', action: 'addStrategy', payload: { name: 'default' } })
    const count = async () => (await t.query<{ n: number }>(`select count(*)::int as n from feature_strategies where feature_name = 'crowded' and environment = 'development'`))[0]!.n
    await ok('PUT', `/api/admin/projects/lim/change-requests/${cr.id}/state`, { state: 'In review' })
    const reviewer = await createSignedInUser(t, 'crowd-reviewer', 'Admin')
    expect((await reviewer.call('POST', `/api/admin/projects/lim/change-requests/${cr.id}/approve`)).status).toBeLessThan(300)
    const applied = await t.call('PUT', `/api/admin/projects/lim/change-requests/${cr.id}/state`, { body: { state: 'Applied' } })
    expect(applied.status, applied.text).toBe(409)
    expect(applied.body.message).toContain(exceedsLimit('strategy', 30))
    expect(await count()).toBe(L.featureEnvironmentStrategies)
    await ok('PUT', '/api/admin/projects/lim/change-requests/config', { environment: 'development', changeRequestsEnabled: false })
  })

  it("change requests' addStrategy and updateStrategy, and a project environment's default strategy", async () => {
    await ok('POST', '/api/admin/projects/lim/features', { name: 'guarded' })
    const CR = '/api/admin/projects/lim/environments/production/change-requests'
    refused(await t.call('POST', CR, { body: { feature: 'guarded', action: 'addStrategy', payload: tooManyConstraints } }), exceedsLimit('constraints', 30))
    refused(await t.call('POST', CR, { body: { feature: 'guarded', action: 'updateStrategy', payload: { id: 'any', ...tooManyValues } } }), exceedsLimit('constraint values for userId', 250))
    refused(await t.call('POST', '/api/admin/projects/lim/environments/development/default-strategy', { body: tooManyConstraints }), exceedsLimit('constraints', 30))
  })
})

describe('the import and the state restore hold the strategy limits', () => {
  const strategies = (feature: string, n: number, extra: object = {}) => Array.from({ length: n }, () => ({ name: 'default', featureName: feature, parameters: {}, ...extra }))
  const batch = (featureStrategies: object[], names: string[]) => ({ project: 'lim', environment: 'development', data: { features: names.map((name) => ({ name, type: 'release' })), featureStrategies, tagTypes: [] } })

  it('validate reports 31 strategies on one flag, too many constraints, values and segments; the import refuses them and writes nothing', async () => {
    const userIds = (n: number) => ({ contextName: 'userId', operator: 'IN', values: Array.from({ length: n }, (_, i) => `u${i}`) })
    const body = batch(
      [
        ...strategies('imp-many', L.featureEnvironmentStrategies + 1),
        ...strategies('imp-constraints', 1, { constraints: Array.from({ length: L.constraints + 1 }, () => userIds(1)) }),
        ...strategies('imp-values', 1, { constraints: [userIds(L.constraintValues + 1)] }),
        ...strategies('imp-segments', 1, { segments: [1, 2, 3, 4, 5, 6] }),
      ],
      ['imp-many', 'imp-constraints', 'imp-values', 'imp-segments'],
    )
    const res = await t.call('POST', '/api/admin/features-batch/validate', { body })
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    const errors = res.body.errors as { message: string; affectedItems: string[] }[]
    for (const [resource, limit, flag] of [['strategy', 30, 'imp-many'], ['constraints', 30, 'imp-constraints'], ['constraint values', 250, 'imp-values'], ['strategy segments', 5, 'imp-segments']] as const) {
      expect(errors).toContainEqual({ message: expect.stringContaining(exceedsLimit(resource, limit)), affectedItems: [flag] })
    }
    const imported = await t.call('POST', '/api/admin/features-batch/import', { body })
    expect(imported.status).toBe(400)
    expect(imported.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining(exceedsLimit('strategy', 30)) })
    expect(await t.query("select name from features where name like 'imp-%'")).toEqual([])
    // At the limit: accepted.
    expect((await t.call('POST', '/api/admin/features-batch/import', { body: batch(strategies('imp-thirty', 30), ['imp-thirty']) })).status).toBe(200)
  })

  it('a state restore refuses 31 strategies in one flag environment', async () => {
    const featureStrategies = Array.from({ length: L.featureEnvironmentStrategies + 1 }, () => ({ featureName: 'restored-many', environment: 'development', strategyName: 'default' }))
    const res = await t.call('POST', '/api/admin/state/import', { body: { version: 4, features: [{ name: 'restored-many', project: 'lim' }], featureStrategies } })
    expect(res.status).toBe(400)
    expect(JSON.stringify(res.body)).toContain(exceedsLimit('strategy', 30))
    expect(await t.query("select name from features where name = 'restored-many'")).toEqual([])
  })
})
