import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createUser, createToken, ok } from './helpers/factories.js'

let now = new Date('2026-03-01T10:00:00Z')
let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ now: () => now, publicUrl: 'https://flags.example.com', signIn: { perMinute: 0 } })
})
afterAll(() => t.close())

const preflight = (origin: string) =>
  t.call('OPTIONS', '/api/frontend', { token: null, headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } })

describe('GET /ready', () => {
  it('answers GOOD without credentials while the database answers', async () => {
    const res = await t.call('GET', '/ready', { token: null })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ health: 'GOOD' })
  })
})

describe('GET /api/admin/ui-config', () => {
  it('tells a signed-in caller the instance\'s URL, version, sign-in and CORS settings; nothing without credentials', async () => {
    const viewer = await createUser(t, 'Viewer')
    const res = await ok(viewer, 'GET', '/api/admin/ui-config')
    expect(res.body).toMatchObject({ unleashUrl: 'https://flags.example.com', baseUriPath: '', disablePasswordAuth: false, emailEnabled: false, frontendApiOrigins: ['*'], versionInfo: { isLatest: true } })
    expect((await t.call('GET', '/api/admin/ui-config', { token: null })).status).toBe(401)
  })
})

describe('POST /api/admin/ui-config/cors', () => {
  it('stores the frontend API\'s origins, which CORS then holds, with setting-created then setting-updated', async () => {
    expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBe('*')
    const res = await t.call('POST', '/api/admin/ui-config/cors', { body: { frontendApiOrigins: ['https://shop.example.com'] } })
    expect(res.status, res.text).toBe(204)
    expect((await ok(t, 'GET', '/api/admin/ui-config')).body.frontendApiOrigins).toEqual(['https://shop.example.com'])
    expect((await preflight('https://shop.example.com')).headers.get('access-control-allow-origin')).toBe('https://shop.example.com')
    expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull()
    await ok(t, 'POST', '/api/admin/ui-config/cors', { frontendApiOrigins: ['*'] })
    expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBe('*')
    const events = await t.query<{ type: string }>(`select type from events where type like 'setting-%' and data->>'id' = 'frontend.settings' order by id`)
    expect(events.map((e) => e.type)).toEqual(['setting-created', 'setting-updated'])
  })

  it('stores an origin as browsers send it (no trailing slash, lower-case scheme and host), so that it matches', async () => {
    await ok(t, 'POST', '/api/admin/ui-config/cors', { frontendApiOrigins: ['https://Shop.Example.com/', 'HTTP://localhost:3000'] })
    expect((await ok(t, 'GET', '/api/admin/ui-config')).body.frontendApiOrigins).toEqual(['https://shop.example.com', 'http://localhost:3000'])
    expect((await preflight('https://shop.example.com')).headers.get('access-control-allow-origin')).toBe('https://shop.example.com')
    expect((await preflight('http://localhost:3000')).headers.get('access-control-allow-origin')).toBe('http://localhost:3000')
    expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull()
    await ok(t, 'POST', '/api/admin/ui-config/cors', { frontendApiOrigins: ['*'] })
  })

  it('refuses a wildcard host with a 400 naming the problem (Unleash matches origins exactly; it would never match)', async () => {
    const res = await t.call('POST', '/api/admin/ui-config/cors', { body: { frontendApiOrigins: ['https://*.example.com'] } })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError' })
    expect(res.text).toContain('wildcard host')
    expect((await ok(t, 'GET', '/api/admin/ui-config')).body.frontendApiOrigins).toEqual(['*'])
  })

  it('matches an origin stored before normalising (trailing slash, upper case) against what the browser sends', async () => {
    await t.query(`update settings set content = '{"frontendApiOrigins":["https://Old.example.com/"]}' where name = 'frontend.settings'`)
    await new Promise((r) => setTimeout(r, 0))
    now = new Date(now.getTime() + 60_000)
    expect((await preflight('https://old.example.com')).headers.get('access-control-allow-origin')).toBe('https://old.example.com')
    await ok(t, 'POST', '/api/admin/ui-config/cors', { frontendApiOrigins: ['*'] })
  })

  it('refuses what is not an origin (400) and callers who are not admins (403)', async () => {
    for (const bad of ['https://shop.example.com/path', 'javascript:alert(1)', 'shop.example.com', 'https://user@shop.example.com', 'https://shop.example.com?x=1', 'ftp://shop.example.com']) {
      const res = await t.call('POST', '/api/admin/ui-config/cors', { body: { frontendApiOrigins: [bad] } })
      expect(res.status, bad).toBe(400)
      expect(res.body).toMatchObject({ name: 'ValidationError' })
    }
    const editor = await createUser(t, 'Editor')
    expect((await editor.call('POST', '/api/admin/ui-config/cors', { body: { frontendApiOrigins: ['*'] } })).status).toBe(403)
    const client = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret
    expect((await t.call('POST', '/api/admin/ui-config/cors', { token: client, body: { frontendApiOrigins: ['*'] } })).status).toBe(403)
  })
})

describe('telemetry and UI errors', () => {
  it('says Flagpost collects no telemetry', async () => {
    expect((await ok(t, 'GET', '/api/admin/telemetry/settings')).body).toEqual({ versionInfoCollectionEnabled: false, featureInfoCollectionEnabled: false })
  })

  it('takes a UI error report from a signed-in caller, writing nothing; 400 without a message', async () => {
    const viewer = await createUser(t, 'Viewer')
    const before = await t.query('select count(*)::int as n from events')
    expect((await viewer.call('POST', '/api/admin/record-ui-error', { body: { errorMessage: 'boom', errorStack: 'at x' } })).status).toBe(204)
    expect(await t.query('select count(*)::int as n from events')).toEqual(before)
    expect((await viewer.call('POST', '/api/admin/record-ui-error', { body: {} })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/record-ui-error', { token: null, body: { errorMessage: 'boom' } })).status).toBe(401)
  })
})
