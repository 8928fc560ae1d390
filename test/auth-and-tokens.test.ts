import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { fresh } from './helpers/factories.js'

let t: TestApp
let now = new Date('2026-06-01T12:00:00Z')
beforeAll(async () => {
  t = await createTestApp({ now: () => now })
})
afterAll(() => t.close())

const createToken = (body: unknown, token?: string) => t.call('POST', '/api/admin/api-tokens', { body, token })

describe('authentication', () => {
  it('answers 401 AuthenticationRequired without a token', async () => {
    const res = await t.call('GET', '/api/admin/projects', { token: null })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ name: 'AuthenticationRequired' })
    // No credential at all: a browser, told how to sign in, as Unleash's 401 does.
    expect(Object.keys(res.body).sort()).toEqual(['defaultHidden', 'id', 'message', 'name', 'options', 'path', 'type'])
  })

  it('answers 401 for an unknown token, with the plain error body', async () => {
    const res = await t.call('GET', '/api/admin/projects', { token: '*:*.not-a-real-token' })
    expect(res.status).toBe(401)
    expect(Object.keys(res.body).sort()).toEqual(['id', 'message', 'name'])
  })

  it('accepts the token raw or after Bearer', async () => {
    expect((await t.call('GET', '/api/admin/projects')).status).toBe(200)
    expect((await t.call('GET', '/api/admin/projects', { token: `Bearer ${t.adminToken}` })).status).toBe(200)
    expect((await t.call('GET', '/api/admin/projects', { token: `bearer   ${t.adminToken}` })).status).toBe(200)
  })

  it('answers 401 before judging the body of an anonymous request', async () => {
    const res = await t.call('POST', '/api/admin/projects', { token: null, body: '{not json', headers: { 'content-type': 'text/plain' } })
    expect(res.status).toBe(401)
  })

  it('records when a token was last seen', async () => {
    const { secret, tokenName } = await createToken({ tokenName: fresh('seen'), type: 'admin' }).then((r) => r.body)
    const seenAt = async () => (await t.query<{ seen_at: Date | null }>('select seen_at from api_tokens where token_name = $1', [tokenName]))[0]!.seen_at
    expect(await seenAt()).toBeNull()
    expect((await t.call('GET', '/api/admin/projects', { token: secret })).status).toBe(200)
    expect(await seenAt()).toEqual(now)
  })
})

describe('API tokens', () => {
  /** A fresh backend token of the default project in production: its name and secret. */
  const createBackend = async () => {
    const tokenName = fresh('checkout-backend')
    const res = await createToken({ tokenName, type: 'backend', environment: 'production', projects: ['default'] })
    expect(res.status, res.text).toBe(201)
    return { res, tokenName, clientSecret: res.body.secret as string }
  }

  it('creates a backend token whose secret is shown once and stored only hashed', async () => {
    const { res, tokenName, clientSecret } = await createBackend()
    expect(clientSecret).toMatch(/^default:production\.[0-9a-f]{64}$/)
    expect(res.body).toMatchObject({ tokenName, type: 'client', environment: 'production', project: 'default', projects: ['default'], expiresAt: null, seenAt: null })
    const rows = await t.query<Record<string, unknown>>('select * from api_tokens where token_name = $1', [tokenName])
    expect(JSON.stringify(rows)).not.toContain(clientSecret.split('.')[1])
    const event = (await t.query<{ data: Record<string, unknown> }>("select data from events where type = 'api-token-created' order by id desc limit 1"))[0]!
    expect(event.data).toMatchObject({ tokenName, type: 'client' })
    expect(JSON.stringify(event)).not.toContain(clientSecret.split('.')[1])
  })

  it('makes tokens for several projects and frontend tokens', async () => {
    const multi = await createToken({ tokenName: fresh('multi'), type: 'client', environment: 'development', projects: ['default', 'default'] })
    expect(multi.body.projects).toEqual(['default'])
    const all = await createToken({ tokenName: fresh('fe'), type: 'FRONTEND' })
    expect(all.status).toBe(201)
    expect(all.body).toMatchObject({ type: 'frontend', environment: 'development', projects: ['*'] })
    expect(all.body.secret).toMatch(/^\*:development\./)
  })

  it('creates admin tokens that work on the admin API', async () => {
    const res = await createToken({ tokenName: fresh('ops'), type: 'admin' })
    expect(res.status).toBe(201)
    expect(res.body.secret).toMatch(/^\*:\*\./)
    expect((await t.call('GET', '/api/admin/projects', { token: res.body.secret })).status).toBe(200)
  })

  it('refuses client and frontend tokens on the admin API with 403 NoAccessError', async () => {
    const { clientSecret } = await createBackend()
    const res = await t.call('GET', '/api/admin/projects', { token: clientSecret })
    expect(res.status).toBe(403)
    expect(res.body.name).toBe('NoAccessError')
    expect(res.body.message).toContain('permission=ADMIN')
  })

  it.each([
    ['no tokenName', { type: 'client' }],
    ['an unknown type', { tokenName: 'x', type: 'superuser' }],
    ['an unknown environment', { tokenName: 'x', type: 'client', environment: 'mars' }],
    ['an unknown project', { tokenName: 'x', type: 'client', projects: ['nope'] }],
    ['both project and projects', { tokenName: 'x', type: 'client', project: 'default', projects: ['default'] }],
    ['* with other projects', { tokenName: 'x', type: 'client', projects: ['*', 'default'] }],
    ['an expiry in the past', { tokenName: 'x', type: 'client', expiresAt: '2020-01-01T00:00:00Z' }],
    ['an expiry that is not a date', { tokenName: 'x', type: 'client', expiresAt: 'tomorrow' }],
    ['an admin token for one environment', { tokenName: 'x', type: 'admin', environment: 'production' }],
  ])('answers 400 for %s and creates nothing', async (_, body) => {
    const before = await t.query('select count(*)::int as n from api_tokens')
    const res = await createToken(body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(await t.query('select count(*)::int as n from api_tokens')).toEqual(before)
  })

  it('lists tokens with masked secrets only', async () => {
    const { tokenName, clientSecret } = await createBackend()
    const fe = (await createToken({ tokenName: fresh('fe'), type: 'frontend' })).body.tokenName
    const ops = (await createToken({ tokenName: fresh('ops'), type: 'admin' })).body.tokenName
    const res = await t.call('GET', '/api/admin/api-tokens')
    expect(res.status).toBe(200)
    const names = res.body.tokens.map((x: { tokenName: string }) => x.tokenName)
    expect(names).toEqual(expect.arrayContaining(['test-admin', tokenName, fe, ops]))
    const listed = res.body.tokens.find((x: { tokenName: string }) => x.tokenName === tokenName)
    expect(listed.secret).toBe(`default:production.${clientSecret.split('.')[1]!.slice(0, 6)}…`)
    expect(JSON.stringify(res.body)).not.toContain(clientSecret)
  })

  it('stops accepting an expired token', async () => {
    const res = await createToken({ tokenName: fresh('short'), type: 'admin', expiresAt: '2026-06-01T13:00:00Z' })
    expect((await t.call('GET', '/api/admin/projects', { token: res.body.secret })).status).toBe(200)
    const saved = now
    try {
      now = new Date('2026-06-01T13:00:01Z')
      expect((await t.call('GET', '/api/admin/projects', { token: res.body.secret })).status).toBe(401)
    } finally {
      now = saved
    }
  })

  it('deletes a token by its secret, records api-token-deleted, and the token stops working', async () => {
    const created = await createToken({ tokenName: 'doomed', type: 'admin' })
    const res = await t.call('DELETE', `/api/admin/api-tokens/${encodeURIComponent(created.body.secret)}`)
    expect(res.status).toBe(200)
    expect((await t.call('GET', '/api/admin/projects', { token: created.body.secret })).status).toBe(401)
    const events = await t.query<{ pre_data: { tokenName: string } }>("select pre_data from events where type = 'api-token-deleted'")
    expect(events.map((e) => e.pre_data.tokenName)).toContain('doomed')
  })

  it('deletes a token by the masked secret the listing shows', async () => {
    const created = await createToken({ tokenName: 'doomed-too', type: 'frontend' })
    const listed = (await t.call('GET', '/api/admin/api-tokens')).body.tokens.find((x: { tokenName: string }) => x.tokenName === 'doomed-too')
    expect((await t.call('DELETE', `/api/admin/api-tokens/${encodeURIComponent(listed.secret)}`)).status).toBe(200)
    expect((await t.query("select * from api_tokens where token_name = 'doomed-too'")).length).toBe(0)
    expect(created.status).toBe(201)
  })

  it('answers 404 for deleting an unknown token', async () => {
    const res = await t.call('DELETE', '/api/admin/api-tokens/nothing-like-this')
    expect(res.status).toBe(404)
    expect(res.body.name).toBe('NotFoundError')
  })
})

describe('API token events', () => {
  it('name the project and environment only when the token is for exactly one', async () => {
    await createToken({ tokenName: 'scoped-event', type: 'client', environment: 'production', projects: ['default'] })
    await createToken({ tokenName: 'wide-event', type: 'admin' })
    const rows = await t.query<{ project: string | null; environment: string | null; token: string }>(
      "select project, environment, data->>'tokenName' as token from events where type = 'api-token-created' and data->>'tokenName' in ('scoped-event', 'wide-event') order by id",
    )
    expect(rows).toEqual([
      { project: 'default', environment: 'production', token: 'scoped-event' },
      { project: null, environment: null, token: 'wide-event' },
    ])
  })
})
