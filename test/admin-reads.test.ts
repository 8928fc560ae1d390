import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/* Dependency options, lifecycle counts, the legacy event list and event creators. */

let t: TestApp
/** Root Viewer, member of no project. */
let viv: TestUser
let vault: string
let vaultFlag: string

beforeAll(async () => {
  t = await createTestApp()
  viv = await createSignedInUser(t, 'viv', 'Viewer', { name: 'Viv Viewer' })
  vault = await createProject(t, { mode: 'private', environments: ['development'] })
  vaultFlag = (await createFlag(t, {}, vault)).name
})
afterAll(() => t.close())

describe('dependency options', () => {
  it('lists the parents a child may take: live flags of its project that depend on nothing, not itself', async () => {
    const project = await createProject(t)
    const P = `/api/admin/projects/${project}/features`
    const [a, b, c, d] = await Promise.all(['a', 'b', 'c', 'd'].map(async (n) => (await createFlag(t, { name: fresh(n) }, project)).name as string))
    await ok(t, 'POST', `${P}/${b}/dependencies`, { feature: a })
    await ok(t, 'DELETE', `${P}/${d}`)
    const res = await viv.call('GET', `${P}/${c}/parents`)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual([a])
    expect((await t.call('GET', `${P}/${a}/parents`)).body).toEqual([c])
    expect((await t.call('GET', `${P}/no-such/parents`)).status).toBe(404)
    expect((await viv.call('GET', `/api/admin/projects/${vault}/features/${vaultFlag}/parents`)).status).toBe(404)
  })

  it("lists a parent's variant names from its environments and strategies, once each", async () => {
    const project = await createProject(t, { environments: ['development'] })
    const parent = (await createFlag(t, {}, project)).name
    await ok(t, 'PUT', `/api/admin/projects/${project}/features/${parent}/environments/development/variants`, [{ name: 'blue', weightType: 'variable', weight: 1000, stickiness: 'default' }])
    await addStrategy(t, parent, 'development', { name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: 'g' }, variants: [{ name: 'red', weight: 1000, weightType: 'variable', stickiness: 'default' }, { name: 'blue', weight: 0, weightType: 'fix', stickiness: 'default' }] }, project)
    const res = await viv.call('GET', `/api/admin/projects/${project}/features/${parent}/parent-variants`)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual(['blue', 'red'])
    expect((await t.call('GET', `/api/admin/projects/default/features/${parent}/parent-variants`)).status).toBe(404)
    expect((await viv.call('GET', `/api/admin/projects/${vault}/features/${vaultFlag}/parent-variants`)).status).toBe(404)
  })

  it('says whether any dependency exists, not counting private projects the caller may not read', async () => {
    const fresh1 = await createTestApp()
    try {
      expect((await fresh1.call('GET', '/api/admin/projects/default/dependencies')).body).toBe(false)
      const secret = await createProject(fresh1, { mode: 'private' })
      const parent = (await createFlag(fresh1, {}, secret)).name
      const child = (await createFlag(fresh1, {}, secret)).name
      await ok(fresh1, 'POST', `/api/admin/projects/${secret}/features/${child}/dependencies`, { feature: parent })
      expect((await fresh1.call('GET', '/api/admin/projects/default/dependencies')).body).toBe(true)
      const viewer = await createSignedInUser(fresh1, 'vera', 'Viewer')
      const hidden = await viewer.call('GET', '/api/admin/projects/default/dependencies')
      expect(hidden.status, hidden.text).toBe(200)
      expect(hidden.body).toBe(false)
      expect((await viewer.call('GET', `/api/admin/projects/${secret}/dependencies`)).status).toBe(404)
    } finally {
      await fresh1.close()
    }
  })
})

describe('lifecycle stage count', () => {
  it("counts each flag once, in its current stage, over the projects the caller may read", async () => {
    const before = (await viv.call('GET', '/api/admin/lifecycle/count')).body
    expect(Object.keys(before).sort()).toEqual(['archived', 'completed', 'initial', 'live', 'preLive'])
    const project = await createProject(t, { environments: ['development', 'production'] })
    const live = (await createFlag(t, {}, project)).name
    await ok(t, 'POST', `/api/admin/projects/${project}/features/${live}/environments/production/on`)
    const preLive = (await createFlag(t, {}, project)).name
    await ok(t, 'POST', `/api/admin/projects/${project}/features/${preLive}/environments/development/on`)
    const archived = (await createFlag(t, {}, project)).name
    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${archived}`)
    await createFlag(t, {}, project)
    await createFlag(t, {}, vault)
    const after = (await viv.call('GET', '/api/admin/lifecycle/count')).body
    expect(after).toEqual({ initial: before.initial + 1, preLive: before.preLive + 1, live: before.live + 1, completed: before.completed, archived: before.archived + 1 })
    const admin = (await t.call('GET', '/api/admin/lifecycle/count')).body
    expect(admin.initial).toBe(after.initial + 2)
    expect((await t.call('GET', '/api/admin/lifecycle/count', { token: null })).status).toBe(401)
  })
})

describe('the legacy event list', () => {
  it("answers the newest events with their total, of one project when asked, hiding private projects' events", async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    const res = await viv.call('GET', `/api/admin/events?project=${project}`)
    expect(res.status, res.text).toBe(200)
    expect(res.body.version).toBe(1)
    expect(res.body.events.map((e: any) => e.type)).toEqual(['feature-created', 'project-created'])
    expect(res.body.events[0].featureName).toBe(flag)
    expect(res.body.totalEvents).toBe(2)
    const all = await viv.call('GET', '/api/admin/events')
    expect(all.status).toBe(200)
    expect(all.body.events.length).toBeLessThanOrEqual(100)
    expect(all.body.events.some((e: any) => e.project === vault)).toBe(false)
    expect((await viv.call('GET', `/api/admin/events?project=${vault}`)).body).toEqual({ version: 1, events: [], totalEvents: 0 })
    expect((await t.call('GET', `/api/admin/events?project=${vault}`)).body.totalEvents).toBeGreaterThan(0)
    expect((await t.call('GET', '/api/admin/events', { token: null })).status).toBe(401)
  })
})

describe('event creators', () => {
  it('lists the users who made events the caller may read, by name', async () => {
    const ed = await createSignedInUser(t, 'ed', 'Editor', { name: 'Ed Editor' })
    await ok(ed, 'POST', '/api/admin/projects/default/features', { name: fresh('ed') })
    const res = await viv.call('GET', '/api/admin/event-creators')
    expect(res.status, res.text).toBe(200)
    expect(res.body).toContainEqual({ id: ed.id, name: 'Ed Editor' })
    const secretive = await createSignedInUser(t, 'sam', 'Admin', { name: 'Sam Secret' })
    await ok(secretive, 'POST', `/api/admin/projects/${vault}/features`, { name: fresh('sam') })
    expect((await viv.call('GET', '/api/admin/event-creators')).body.some((u: any) => u.name === 'Sam Secret')).toBe(false)
    expect((await t.call('GET', '/api/admin/event-creators')).body.some((u: any) => u.name === 'Sam Secret')).toBe(true)
  })
})
