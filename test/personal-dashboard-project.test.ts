import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../src/db.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addToProject, createProject, createToken, createUser, fresh, ok } from './helpers/factories.js'

/* GET /api/admin/personal-dashboard/{projectId}: one project's owners, the caller's roles, latest events, onboarding and health. */

let t: TestApp
const now = new Date('2026-06-01T12:00:00.000Z')
const pending: ((db: Db) => Promise<unknown>)[] = []
beforeAll(async () => {
  t = await createTestApp({ now: () => now, background: (_c, task) => void pending.push(task) })
})
afterAll(() => t.close())

const details = (project: string) => `/api/admin/personal-dashboard/${project}`

describe('GET /api/admin/personal-dashboard/{projectId}', () => {
  it("names the owners (users and groups), the caller's roles, the latest events and the flags' health", async () => {
    const owner = await createUser(t, 'Editor', { name: 'Olga', email: `${fresh('olga')}@example.com` })
    const member = await createUser(t, 'Viewer')
    const project = await createProject(t)
    await addToProject(t, project, owner.id, 'Owner')
    const group = (await ok(t, 'POST', '/api/admin/groups', { name: fresh('team'), users: [{ user: { id: member.id } }] })).body.id as number
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [4], users: [], groups: [group] })
    await addToProject(t, project, member.id, 'Member')
    for (const name of ['one', 'two', 'three']) await ok(t, 'POST', `/api/admin/projects/${project}/features`, { name: `${project}-${name}` })
    await ok(t, 'PATCH', `/api/admin/projects/${project}/features/${project}-two`, [{ op: 'replace', path: '/stale', value: true }])

    const res = await member.call('GET', details(project))
    expect(res.status, res.text).toBe(200)
    const body = res.body
    expect(body.owners).toEqual([
      { ownerType: 'user', name: 'Olga', imageUrl: expect.any(String), email: expect.stringContaining('@example.com') },
      { ownerType: 'group', name: expect.stringMatching(/^team-/) },
    ])
    // The member holds Member directly and Owner through the group.
    expect(body.roles).toEqual([
      { id: 4, name: 'Owner', type: 'project' },
      { id: 5, name: 'Member', type: 'project' },
    ])
    expect(body.onboardingStatus).toEqual({ status: 'first-flag-created', feature: `${project}-one` })
    expect(body.insights).toEqual({ avgHealthCurrentWindow: null, avgHealthPastWindow: null, totalFlags: 3, activeFlags: 2, staleFlags: 1, potentiallyStaleFlags: 0, health: 67, technicalDebt: 33 })
    expect(body.latestEvents.length).toBeGreaterThan(3)
    expect(body.latestEvents.length).toBeLessThanOrEqual(10)
    expect(body.latestEvents[0]).toEqual({ id: expect.any(Number), summary: null, createdBy: 'test-admin', createdByImageUrl: expect.any(String), createdAt: now.toISOString() })
    const ids = body.latestEvents.map((e: { id: number }) => e.id)
    expect([...ids].sort((a, b) => b - a)).toEqual(ids)
  })

  it('answers a project without owners as owned by the system, and an API token with no roles; onboarded once an SDK saw a flag', async () => {
    const project = await createProject(t)
    await t.query(`delete from project_members where project_id = $1`, [project])
    const empty = (await ok(t, 'GET', details(project))).body
    expect(empty.owners).toEqual([{ ownerType: 'system' }])
    expect(empty.roles).toEqual([])
    expect(empty.onboardingStatus).toEqual({ status: 'onboarding-started' })
    expect(empty.insights).toMatchObject({ totalFlags: 0, health: 100, technicalDebt: 0 })

    const flag = `${project}-seen`
    await ok(t, 'POST', `/api/admin/projects/${project}/features`, { name: flag })
    const token = (await createToken(t, { type: 'client', environment: 'development', projects: [project] })).secret as string
    const bucket = { start: now.toISOString(), stop: now.toISOString(), toggles: { [flag]: { yes: 1, no: 0 } } }
    expect((await t.call('POST', '/api/client/metrics', { token, body: { appName: 'app', instanceId: 'i', bucket } })).status).toBe(202)
    while (pending.length > 0) await pending.shift()!(t.db)
    expect((await ok(t, 'GET', details(project))).body.onboardingStatus).toEqual({ status: 'onboarded' })
  })

  it('is a 404 for an unknown or archived project and for a private one the caller may not read, and a 401 without credentials', async () => {
    const unknown = await t.call('GET', details('no-such-project'))
    expect(unknown.status).toBe(404)
    expect(unknown.body.name).toBe('NotFoundError')
    const secret = await createProject(t, { mode: 'private' })
    const outsider = await createUser(t, 'Viewer')
    const hidden = await outsider.call('GET', details(secret))
    expect(hidden.status).toBe(404)
    expect(hidden.body.message).toBe(unknown.body.message.replace('no-such-project', secret))
    const insider = await createUser(t, 'Viewer')
    await addToProject(t, secret, insider.id)
    expect((await insider.call('GET', details(secret))).status).toBe(200)
    const archived = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/archive/${archived}`)
    expect((await t.call('GET', details(archived))).status).toBe(404)
    expect((await t.call('GET', details(secret), { token: null })).status).toBe(401)
  })
})
