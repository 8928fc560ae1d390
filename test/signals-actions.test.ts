import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { fresh, ok } from './helpers/factories.js'
import { createSignedInUser } from './helpers/users.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ signalsPerMinute: 30 })
})
afterAll(() => t.close())

const SE = '/api/admin/signal-endpoints'

/** A fresh signal endpoint (enabled) and one of its tokens. */
async function endpointWithToken(body: Record<string, unknown> = {}) {
  const endpoint = (await ok(t, 'POST', SE, { name: fresh('alerts'), ...body })).body as { id: number; name: string; url: string }
  const token = (await ok(t, 'POST', `${SE}/${endpoint.id}/tokens`, { name: 'grafana' })).body as { id: number; token: string; name: string }
  return { endpoint, token }
}

/** Sends a signal with the token (`Bearer <token>`). */
const send = (name: string, token: string | null, body?: unknown, headers: Record<string, string> = {}) =>
  t.call('POST', `/api/signal-endpoint/${name}`, { token: token === null ? null : `Bearer ${token}`, body, headers })

const lastEvent = async (type: string) =>
  (await t.query<{ data: any; pre_data: any; created_by: string }>('select data, pre_data, created_by from events where type = $1 order by id desc limit 1', [type]))[0]

describe('signal endpoints', () => {
  it('are created, listed with their tokens, updated, switched and deleted, each with its event', async () => {
    const name = fresh('grafana')
    const created = await t.call('POST', SE, { body: { name, description: 'Alerts from Grafana' } })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({ id: expect.any(Number), name, description: 'Alerts from Grafana', enabled: true, tokens: [], url: `http://localhost/api/signal-endpoint/${name}` })
    const id = created.body.id
    expect(await lastEvent('signal-endpoint-created')).toMatchObject({ data: { id, name, enabled: true }, created_by: 'test-admin' })

    const token = await ok(t, 'POST', `${SE}/${id}/tokens`, { name: 'prod' })
    const listed = (await t.call('GET', SE)).body.signalEndpoints.find((e: { id: number }) => e.id === id)
    expect(listed.tokens).toEqual([{ id: token.body.id, name: 'prod', signalEndpointId: id, createdAt: expect.any(String), createdByUserId: -42 }])

    const renamed = fresh('renamed')
    const updated = await t.call('PUT', `${SE}/${id}`, { body: { name: renamed, description: null } })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.body).toMatchObject({ id, name: renamed, description: null, enabled: true, url: `http://localhost/api/signal-endpoint/${renamed}`, tokens: [{ id: token.body.id }] })
    expect(await lastEvent('signal-endpoint-updated')).toMatchObject({ data: { name: renamed }, pre_data: { name } })

    const off = await t.call('POST', `${SE}/${id}/off`)
    expect(off.body.enabled).toBe(false)
    expect(await lastEvent('signal-endpoint-updated')).toMatchObject({ data: { enabled: false }, pre_data: { enabled: true } })
    const events = async () => (await t.query<{ n: number }>("select count(*)::int as n from events where type = 'signal-endpoint-updated' and (data->>'id')::int = $1", [id]))[0]!.n
    const before = await events()
    expect((await t.call('POST', `${SE}/${id}/off`)).status).toBe(200)
    expect(await events()).toBe(before)

    expect((await t.call('DELETE', `${SE}/${id}`)).status).toBe(200)
    expect(await lastEvent('signal-endpoint-deleted')).toMatchObject({ pre_data: { id, name: renamed } })
    expect(await t.query('select id from signal_endpoint_tokens where signal_endpoint_id = $1', [id])).toEqual([])
    expect((await t.call('DELETE', `${SE}/${id}`)).status).toBe(404)
    expect((await t.call('PUT', `${SE}/${id}`, { body: { name: fresh('x') } })).status).toBe(404)
  })

  it('refuse a taken name (409) and a name that is not URL-friendly (400)', async () => {
    const { endpoint } = await endpointWithToken()
    const taken = await t.call('POST', SE, { body: { name: endpoint.name } })
    expect(taken.status).toBe(409)
    expect(taken.body.name).toBe('NameExistsError')
    const other = (await ok(t, 'POST', SE, { name: fresh('other') })).body
    expect((await t.call('PUT', `${SE}/${other.id}`, { body: { name: endpoint.name } })).status).toBe(409)
    for (const name of ['has space', 'slash/y', '', 'ü']) expect((await t.call('POST', SE, { body: { name } })).status, name).toBe(400)
  })

  it('are an admin’s: an Editor may not read or change them', async () => {
    const editor = await createSignedInUser(t, fresh('ed'), 'Editor')
    expect((await editor.call('GET', SE)).status).toBe(403)
    expect((await editor.call('POST', SE, { body: { name: fresh('nope') } })).status).toBe(403)
    expect((await editor.call('GET', '/api/admin/signals')).status).toBe(403)
  })
})

describe('signal endpoint tokens', () => {
  it('show the token once, stored hashed, never in a listing or an event', async () => {
    const { endpoint, token } = await endpointWithToken()
    expect(token.token).toMatch(/^[0-9a-f]{64}$/)
    const listing = await t.call('GET', `${SE}/${endpoint.id}/tokens`)
    expect(listing.body.signalEndpointTokens).toEqual([{ id: token.id, name: 'grafana', signalEndpointId: endpoint.id, createdAt: expect.any(String), createdByUserId: -42 }])
    for (const text of [listing.text, (await t.call('GET', SE)).text, JSON.stringify(await t.query('select * from events')), JSON.stringify(await t.query('select * from signal_endpoint_tokens'))]) {
      expect(text).not.toContain(token.token)
    }
    expect(await lastEvent('signal-endpoint-token-created')).toMatchObject({ data: { id: token.id, name: 'grafana', signalEndpointId: endpoint.id } })
  })

  it('are renamed and deleted (then refused), only through their own endpoint', async () => {
    const { endpoint, token } = await endpointWithToken()
    const other = await endpointWithToken()
    expect((await t.call('PUT', `${SE}/${other.endpoint.id}/tokens/${token.id}`, { body: { name: 'x' } })).status).toBe(404)
    const renamed = await t.call('PUT', `${SE}/${endpoint.id}/tokens/${token.id}`, { body: { name: 'alertmanager' } })
    expect(renamed.status, renamed.text).toBe(200)
    expect(renamed.body).toMatchObject({ id: token.id, name: 'alertmanager' })
    expect(await lastEvent('signal-endpoint-token-updated')).toMatchObject({ data: { name: 'alertmanager' }, pre_data: { name: 'grafana' } })
    expect((await send(endpoint.name, token.token, { a: 1 })).status).toBe(200)
    expect((await t.call('DELETE', `${SE}/${other.endpoint.id}/tokens/${token.id}`)).status).toBe(404)
    expect((await t.call('DELETE', `${SE}/${endpoint.id}/tokens/${token.id}`)).status).toBe(200)
    expect(await lastEvent('signal-endpoint-token-deleted')).toMatchObject({ pre_data: { id: token.id, name: 'alertmanager' } })
    expect((await send(endpoint.name, token.token, { a: 2 })).status).toBe(401)
  })

  it('refuse an unknown endpoint (404) and an empty name (400)', async () => {
    expect((await t.call('POST', `${SE}/999999/tokens`, { body: { name: 'x' } })).status).toBe(404)
    const { endpoint } = await endpointWithToken()
    expect((await t.call('POST', `${SE}/${endpoint.id}/tokens`, { body: { name: ' ' } })).status).toBe(400)
  })
})

describe('POST /api/signal-endpoint/{name}', () => {
  it('stores any JSON payload as a signal of the endpoint, listed newest first with the token’s name', async () => {
    const { endpoint, token } = await endpointWithToken()
    const first = await send(endpoint.name, token.token, { type: 'alert', data: { severity: 'critical', count: 3 } })
    expect(first.status, first.text).toBe(200)
    expect((await send(endpoint.name, token.token)).status).toBe(200)
    expect((await send(endpoint.name, token.token, ['a', 1])).status).toBe(200)
    const res = await t.call('GET', `${SE}/${endpoint.id}/signals`)
    expect(res.status).toBe(200)
    expect(res.body.signalEndpointSignals.map((s: { payload: unknown }) => s.payload)).toEqual([['a', 1], {}, { type: 'alert', data: { severity: 'critical', count: 3 } }])
    expect(res.body.signalEndpointSignals[0]).toMatchObject({ source: 'signal-endpoint', sourceId: endpoint.id, tokenName: 'grafana' })
    const page = await t.call('GET', `${SE}/${endpoint.id}/signals?limit=1&offset=1`)
    expect(page.body.signalEndpointSignals.map((s: { payload: unknown }) => s.payload)).toEqual([{}])
    const query = await t.call('GET', '/api/admin/signals?limit=2')
    expect(query.body.total).toBeGreaterThanOrEqual(3)
    expect(query.body.signals[0]).toMatchObject({ sourceId: endpoint.id, sourceName: endpoint.name, payload: ['a', 1] })
  })

  it('takes only a token of this endpoint: none, another endpoint’s, an admin token or a personal access token is a 401', async () => {
    const { endpoint } = await endpointWithToken()
    const other = await endpointWithToken()
    const user = await createSignedInUser(t, fresh('admin'), 'Admin')
    const pat = (await user.call('POST', '/api/admin/user/tokens', { body: { description: 'x', expiresAt: '2099-01-01T00:00:00Z' } })).body.secret
    for (const token of [null, other.token.token, t.adminToken, pat, 'not-a-token']) {
      const res = await send(endpoint.name, token, { x: 1 })
      expect(res.status, String(token)).toBe(401)
      expect(res.body.name).toBe('AuthenticationRequired')
    }
    const withCookie = await t.call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: null, headers: { cookie: user.cookie }, body: { x: 1 } })
    expect(withCookie.status).toBe(401)
    expect(await t.query('select id from signals where source_id = $1', [endpoint.id])).toEqual([])
  })

  it('cannot call the admin API with a signal endpoint token', async () => {
    const { token } = await endpointWithToken()
    for (const path of ['/api/admin/projects', '/api/admin/signal-endpoints', '/api/admin/user']) {
      expect((await t.call('GET', path, { token: token.token })).status, path).toBe(401)
      expect((await t.call('GET', path, { token: `Bearer ${token.token}` })).status, path).toBe(401)
    }
    expect((await t.call('GET', '/api/client/features', { token: token.token })).status).toBe(401)
  })

  it('answers 404 while the endpoint is switched off, for an unknown name 401, and refuses bad bodies', async () => {
    const { endpoint, token } = await endpointWithToken()
    await ok(t, 'POST', `${SE}/${endpoint.id}/off`)
    const off = await send(endpoint.name, token.token, { x: 1 })
    expect(off.status).toBe(404)
    expect(off.body.name).toBe('NotFoundError')
    await ok(t, 'POST', `${SE}/${endpoint.id}/on`)
    expect((await send(endpoint.name, token.token, { x: 1 })).status).toBe(200)
    expect((await send(fresh('nowhere'), token.token, { x: 1 })).status).toBe(401)
    expect((await send(endpoint.name, token.token, 'not json', { 'content-type': 'text/plain' })).status).toBe(415)
    expect((await send(endpoint.name, token.token, '{"broken": ', { 'content-type': 'application/json' })).status).toBe(400)
    const tooLarge = await send(endpoint.name, token.token, { blob: 'x'.repeat(70 * 1024) })
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.body.name).toBe('PayloadTooLargeError')
    expect(await t.query('select id from signals where source_id = $1', [endpoint.id])).toHaveLength(1)
  })

  it('is rate-limited per endpoint: 429 with Retry-After past the limit, before the token is looked at', async () => {
    const { endpoint, token } = await endpointWithToken()
    const statuses: number[] = []
    for (let i = 0; i < 31; i++) statuses.push((await send(endpoint.name, token.token, { i })).status)
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true)
    const limited = await send(endpoint.name, token.token, { i: 31 })
    expect(limited.status).toBe(429)
    expect(limited.body.name).toBe('TooManyRequestsError')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await send(endpoint.name, null, {})).status).toBe(429)
    // Another endpoint has its own count.
    const other = await endpointWithToken()
    expect((await send(other.endpoint.name, other.token.token, {})).status).toBe(200)
  })
})
