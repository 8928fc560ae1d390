// Flag types and the flag search at the edge: the lifetime write is one statement and the search one query (the count
// in it), over Neon's HTTP, with no WebSocket (no interactive transaction).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { createFlag, createProject, ok } from './helpers/factories.js'

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
})
afterAll(() => t.close())

const trips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })

describe('flag types and the flag search at the edge', () => {
  it('PUT /api/admin/feature-types/{id}/lifetime: one statement', async () => {
    await ok(t, 'GET', '/api/admin/feature-types')
    const res = await t.call('PUT', '/api/admin/feature-types/experiment/lifetime', { body: { lifetimeDays: 30 } })
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    expect(res.body.lifetimeDays).toBe(30)
  })

  it('GET /api/admin/search/features: one query, the total in it', async () => {
    const project = await createProject(t)
    await createFlag(t, {}, project)
    await ok(t, 'GET', '/api/admin/feature-types')
    const res = await t.call('GET', `/api/admin/search/features?project=IS:${project}&tag=EXCLUDE_ALL:team:x&sortBy=lastSeenAt`)
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    expect(res.body.total).toBe(1)
  })
})
