import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, createSegment, enableFlag, ok } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const strategiesOf = (name: string, environment = 'production', project = 'default') => `/api/admin/projects/${project}/features/${name}/environments/${environment}/strategies`
const strategyEvents = (name: string) => t.query<{ type: string; environment: string; data: any; pre_data: any }>("select * from events where feature_name = $1 and type like '%strateg%' order by id", [name])
const state = () => t.query("select (select json_agg(s order by s.id) from feature_strategies s) as s, (select json_agg(x) from feature_strategy_segments x) as x, (select count(*) from events) as e")
/** The configuration of the first strategy of each test: every kind of constraint, a segment, variants and parameters. */
const betaInNorway = (search: string, segmentId: number) => ({
  name: 'flexibleRollout',
  title: 'Beta in Norway',
  parameters: { rollout: '25', stickiness: 'userId', groupId: search },
  constraints: [
    { contextName: 'country', operator: 'IN', values: ['NO', 'SE'] },
    { contextName: 'appVersion', operator: 'SEMVER_GT', value: '2.1.0', inverted: true },
    { contextName: 'remoteAddress', operator: 'IN_CIDR', values: ['10.0.0.0/8', '2001:db8::/32', '192.168.1.1'] },
    { contextName: 'email', operator: 'REGEX', value: '^.+@example\\.com$', caseInsensitive: true },
    { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2026-01-01T00:00:00.000Z' },
    { contextName: 'age', operator: 'NUM_GTE', value: '18' },
  ],
  segments: [segmentId],
  variants: [
    { name: 'blue', weight: 100, weightType: 'fix', stickiness: 'default' },
    { name: 'red', weight: 0, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"a":1}' } },
  ],
})

describe('strategies', () => {
  let search: string
  let base: string
  let segmentId: number
  beforeEach(async () => {
    search = (await createFlag(t)).name
    base = strategiesOf(search)
    segmentId = (await createSegment(t)).id
  })
  const add = (body: unknown) => t.call('POST', base, { body })
  /** The strategy of the first test, then a 100% flexibleRollout after it. */
  const addTwo = async () => [(await addStrategy(t, search, 'production', betaInNorway(search, segmentId))).id as string, (await addStrategy(t, search, 'production', { name: 'flexibleRollout' })).id as string]

  it('adds a strategy with constraints, segments, variants and parameters, recording feature-strategy-add', async () => {
    const res = await add(betaInNorway(search, segmentId))
    expect(res.status, res.text).toBe(200)
    const id = res.body.id
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(res.body).toMatchObject({ name: 'flexibleRollout', title: 'Beta in Norway', disabled: false, featureName: search, sortOrder: 0, segments: [segmentId] })
    expect(res.body.constraints[0]).toEqual({ contextName: 'country', operator: 'IN', values: ['NO', 'SE'], caseInsensitive: false, inverted: false })
    expect(res.body.constraints[1]).toEqual({ contextName: 'appVersion', operator: 'SEMVER_GT', value: '2.1.0', values: [], caseInsensitive: false, inverted: true })
    expect(res.body.variants.map((v: any) => [v.name, v.weight])).toEqual([['blue', 100], ['red', 900]])
    const events = await strategyEvents(search)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ type: 'feature-strategy-add', environment: 'production', pre_data: null })
    expect(events[0]!.data.id).toBe(id)
  })

  it('fills flexibleRollout defaults and puts new strategies last', async () => {
    await addStrategy(t, search, 'production', betaInNorway(search, segmentId))
    const res = await add({ name: 'flexibleRollout' })
    expect(res.body.parameters).toEqual({ rollout: '100', stickiness: 'default', groupId: search })
    expect(res.body.sortOrder).toBe(1)
  })

  it('lists and reads strategies of the environment only', async () => {
    const [id] = await addTwo()
    const list = await t.call('GET', base)
    expect(list.status).toBe(200)
    expect(list.body.map((s: any) => s.sortOrder)).toEqual([0, 1])
    expect((await t.call('GET', strategiesOf(search, 'development'))).body).toEqual([])
    expect((await t.call('GET', `${base}/${id}`)).body.id).toBe(id)
    expect((await t.call('GET', `${base}/00000000-0000-0000-0000-000000000000`)).status).toBe(404)
    expect((await t.call('GET', `${base}/not-a-uuid`)).status).toBe(404)
  })

  it('replaces a strategy with feature-strategy-update carrying the old configuration', async () => {
    const [id] = await addTwo()
    const res = await t.call('PUT', `${base}/${id}`, { body: { name: 'default', constraints: [], disabled: true } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ id, name: 'default', disabled: true, segments: [], sortOrder: 0, title: null })
    const last = (await strategyEvents(search)).at(-1)!
    expect(last.type).toBe('feature-strategy-update')
    expect(last.pre_data).toMatchObject({ name: 'flexibleRollout', title: 'Beta in Norway', segments: [segmentId] })
    expect(last.data).toMatchObject({ name: 'default', disabled: true })
    expect(await t.query('select * from feature_strategy_segments where strategy_id = $1', [id])).toEqual([])
  })

  it('reorders strategies with strategy-order-changed', async () => {
    await addTwo()
    const [first, second] = (await t.call('GET', base)).body
    const res = await t.call('POST', `${base}/set-sort-order`, { body: [{ id: first.id, sortOrder: 5 }, { id: second.id, sortOrder: 1 }] })
    expect(res.status, res.text).toBe(200)
    expect(res.body.map((s: any) => s.id)).toEqual([second.id, first.id])
    const last = (await strategyEvents(search)).at(-1)!
    expect(last.type).toBe('strategy-order-changed')
    expect(last.pre_data).toEqual({ strategyIds: [first.id, second.id] })
    expect(last.data).toEqual({ strategyIds: [second.id, first.id] })
    expect((await t.call('POST', `${base}/set-sort-order`, { body: [{ id: '00000000-0000-0000-0000-000000000000', sortOrder: 1 }] })).status).toBe(404)
  })

  it('deletes a strategy with feature-strategy-remove', async () => {
    const [id] = await addTwo()
    const res = await t.call('DELETE', `${base}/${id}`)
    expect(res.status).toBe(200)
    const last = (await strategyEvents(search)).at(-1)!
    expect(last).toMatchObject({ type: 'feature-strategy-remove', data: null })
    expect(last.pre_data.id).toBe(id)
    expect((await t.call('DELETE', `${base}/${id}`)).status).toBe(404)
  })

  it.each([
    ['an unknown operator', { contextName: 'a', operator: 'LIKE', values: ['x'] }],
    ['NUM_EQ without value', { contextName: 'a', operator: 'NUM_EQ', values: ['1'] }],
    ['NUM_GT with a word', { contextName: 'a', operator: 'NUM_GT', value: 'ten' }],
    ['DATE_AFTER with a non-date', { contextName: 'currentTime', operator: 'DATE_AFTER', value: 'yesterday' }],
    ['SEMVER_EQ with a non-version', { contextName: 'v', operator: 'SEMVER_EQ', value: '1.2' }],
    ['REGEX over the program limit', { contextName: 'a', operator: 'REGEX', value: '(a|b|c|d|e|f|g|h){1000}' }],
    ['no contextName', { operator: 'IN', values: ['x'] }],
  ])('refuses a constraint with %s (400, nothing written)', async (_, constraint) => {
    const before = await state()
    const res = await add({ name: 'default', constraints: [constraint] })
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(await state()).toEqual(before)
  })

  it.each([
    ['an unknown segment', { name: 'default', segments: [999999] }],
    ['a rollout above 100', { name: 'flexibleRollout', parameters: { rollout: '101' } }],
    ['a rollout that is not a number', { name: 'flexibleRollout', parameters: { rollout: 'half' } }],
    ['a percentage above 100', { name: 'gradualRolloutUserId', parameters: { percentage: '150' } }],
    ['a non-string parameter', { name: 'default', parameters: { rollout: 50 } }],
    ['duplicate variant names', { name: 'default', variants: [{ name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' }, { name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' }] }],
    ['fix weights over 1000', { name: 'default', variants: [{ name: 'a', weight: 1001, weightType: 'fix', stickiness: 'default' }] }],
    ['a variant without stickiness', { name: 'default', variants: [{ name: 'a', weight: 1000, weightType: 'variable' }] }],
    ['a json payload that is not JSON', { name: 'default', variants: [{ name: 'a', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{' } }] }],
    ['no name', { parameters: {} }],
  ])('refuses %s (400, nothing written)', async (_, body) => {
    const before = await state()
    const res = await add(body)
    expect(res.status, res.text).toBe(400)
    expect(await state()).toEqual(before)
  })

  it.each([
    ['IN without values', { contextName: 'a', operator: 'IN' }],
    ['IN with an empty list', { contextName: 'a', operator: 'IN', values: [] }],
    ['SEMVER_GTE', { contextName: 'version', operator: 'SEMVER_GTE', value: '1.2.3' }],
    ['SEMVER_LTE', { contextName: 'version', operator: 'SEMVER_LTE', value: 'v2.0.0' }],
  ])('accepts a constraint with %s, as Unleash 8.2 does', async (_, constraint) => {
    const res = await add({ name: 'default', constraints: [constraint] })
    expect(res.status, res.text).toBe(200)
    expect(res.body.constraints[0].operator).toBe(constraint.operator)
  })

  it('accepts a title of any length, as Unleash stores it (a text column), and gives it back', async () => {
    const title = 'A long title '.repeat(40)
    const res = await add({ name: 'default', title })
    expect([res.status, res.body.title]).toEqual([200, title])
  })

  it('answers 404 for an unknown flag, environment or project', async () => {
    expect((await t.call('POST', strategiesOf('nope'), { body: { name: 'default' } })).status).toBe(404)
    expect((await t.call('POST', strategiesOf(search, 'moon'), { body: { name: 'default' } })).status).toBe(404)
    expect((await t.call('POST', strategiesOf(search, 'production', 'nope'), { body: { name: 'default' } })).status).toBe(404)
  })

  it('uses the project environment default strategy when enabling with no strategy', async () => {
    const project = await createProject(t)
    const { name } = await createFlag(t, {}, project)
    await ok(t, 'PUT', `/api/admin/projects/${project}/environments/development/default-strategy`, {
      name: 'flexibleRollout',
      constraints: [{ contextName: 'country', operator: 'IN', values: ['NO'] }],
      parameters: { rollout: '50', stickiness: 'default' },
    })
    const res = await t.call('POST', `/api/admin/projects/${project}/features/${name}/environments/development/on`)
    expect(res.status, res.text).toBe(200)
    const dev = res.body.environments.find((e: any) => e.name === 'development')
    expect(dev.strategies).toEqual([
      expect.objectContaining({ name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: name }, constraints: [expect.objectContaining({ contextName: 'country', values: ['NO'] })] }),
    ])
  })

  it('does not add a strategy when enabling an environment that has an enabled one', async () => {
    await addStrategy(t, search, 'production', { name: 'flexibleRollout' })
    const before = (await t.call('GET', base)).body.length
    await enableFlag(t, search, 'production')
    expect((await t.call('GET', base)).body.length).toBe(before)
  })

  it('keeps an override on a strategy variant, as Unleash 8.2 does, and evaluates it before the weights', async () => {
    const variants = [
      { name: 'most', weight: 1000, weightType: 'variable', stickiness: 'userId' },
      { name: 'picked', weight: 0, weightType: 'fix', stickiness: 'userId', overrides: [{ contextName: 'userId', values: ['ann'] }] },
    ]
    const added = await t.call('POST', base, { body: { name: 'default', parameters: {}, variants } })
    expect(added.status, added.text).toBe(200)
    expect(added.body.variants[1].overrides).toEqual([{ contextName: 'userId', values: ['ann'] }])
    await enableFlag(t, search, 'production')
    const play = async (userId: string) => {
      const res = await t.call('POST', '/api/admin/playground', { body: { environment: 'production', projects: ['default'], context: { appName: 'web', userId } } })
      expect(res.status, res.text).toBe(200)
      return res.body.features.find((f: { name: string }) => f.name === search).variant.name
    }
    expect(await play('ann')).toBe('picked')
    expect(await play('bob')).toBe('most')
  })
})
