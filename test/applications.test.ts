import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../src/db.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, addToProject, createFlag, createProject, createToken, createUser, fresh, ok } from './helpers/factories.js'

let now = new Date('2026-03-01T10:30:00.000Z')
let t: TestApp
const pending: ((db: Db) => Promise<unknown>)[] = []
async function flush() {
  while (pending.length > 0) await pending.shift()!(t.db)
}
beforeAll(async () => {
  t = await createTestApp({ now: () => now, background: (_c, task) => void pending.push(task), signIn: { perMinute: 0 }, clientAddress: () => '198.51.100.7' })
})
afterAll(() => t.close())

/** An application that registered (`sdkVersion`, strategies default only) and reported `flags` in development, from pod-1. */
async function reportingApp(flags: string[], sdkVersion = 'unleash-client-node:4.0.0') {
  const token = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
  const appName = fresh('app')
  expect((await t.call('POST', '/api/client/register', { token, body: { appName, instanceId: 'pod-1', sdkVersion, strategies: ['default'], interval: 15000, started: now.toISOString() } })).status).toBe(202)
  const bucket = { start: new Date(now.getTime() - 600_000).toISOString(), stop: now.toISOString(), toggles: Object.fromEntries(flags.map((f) => [f, { yes: 1, no: 0 }])) }
  expect((await t.call('POST', '/api/client/metrics', { token, body: { appName, instanceId: 'pod-1', bucket } })).status).toBe(202)
  await flush()
  return appName
}

describe('one application', () => {
  it('is read, with its overview and instances; a private project\'s use shows only to who may read it', async () => {
    const open = await createProject(t)
    const secret = await createProject(t, { mode: 'private' })
    const openFlag = (await createFlag(t, {}, open)).name
    const secretFlag = (await createFlag(t, {}, secret)).name
    await addStrategy(t, openFlag, 'development', { name: 'userWithId', parameters: { userIds: '1' } }, open)
    const app = await reportingApp([openFlag, secretFlag])

    const read = (await ok(t, 'GET', `/api/admin/metrics/applications/${app}`)).body
    expect(read).toMatchObject({ appName: app, sdkVersion: 'unleash-client-node:4.0.0', strategies: ['default'] })
    expect(read.usage.map((u: { project: string }) => u.project).sort()).toEqual([open, secret].sort())
    const overview = (await ok(t, 'GET', `/api/admin/metrics/applications/${app}/overview`)).body
    expect(overview).toMatchObject({ featureCount: 2, issues: { missingStrategies: ['userWithId'] } })
    expect(overview.environments).toEqual([
      expect.objectContaining({ name: 'development', instanceCount: 1, sdks: ['unleash-client-node:4.0.0'], backendSdks: ['unleash-client-node:4.0.0'], frontendSdks: [], issues: { missingFeatures: [], outdatedSdks: ['unleash-client-node:4.0.0'] } }),
    ])
    const instances = (await ok(t, 'GET', `/api/admin/metrics/instances/${app}/environment/development`)).body.instances
    expect(instances).toEqual([expect.objectContaining({ instanceId: 'pod-1', sdkVersion: 'unleash-client-node:4.0.0' })])
    expect((await ok(t, 'GET', `/api/admin/metrics/instances/${app}/environment/production`)).body).toEqual({ instances: [] })

    const outsider = await createUser(t, 'Viewer')
    const seen = (await ok(outsider, 'GET', `/api/admin/metrics/applications/${app}`)).body
    expect(seen.usage.map((u: { project: string }) => u.project)).toEqual([open])
    const outsiderOverview = (await ok(outsider, 'GET', `/api/admin/metrics/applications/${app}/overview`)).body
    expect(outsiderOverview.projects).toEqual([open])
    expect(outsiderOverview.featureCount).toBe(1)
    expect(JSON.stringify(outsiderOverview) + JSON.stringify(seen)).not.toContain(secret)
  })

  it("shows its instances' client addresses only to callers who may read every project whose flags it reported", async () => {
    const open = await createProject(t)
    const secret = await createProject(t, { mode: 'private' })
    const openApp = await reportingApp([(await createFlag(t, {}, open)).name])
    const secretApp = await reportingApp([(await createFlag(t, {}, secret)).name])
    const path = (app: string) => `/api/admin/metrics/instances/${app}/environment/development`
    const ipOf = async (as: Parameters<typeof ok>[0], app: string) => ((await ok(as, 'GET', path(app))).body.instances as { instanceId: string; clientIp: string | null }[]).map((i) => [i.instanceId, i.clientIp])
    const address = (await ipOf(t, secretApp))[0]?.[1]
    expect(address).toBe('198.51.100.7')
    const outsider = await createUser(t, 'Viewer')
    expect(await ipOf(outsider, secretApp)).toEqual([['pod-1', null]])
    expect(await ipOf(outsider, openApp)).toEqual([['pod-1', address]])
    const member = await createUser(t, 'Viewer')
    await addToProject(t, secret, member.id)
    expect(await ipOf(member, secretApp)).toEqual([['pod-1', address]])
  })

  it('answers 404 for an unknown application', async () => {
    for (const path of ['/api/admin/metrics/applications/nope', '/api/admin/metrics/applications/nope/overview', '/api/admin/metrics/instances/nope/environment/development']) {
      const res = await t.call('GET', path)
      expect(res.status, path).toBe(404)
      expect(res.body).toMatchObject({ name: 'NotFoundError' })
    }
    expect((await t.call('GET', '/api/admin/metrics/applications/nope', { token: null })).status).toBe(401)
  })

  it('takes only an http(s) url (or empty): a script URL is a 400, and one stored before the check is never answered', async () => {
    const appName = fresh('linked')
    for (const bad of ['javascript:alert(document.cookie)', 'JavaScript://%0aalert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:x', ' javascript:alert(1)', 'shop.example.com']) {
      const res = await t.call('POST', `/api/admin/metrics/applications/${appName}`, { body: { url: bad } })
      expect(res.status, bad).toBe(400)
      expect(res.body).toMatchObject({ name: 'ValidationError' })
      expect(res.text).toContain('http or https')
    }
    await ok(t, 'POST', `/api/admin/metrics/applications/${appName}`, { url: 'HTTPS://shop.example.com/app' })
    expect((await ok(t, 'GET', `/api/admin/metrics/applications/${appName}`)).body.url).toBe('HTTPS://shop.example.com/app')
    await ok(t, 'POST', `/api/admin/metrics/applications/${appName}`, { url: '' })
    await t.query(`update client_applications set url = 'javascript:alert(1)' where app_name = $1`, [appName])
    expect((await ok(t, 'GET', `/api/admin/metrics/applications/${appName}`)).body).not.toHaveProperty('url')
    const list = await ok(t, 'GET', `/api/admin/metrics/applications?query=${appName}`)
    expect(JSON.stringify(list.body)).toContain(appName)
    expect(JSON.stringify(list.body)).not.toContain('javascript:')
  })

  it('is created and updated by an admin with application-created, deleted with its instances; others may not', async () => {
    const appName = fresh('made')
    const res = await t.call('POST', `/api/admin/metrics/applications/${appName}`, { body: { strategies: ['default'], url: 'https://shop.example.com', color: 'red' } })
    expect(res.status, res.text).toBe(202)
    await ok(t, 'POST', `/api/admin/metrics/applications/${appName}`, { icon: 'cart' })
    expect((await ok(t, 'GET', `/api/admin/metrics/applications/${appName}`)).body).toMatchObject({ appName, strategies: ['default'], url: 'https://shop.example.com', color: 'red', icon: 'cart', usage: [] })
    expect(await t.query(`select type from events where type = 'application-created' and data->>'appName' = $1`, [appName])).toHaveLength(2)
    expect((await t.call('POST', `/api/admin/metrics/applications/${appName}`, { body: { strategies: 'default' } })).status).toBe(400)

    const editor = await createUser(t, 'Editor')
    expect((await editor.call('POST', `/api/admin/metrics/applications/${appName}`, { body: {} })).status).toBe(403)
    expect((await editor.call('DELETE', `/api/admin/metrics/applications/${appName}`)).status).toBe(403)

    const reported = await reportingApp([(await createFlag(t)).name])
    await ok(t, 'DELETE', `/api/admin/metrics/applications/${reported}`)
    expect((await t.call('GET', `/api/admin/metrics/applications/${reported}`)).status).toBe(404)
    expect(await t.query('select * from client_instances where app_name = $1', [reported])).toEqual([])
    expect((await t.call('DELETE', '/api/admin/metrics/applications/never-there')).status).toBe(200)
  })
})
