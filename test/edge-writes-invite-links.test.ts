// Invite links at the edge: making and changing one is a read and one statement over Neon's HTTP; signing up with one
// is a read and one statement (the user, the link's record of them, the session and both events), no WebSocket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { ok } from './helpers/factories.js'

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
})
afterAll(() => t.close())

const trips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })
const LINKS = '/api/admin/invite-link/tokens'

describe('invite links at the edge', () => {
  it('creates, updates and lists links, and signs a person up, in at most two round trips each', async () => {
    await ok(t, 'GET', LINKS)
    const created = await t.call('POST', LINKS, { body: { name: 'edge invite', expiresAt: new Date(Date.now() + 86_400_000).toISOString(), role: 'Editor' } })
    expect(created.status, created.text).toBe(201)
    expect(trips(created)).toEqual({ http: 2, webSocket: 0 })
    const secret = created.body.secret as string
    const updated = await t.call('PUT', `${LINKS}/${secret}`, { body: { enabled: false } })
    expect(updated.status, updated.text).toBe(200)
    expect(trips(updated)).toEqual({ http: 2, webSocket: 0 })
    await ok(t, 'PUT', `${LINKS}/${secret}`, { enabled: true })
    const listed = await t.call('GET', LINKS)
    expect(trips(listed)).toEqual({ http: 1, webSocket: 0 })

    const valid = await t.call('GET', `/invite/${secret}/validate`, { token: null })
    expect(valid.status).toBe(200)
    expect(trips(valid)).toEqual({ http: 1, webSocket: 0 })
    const signedUp = await t.call('POST', `/invite/${secret}/signup`, { token: null, body: { email: 'edge.joiner@example.com', name: 'Edge Joiner', password: 'edge-joiner-password' } })
    expect(signedUp.status, signedUp.text).toBe(200)
    expect(trips(signedUp)).toEqual({ http: 2, webSocket: 0 })
    expect(signedUp.headers.get('set-cookie')).toMatch(/flagpost-session=/)
    expect(await t.query(`select count(*)::int as n from sessions where user_id = $1`, [signedUp.body.id])).toEqual([{ n: 1 }])
    expect(await t.query(`select type from events where type like 'public-signup-token-%' or (type = 'user-created' and created_by = 'edge.joiner@example.com') order by id`)).toEqual([
      { type: 'public-signup-token-created' },
      { type: 'public-signup-token-updated' },
      { type: 'public-signup-token-updated' },
      { type: 'user-created' },
      { type: 'public-signup-token-user-added' },
    ])
  })
})
