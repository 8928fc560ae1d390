import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { fresh, ok } from './helpers/factories.js'
import { createSignedInUser } from './helpers/users.js'

let t: TestApp
let now = new Date('2026-06-01T12:00:00Z')
beforeAll(async () => {
  t = await createTestApp({ now: () => now })
})
afterAll(() => t.close())

const inHours = (hours: number) => new Date(now.getTime() + hours * 3_600_000).toISOString()
/** A fresh token of the type (client and frontend ones for development); the answer holds its secret. */
const tokenOfType = async (type: 'admin' | 'client' | 'frontend', body: Record<string, unknown> = {}) =>
  (await ok(t, 'POST', '/api/admin/api-tokens', { tokenName: fresh(type), type, ...(type === 'admin' ? {} : { environment: 'development' }), ...body })).body as { secret: string; tokenName: string; expiresAt: string | null }
const setExpiry = (token: string, expiresAt: unknown, as?: string) => t.call('PUT', `/api/admin/api-tokens/${encodeURIComponent(token)}`, { body: { expiresAt }, token: as })

/** A request each kind of token makes: the admin API, the client API, the frontend API. */
const use = (type: 'admin' | 'client' | 'frontend', secret: string) =>
  type === 'admin' ? t.call('GET', '/api/admin/projects', { token: secret }) : type === 'client' ? t.call('GET', '/api/client/features', { token: secret }) : t.call('POST', '/api/frontend', { token: secret, body: {} })

/** Runs `check` at a later time of the app's clock, then goes back. */
async function at<T>(time: string, check: () => Promise<T>): Promise<T> {
  const saved = now
  now = new Date(time)
  try {
    return await check()
  } finally {
    now = saved
  }
}

describe('PUT /api/admin/api-tokens/{token}', () => {
  it('sets the expiry, with api-token-updated holding the token as it was and is, never its secret', async () => {
    const token = await tokenOfType('client')
    const expiresAt = inHours(48)
    const res = await setExpiry(token.secret, expiresAt)
    expect(res.status, res.text).toBe(200)
    const listed = (await t.call('GET', '/api/admin/api-tokens')).body.tokens.find((x: { tokenName: string }) => x.tokenName === token.tokenName)
    expect(listed.expiresAt).toBe(expiresAt)
    const events = await t.query<{ data: any; pre_data: any; environment: string; created_by: string }>("select data, pre_data, environment, created_by from events where type = 'api-token-updated' and data->>'tokenName' = $1", [token.tokenName])
    expect(events).toEqual([{ data: expect.objectContaining({ tokenName: token.tokenName, type: 'client', expiresAt }), pre_data: expect.objectContaining({ tokenName: token.tokenName, expiresAt: null }), environment: 'development', created_by: 'test-admin' }])
    expect(JSON.stringify(events)).not.toContain(token.secret.split('.')[1])
  })

  it('takes the masked secret the listing shows, and writes no event when the expiry is already that', async () => {
    const token = await tokenOfType('frontend', { expiresAt: inHours(5) })
    const masked = (await t.call('GET', '/api/admin/api-tokens')).body.tokens.find((x: { tokenName: string }) => x.tokenName === token.tokenName).secret
    expect((await setExpiry(masked, inHours(10))).status).toBe(200)
    expect((await setExpiry(masked, inHours(10))).status).toBe(200)
    expect(await t.query("select id from events where type = 'api-token-updated' and data->>'tokenName' = $1", [token.tokenName])).toHaveLength(1)
  })

  it('refuses bad input with 4xx and an unknown token with 404, writing nothing', async () => {
    const token = await tokenOfType('client')
    const before = (await t.query<{ n: number }>("select count(*)::int as n from events where type = 'api-token-updated'"))[0]!.n
    for (const body of [{}, { expiresAt: 'tomorrow' }, { expiresAt: null }, { expiresAt: 12 }]) {
      const res = await t.call('PUT', `/api/admin/api-tokens/${encodeURIComponent(token.secret)}`, { body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    expect((await t.call('PUT', `/api/admin/api-tokens/${encodeURIComponent(token.secret)}`, { body: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
    const unknown = await setExpiry('default:development.nothing-like-this', inHours(1))
    expect(unknown.status).toBe(404)
    expect(unknown.body.name).toBe('NotFoundError')
    expect((await t.query<{ n: number }>("select count(*)::int as n from events where type = 'api-token-updated'"))[0]!.n).toBe(before)
    expect((await t.query('select expires_at from api_tokens where token_name = $1', [token.tokenName]))[0]).toEqual({ expires_at: null })
  })

  it('needs the permission that creates a token of its type: an Editor may change a client token, not an admin token', async () => {
    const editor = await createSignedInUser(t, fresh('ed'), 'Editor')
    const viewer = await createSignedInUser(t, fresh('vi'), 'Viewer')
    const client = await tokenOfType('client')
    const admin = await tokenOfType('admin')
    expect((await editor.call('PUT', `/api/admin/api-tokens/${encodeURIComponent(client.secret)}`, { body: { expiresAt: inHours(3) } })).status).toBe(200)
    const refused = await editor.call('PUT', `/api/admin/api-tokens/${encodeURIComponent(admin.secret)}`, { body: { expiresAt: inHours(3) } })
    expect(refused.status).toBe(403)
    expect(refused.body.message).toContain('permission=ADMIN')
    expect((await viewer.call('PUT', `/api/admin/api-tokens/${encodeURIComponent(client.secret)}`, { body: { expiresAt: inHours(3) } })).status).toBe(403)
    expect((await t.query('select expires_at from api_tokens where token_name = $1', [admin.tokenName]))[0]).toEqual({ expires_at: null })
  })

  it("does not reach a user's personal access token", async () => {
    const user = await createSignedInUser(t, fresh('pat-owner'), 'Editor')
    const pat = (await user.call('POST', '/api/admin/user/tokens', { body: { description: 'mine', expiresAt: inHours(24) } })).body.secret
    expect((await setExpiry(pat, inHours(1000))).status).toBe(404)
  })
})

describe('expired tokens', () => {
  for (const type of ['admin', 'client', 'frontend'] as const) {
    it(`refuses a ${type} token from the request after its expiry is set in the past, though it was just remembered`, async () => {
      const token = await tokenOfType(type)
      expect((await use(type, token.secret)).status).toBe(200)
      expect((await setExpiry(token.secret, '2026-01-01T00:00:00Z')).status).toBe(200)
      const refused = await use(type, token.secret)
      expect(refused.status).toBe(401)
      expect(refused.body.name).toBe('AuthenticationRequired')
      // Moved to the future again, it works again.
      expect((await setExpiry(token.secret, inHours(1))).status).toBe(200)
      expect((await use(type, token.secret)).status).toBe(200)
    })

    it(`refuses a remembered ${type} token once its time has come`, async () => {
      const token = await tokenOfType(type, { expiresAt: inHours(1) })
      expect((await use(type, token.secret)).status).toBe(200)
      expect(await at(inHours(0.5), () => use(type, token.secret).then((r) => r.status))).toBe(200)
      expect(await at(inHours(1), () => use(type, token.secret).then((r) => r.status))).toBe(401)
    })
  }
})
