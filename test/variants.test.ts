import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createEnvironment, createFlag, createProject, ok } from './helpers/factories.js'
import { racing } from './helpers/racing.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

let banner: string
let flag: string
beforeEach(async () => {
  banner = (await createFlag(t)).name
  flag = `/api/admin/projects/default/features/${banner}`
})
const patchAll = (body: unknown) => t.call('PATCH', `${flag}/variants`, { body })
const envVariants = () => t.query<{ environment: string; variants: any[] }>('select environment, variants from feature_environments where feature_name = $1 order by environment', [banner])
const state = () => t.query("select (select json_agg(fe order by fe.environment) from feature_environments fe) as fe, (select count(*) from events) as e")
const fourVariants = [
  { op: 'add', path: '/-', value: { name: 'red', weightType: 'variable', payload: { type: 'string', value: 'Red' } } },
  { op: 'add', path: '/-', value: { name: 'green' } },
  { op: 'add', path: '/-', value: { name: 'blue', weight: 100, weightType: 'fix', stickiness: 'userId', overrides: [{ contextName: 'userId', values: ['1', '2'] }] } },
  { op: 'add', path: '/-', value: { name: 'amber' } },
]
/** Variants in every environment: amber, green and red sharing the variable weight, blue fixed at 100. */
const withFourVariants = () => ok(t, 'PATCH', `${flag}/variants`, fourVariants)

describe('patching variants in every environment (operation 4)', () => {
  it('adds variants, shares the variable weight and stores them in every environment', async () => {
    const res = await patchAll(fourVariants)
    expect(res.status, res.text).toBe(200)
    expect(res.body.version).toBe(1)
    expect(res.body.variants).toEqual([
      { name: 'amber', weight: 300, weightType: 'variable', stickiness: 'default' },
      { name: 'blue', weight: 100, weightType: 'fix', stickiness: 'userId', overrides: [{ contextName: 'userId', values: ['1', '2'] }] },
      { name: 'green', weight: 300, weightType: 'variable', stickiness: 'default' },
      { name: 'red', weight: 300, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'Red' } },
    ])
    for (const row of await envVariants()) expect(row.variants).toEqual(res.body.variants)
    const events = await t.query<{ type: string; environment: string; data: any; pre_data: any }>("select * from events where type = 'feature-variants-updated' and feature_name = $1 order by id", [banner])
    expect(events.map((e) => e.environment).sort()).toEqual(['development', 'production'])
    expect(events[0]!.pre_data).toEqual({ variants: [] })
    expect(events[0]!.data.variants).toHaveLength(4)
    const flagRead = await t.call('GET', flag)
    expect(flagRead.body.variants).toHaveLength(4)
    expect(flagRead.body.environments[0].variantCount).toBe(4)
  })

  it('gives the remainder of an uneven split to the first variable variants', async () => {
    await withFourVariants()
    const res = await patchAll([
      { op: 'remove', path: '/1' },
      { op: 'replace', path: '/0/weightType', value: 'variable' },
    ])
    expect(res.status, res.text).toBe(200)
    expect(res.body.variants.map((v: any) => v.weight)).toEqual([334, 333, 333])
  })

  it.each([
    ['a duplicate name', [{ op: 'add', path: '/-', value: { name: 'red' } }]],
    ['a name that is not URL-friendly', [{ op: 'add', path: '/-', value: { name: 'dark red' } }]],
    ['a weight over 1000', [{ op: 'add', path: '/-', value: { name: 'x', weight: 1001, weightType: 'fix' } }]],
    ['a fractional weight', [{ op: 'add', path: '/-', value: { name: 'x', weight: 10.5, weightType: 'fix' } }]],
    ['fix weights over 1000', [{ op: 'add', path: '/-', value: { name: 'x', weight: 800, weightType: 'fix' } }, { op: 'add', path: '/-', value: { name: 'y', weight: 300, weightType: 'fix' } }]],
    ['only fix variants', [{ op: 'replace', path: '', value: [{ name: 'x', weight: 1000, weightType: 'fix' }] }]],
    ['an unknown weightType', [{ op: 'add', path: '/-', value: { name: 'x', weightType: 'heavy' } }]],
    ['an unknown payload type', [{ op: 'add', path: '/-', value: { name: 'x', payload: { type: 'xml', value: '<a/>' } } }]],
    ['a json payload that does not parse', [{ op: 'add', path: '/-', value: { name: 'x', payload: { type: 'json', value: '{nope' } } }]],
    ['a number payload that is not numeric', [{ op: 'add', path: '/-', value: { name: 'x', payload: { type: 'number', value: 'ten' } } }]],
    ['an override without values', [{ op: 'add', path: '/-', value: { name: 'x', overrides: [{ contextName: 'userId' }] } }]],
    ['a path that does not exist', [{ op: 'replace', path: '/9/name', value: 'x' }]],
    ['a result that is not a list', [{ op: 'replace', path: '', value: { name: 'x' } }]],
    ['a body that is not a patch', { name: 'x' }],
  ])('refuses %s with 400 and changes no environment', async (_, body) => {
    await withFourVariants()
    const before = await state()
    const res = await patchAll(body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(await state()).toEqual(before)
  })

  it('answers 404 for an unknown flag or a flag of another project, and 415 for non-JSON', async () => {
    expect((await t.call('PATCH', '/api/admin/projects/default/features/nope/variants', { body: [] })).status).toBe(404)
    const other = await createProject(t)
    expect((await t.call('PATCH', `/api/admin/projects/${other}/features/${banner}/variants`, { body: [] })).status).toBe(404)
    expect((await t.call('PATCH', `${flag}/variants`, { body: '[]', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
  })

  it('removes every variant', async () => {
    await withFourVariants()
    const res = await patchAll([{ op: 'replace', path: '', value: [] }])
    expect(res.status, res.text).toBe(200)
    expect(res.body.variants).toEqual([])
  })
})

describe('variants of one environment', () => {
  const env = () => `${flag}/environments/production/variants`
  const onAndOff = [{ name: 'on' }, { name: 'off', weight: 200, weightType: 'fix' }]

  it('replaces them with PUT, leaving other environments alone', async () => {
    const res = await t.call('PUT', env(), { body: onAndOff })
    expect(res.status, res.text).toBe(200)
    expect(res.body.variants.map((v: any) => [v.name, v.weight])).toEqual([['off', 200], ['on', 800]])
    const rows = await envVariants()
    expect(rows.find((r) => r.environment === 'development')!.variants).toEqual([])
    const event = (await t.query<{ type: string; environment: string }>("select * from events where type = 'feature-environment-variants-updated' and feature_name = $1", [banner]))[0]
    expect(event).toMatchObject({ environment: 'production' })
  })

  it('reads them', async () => {
    await ok(t, 'PUT', env(), onAndOff)
    const res = await t.call('GET', env())
    expect(res.status).toBe(200)
    expect(res.body.variants).toHaveLength(2)
  })

  it('patches them', async () => {
    await ok(t, 'PUT', env(), onAndOff)
    const res = await t.call('PATCH', env(), { body: [{ op: 'replace', path: '/0/weight', value: 500 }] })
    expect(res.status, res.text).toBe(200)
    expect(res.body.variants.map((v: any) => v.weight)).toEqual([500, 500])
  })

  it('answers 404 for an environment the flag does not have, and 400 for bad variants', async () => {
    expect((await t.call('GET', `${flag}/environments/moon/variants`)).status).toBe(404)
    expect((await t.call('PUT', env(), { body: [{ name: 'a' }, { name: 'a' }] })).status).toBe(400)
  })
})

describe('variants written optimistically', () => {
  // A variant write reads the flag without a lock and writes only if it is still at the version read;
  // otherwise it takes the flag's lock and changes what is there.
  const actor = { createdBy: 'tester', createdByUserId: -1337 }
  const eventsOf = (type: string) => t.query<{ environment: string; data: any; pre_data: any }>('select environment, data, pre_data from events where feature_name = $1 and type = $2 order by id', [banner, type])
  const names = (variants: { name: string }[]) => variants.map((v) => v.name)

  it('patches the variants that are there when another change lands between its read and its write (operation 4)', async () => {
    const { patchFeatureVariants } = await import('../src/variants/store.js')
    await t.call('PUT', `${flag}/environments/development/variants`, { body: [{ name: 'read' }] })
    await t.call('PUT', `${flag}/environments/production/variants`, { body: [{ name: 'read' }] })
    const race = racing(t.db, () => patchAll([{ op: 'replace', path: '/0/name', value: 'raced' }]))
    const variants = await patchFeatureVariants(race.db, { actor, now: new Date() }, 'default', banner, [{ op: 'add', path: '/-', value: { name: 'mine' } }])
    expect(race.state.raced).toBe(true)
    expect(names(variants)).toEqual(['mine', 'raced'])
    expect((await envVariants()).map((e) => names(e.variants))).toEqual([['mine', 'raced'], ['mine', 'raced']])
    const last = (await eventsOf('feature-variants-updated')).slice(-2)
    expect(last.map((e) => [e.environment, names(e.pre_data.variants), names(e.data.variants)])).toEqual([
      ['development', ['raced'], ['mine', 'raced']],
      ['production', ['raced'], ['mine', 'raced']],
    ])
  })

  it('patches the variants of one environment that are there when another change lands in between', async () => {
    const { setEnvironmentVariants } = await import('../src/variants/store.js')
    for (const environment of ['development', 'production']) await ok(t, 'PUT', `${flag}/environments/${environment}/variants`, [{ name: 'mine' }, { name: 'raced' }])
    const race = racing(t.db, () => t.call('PUT', `${flag}/environments/development/variants`, { body: [{ name: 'put' }] }))
    const variants = await setEnvironmentVariants(race.db, { actor, now: new Date() }, { projectId: 'default', featureName: banner, environment: 'development' }, { patch: [{ op: 'add', path: '/-', value: { name: 'patched' } }] })
    expect(race.state.raced).toBe(true)
    expect(names(variants)).toEqual(['patched', 'put'])
    expect((await eventsOf('feature-environment-variants-updated')).slice(-2).map((e) => [names(e.pre_data.variants), names(e.data.variants)])).toEqual([
      [['mine', 'raced'], ['put']],
      [['put'], ['patched', 'put']],
    ])
    // The other environment is left alone.
    expect((await envVariants()).map((e) => names(e.variants))).toEqual([['patched', 'put'], ['mine', 'raced']])
  })
})

describe('a new environment of the project', () => {
  it('is written by the next variants patch of a flag the app already knew', async () => {
    const project = await createProject(t)
    const { name } = await createFlag(t, {}, project)
    const patch = (body: unknown) => t.call('PATCH', `/api/admin/projects/${project}/features/${name}/variants`, { body })
    const events = () => t.query<{ environment: string }>("select environment from events where feature_name = $1 and type = 'feature-variants-updated' order by id", [name])
    expect((await patch([{ op: 'add', path: '/-', value: { name: 'before' } }])).status).toBe(200)
    const version = async () => (await t.query<{ version: number }>('select version from features where name = $1', [name]))[0]!.version
    const known = await version()
    const staging = (await createEnvironment(t, { type: 'test' })).name
    expect((await t.call('POST', `/api/admin/projects/${project}/environments`, { body: { environment: staging } })).status).toBe(200)
    // Adding the environment changed every flag of the project: their versions moved on.
    expect(await version()).toBeGreaterThan(known)
    const before = (await events()).length
    const res = await patch([{ op: 'add', path: '/-', value: { name: 'after' } }])
    expect(res.status, res.text).toBe(200)
    expect((await events()).slice(before).map((e) => e.environment).sort()).toEqual(['development', 'production', staging].sort())
    const variantsByEnvironment = await t.query<{ environment: string; variants: any[] }>('select environment, variants from feature_environments where feature_name = $1', [name])
    expect(variantsByEnvironment.map((e) => [e.environment, e.variants.map((v: any) => v.name)])).toContainEqual([staging, expect.arrayContaining(['after'])])
  })
})
