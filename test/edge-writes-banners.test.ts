// Banners at the edge: each write is one statement over Neon's HTTP (the statement decides and writes its event),
// with no WebSocket, and the list one query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { ok } from './helpers/factories.js'

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
})
afterAll(() => t.close())

const trips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })

describe('banners at the edge', () => {
  it('creates, updates, switches, lists and deletes a banner in one round trip each, with their events', async () => {
    await ok(t, 'GET', '/api/admin/banners')
    const created = await t.call('POST', '/api/admin/banners', { body: { message: 'Edge banner' } })
    expect(created.status, created.text).toBe(201)
    expect(trips(created)).toEqual({ http: 1, webSocket: 0 })
    const id = created.body.id as number
    const updated = await t.call('PUT', `/api/admin/banners/${id}`, { body: { message: 'Edge banner, changed', variant: 'success' } })
    expect(updated.status, updated.text).toBe(200)
    expect(trips(updated)).toEqual({ http: 1, webSocket: 0 })
    expect(updated.body).toMatchObject({ id, message: 'Edge banner, changed', variant: 'success', enabled: true })
    const off = await t.call('POST', `/api/admin/banners/${id}/off`)
    expect(trips(off)).toEqual({ http: 1, webSocket: 0 })
    expect(off.body.enabled).toBe(false)
    const listed = await t.call('GET', '/api/admin/banners')
    expect(trips(listed)).toEqual({ http: 1, webSocket: 0 })
    expect(listed.body.banners).toContainEqual(off.body)
    const deleted = await t.call('DELETE', `/api/admin/banners/${id}`)
    expect(deleted.status, deleted.text).toBe(200)
    expect(trips(deleted)).toEqual({ http: 1, webSocket: 0 })
    expect(await t.query(`select type from events where type like 'banner-%' order by id`)).toEqual([
      { type: 'banner-created' },
      { type: 'banner-updated' },
      { type: 'banner-updated' },
      { type: 'banner-deleted' },
    ])
    const missing = await t.call('PUT', `/api/admin/banners/${id}`, { body: { message: 'x' } })
    expect(missing.status).toBe(404)
    expect(trips(missing)).toEqual({ http: 1, webSocket: 0 })
  })
})
