import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let viewer: TestUser
beforeAll(async () => {
  t = await createTestApp()
  viewer = await createSignedInUser(t, 'vera', 'Viewer')
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

type Family = Awaited<ReturnType<typeof family>>
/**
 * Fresh flags tagged `deps`: parent, child, sibling, second-parent and loner in default, an archived flag, and
 * foreign in another project; with `links`, child (and sibling) depend on parent.
 */
async function family(links: 'none' | 'child' | 'child and sibling' = 'none') {
  const other = await createProject(t)
  const make = async (prefix: string, project = 'default') => (await createFlag(t, { name: fresh(prefix), tags: [{ value: 'deps' }] }, project)).name as string
  const f = { other, parent: await make('parent'), child: await make('child'), sibling: await make('sibling'), secondParent: await make('second-parent'), loner: await make('loner'), archived: await make('archived-flag'), foreign: await make('foreign', other) }
  await ok(t, 'DELETE', `${P}/features/${f.archived}`)
  if (links !== 'none') await ok(t, 'POST', depsPath(f.child), { feature: f.parent })
  if (links === 'child and sibling') await ok(t, 'POST', depsPath(f.sibling), { feature: f.parent })
  return f
}

describe('adding a dependency', () => {
  it('makes the child depend on the parent (enabled by default), shown on both flags, with feature-dependency-added', async () => {
    const { parent, child } = await family()
    const res = await addDependency(child, { feature: parent })
    expect(res.status, res.text).toBe(200)
    expect((await flag(child)).dependencies).toEqual([{ feature: parent, enabled: true, variants: [] }])
    expect((await flag(parent)).children).toEqual([child])
    const event = (await eventsOf(child)).at(-1)!
    expect(event).toMatchObject({
      type: 'feature-dependency-added',
      project: 'default',
      feature_name: child,
      data: { feature: parent, enabled: true, variants: [] },
      pre_data: null,
      tags: [{ type: 'simple', value: 'deps' }],
    })
  })

  it('re-adding the same parent replaces enabled and variants, with the old dependency as preData', async () => {
    const { parent, child } = await family('child')
    expect((await addDependency(child, { feature: parent, enabled: true, variants: ['blue', 'green', 'blue'] })).status).toBe(200)
    expect((await flag(child)).dependencies).toEqual([{ feature: parent, enabled: true, variants: ['blue', 'green'] }])
    expect((await eventsOf(child)).at(-1)).toMatchObject({
      type: 'feature-dependency-added',
      data: { feature: parent, enabled: true, variants: ['blue', 'green'] },
      pre_data: { feature: parent, enabled: true, variants: [] },
    })
    expect((await addDependency(child, { feature: parent, enabled: false })).status).toBe(200)
    expect((await flag(child)).dependencies).toEqual([{ feature: parent, enabled: false, variants: [] }])
  })

  it('accepts an empty variants list with enabled false', async () => {
    const { parent, child } = await family('child')
    expect((await addDependency(child, { feature: parent, enabled: false, variants: [] })).status).toBe(200)
  })

  it('replaces the parent when another one is added: a flag has one parent, as in Unleash', async () => {
    const { parent, child, sibling, secondParent } = await family()
    await ok(t, 'POST', depsPath(child), { feature: parent, enabled: false })
    expect((await addDependency(child, { feature: secondParent })).status).toBe(200)
    expect((await flag(child)).dependencies).toEqual([{ feature: secondParent, enabled: true, variants: [] }])
    expect((await flag(parent)).children).toEqual([])
    expect((await flag(secondParent)).children).toEqual([child])
    expect((await eventsOf(child)).at(-1)).toMatchObject({
      type: 'feature-dependency-added',
      data: { feature: secondParent, enabled: true, variants: [] },
      pre_data: { feature: parent, enabled: false, variants: [] },
    })
    // Back to the first parent; a sibling shares it.
    expect((await addDependency(child, { feature: parent })).status).toBe(200)
    expect((await addDependency(sibling, { feature: parent })).status).toBe(200)
    expect((await flag(parent)).children).toEqual([child, sibling])
  })

  it.each([
    ['no parent', (f: Family) => [f.loner, {}, /feature/]],
    ['variants with enabled false', (f: Family) => [f.loner, { feature: f.parent, enabled: false, variants: ['blue'] }, /variants/]],
    ['variants that are not strings', (f: Family) => [f.loner, { feature: f.parent, variants: [1] }, /variants/]],
    ['an unknown parent', (f: Family) => [f.loner, { feature: 'nope' }, /nope does not exist/]],
    ['an archived parent', (f: Family) => [f.loner, { feature: f.archived }, new RegExp(`${f.archived} does not exist or is archived`)]],
    ['a parent of another project', (f: Family) => [f.loner, { feature: f.foreign }, new RegExp(`project ${f.other}`)]],
    ['the flag itself', (f: Family) => [f.loner, { feature: f.loner }, /itself/]],
    ['a parent that has a parent', (f: Family) => [f.loner, { feature: f.child }, new RegExp(`${f.child} itself depends on ${f.parent}`)]],
    ['a child that has children', (f: Family) => [f.parent, { feature: f.loner }, new RegExp(`${f.child} depends on ${f.parent}|${f.sibling} depends on ${f.parent}`)]],
  ] as [string, (f: Family) => [string, unknown, RegExp]][])('answers 400 ValidationError for %s and writes nothing', async (_, request) => {
    const [child, body, message] = request(await family('child and sibling'))
    const before = await snapshot()
    const res = await addDependency(child, body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.body.message).toMatch(message)
    expect(await snapshot()).toEqual(before)
  })

  it('answers 404 for a child that is unknown, archived, of another project, or an unknown project, and writes nothing', async () => {
    const f = await family('child and sibling')
    const before = await snapshot()
    for (const [child, project] of [['nope', 'default'], [f.archived, 'default'], [f.foreign, 'default'], [f.loner, f.other], [f.loner, 'nope']] as const) {
      const res = await addDependency(child, { feature: f.parent }, project)
      expect(res.status, `${project}/${child}`).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    expect(await snapshot()).toEqual(before)
  })

  it('answers 415 for a body that is not JSON', async () => {
    const { loner, parent } = await family()
    expect((await t.call('POST', depsPath(loner), { body: `feature=${parent}`, headers: { 'content-type': 'text/plain' } })).status).toBe(415)
  })

  it('never lets two crossing requests build a chain', async () => {
    // chain-a -> chain-b and chain-b -> chain-c would chain through chain-b if both passed.
    const [a, b, c] = [fresh('chain-a'), fresh('chain-b'), fresh('chain-c')]
    for (const name of [a, b, c]) await createFlag(t, { name })
    const results = await Promise.all([addDependency(a, { feature: b }), addDependency(b, { feature: c })])
    expect(results.map((r) => r.status).sort()).toEqual([200, 400])
    const rows = await t.query<{ child: string; parent: string }>('select child, parent from feature_dependencies where child = any($1)', [[a, b, c]])
    expect(rows).toHaveLength(1)
  })
})

describe('removing dependencies', () => {
  it('removes one dependency with 200 and feature-dependency-removed', async () => {
    const { parent, child, sibling } = await family('child and sibling')
    const res = await t.call('DELETE', `${depsPath(sibling)}/${parent}`)
    expect(res.status, res.text).toBe(200)
    expect((await flag(sibling)).dependencies).toEqual([])
    expect((await flag(parent)).children).toEqual([child])
    expect((await eventsOf(sibling)).at(-1)).toMatchObject({
      type: 'feature-dependency-removed',
      project: 'default',
      data: null,
      pre_data: { feature: parent, enabled: true, variants: [] },
    })
  })

  it('answers 404 for a dependency that does not exist, or a child that is not a live flag of the project, and writes nothing', async () => {
    const f = await family('child')
    const before = await snapshot()
    for (const path of [`${depsPath(f.sibling)}/${f.parent}`, `${depsPath(f.child)}/${f.loner}`, `${depsPath('nope')}/${f.parent}`, `${depsPath(f.child, f.other)}/${f.parent}`, `${depsPath(f.archived)}/${f.parent}`]) {
      const res = await t.call('DELETE', path)
      expect(res.status, path).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    expect(await snapshot()).toEqual(before)
  })

  it('removes every dependency with 200 and one feature-dependencies-removed', async () => {
    const { parent, child } = await family('child')
    const res = await t.call('DELETE', depsPath(child))
    expect(res.status, res.text).toBe(200)
    expect((await flag(child)).dependencies).toEqual([])
    expect((await flag(parent)).children).toEqual([])
    expect((await eventsOf(child)).at(-1)).toMatchObject({
      type: 'feature-dependencies-removed',
      data: null,
      pre_data: { dependencies: [{ feature: parent, enabled: true, variants: [] }] },
    })
  })

  it('answers 200 without an event when there was nothing to remove, and 404 for an unknown child', async () => {
    const { child } = await family()
    const before = await snapshot()
    expect((await t.call('DELETE', depsPath(child))).status).toBe(200)
    expect((await t.call('DELETE', depsPath('nope'))).status).toBe(404)
    expect(await snapshot()).toEqual(before)
  })

  it('lets a former parent become a child once its children are gone', async () => {
    const { parent, child, loner } = await family('child')
    await ok(t, 'DELETE', depsPath(child))
    expect((await addDependency(parent, { feature: loner })).status).toBe(200)
  })
})

describe('dependency permissions', () => {
  it('refuses a Viewer every write with 403 NoAccessError for UPDATE_FEATURE, and changes nothing', async () => {
    const { parent, child, loner } = await family()
    await ok(t, 'POST', depsPath(parent), { feature: loner })
    const before = await snapshot()
    for (const [method, path, body] of [
      ['POST', depsPath(child), { feature: loner }],
      ['DELETE', `${depsPath(parent)}/${loner}`, undefined],
      ['DELETE', depsPath(parent), undefined],
    ] as const) {
      const res = await viewer.call(method, path, { body })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining('permission=UPDATE_FEATURE in project=default') })
    }
    expect(await snapshot()).toEqual(before)
  })

  it('answers 401 without a token', async () => {
    const { child, loner } = await family()
    expect((await t.call('POST', depsPath(child), { token: null, body: { feature: loner } })).status).toBe(401)
  })
})
