import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scrubPreview } from '../../scripts/scrub-preview.js'
import { createApp } from '../../src/app.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createPat, createSignedInUser, PASSWORD, type TestUser } from '../helpers/users.js'

// A preview runs unreviewed code on a public URL over a copy of the production database: after the scrub no
// production credential works there and nothing delivers to production integrations.

let t: TestApp
let user: TestUser
let pat: string
let clientToken: string
/** An admin token of production never used before the scrub (a used one is remembered by the process for a few seconds). */
let adminToken: string
beforeAll(async () => {
  // No background work: the deliveries the writes queue stay queued, as in a copy taken mid-flight.
  t = await createTestApp({ background: () => {} })
  user = await createSignedInUser(t, 'prod-user', 'Admin', { email: 'person@example.com' })
  pat = await createPat(user)
  const admin = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'prod-admin', type: 'admin' } })
  expect(admin.status, admin.text).toBe(201)
  adminToken = admin.body.secret
  clientToken = (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'prod-sdk', type: 'client', environment: 'development', projects: ['*'] } })).body.secret
  const hook = await t.call('POST', '/api/admin/addons', { body: { provider: 'webhook', enabled: true, parameters: { url: 'https://hooks.example.com/secret-path', authorization: 'Bearer prod' }, events: ['feature-created'] } })
  expect(hook.status, hook.text).toBe(200)
  const oidc = await t.call('POST', '/api/admin/auth/oidc/settings', {
    body: { enabled: true, discoverUrl: 'https://accounts.example.com/.well-known/openid-configuration', clientId: 'flagpost', secret: 'oidc-secret-of-production' },
  })
  expect(oidc.status, oidc.text).toBe(200)
  expect((await t.call('POST', '/api/admin/projects/default/features', { body: { name: 'queued' } })).status).toBe(201)
  expect((await t.query<{ n: number }>('select count(*)::int as n from integration_outbox'))[0]!.n).toBeGreaterThan(0)
  await scrubPreview(t.db)
})
afterAll(() => t.close())

describe('a scrubbed preview database', () => {
  it("accepts no production admin token, personal access token, SDK token or session (in the preview's own app)", async () => {
    const preview = createApp({ db: () => t.db, background: () => {} })
    const status = async (path: string, headers: Record<string, string>) => (await preview.request(path, { headers })).status
    expect(await status('/api/admin/projects', { authorization: adminToken })).toBe(401)
    expect(await status('/api/admin/projects', { authorization: pat })).toBe(401)
    expect(await status('/api/admin/projects', { cookie: user.cookie })).toBe(401)
    expect(await status('/api/client/features', { authorization: clientToken })).toBe(401)
  })

  it('signs nobody in with a production password, and keeps no e-mail address', async () => {
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username: 'prod-user', password: PASSWORD } })).status).toBe(401)
    expect(await t.query("select id from users where email like '%@example.com' or password_hash is not null")).toEqual([])
    expect(JSON.stringify(await t.query("select data, pre_data from events where type like 'user-%'"))).not.toContain('person@example.com')
  })

  it('has no integration to deliver to, nothing queued, and no OIDC secret', async () => {
    expect(await t.query('select id from addons')).toEqual([])
    expect(await t.query('select id from integration_outbox')).toEqual([])
    const [oidc] = await t.query<{ content: any }>("select content from settings where name = 'oidc'")
    expect(oidc!.content.secret).toBeUndefined()
    expect(oidc!.content.enabled).toBe(false)
  })

  it('can be scrubbed again (the workflow runs it on every push)', async () => {
    await scrubPreview(t.db)
    expect(await t.query('select id from api_tokens')).toEqual([])
  })
})
