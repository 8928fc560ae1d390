import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let viewer: TestUser
let editor: TestUser
let admin: TestUser
beforeAll(async () => {
  t = await createTestApp()
  viewer = await createSignedInUser(t, 'vi', 'Viewer')
  editor = await createSignedInUser(t, 'ed', 'Editor')
  admin = await createSignedInUser(t, 'ad', 'Admin')
})
afterAll(() => t.close())

const PATH = '/api/admin/auth/oidc/settings'
const SECRET = 'oidc-client-secret-0123456789'
const save = (body: unknown, token?: string | null) => t.call('POST', PATH, { body, token })
const valid = {
  enabled: true,
  discoverUrl: 'https://accounts.example.com/.well-known/openid-configuration',
  clientId: 'flagpost',
  secret: SECRET,
  autoCreate: true,
  enableSingleSignOut: false,
  defaultRootRole: 'Editor',
  emailDomains: 'Example.com, example.org',
  acrValues: 'urn:mace:incommon:iap:silver phr',
  idTokenSigningAlgorithm: 'RS384',
  enableGroupSyncing: true,
  groupJsonPath: 'groups',
  addGroupsScope: true,
}
const stored = async (app = t) => (await app.query<{ content: any }>("select content from settings where name = 'oidc'"))[0]?.content
/** Runs `test` on an app of its own: the settings are one per app, and other tests save theirs. */
async function onOwnApp(test: (app: TestApp) => Promise<void>) {
  const app = await createTestApp()
  try {
    await test(app)
  } finally {
    await app.close()
  }
}

describe('OIDC settings (operation 6)', () => {
  it('are disabled before any are saved', async () => {
    await onOwnApp(async (app) => {
      const res = await app.call('GET', PATH)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ enabled: false })
    })
  })

  it('are saved with enabled: true and every field, answering 200 with the stored settings and the secret masked', async () => {
    const res = await save(valid)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ ...valid, secret: '********', emailDomains: 'example.com,example.org' })
    expect((await stored()).secret).toBe(SECRET)
    expect((await t.call('GET', PATH)).body).toEqual(res.body)
  })

  it('record setting-created first, then setting-updated, without the secret', async () => {
    await onOwnApp(async (app) => {
      expect((await app.call('POST', PATH, { body: valid })).status).toBe(200)
      expect((await app.call('POST', PATH, { body: { ...valid, clientId: 'flagpost-2' } })).status).toBe(200)
      const events = await app.query<{ type: string; data: any; pre_data: any }>("select type, data, pre_data from events where type like 'setting-%' order by id")
      expect(events.map((e) => e.type)).toEqual(['setting-created', 'setting-updated'])
      expect(events[0]!.data).toMatchObject({ id: 'oidc', enabled: true, clientId: 'flagpost', secretChanged: true })
      expect(events[1]!.data).toMatchObject({ clientId: 'flagpost-2', secretChanged: false })
      expect(events[1]!.pre_data).toMatchObject({ clientId: 'flagpost' })
      expect(JSON.stringify(events)).not.toContain(SECRET)
    })
  })

  it('keep the stored secret when the mask is sent back', async () => {
    expect((await save(valid)).status).toBe(200)
    const res = await save({ ...valid, secret: '********', clientId: 'flagpost-3' })
    expect(res.status, res.text).toBe(200)
    expect((await stored()).secret).toBe(SECRET)
    const [event] = await t.query<{ data: any }>("select data from events where type = 'setting-updated' order by id desc limit 1")
    expect(event!.data.secretChanged).toBe(false)
  })

  it('take a new secret when one is sent', async () => {
    await save({ ...valid, secret: 'another-secret' })
    expect((await stored()).secret).toBe('another-secret')
    await save(valid)
  })

  it('let every field be left out with enabled: false (or no enabled)', async () => {
    for (const body of [{ enabled: false }, {}, { enabled: false, clientId: '', secret: '', discoverUrl: '' }]) {
      const res = await save(body)
      expect(res.status, res.text).toBe(200)
      expect(res.body).toEqual(body.enabled === false ? { enabled: false } : {})
    }
    await save(valid)
  })

  it('let defaultRootRoleId win over defaultRootRole', async () => {
    const res = await save({ ...valid, defaultRootRole: 'Viewer', defaultRootRoleId: 1 })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ defaultRootRoleId: 1, defaultRootRole: 'Admin' })
  })

  it.each([
    ['enabled without clientId', { enabled: true, secret: 's' }],
    ['enabled without secret', { enabled: true, clientId: 'c' }],
    ['enabled with an empty secret', { enabled: true, clientId: 'c', secret: '' }],
    ['an http discoverUrl', { ...valid, discoverUrl: 'http://accounts.example.com/.well-known/openid-configuration' }],
    ['a discoverUrl that is not a URL', { ...valid, discoverUrl: 'accounts.example.com' }],
    ['an unknown signing algorithm', { ...valid, idTokenSigningAlgorithm: 'HS256' }],
    ['a defaultRootRole that is not Viewer, Editor or Admin', { ...valid, defaultRootRole: 'Owner' }],
    ['an unknown defaultRootRoleId', { ...valid, defaultRootRoleId: 99 }],
    ['a defaultRootRoleId of a project role', { ...valid, defaultRootRoleId: 4 }],
    ['emailDomains that are not domains', { ...valid, emailDomains: 'example.com; evil' }],
    ['acrValues with a control character', { ...valid, acrValues: 'a\tb' }],
    ['an unknown field', { ...valid, clientSecret: 'x' }],
    ['a field of the wrong type', { ...valid, autoCreate: 'yes' }],
    ['enabled that is not a boolean', { ...valid, enabled: 'true' }],
    ['a null value', { ...valid, groupJsonPath: null }],
    ['a body that is not an object', [valid]],
  ])('answer 400 for %s and change nothing', async (_, body) => {
    const before = await stored()
    const res = await save(body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(await stored()).toEqual(before)
  })

  it('answer 400 for enabled with the mask as secret when no secret is stored', async () => {
    const app = await createTestApp()
    try {
      const res = await app.call('POST', PATH, { body: { enabled: true, clientId: 'c', secret: '********' } })
      expect(res.status).toBe(400)
    } finally {
      await app.close()
    }
  })

  it('answer 415 for a body that is not JSON', async () => {
    const res = await t.call('POST', PATH, { body: 'enabled=true', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(res.status).toBe(415)
    expect(res.body.name).toBe('ContentTypeerror')
  })

  it('are for admins only: 401 without credentials, 403 NoAccessError naming ADMIN for Viewers and Editors', async () => {
    expect((await save(valid, null)).status).toBe(401)
    expect((await t.call('GET', PATH, { token: null })).status).toBe(401)
    for (const user of [viewer, editor]) {
      for (const res of [await user.call('POST', PATH, { body: valid }), await user.call('GET', PATH)]) {
        expect(res.status).toBe(403)
        expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining('permission=ADMIN') })
      }
    }
    expect((await admin.call('POST', PATH, { body: valid })).status).toBe(200)
  })

  it('are reset by DELETE: 204, read as disabled again, with setting-deleted carrying them without the secret', async () => {
    await onOwnApp(async (app) => {
      expect((await app.call('POST', PATH, { body: valid })).status).toBe(200)
      const res = await app.call('DELETE', PATH)
      expect(res.status, res.text).toBe(204)
      expect((await app.call('GET', PATH)).body).toEqual({ enabled: false })
      expect(await stored(app)).toBeUndefined()
      const [event] = await app.query<{ type: string; data: any; pre_data: any }>("select type, data, pre_data from events where type = 'setting-deleted'")
      expect(event).toMatchObject({ type: 'setting-deleted', data: null, pre_data: { id: 'oidc', enabled: true, clientId: 'flagpost' } })
      expect(JSON.stringify(event)).not.toContain(SECRET)
      // Nothing stored: nothing to reset, and nothing recorded.
      expect((await app.call('DELETE', PATH)).status).toBe(204)
      expect(await app.query("select id from events where type = 'setting-deleted'")).toHaveLength(1)
    })
  })

  it('are reset by admins only: 401 without credentials, 403 for Viewers and Editors, keeping them', async () => {
    expect((await save(valid)).status).toBe(200)
    expect((await t.call('DELETE', PATH, { token: null })).status).toBe(401)
    for (const user of [viewer, editor]) {
      const res = await user.call('DELETE', PATH)
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining('permission=ADMIN') })
    }
    expect((await stored())?.clientId).toBe('flagpost')
    expect((await admin.call('DELETE', PATH)).status).toBe(204)
    expect(await stored()).toBeUndefined()
  })

  it('never show the secret in a response or an event', async () => {
    const responses = [await t.call('GET', PATH), await admin.call('GET', PATH), await save(valid)]
    expect(JSON.stringify(responses.map((r) => r.body))).not.toContain(SECRET)
    expect(JSON.stringify(await t.query('select * from events'))).not.toContain(SECRET)
  })
})
