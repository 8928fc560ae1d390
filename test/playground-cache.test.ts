import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { createTestApp, type TestApp } from './helpers/app.js'

/*
 * The playground keeps its prepared flags (and the evaluations they share) per configuration
 * revision. These tests change what it evaluates between two calls, through the app and around it,
 * and expect the second call to see the change.
 */

let t: TestApp
let clock = new Date('2025-06-01T00:00:00Z')
let segmentId: number
let strategyId: string
const F = '/api/admin/projects/cache/features'

beforeAll(async () => {
  t = await createTestApp({ now: () => clock })
  await t.call('POST', '/api/admin/projects', { body: { id: 'cache', name: 'Cache', environments: ['development'] } })
  segmentId = (await t.call('POST', '/api/admin/segments', { body: { name: 'nordics', constraints: [{ contextName: 'country', operator: 'IN', values: ['NO'] }] } })).body.id
  for (const name of ['rollout', 'segmented', 'colors', 'parent', 'child', 'launch']) {
    expect((await t.call('POST', F, { body: { name } })).status).toBe(201)
  }
  strategyId = (await t.call('POST', `${F}/rollout/environments/development/strategies`, { body: { name: 'flexibleRollout', parameters: { rollout: '100' }, constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }] } })).body.id
  await t.call('POST', `${F}/segmented/environments/development/strategies`, { body: { name: 'default', segments: [segmentId] } })
  await t.call('POST', `${F}/colors/environments/development/strategies`, { body: { name: 'default' } })
  await t.call('PUT', `${F}/colors/environments/development/variants`, { body: [{ name: 'blue', weightType: 'variable', weight: 1000, stickiness: 'default' }] })
  await t.call('POST', `${F}/parent/environments/development/strategies`, { body: { name: 'userWithId', parameters: { userIds: 'ann' } } })
  await t.call('POST', `${F}/child/environments/development/strategies`, { body: { name: 'default' } })
  // No currentTime in the context: the constraint reads the clock of the request.
  await t.call('POST', `${F}/launch/environments/development/strategies`, { body: { name: 'default', constraints: [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2025-07-01T00:00:00Z' }] } })
  for (const name of ['rollout', 'segmented', 'colors', 'parent', 'child', 'launch']) await t.call('POST', `${F}/${name}/environments/development/on`)
})
afterAll(() => t.close())

const context = { appName: 'web', userId: 'ann,bob', properties: { plan: 'pro', country: 'NO,SE' } }
type Call = (method: string, path: string, options: { body?: unknown }) => Promise<{ status: number; text: string; body: any }>
const advanced = async (app: { call: Call } = t) => {
  const res = await app.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], projects: ['cache'], context } })
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return res
}
/** Per flag, whether it is on for each combination (ann/NO, ann/SE, bob/NO, bob/SE). */
const enabled = (res: { body: any }) => Object.fromEntries(res.body.features.map((f: any) => [f.name, f.environments.development.map((e: any) => e.isEnabled)]))

describe('the advanced playground after a change', () => {
  it('answers the same twice when nothing changed', async () => {
    const first = await advanced()
    const second = await advanced()
    expect(second.text).toBe(first.text)
    expect(enabled(first)).toMatchObject({ rollout: [true, true, true, true], segmented: [true, false, true, false], child: [true, true, true, true] })
  })

  it("sees a strategy's new constraints", async () => {
    await advanced()
    const res = await t.call('PUT', `${F}/rollout/environments/development/strategies/${strategyId}`, {
      body: { name: 'flexibleRollout', parameters: { rollout: '100' }, constraints: [{ contextName: 'plan', operator: 'IN', values: ['free'] }] },
    })
    expect(res.status, res.text).toBe(200)
    const after = await advanced()
    expect(enabled(after).rollout).toEqual([false, false, false, false])
    expect(after.body.features.find((f: any) => f.name === 'rollout').environments.development[0].strategies.data[0].constraints[0].values).toEqual(['free'])
  })

  it("sees a segment's new constraints", async () => {
    await advanced()
    expect((await t.call('PUT', `/api/admin/segments/${segmentId}`, { body: { name: 'nordics', constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE'] }] } })).status).toBe(204)
    expect(enabled(await advanced()).segmented).toEqual([true, true, true, true])
  })

  it('sees a flag switched off, new variants, a new dependency, a new flag and an archived one', async () => {
    await advanced()
    expect((await t.call('POST', `${F}/segmented/environments/development/off`)).status).toBe(200)
    expect((await t.call('PUT', `${F}/colors/environments/development/variants`, { body: [{ name: 'red', weightType: 'variable', weight: 1000, stickiness: 'default' }] })).status).toBe(200)
    expect((await t.call('POST', `${F}/child/dependencies`, { body: { feature: 'parent' } })).status).toBe(200)
    expect((await t.call('POST', F, { body: { name: 'fresh' } })).status).toBe(201)
    expect((await t.call('DELETE', `${F}/launch`)).status).toBe(202)
    const res = await advanced()
    const flags = enabled(res)
    expect(Object.keys(flags)).toEqual(['child', 'colors', 'fresh', 'parent', 'rollout', 'segmented'])
    expect(flags.segmented).toEqual([false, false, false, false])
    expect(flags.child).toEqual([true, true, false, false])
    expect(res.body.features.find((f: any) => f.name === 'colors').environments.development[0].variant.name).toBe('red')
    expect((await t.call('POST', '/api/admin/archive/revive/launch')).status).toBe(200)
  })

  it('sees a change written through another app on the same database (another process)', async () => {
    await advanced()
    const other = createApp({ db: () => t.db, clock: () => clock })
    const call = async (method: string, path: string, options: { body?: unknown } = {}) => {
      const json = options.body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(options.body) }
      const res = await other.request(path, { method, ...json, headers: { authorization: t.adminToken, ...json.headers } })
      const text = await res.text()
      return { status: res.status, text, body: text ? JSON.parse(text) : undefined }
    }
    expect((await call('POST', `${F}/parent/environments/development/off`)).status).toBe(200)
    expect(enabled(await advanced()).parent).toEqual([false, false, false, false])
    expect((await call('POST', `${F}/parent/environments/development/on`)).status).toBe(200)
    expect(enabled(await advanced({ call })).parent).toEqual([true, true, false, false])
    expect(enabled(await advanced()).parent).toEqual([true, true, false, false])
    await other.idle()
  })

  it('evaluates kept flags at the time of each request', async () => {
    expect((await t.call('POST', `${F}/launch/environments/development/on`)).status).toBe(200)
    clock = new Date('2025-06-15T00:00:00Z')
    expect(enabled(await advanced()).launch).toEqual([false, false, false, false])
    clock = new Date('2025-07-15T00:00:00Z')
    expect(enabled(await advanced()).launch).toEqual([true, true, true, true])
  })
})

describe('the basic playground after a change', () => {
  it('sees a flag switched off', async () => {
    const play = () => t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: ['cache'], context: { appName: 'web', userId: 'ann' } } })
    const isOn = (res: { body: any }) => res.body.features.find((f: any) => f.name === 'colors').isEnabled
    expect(isOn(await play())).toBe(true)
    expect((await t.call('POST', `${F}/colors/environments/development/off`)).status).toBe(200)
    expect(isOn(await play())).toBe(false)
  })
})
