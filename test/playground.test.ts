import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, enableFlag, fresh } from './helpers/factories.js'

let t: TestApp
let segmentId: number
const ids: Record<string, string> = {}
const F = '/api/admin/projects/play/features'

async function flag(name: string, strategies: unknown[], options: { enabled?: string[]; variants?: unknown[] } = {}) {
  expect((await t.call('POST', F, { body: { name } })).status).toBe(201)
  for (const [i, s] of strategies.entries()) {
    const res = await t.call('POST', `${F}/${name}/environments/development/strategies`, { body: s })
    expect(res.status, res.text).toBe(200)
    ids[`${name}:${i}`] = res.body.id
  }
  for (const env of options.enabled ?? ['development']) expect((await t.call('POST', `${F}/${name}/environments/${env}/on`)).status).toBe(200)
  if (options.variants) expect((await t.call('PUT', `${F}/${name}/environments/development/variants`, { body: options.variants })).status).toBe(200)
}

// A fixture the tests only read; a test that adds a flag does it in a project of its own.
beforeAll(async () => {
  t = await createTestApp()
  await t.call('POST', '/api/admin/projects', { body: { id: 'play', name: 'Play', environments: ['development', 'production'] } })
  await t.call('POST', '/api/admin/projects', { body: { id: 'other', name: 'Other', environments: ['development'] } })
  segmentId = (await t.call('POST', '/api/admin/segments', { body: { name: 'europe', constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }] } })).body.id
  await flag('beta', [{ name: 'flexibleRollout', parameters: { rollout: '100' }, constraints: [{ contextName: 'userId', operator: 'IN', values: ['ann', 'bob'] }] }])
  // A custom strategy type must be defined before a flag uses it.
  expect((await t.call('POST', '/api/admin/strategies', { body: { name: 'myCustomStrategy', parameters: [{ name: 'foo', type: 'string' }] } })).status).toBe(201)
  await flag('custom', [{ name: 'myCustomStrategy', parameters: { foo: 'bar' }, constraints: [{ contextName: 'userId', operator: 'IN', values: ['ann'] }] }])
  await flag('hostname', [{ name: 'applicationHostname', parameters: { hostNames: 'web-1' } }])
  await flag('paused', [{ name: 'default', disabled: true }, { name: 'userWithId', parameters: { userIds: 'bob' } }])
  await flag('segmented', [{ name: 'default', segments: [segmentId] }])
  await flag('colors', [{ name: 'default' }], { variants: [{ name: 'blue', payload: { type: 'string', value: 'b' } }] })
  await flag('off', [{ name: 'default' }], { enabled: [] })
  await flag('gone', [{ name: 'default' }])
  expect((await t.call('DELETE', `${F}/gone`)).status).toBe(202)
  await flag('child', [{ name: 'default' }])
  expect((await t.call('POST', `${F}/child/dependencies`, { body: { feature: 'beta' } })).status).toBe(200)
  await t.call('POST', '/api/admin/projects/other/features', { body: { name: 'elsewhere' } })
})
afterAll(() => t.close())

const play = (body: unknown) => t.call('POST', '/api/admin/playground', { body })
const advanced = (body: unknown) => t.call('POST', '/api/admin/playground/advanced', { body })
const featureOf = (res: { body: any }, name: string) => res.body.features.find((f: any) => f.name === name)
const eventCount = async () => (await t.query<{ n: number }>('select count(*)::int as n from events'))[0]!.n

describe('POST /api/admin/playground', () => {
  it('evaluates every live flag of the projects in the environment, showing each strategy, constraint and segment result', async () => {
    const res = await play({ environment: 'development', projects: ['play'], context: { appName: 'web', userId: 'ann', properties: { region: 'eu' } } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.input).toEqual({ environment: 'development', projects: ['play'], context: { appName: 'web', userId: 'ann', properties: { region: 'eu' } } })
    expect(res.body.features.map((f: any) => f.name)).toEqual(['beta', 'child', 'colors', 'custom', 'hostname', 'off', 'paused', 'segmented'])
    const beta = featureOf(res, 'beta')
    expect(beta).toEqual({
      name: 'beta',
      projectId: 'play',
      isEnabledInCurrentEnvironment: true,
      isEnabled: true,
      hasUnsatisfiedDependency: false,
      variant: { name: 'disabled', enabled: false, feature_enabled: true },
      variants: [],
      strategies: {
        result: true,
        data: [
          {
            name: 'flexibleRollout',
            id: ids['beta:0'],
            result: true,
            disabled: false,
            segments: [],
            constraints: [{ contextName: 'userId', operator: 'IN', values: ['ann', 'bob'], caseInsensitive: false, inverted: false, result: true }],
            parameters: { rollout: '100', stickiness: 'default', groupId: 'beta' },
            links: { edit: `/projects/play/features/beta/strategies/edit?environmentId=development&strategyId=${ids['beta:0']}` },
          },
        ],
      },
    })
    expect(featureOf(res, 'segmented').strategies.data[0].segments).toEqual([
      { id: segmentId, name: 'europe', result: true, constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'], caseInsensitive: false, inverted: false, result: true }] },
    ])
    expect(featureOf(res, 'colors').variant).toEqual({ name: 'blue', enabled: true, feature_enabled: true, payload: { type: 'string', value: 'b' } })
    expect(featureOf(res, 'off')).toMatchObject({ isEnabledInCurrentEnvironment: false, isEnabled: false, strategies: { result: true }, variant: { name: 'disabled', enabled: false } })
    expect(featureOf(res, 'child')).toMatchObject({ isEnabled: true, hasUnsatisfiedDependency: false })
  })

  it('defaults projects to every project and leaves archived flags out', async () => {
    const res = await play({ environment: 'development', context: { appName: 'web' } })
    expect(res.status).toBe(200)
    expect(res.body.input.projects).toBe('*')
    const names = res.body.features.map((f: any) => f.name)
    expect(names).toContain('elsewhere')
    expect(names).not.toContain('gone')
  })

  it("reports a custom strategy as incomplete: 'unknown' when its constraints hold, false when they fail; the flag is then not enabled", async () => {
    const ann = featureOf(await play({ environment: 'development', projects: ['play'], context: { appName: 'web', userId: 'ann' } }), 'custom')
    expect(ann.strategies.data[0].result).toEqual({ evaluationStatus: 'incomplete', enabled: 'unknown' })
    expect(ann.strategies.result).toBe('unknown')
    expect(ann.isEnabled).toBe(false)
    expect(ann.variant).toEqual({ name: 'disabled', enabled: false, feature_enabled: false })
    const carl = featureOf(await play({ environment: 'development', projects: ['play'], context: { appName: 'web', userId: 'carl' } }), 'custom')
    expect(carl.strategies.data[0].result).toEqual({ evaluationStatus: 'incomplete', enabled: false })
    expect(carl.strategies.data[0].constraints[0].result).toBe(false)
    expect(carl.strategies.result).toBe(false)
  })

  it('reports applicationHostname as incomplete, since it depends on the host of the SDK', async () => {
    const hostname = featureOf(await play({ environment: 'development', projects: ['play'], context: { appName: 'web' } }), 'hostname')
    expect(hostname.strategies).toEqual({ result: 'unknown', data: [expect.objectContaining({ name: 'applicationHostname', result: { evaluationStatus: 'incomplete', enabled: 'unknown' } })] })
    expect(hostname.isEnabled).toBe(false)
  })

  it('lists disabled strategies as unevaluated, and they do not count', async () => {
    const paused = featureOf(await play({ environment: 'development', projects: ['play'], context: { appName: 'web', userId: 'carl' } }), 'paused')
    expect(paused.strategies.data.map((s: any) => [s.name, s.disabled, s.result])).toEqual([
      ['default', true, { evaluationStatus: 'unevaluated', enabled: false }],
      ['userWithId', false, false],
    ])
    expect(paused.strategies.result).toBe(false)
    expect(paused.isEnabled).toBe(false)
  })

  it('shows an unsatisfied dependency', async () => {
    const child = featureOf(await play({ environment: 'development', projects: ['play'], context: { appName: 'web', userId: 'carl' } }), 'child')
    expect(child).toMatchObject({ isEnabled: false, hasUnsatisfiedDependency: true, strategies: { result: true } })
  })

  it('evaluates in the requested environment: the flags are off in production', async () => {
    const res = await play({ environment: 'production', projects: ['play'], context: { appName: 'web', userId: 'ann' } })
    expect(featureOf(res, 'beta')).toMatchObject({ isEnabledInCurrentEnvironment: false, isEnabled: false, strategies: { result: true, data: [] } })
  })

  it('refuses a missing or empty appName, and an unknown environment or project, with 400', async () => {
    for (const context of [{}, { appName: '' }, { appName: 5 }, { appName: 'web', userId: 7 }, { appName: 'web', properties: { a: 1 } }, { appName: 'web', currentTime: 'yesterday' }]) {
      const res = await play({ environment: 'development', context })
      expect(res.status, JSON.stringify(context)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    expect((await play({ environment: 'development' })).status).toBe(400)
    const env = await play({ environment: 'nowhere', context: { appName: 'web' } })
    expect(env.status).toBe(400)
    expect(env.body.message).toContain('nowhere')
    expect((await play({ environment: 'development', projects: ['missing'], context: { appName: 'web' } })).status).toBe(400)
  })
})

describe('POST /api/admin/playground/advanced', () => {
  it('evaluates every combination of comma-separated values, properties included, in every environment', async () => {
    const res = await advanced({ environments: ['development', 'production'], projects: ['play'], context: { appName: 'web', userId: 'ann, carl', properties: { region: 'eu,us' } } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.input).toEqual({ environments: ['development', 'production'], projects: ['play'], context: { appName: 'web', userId: 'ann, carl', properties: { region: 'eu,us' } } })
    expect(res.body.warnings).toBeUndefined()
    const segmented = featureOf(res, 'segmented')
    expect(segmented.projectId).toBe('play')
    expect(Object.keys(segmented.environments)).toEqual(['development', 'production'])
    const dev = segmented.environments.development
    expect(dev.map((e: any) => e.context)).toEqual([
      { appName: 'web', userId: 'ann', region: 'eu' },
      { appName: 'web', userId: 'ann', region: 'us' },
      { appName: 'web', userId: 'carl', region: 'eu' },
      { appName: 'web', userId: 'carl', region: 'us' },
    ])
    expect(dev.map((e: any) => e.isEnabled)).toEqual([true, false, true, false])
    expect(dev[0]).toMatchObject({ name: 'segmented', environment: 'development', projectId: 'play', isEnabledInCurrentEnvironment: true, variants: [] })
    expect(dev[0]).not.toHaveProperty('hasUnsatisfiedDependency')
    expect(featureOf(res, 'beta').environments.development.map((e: any) => e.isEnabled)).toEqual([true, true, false, false])
    expect(featureOf(res, 'beta').environments.production.map((e: any) => e.isEnabled)).toEqual([false, false, false, false])
  })

  it('warns about top-level context fields of the wrong type and leaves them out; custom string fields act as properties', async () => {
    const res = await advanced({ environments: ['development'], projects: ['play'], context: { appName: 'web', region: 'eu', nested: { a: 1 }, count: 3, flag: true } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.warnings).toEqual({ invalidContextProperties: ['nested', 'count', 'flag'] })
    const entry = featureOf(res, 'segmented').environments.development[0]
    expect(entry.context).toEqual({ appName: 'web', region: 'eu' })
    expect(entry.isEnabled).toBe(true)
  })

  it('uses the context environment when given, else the environment evaluated', async () => {
    // In a project of its own, so that the flags of play stay as the other tests expect.
    const project = await createProject(t, { environments: ['development'] })
    const envcheck = (await createFlag(t, { name: fresh('envcheck') }, project)).name
    await addStrategy(t, envcheck, 'development', { name: 'default', constraints: [{ contextName: 'environment', operator: 'IN', values: ['development'] }] }, project)
    await enableFlag(t, envcheck, 'development', project)
    const res = await advanced({ environments: ['development'], projects: [project], context: { appName: 'web', environment: 'development,staging' } })
    expect(featureOf(res, envcheck).environments.development.map((e: any) => e.isEnabled)).toEqual([true, false])
    const plain = await advanced({ environments: ['development'], projects: [project], context: { appName: 'web' } })
    expect(featureOf(plain, envcheck).environments.development[0].isEnabled).toBe(true)
    expect(featureOf(plain, envcheck).environments.development[0].context).toEqual({ appName: 'web' })
  })

  it('refuses more than 15,000 evaluations (environments × flags × combinations) with 400, before evaluating', async () => {
    const flags: number = (await advanced({ environments: ['development'], projects: ['play'], context: { appName: 'web' } })).body.features.length
    const perFlag = Math.floor(15_000 / flags)
    const users = (n: number) => Array.from({ length: n }, (_, i) => `u${i}`).join(',')
    const atLimit = await advanced({ environments: ['development'], projects: ['play'], context: { appName: 'web', userId: users(perFlag) } })
    expect(atLimit.status, atLimit.text.slice(0, 200)).toBe(200)
    const over = await advanced({ environments: ['development', 'production'], projects: ['play'], context: { appName: 'web', userId: users(perFlag) } })
    expect(over.status).toBe(400)
    expect(over.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining(`${2 * flags * perFlag} combinations exceeding 15000 limit`) })
  })

  it('refuses an empty environment list, a bad environment name and a missing appName with 400', async () => {
    for (const body of [
      { environments: [], context: { appName: 'web' } },
      { environments: ['dev elopment'], context: { appName: 'web' } },
      { environments: ['development'], context: { userId: 'x' } },
      { environments: ['development'], projects: 'all', context: { appName: 'web' } },
    ]) {
      const res = await advanced(body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
  })

  it('writes nothing and needs a token', async () => {
    const before = await eventCount()
    await advanced({ environments: ['development'], context: { appName: 'web' } })
    await play({ environment: 'development', context: { appName: 'web' } })
    expect(await eventCount()).toBe(before)
    expect((await t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], context: { appName: 'web' } }, token: null })).status).toBe(401)
  })
})
