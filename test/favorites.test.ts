import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, createToken, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let secondToken: string
let viewer: TestUser
beforeAll(async () => {
  t = await createTestApp()
  viewer = await createSignedInUser(t, 'vera', 'Viewer')
  secondToken = (await createToken(t, { tokenName: 'second-admin', type: 'admin' })).secret
  // Read only: an archived flag.
  await createFlag(t, { name: 'gone', tags: [{ value: 'fav' }] })
  expect((await t.call('DELETE', `${P}/features/gone`)).status).toBe(202)
})
afterAll(() => t.close())

let starred: string
beforeEach(async () => {
  starred = (await createFlag(t, { name: fresh('starred'), tags: [{ value: 'fav' }] })).name
})

const P = '/api/admin/projects/default'
const flagFavorite = (name: string, project = 'default') => `/api/admin/projects/${project}/features/${name}/favorites`
const projectFavorite = (project: string) => `/api/admin/projects/${project}/favorites`
const isFavorite = async (name: string, token?: string) => (await t.call('GET', `${P}/features/${name}`, { token })).body.favorite
/** Favorites the test's flag as the admin token, or as another token. */
async function favorite(token?: string) {
  const res = await t.call('POST', flagFavorite(starred), { token })
  expect(res.status, res.text).toBe(200)
}
const favoriteEvents = () => t.query<{ type: string; project: string; feature_name: string | null; data: any; pre_data: any; tags: any; created_by: string }>("select * from events where type like '%favorited' order by id")
const snapshot = () =>
  t.query(`select
    (select json_agg(f order by f.principal, f.feature_name) from favorite_features f) as features,
    (select json_agg(p order by p.principal, p.project) from favorite_projects p) as projects,
    (select count(*) from events) as events`)

describe('favorite flags', () => {
  it("favorites a flag for the caller only, shown in the flag's favorite field, with feature-favorited", async () => {
    expect(await isFavorite(starred)).toBe(false)
    const res = await t.call('POST', flagFavorite(starred))
    expect(res.status, res.text).toBe(200)
    expect(await isFavorite(starred)).toBe(true)
    expect(await isFavorite(starred, secondToken)).toBe(false)
    expect((await t.call('GET', `${P}/features`)).body.features.find((f: any) => f.name === starred).favorite).toBe(true)
    const event = (await favoriteEvents()).at(-1)!
    expect(event).toMatchObject({
      type: 'feature-favorited',
      project: 'default',
      feature_name: starred,
      created_by: 'test-admin',
      data: { feature: starred, favorite: true },
      pre_data: { feature: starred, favorite: false },
      tags: [{ type: 'simple', value: 'fav' }],
    })
  })

  it('is idempotent: favoriting again answers 200 and writes nothing', async () => {
    await favorite()
    const before = await snapshot()
    expect((await t.call('POST', flagFavorite(starred))).status).toBe(200)
    expect(await snapshot()).toEqual(before)
  })

  it('keys favorites by principal: another token has its own', async () => {
    await favorite()
    expect((await t.call('POST', flagFavorite(starred), { token: secondToken })).status).toBe(200)
    expect(await isFavorite(starred, secondToken)).toBe(true)
    const principals = await t.query<{ principal: string }>('select principal from favorite_features where feature_name = $1 order by principal', [starred])
    expect(principals.map((p) => p.principal)).toEqual([expect.stringMatching(/^token:\d+$/), expect.stringMatching(/^token:\d+$/)])
    expect((await favoriteEvents()).at(-1)).toMatchObject({ type: 'feature-favorited', created_by: 'second-admin' })
  })

  it('unfavorites with feature-unfavorited, for the caller only; again is 200 without an event', async () => {
    await favorite()
    await favorite(secondToken)
    const res = await t.call('DELETE', flagFavorite(starred))
    expect(res.status, res.text).toBe(200)
    expect(await isFavorite(starred)).toBe(false)
    expect(await isFavorite(starred, secondToken)).toBe(true)
    expect((await favoriteEvents()).at(-1)).toMatchObject({
      type: 'feature-unfavorited',
      feature_name: starred,
      data: { feature: starred, favorite: false },
      pre_data: { feature: starred, favorite: true },
    })
    const before = await snapshot()
    expect((await t.call('DELETE', flagFavorite(starred))).status).toBe(200)
    expect(await snapshot()).toEqual(before)
  })

  it('answers 404 for a flag that is unknown, archived, or not in the project, and writes nothing', async () => {
    const other = await createProject(t)
    const before = await snapshot()
    for (const [method, path] of [
      ['POST', flagFavorite('nope')],
      ['POST', flagFavorite('gone')],
      ['POST', flagFavorite(starred, other)],
      ['POST', flagFavorite(starred, 'nope')],
      ['DELETE', flagFavorite('nope')],
      ['DELETE', flagFavorite(starred, other)],
    ] as const) {
      const res = await t.call(method, path)
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    expect(await snapshot()).toEqual(before)
  })

  it('records exactly one feature-favorited for 20 concurrent favorites', async () => {
    const count = (await favoriteEvents()).length
    const results = await Promise.all(Array.from({ length: 20 }, () => t.call('POST', flagFavorite(starred))))
    expect(results.every((r) => r.status === 200)).toBe(true)
    expect((await favoriteEvents()).length).toBe(count + 1)
  })
})

describe('favorite projects', () => {
  it('favorites a project for the caller with project-favorited; again is 200 without an event', async () => {
    const other = await createProject(t)
    const res = await t.call('POST', projectFavorite(other))
    expect(res.status, res.text).toBe(200)
    const rows = await t.query<{ principal: string; project: string }>('select principal, project from favorite_projects where project = $1', [other])
    expect(rows).toEqual([{ principal: expect.stringMatching(/^token:\d+$/), project: other }])
    expect((await favoriteEvents()).at(-1)).toMatchObject({
      type: 'project-favorited',
      project: other,
      feature_name: null,
      data: { project: other, favorite: true },
      pre_data: { project: other, favorite: false },
    })
    const before = await snapshot()
    expect((await t.call('POST', projectFavorite(other))).status).toBe(200)
    expect(await snapshot()).toEqual(before)
  })

  it('unfavorites with project-unfavorited; again is 200 without an event', async () => {
    const other = await createProject(t)
    await ok(t, 'POST', projectFavorite(other))
    expect((await t.call('DELETE', projectFavorite(other))).status).toBe(200)
    expect(await t.query('select * from favorite_projects where project = $1', [other])).toEqual([])
    expect((await favoriteEvents()).at(-1)).toMatchObject({ type: 'project-unfavorited', project: other, data: { project: other, favorite: false } })
    const before = await snapshot()
    expect((await t.call('DELETE', projectFavorite(other))).status).toBe(200)
    expect(await snapshot()).toEqual(before)
  })

  it('answers 404 for an unknown project and writes nothing', async () => {
    const before = await snapshot()
    expect((await t.call('POST', projectFavorite('nope'))).status).toBe(404)
    expect((await t.call('DELETE', projectFavorite('nope'))).status).toBe(404)
    expect(await snapshot()).toEqual(before)
  })
})

describe('who may set favorites', () => {
  it('lets any authenticated caller, even a Viewer, keep its own favorites (keyed user:<id>)', async () => {
    expect((await viewer.call('POST', flagFavorite(starred))).status).toBe(200)
    expect((await viewer.call('POST', projectFavorite('default'))).status).toBe(200)
    expect(await t.query("select principal from favorite_features where principal like 'user:%' and feature_name = $1", [starred])).toEqual([{ principal: `user:${viewer.id}` }])
    expect(await t.query("select principal, project from favorite_projects where principal like 'user:%'")).toEqual([{ principal: `user:${viewer.id}`, project: 'default' }])
    expect((await favoriteEvents()).at(-1)).toMatchObject({ type: 'project-favorited', created_by: 'vera' })
  })

  it('answers 401 without a token and writes nothing', async () => {
    const before = await snapshot()
    expect((await t.call('POST', flagFavorite(starred), { token: null })).status).toBe(401)
    expect((await t.call('DELETE', projectFavorite('default'), { token: null })).status).toBe(401)
    expect(await snapshot()).toEqual(before)
  })
})
