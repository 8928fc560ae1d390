import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../src/db.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addToProject, createFlag, createProject, createSegment, createToken, createUser, createUserWithEmail, enableFlag, fresh, ok } from './helpers/factories.js'

let now = new Date('2026-03-01T10:30:00.000Z')
let t: TestApp
const pending: ((db: Db) => Promise<unknown>)[] = []
async function flush() {
  while (pending.length > 0) await pending.shift()!(t.db)
}
beforeAll(async () => {
  t = await createTestApp({ now: () => now, background: (_c, task) => void pending.push(task), signIn: { perMinute: 0 } })
})
afterAll(() => t.close())

/** An application of `project` whose SDK (`sdkVersion`) registered and reported `flag` in development. */
async function reportingApp(project: string, flag: string, sdkVersion: string) {
  const token = (await createToken(t, { type: 'client', environment: 'development', projects: [project] })).secret as string
  const appName = fresh('app')
  expect((await t.call('POST', '/api/client/register', { token, body: { appName, instanceId: 'pod-1', sdkVersion, strategies: ['default'], interval: 15000, started: now.toISOString() } })).status).toBe(202)
  const bucket = { start: new Date(now.getTime() - 600_000).toISOString(), stop: now.toISOString(), toggles: { [flag]: { yes: 3, no: 1 } } }
  expect((await t.call('POST', '/api/client/metrics', { token, body: { appName, instanceId: 'pod-1', bucket } })).status).toBe(202)
  await flush()
  return appName
}

/** A private project with one flag, and a Viewer who may not read it. */
async function privateProject() {
  const project = await createProject(t, { mode: 'private' })
  await createFlag(t, {}, project)
  return { project, outsider: await createUser(t, 'Viewer') }
}

const routes = ['flag-creators', 'health-report', 'status', 'dora', 'applications', 'sdks/outdated', 'insights']

describe('project insight routes', () => {
  it('answer 404 NotFoundError for an unknown project, and for a private project the caller may not read', async () => {
    const { project, outsider } = await privateProject()
    const member = await createUser(t, 'Viewer')
    await addToProject(t, project, member.id)
    for (const route of routes) {
      const unknown = await t.call('GET', `/api/admin/projects/no-such-project/${route}`)
      expect(unknown.status, route).toBe(404)
      expect(unknown.body).toMatchObject({ name: 'NotFoundError' })
      const hidden = await outsider.call('GET', `/api/admin/projects/${project}/${route}`)
      expect(hidden.status, route).toBe(404)
      expect(hidden.body.message).toBe(unknown.body.message.replace('no-such-project', project))
      expect((await member.call('GET', `/api/admin/projects/${project}/${route}`)).status, route).toBe(200)
      expect((await t.call('GET', `/api/admin/projects/${project}/${route}`, { token: null })).status, route).toBe(401)
    }
  })
})

describe('GET /api/admin/projects/{projectId}/flag-creators', () => {
  it('lists each user who created a flag there once', async () => {
    const project = await createProject(t)
    const alice = await createUserWithEmail(t, 'Editor', { name: 'Alice' })
    const bob = await createUser(t, 'Editor')
    await ok(alice, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('a') })
    await ok(alice, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('a') })
    await ok(bob, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('b') })
    await createFlag(t, {}, project)
    const creators = (await ok(t, 'GET', `/api/admin/projects/${project}/flag-creators`)).body
    expect(creators).toEqual(expect.arrayContaining([{ id: alice.id, name: 'Alice' }, { id: bob.id, name: bob.username }]))
    expect(creators).toHaveLength(2)
  })
})

describe('GET /api/admin/projects/{projectId}/health-report and /status', () => {
  it('counts stale and active flags, resources, lifecycle stages and activity', async () => {
    const project = await createProject(t)
    const stale = (await createFlag(t, {}, project)).name
    const live = (await createFlag(t, {}, project)).name
    const archived = (await createFlag(t, {}, project)).name
    await ok(t, 'PATCH', `/api/admin/projects/${project}/features/${stale}`, [{ op: 'replace', path: '/stale', value: true }])
    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${archived}`)
    await createToken(t, { type: 'client', environment: 'development', projects: [project] })
    await createSegment(t, { project })
    await addToProject(t, project, (await createUser(t, 'Viewer')).id)
    now = new Date(now.getTime() + 86_400_000)
    await enableFlag(t, live, 'development', project)

    const report = (await ok(t, 'GET', `/api/admin/projects/${project}/health-report`)).body
    expect(report).toMatchObject({ name: project, staleCount: 1, activeCount: 1, potentiallyStaleCount: 0, health: 50, technicalDebt: 50 })
    expect(report.features.map((f: { name: string }) => f.name).sort()).toEqual([stale, live].sort())

    const status = (await ok(t, 'GET', `/api/admin/projects/${project}/status`)).body
    expect(status).toMatchObject({ resources: { apiTokens: 1, members: 1, segments: 1 }, health: { current: 50 }, technicalDebt: { current: 50 }, staleFlags: { total: 1 } })
    expect(status.lifecycleSummary.archived.currentFlags).toBe(1)
    expect(status.lifecycleSummary.initial.currentFlags + status.lifecycleSummary.preLive.currentFlags + status.lifecycleSummary.live.currentFlags).toBe(2)
    expect(status.activityCountByDate.map((d: { date: string }) => d.date)).toEqual(['2026-03-01', '2026-03-02'].filter((d) => status.activityCountByDate.some((a: { date: string }) => a.date === d)))
    expect(status.activityCountByDate.reduce((n: number, d: { count: number }) => n + d.count, 0)).toBeGreaterThanOrEqual(5)
  })
})

describe('GET /api/admin/projects/{projectId}/dora', () => {
  it('gives each flag\'s days from creation to its first production enabling, and their average', async () => {
    const project = await createProject(t)
    const fast = (await createFlag(t, {}, project)).name
    const never = (await createFlag(t, {}, project)).name
    now = new Date(now.getTime() + 2 * 86_400_000)
    await enableFlag(t, fast, 'production', project)
    await enableFlag(t, never, 'development', project)
    const dora = (await ok(t, 'GET', `/api/admin/projects/${project}/dora`)).body
    expect(dora).toEqual({ projectAverage: 2, features: [{ name: fast, timeToProduction: 2 }] })
  })
})

describe('GET /api/admin/projects/{projectId}/insights', () => {
  it("answers Unleash's projectInsightsSchema: statistics, health and technical debt, lead time, flag types and members", async () => {
    const project = await createProject(t)
    const stale = (await createFlag(t, {}, project)).name
    const fast = (await createFlag(t, { type: 'experiment' }, project)).name
    await createFlag(t, {}, project)
    await ok(t, 'PATCH', `/api/admin/projects/${project}/features/${stale}`, [{ op: 'replace', path: '/stale', value: true }])
    await addToProject(t, project, (await createUser(t, 'Viewer')).id)
    await addToProject(t, project, (await createUser(t, 'Viewer')).id)
    now = new Date(now.getTime() + 86_400_000)
    await enableFlag(t, fast, 'production', project)

    const insights = (await ok(t, 'GET', `/api/admin/projects/${project}/insights`)).body
    const counts = { activeCount: 2, potentiallyStaleCount: 0, staleCount: 1 }
    expect(insights).toEqual({
      stats: expect.objectContaining({ createdCurrentWindow: 3, createdPastWindow: 0, archivedCurrentWindow: 0, projectMembersAddedCurrentWindow: 2, avgTimeToProdCurrentWindow: expect.any(Number) }),
      health: { rating: 67, ...counts },
      technicalDebt: { rating: 33, ...counts },
      leadTime: { projectAverage: 1, features: [{ name: fast, timeToProduction: 1 }] },
      featureTypeCounts: [
        { type: 'experiment', count: 1 },
        { type: 'release', count: 2 },
      ],
      members: { currentMembers: 2, change: 2 },
    })
  })
})

describe('applications and outdated SDKs', () => {
  it('lists the applications that reported a project\'s flags, with instances and SDKs, and the outdated SDKs among them', async () => {
    const project = await createProject(t)
    const other = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    const otherFlag = (await createFlag(t, {}, other)).name
    const oldApp = await reportingApp(project, flag, 'unleash-client-node:4.0.0')
    const newApp = await reportingApp(project, flag, 'unleash-node-sdk:6.12.1')
    const elsewhere = await reportingApp(other, otherFlag, 'unleash-client-java:8.0.0')

    const apps = (await ok(t, 'GET', `/api/admin/projects/${project}/applications`)).body
    expect(apps.total).toBe(2)
    expect(apps.applications).toEqual(
      expect.arrayContaining([
        { name: oldApp, environments: ['development'], instances: ['pod-1'], sdks: [{ name: 'unleash-client-node', versions: ['4.0.0'] }] },
        { name: newApp, environments: ['development'], instances: ['pod-1'], sdks: [{ name: 'unleash-node-sdk', versions: ['6.12.1'] }] },
      ]),
    )
    const page = (await ok(t, 'GET', `/api/admin/projects/${project}/applications?limit=1&sortOrder=desc`)).body
    expect(page.total).toBe(2)
    expect(page.applications.map((a: { name: string }) => a.name)).toEqual([[oldApp, newApp].sort().reverse()[0]])
    expect((await ok(t, 'GET', `/api/admin/projects/${project}/applications?query=${newApp}`)).body.applications.map((a: { name: string }) => a.name)).toEqual([newApp])

    expect((await ok(t, 'GET', `/api/admin/projects/${project}/sdks/outdated`)).body).toEqual({ sdks: [{ sdkVersion: 'unleash-client-node:4.0.0', applications: [oldApp] }] })
    const all = (await ok(t, 'GET', '/api/admin/metrics/sdks/outdated')).body.sdks
    expect(all).toEqual(expect.arrayContaining([{ sdkVersion: 'unleash-client-node:4.0.0', applications: [oldApp] }, { sdkVersion: 'unleash-client-java:8.0.0', applications: [elsewhere] }]))
    expect(all.map((s: { sdkVersion: string }) => s.sdkVersion)).not.toContain('unleash-node-sdk:6.12.1')
  })
})
