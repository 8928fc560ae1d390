import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { flagOnWithClientToken, fresh } from './helpers/factories.js'
import { createSignedInUser, PASSWORD, type TestUser } from './helpers/users.js'

let t: TestApp
let ed: TestUser

beforeAll(async () => {
  t = await createTestApp()
  ed = await createSignedInUser(t, 'ed', 'Editor')
})
afterAll(() => t.close())

const toggle = (enabled: boolean, as: { call: TestApp['call'] } = t) => as.call('POST', '/api/admin/maintenance', { body: { enabled } })

describe('maintenance mode', () => {
  it('refuses every admin write with 503 while on, lets reads, sign-in and SDKs go on, and lets an admin switch it off', async () => {
    const { flag, token } = await flagOnWithClientToken(t)
    expect((await t.call('GET', '/api/admin/maintenance')).body).toEqual({ enabled: false })
    const on = await toggle(true)
    expect(on.status, on.text).toBe(204)
    expect((await ed.call('GET', '/api/admin/maintenance')).body).toEqual({ enabled: true })

    const refused = await t.call('POST', '/api/admin/projects/default/features', { body: { name: fresh('blocked') } })
    expect(refused.status).toBe(503)
    expect(refused.body).toMatchObject({ name: 'ServiceUnavailableError' })
    expect(typeof refused.body.id).toBe('string')
    expect((await t.call('PATCH', `/api/admin/projects/default/features/${flag}`, { body: [] })).status).toBe(503)
    expect((await t.call('DELETE', `/api/admin/projects/default/features/${flag}`)).status).toBe(503)
    expect((await t.query("select 1 from features where name like 'blocked-%'"))).toHaveLength(0)

    expect((await t.call('GET', '/api/admin/projects/default/features')).status).toBe(200)
    const sdk = await t.call('GET', '/api/client/features', { token, headers: { 'unleash-client-spec': '5.0.0' } })
    expect(sdk.status).toBe(200)
    expect(sdk.body.features.map((f: any) => f.name)).toContain(flag)
    const metrics = await t.call('POST', '/api/client/metrics', { token, body: { appName: 'a', instanceId: 'i', bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: {} } } })
    expect(metrics.status).toBeLessThan(300)
    const login = await t.call('POST', '/auth/simple/login', { token: null, body: { username: 'ed', password: PASSWORD } })
    expect(login.status).toBe(200)

    expect((await toggle(false, ed)).status).toBe(403)
    expect((await toggle(false)).status).toBe(204)
    expect((await t.call('POST', '/api/admin/projects/default/features', { body: { name: fresh('allowed') } })).status).toBe(201)
  })

  it('is toggled by admins only, with maintenance-mode-toggled, and refuses a malformed body', async () => {
    expect((await toggle(true, ed)).status).toBe(403)
    expect((await t.call('POST', '/api/admin/maintenance', { body: { enabled: 'yes' } })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/maintenance', { body: { enabled: true }, token: null })).status).toBe(401)
    const before = (await t.query<{ n: number }>("select count(*)::int as n from events where type = 'maintenance-mode-toggled'"))[0]!.n
    expect((await toggle(true)).status).toBe(204)
    expect((await toggle(false)).status).toBe(204)
    const events = await t.query<{ data: any; pre_data: any }>("select data, pre_data from events where type = 'maintenance-mode-toggled' order by id")
    expect(events).toHaveLength(before + 2)
    expect(events.at(-2)).toMatchObject({ data: { enabled: true }, pre_data: { enabled: false } })
    expect(events.at(-1)).toMatchObject({ data: { enabled: false }, pre_data: { enabled: true } })
  })

  it('is read from the database, so another instance of the app sees it within its cache time', async () => {
    let now = Date.now()
    const other = await createTestApp({ now: () => new Date(now) })
    try {
      expect((await other.call('POST', '/api/admin/projects/default/features', { body: { name: fresh('before') } })).status).toBe(201)
      await other.query(`insert into settings (name, content) values ('maintenance', '{"enabled": true}') on conflict (name) do update set content = excluded.content`)
      now += 6_000
      expect((await other.call('POST', '/api/admin/projects/default/features', { body: { name: fresh('after') } })).status).toBe(503)
    } finally {
      await other.close()
    }
  })
})
