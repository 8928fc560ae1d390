import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, createUser, fresh, ok } from './helpers/factories.js'
import { markPotentiallyStale } from '../src/feature-types/potentially-stale.js'

describe('flag types', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(() => t.close())

  it("lists Unleash's five types with their default lifetimes", async () => {
    const res = await ok(t, 'GET', '/api/admin/feature-types')
    expect(res.body.version).toBe(1)
    expect(res.body.types.map((f: any) => [f.id, f.name, f.lifetimeDays])).toEqual([
      ['release', 'Release', 40],
      ['experiment', 'Experiment', 40],
      ['operational', 'Operational', 7],
      ['kill-switch', 'Kill switch', null],
      ['permission', 'Permission', null],
    ])
    expect(res.body.types.every((f: any) => typeof f.description === 'string' && f.description.length > 0)).toBe(true)
  })

  it('any signed-in user may read them; only admins change a lifetime', async () => {
    const viewer = await createUser(t, 'Viewer')
    expect((await viewer.call('GET', '/api/admin/feature-types')).status).toBe(200)
    const editor = await createUser(t, 'Editor')
    const refused = await editor.call('PUT', '/api/admin/feature-types/permission/lifetime', { body: { lifetimeDays: 3 } })
    expect(refused.status).toBe(403)
    expect(refused.body.name).toBe('NoAccessError')
    expect((await t.call('GET', '/api/admin/feature-types', { token: null })).status).toBe(401)
  })

  it('sets a lifetime; 0 and null both mean never, as in Unleash', async () => {
    const set = await ok(t, 'PUT', '/api/admin/feature-types/permission/lifetime', { lifetimeDays: 12 })
    expect(set.body).toEqual({ id: 'permission', name: 'Permission', description: expect.any(String), lifetimeDays: 12 })
    expect((await ok(t, 'PUT', '/api/admin/feature-types/permission/lifetime', { lifetimeDays: 0 })).body.lifetimeDays).toBeNull()
    expect((await ok(t, 'PUT', '/api/admin/feature-types/permission/lifetime', { lifetimeDays: null })).body.lifetimeDays).toBeNull()
    const types = (await ok(t, 'GET', '/api/admin/feature-types')).body.types
    expect(types.find((f: any) => f.id === 'permission').lifetimeDays).toBeNull()
  })

  it('refuses a bad lifetime (400), an unknown type (404) and a body that is not JSON (415)', async () => {
    for (const body of [{ lifetimeDays: -1 }, { lifetimeDays: 1.5 }, { lifetimeDays: 'ten' }, {}, { lifetimeDays: 2 ** 31 }]) {
      const res = await t.call('PUT', '/api/admin/feature-types/release/lifetime', { body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    const unknown = await t.call('PUT', '/api/admin/feature-types/nope/lifetime', { body: { lifetimeDays: 3 } })
    expect(unknown.status).toBe(404)
    expect(unknown.body.name).toBe('NotFoundError')
    const text = await t.call('PUT', '/api/admin/feature-types/release/lifetime', { body: 'lifetimeDays=3', headers: { 'content-type': 'text/plain' } })
    expect(text.status).toBe(415)
    expect((await ok(t, 'GET', '/api/admin/feature-types')).body.types.find((f: any) => f.id === 'release').lifetimeDays).toBe(40)
  })
})

describe('the potentially-stale job', () => {
  let now = new Date('2026-01-01T00:00:00Z')
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ now: () => now })
  })
  afterAll(() => t.close())

  const staleEvents = (flags: string[]) =>
    t.query<{ feature_name: string; project: string; data: any; tags: any; created_by: string }>(
      `select feature_name, project, data, tags, created_by from events where type = 'feature-potentially-stale-on' and feature_name = any($1) order by id`,
      [flags],
    )
  const potentiallyStale = async (project: string) =>
    Object.fromEntries((await ok(t, 'GET', `/api/admin/projects/${project}/features`)).body.features.map((f: any) => [f.name, f.potentiallyStale]))

  it('marks live flags past their type\'s lifetime once each, with feature-potentially-stale-on, and never stale, archived, kill-switch flags', async () => {
    now = new Date('2026-01-01T00:00:00Z')
    const project = await createProject(t)
    const flag = (type: string, extra: Record<string, unknown> = {}) => createFlag(t, { name: fresh(type), type, ...extra }, project).then((f) => f.name as string)
    await ok(t, 'POST', '/api/admin/tag-types', { name: 'team' })
    const ops = await flag('operational', { tags: [{ type: 'team', value: 'web' }] })
    const rel = await flag('release')
    const kill = await flag('kill-switch')
    const marked = await flag('experiment')
    const archived = await flag('operational')
    await ok(t, 'PATCH', `/api/admin/projects/${project}/features/${marked}`, [{ op: 'replace', path: '/stale', value: true }])
    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${archived}`)

    now = new Date('2026-01-08T00:00:01Z')
    expect(await potentiallyStale(project)).toEqual({ [ops]: false, [rel]: false, [kill]: false, [marked]: false })
    await markPotentiallyStale(t.db, now)
    expect(await potentiallyStale(project)).toEqual({ [ops]: true, [rel]: false, [kill]: false, [marked]: false })
    const events = await staleEvents([ops, rel, kill, marked, archived])
    expect(events).toEqual([{ feature_name: ops, project, data: { name: ops, potentiallyStale: true }, tags: [{ type: 'team', value: 'web' }], created_by: 'system' }])

    // Once: a second run, and a later one, add nothing for a flag already marked.
    await markPotentiallyStale(t.db, now)
    now = new Date('2026-02-10T00:00:01Z')
    expect(await markPotentiallyStale(t.db, now)).toEqual(expect.objectContaining({ marked: expect.any(Number) }))
    expect(await potentiallyStale(project)).toEqual({ [ops]: true, [rel]: true, [kill]: false, [marked]: false })
    expect((await staleEvents([ops, rel, kill, marked, archived])).map((e) => e.feature_name)).toEqual([ops, rel])
    await markPotentiallyStale(t.db, now)
    expect(await staleEvents([ops, rel, kill, marked, archived])).toHaveLength(2)
  })

  it("follows the stored lifetimes: a shorter one marks sooner, a longer one clears the mark without an event", async () => {
    now = new Date('2026-03-01T00:00:00Z')
    const project = await createProject(t)
    const perm = (await createFlag(t, { name: fresh('perm'), type: 'permission' }, project)).name as string
    now = new Date('2026-03-04T00:00:00Z')
    await markPotentiallyStale(t.db, now)
    expect(await potentiallyStale(project)).toEqual({ [perm]: false })
    await ok(t, 'PUT', '/api/admin/feature-types/permission/lifetime', { lifetimeDays: 2 })
    await markPotentiallyStale(t.db, now)
    expect(await potentiallyStale(project)).toEqual({ [perm]: true })
    expect(await staleEvents([perm])).toHaveLength(1)
    // The project's health counts it too (from the stored lifetime).
    expect((await ok(t, 'GET', `/api/admin/projects/${project}`)).body.health).toBe(0)
    await ok(t, 'PUT', '/api/admin/feature-types/permission/lifetime', { lifetimeDays: null })
    // A lifetime change records no event, so a cached overview shows it once its time step (10 s) has passed.
    now = new Date(now.getTime() + 11_000)
    expect((await ok(t, 'GET', `/api/admin/projects/${project}`)).body.health).toBe(100)
    expect(await markPotentiallyStale(t.db, now)).toEqual({ marked: 0, cleared: 1 })
    expect(await potentiallyStale(project)).toEqual({ [perm]: false })
    expect(await staleEvents([perm])).toHaveLength(1)
  })

  it('moves the flag on, so a flag read through the cached flag states shows the mark', async () => {
    now = new Date('2026-04-01T00:00:00Z')
    const project = await createProject(t)
    const ops = (await createFlag(t, { name: fresh('ops'), type: 'operational' }, project)).name as string
    const F = `/api/admin/projects/${project}/features/${ops}`
    await ok(t, 'PATCH', F, [{ op: 'replace', path: '/description', value: 'before' }])
    now = new Date('2026-04-20T00:00:00Z')
    await markPotentiallyStale(t.db, now)
    const patched = await ok(t, 'PATCH', F, [{ op: 'replace', path: '/description', value: 'after' }])
    expect(patched.body.potentiallyStale).toBe(true)
    expect((await ok(t, 'GET', F)).body.potentiallyStale).toBe(true)
  })
})
