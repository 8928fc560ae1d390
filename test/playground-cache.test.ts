import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, createSegment, enableFlag, fresh, ok } from './helpers/factories.js'

/*
 * The playground keeps its prepared flags (and the evaluations they share) per configuration
 * revision. These tests change what it evaluates between two calls, through the app and around it,
 * and expect the second call to see the change.
 */

let t: TestApp
const START = new Date('2025-06-01T00:00:00Z')
let clock = START
beforeAll(async () => {
  t = await createTestApp({ now: () => clock })
})
afterAll(() => t.close())
beforeEach(() => {
  clock = START
})

const ROLES = ['rollout', 'segmented', 'colors', 'parent', 'child', 'launch'] as const

/**
 * A fresh project in development with a segment (nordics: country NO) and six flags, all on: rollout (100% for plan
 * pro), segmented (the segment), colors (variant blue), parent (ann only), child, launch (after 2025-07-01 by the clock
 * of the request). Flags have fresh names; `names` maps each role to its name.
 */
async function cacheProject() {
  const project = await createProject(t, { name: 'Cache', environments: ['development'] })
  const F = `/api/admin/projects/${project}/features`
  const segment = await createSegment(t, { constraints: [{ contextName: 'country', operator: 'IN', values: ['NO'] }] })
  const names: Record<string, string> = {}
  for (const role of ROLES) names[role] = (await createFlag(t, { name: fresh(role) }, project)).name
  const strategyId = (await addStrategy(t, names.rollout!, 'development', { name: 'flexibleRollout', parameters: { rollout: '100' }, constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }] }, project)).id as string
  await addStrategy(t, names.segmented!, 'development', { name: 'default', segments: [segment.id] }, project)
  await addStrategy(t, names.colors!, 'development', { name: 'default' }, project)
  await ok(t, 'PUT', `${F}/${names.colors}/environments/development/variants`, [{ name: 'blue', weightType: 'variable', weight: 1000, stickiness: 'default' }])
  await addStrategy(t, names.parent!, 'development', { name: 'userWithId', parameters: { userIds: 'ann' } }, project)
  await addStrategy(t, names.child!, 'development', { name: 'default' }, project)
  // No currentTime in the context: the constraint reads the clock of the request.
  await addStrategy(t, names.launch!, 'development', { name: 'default', constraints: [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2025-07-01T00:00:00Z' }] }, project)
  for (const role of ROLES) await enableFlag(t, names[role]!, 'development', project)
  return { project, F, names, segment: segment as { id: number; name: string }, strategyId }
}
type Cache = Awaited<ReturnType<typeof cacheProject>>

const context = { appName: 'web', userId: 'ann,bob', properties: { plan: 'pro', country: 'NO,SE' } }
type Call = (method: string, path: string, options: { body?: unknown }) => Promise<{ status: number; text: string; body: any }>
const advanced = async (cache: Cache, app: { call: Call } = t) => {
  const res = await app.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], projects: [cache.project], context } })
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return res
}
/** Per flag (by role), whether it is on for each combination (ann/NO, ann/SE, bob/NO, bob/SE). */
const enabled = (cache: Cache, res: { body: any }) => {
  const roleOf = new Map(Object.entries(cache.names).map(([role, name]) => [name, role]))
  return Object.fromEntries(res.body.features.map((f: any) => [roleOf.get(f.name) ?? f.name, f.environments.development.map((e: any) => e.isEnabled)]))
}
const featureOf = (res: { body: any }, name: string) => res.body.features.find((f: any) => f.name === name)

describe('the advanced playground after a change', () => {
  it('answers the same twice when nothing changed', async () => {
    const cache = await cacheProject()
    const first = await advanced(cache)
    const second = await advanced(cache)
    expect(second.text).toBe(first.text)
    expect(enabled(cache, first)).toMatchObject({ rollout: [true, true, true, true], segmented: [true, false, true, false], child: [true, true, true, true] })
  })

  it("sees a strategy's new constraints", async () => {
    const cache = await cacheProject()
    await advanced(cache)
    const res = await t.call('PUT', `${cache.F}/${cache.names.rollout}/environments/development/strategies/${cache.strategyId}`, {
      body: { name: 'flexibleRollout', parameters: { rollout: '100' }, constraints: [{ contextName: 'plan', operator: 'IN', values: ['free'] }] },
    })
    expect(res.status, res.text).toBe(200)
    const after = await advanced(cache)
    expect(enabled(cache, after).rollout).toEqual([false, false, false, false])
    expect(featureOf(after, cache.names.rollout!).environments.development[0].strategies.data[0].constraints[0].values).toEqual(['free'])
  })

  it("sees a segment's new constraints", async () => {
    const cache = await cacheProject()
    await advanced(cache)
    expect((await t.call('PUT', `/api/admin/segments/${cache.segment.id}`, { body: { name: cache.segment.name, constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE'] }] } })).status).toBe(204)
    expect(enabled(cache, await advanced(cache)).segmented).toEqual([true, true, true, true])
  })

  it('sees a flag switched off, new variants, a new dependency, a new flag and an archived one', async () => {
    const cache = await cacheProject()
    const { F, names } = cache
    await advanced(cache)
    expect((await t.call('POST', `${F}/${names.segmented}/environments/development/off`)).status).toBe(200)
    expect((await t.call('PUT', `${F}/${names.colors}/environments/development/variants`, { body: [{ name: 'red', weightType: 'variable', weight: 1000, stickiness: 'default' }] })).status).toBe(200)
    expect((await t.call('POST', `${F}/${names.child}/dependencies`, { body: { feature: names.parent } })).status).toBe(200)
    names.fresh = fresh('fresh')
    expect((await t.call('POST', F, { body: { name: names.fresh } })).status).toBe(201)
    expect((await t.call('DELETE', `${F}/${names.launch}`)).status).toBe(202)
    const res = await advanced(cache)
    const flags = enabled(cache, res)
    expect(Object.keys(flags)).toEqual(['child', 'colors', 'fresh', 'parent', 'rollout', 'segmented'])
    expect(flags.segmented).toEqual([false, false, false, false])
    expect(flags.child).toEqual([true, true, false, false])
    expect(featureOf(res, names.colors!).environments.development[0].variant.name).toBe('red')
    expect((await t.call('POST', `/api/admin/archive/revive/${names.launch}`)).status).toBe(200)
  })

  it('sees a change written through another app on the same database (another process)', async () => {
    const cache = await cacheProject()
    const { F, names } = cache
    await advanced(cache)
    const other = createApp({ db: () => t.db, clock: () => clock })
    const call = async (method: string, path: string, options: { body?: unknown } = {}) => {
      const json = options.body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(options.body) }
      const res = await other.request(path, { method, ...json, headers: { authorization: t.adminToken, ...json.headers } })
      const text = await res.text()
      return { status: res.status, text, body: text ? JSON.parse(text) : undefined }
    }
    expect((await call('POST', `${F}/${names.parent}/environments/development/off`)).status).toBe(200)
    expect(enabled(cache, await advanced(cache)).parent).toEqual([false, false, false, false])
    expect((await call('POST', `${F}/${names.parent}/environments/development/on`)).status).toBe(200)
    expect(enabled(cache, await advanced(cache, { call })).parent).toEqual([true, true, false, false])
    expect(enabled(cache, await advanced(cache)).parent).toEqual([true, true, false, false])
    await other.idle()
  })

  it('evaluates kept flags at the time of each request', async () => {
    const cache = await cacheProject()
    clock = new Date('2025-06-15T00:00:00Z')
    expect(enabled(cache, await advanced(cache)).launch).toEqual([false, false, false, false])
    clock = new Date('2025-07-15T00:00:00Z')
    expect(enabled(cache, await advanced(cache)).launch).toEqual([true, true, true, true])
  })
})

describe('the basic playground after a change', () => {
  it('sees a flag switched off', async () => {
    const { project, F, names } = await cacheProject()
    const play = () => t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: [project], context: { appName: 'web', userId: 'ann' } } })
    const isOn = (res: { body: any }) => featureOf(res, names.colors!).isEnabled
    expect(isOn(await play())).toBe(true)
    expect((await t.call('POST', `${F}/${names.colors}/environments/development/off`)).status).toBe(200)
    expect(isOn(await play())).toBe(false)
  })
})
