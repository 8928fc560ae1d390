import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let viewer: TestUser
beforeAll(async () => {
  t = await createTestApp()
  viewer = await createSignedInUser(t, 'vera', 'Viewer')
  await t.call('POST', '/api/admin/projects', { body: { id: 'other', name: 'Other' } })
  const flags = [['parent', 'default'], ['child', 'default'], ['sibling', 'default'], ['second-parent', 'default'], ['loner', 'default'], ['archived-flag', 'default'], ['foreign', 'other']]
  for (const [name, project] of flags) expect((await t.call('POST', `/api/admin/projects/${project}/features`, { body: { name, tags: [{ value: 'deps' }] } })).status).toBe(201)
  expect((await t.call('DELETE', '/api/admin/projects/default/features/archived-flag')).status).toBe(202)
})
afterAll(() => t.close())

const P = '/api/admin/projects/default'
const depsPath = (child: string, project = 'default') => `/api/admin/projects/${project}/features/${child}/dependencies`
const addDependency = (child: string, body: unknown, project = 'default') => t.call('POST', depsPath(child, project), { body })
const flag = async (name: string) => (await t.call('GET', `${P}/features/${name}`)).body
const eventsOf = (name: string) => t.query<{ type: string; project: string; feature_name: string; data: any; pre_data: any; tags: any }>('select * from events where feature_name = $1 order by id', [name])
const snapshot = () =>
  t.query(`select
    (select json_agg(d order by d.child, d.parent) from feature_dependencies d) as dependencies,
    (select count(*) from events) as events`)

describe('adding a dependency', () => {
  it('makes the child depend on the parent (enabled by default), shown on both flags, with feature-dependency-added', async () => {
    const res = await addDependency('child', { feature: 'parent' })
    expect(res.status, res.text).toBe(200)
    expect((await flag('child')).dependencies).toEqual([{ feature: 'parent', enabled: true, variants: [] }])
    expect((await flag('parent')).children).toEqual(['child'])
    const event = (await eventsOf('child')).at(-1)!
    expect(event).toMatchObject({
      type: 'feature-dependency-added',
      project: 'default',
      feature_name: 'child',
      data: { feature: 'parent', enabled: true, variants: [] },
      pre_data: null,
      tags: [{ type: 'simple', value: 'deps' }],
    })
  })

  it('re-adding the same parent replaces enabled and variants, with the old dependency as preData', async () => {
    expect((await addDependency('child', { feature: 'parent', enabled: true, variants: ['blue', 'green', 'blue'] })).status).toBe(200)
    expect((await flag('child')).dependencies).toEqual([{ feature: 'parent', enabled: true, variants: ['blue', 'green'] }])
    expect((await eventsOf('child')).at(-1)).toMatchObject({
      type: 'feature-dependency-added',
      data: { feature: 'parent', enabled: true, variants: ['blue', 'green'] },
      pre_data: { feature: 'parent', enabled: true, variants: [] },
    })
    expect((await addDependency('child', { feature: 'parent', enabled: false })).status).toBe(200)
    expect((await flag('child')).dependencies).toEqual([{ feature: 'parent', enabled: false, variants: [] }])
  })

  it('accepts an empty variants list with enabled false', async () => {
    expect((await addDependency('child', { feature: 'parent', enabled: false, variants: [] })).status).toBe(200)
  })

  it('replaces the parent when another one is added: a flag has one parent, as in Unleash', async () => {
    expect((await addDependency('child', { feature: 'second-parent' })).status).toBe(200)
    expect((await flag('child')).dependencies).toEqual([{ feature: 'second-parent', enabled: true, variants: [] }])
    expect((await flag('parent')).children).toEqual([])
    expect((await flag('second-parent')).children).toEqual(['child'])
    expect((await eventsOf('child')).at(-1)).toMatchObject({
      type: 'feature-dependency-added',
      data: { feature: 'second-parent', enabled: true, variants: [] },
      pre_data: { feature: 'parent', enabled: false, variants: [] },
    })
    // Back to the first parent for the tests below; a sibling shares it.
    expect((await addDependency('child', { feature: 'parent' })).status).toBe(200)
    expect((await addDependency('sibling', { feature: 'parent' })).status).toBe(200)
    expect((await flag('parent')).children).toEqual(['child', 'sibling'])
  })

  it.each([
    ['no parent', 'loner', {}, /feature/],
    ['variants with enabled false', 'loner', { feature: 'parent', enabled: false, variants: ['blue'] }, /variants/],
    ['variants that are not strings', 'loner', { feature: 'parent', variants: [1] }, /variants/],
    ['an unknown parent', 'loner', { feature: 'nope' }, /nope does not exist/],
    ['an archived parent', 'loner', { feature: 'archived-flag' }, /archived-flag does not exist or is archived/],
    ['a parent of another project', 'loner', { feature: 'foreign' }, /project other/],
    ['the flag itself', 'loner', { feature: 'loner' }, /itself/],
    ['a parent that has a parent', 'loner', { feature: 'child' }, /child itself depends on parent/],
    ['a child that has children', 'parent', { feature: 'loner' }, /child depends on parent|sibling depends on parent/],
  ])('answers 400 ValidationError for %s and writes nothing', async (_, child, body, message) => {
    const before = await snapshot()
    const res = await addDependency(child, body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.body.message).toMatch(message)
    expect(await snapshot()).toEqual(before)
  })

  it('answers 404 for a child that is unknown, archived, of another project, or an unknown project, and writes nothing', async () => {
    const before = await snapshot()
    for (const [child, project] of [['nope', 'default'], ['archived-flag', 'default'], ['foreign', 'default'], ['loner', 'other'], ['loner', 'nope']] as const) {
      const res = await addDependency(child, { feature: 'parent' }, project)
      expect(res.status, `${project}/${child}`).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    expect(await snapshot()).toEqual(before)
  })

  it('answers 415 for a body that is not JSON', async () => {
    expect((await t.call('POST', depsPath('loner'), { body: 'feature=parent', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
  })

  it('never lets two crossing requests build a chain', async () => {
    // chain-a -> chain-b and chain-b -> chain-c would chain through chain-b if both passed.
    for (const name of ['chain-a', 'chain-b', 'chain-c']) await t.call('POST', `${P}/features`, { body: { name } })
    const results = await Promise.all([addDependency('chain-a', { feature: 'chain-b' }), addDependency('chain-b', { feature: 'chain-c' })])
    expect(results.map((r) => r.status).sort()).toEqual([200, 400])
    const rows = await t.query<{ child: string; parent: string }>("select child, parent from feature_dependencies where child like 'chain-%'")
    expect(rows).toHaveLength(1)
  })
})

describe('removing dependencies', () => {
  it('removes one dependency with 200 and feature-dependency-removed', async () => {
    const res = await t.call('DELETE', `${depsPath('sibling')}/parent`)
    expect(res.status, res.text).toBe(200)
    expect((await flag('sibling')).dependencies).toEqual([])
    expect((await flag('parent')).children).toEqual(['child'])
    expect((await eventsOf('sibling')).at(-1)).toMatchObject({
      type: 'feature-dependency-removed',
      project: 'default',
      data: null,
      pre_data: { feature: 'parent', enabled: true, variants: [] },
    })
  })

  it('answers 404 for a dependency that does not exist, or a child that is not a live flag of the project, and writes nothing', async () => {
    const before = await snapshot()
    for (const path of [`${depsPath('sibling')}/parent`, `${depsPath('child')}/loner`, `${depsPath('nope')}/parent`, `${depsPath('child', 'other')}/parent`, `${depsPath('archived-flag')}/parent`]) {
      const res = await t.call('DELETE', path)
      expect(res.status, path).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    expect(await snapshot()).toEqual(before)
  })

  it('removes every dependency with 200 and one feature-dependencies-removed', async () => {
    const res = await t.call('DELETE', depsPath('child'))
    expect(res.status, res.text).toBe(200)
    expect((await flag('child')).dependencies).toEqual([])
    expect((await flag('parent')).children).toEqual([])
    expect((await eventsOf('child')).at(-1)).toMatchObject({
      type: 'feature-dependencies-removed',
      data: null,
      pre_data: [{ feature: 'parent', enabled: true, variants: [] }],
    })
  })

  it('answers 200 without an event when there was nothing to remove, and 404 for an unknown child', async () => {
    const before = await snapshot()
    expect((await t.call('DELETE', depsPath('child'))).status).toBe(200)
    expect((await t.call('DELETE', depsPath('nope'))).status).toBe(404)
    expect(await snapshot()).toEqual(before)
  })

  it('lets a former parent become a child once its children are gone', async () => {
    expect((await addDependency('parent', { feature: 'loner' })).status).toBe(200)
  })
})

describe('dependency permissions', () => {
  it('refuses a Viewer every write with 403 NoAccessError for UPDATE_FEATURE, and changes nothing', async () => {
    const before = await snapshot()
    for (const [method, path, body] of [
      ['POST', depsPath('child'), { feature: 'loner' }],
      ['DELETE', `${depsPath('parent')}/loner`, undefined],
      ['DELETE', depsPath('parent'), undefined],
    ] as const) {
      const res = await viewer.call(method, path, { body })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining('permission=UPDATE_FEATURE in project=default') })
    }
    expect(await snapshot()).toEqual(before)
  })

  it('answers 401 without a token', async () => {
    expect((await t.call('POST', depsPath('child'), { token: null, body: { feature: 'loner' } })).status).toBe(401)
  })
})
