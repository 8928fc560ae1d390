// Signal endpoints and action sets at the edge: each admin write is one statement (one round trip), and a signal is two
// (the token with its endpoint and the action sets listening, then the signal with the runs it queues), opening no
// WebSocket; the runs are made after the response, in the request's background work (waitUntil on Workers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { fresh, ok } from './helpers/factories.js'

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
  // The admin token looked up once and remembered: the counts below are the routes' own.
  await ok(t, 'GET', '/api/admin/projects')
})
afterAll(() => t.close())

const roundTrips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })
const SE = '/api/admin/signal-endpoints'

describe('signal endpoints at the edge', () => {
  it('are created, given a token, switched, updated and deleted in one round trip each', async () => {
    const created = await t.call('POST', SE, { body: { name: fresh('edge-alerts') } })
    expect(created.status, created.text).toBe(201)
    expect(roundTrips(created)).toEqual({ http: 1, webSocket: 0 })
    const id = created.body.id as number
    const token = await t.call('POST', `${SE}/${id}/tokens`, { body: { name: 'grafana' } })
    expect(token.status, token.text).toBe(201)
    expect(roundTrips(token)).toEqual({ http: 1, webSocket: 0 })
    for (const [method, path, body] of [['POST', `${SE}/${id}/off`], ['PUT', `${SE}/${id}`, { name: fresh('edge-renamed') }], ['PUT', `${SE}/${id}/tokens/${token.body.id}`, { name: 'prod' }], ['DELETE', `${SE}/${id}/tokens/${token.body.id}`], ['DELETE', `${SE}/${id}`]] as const) {
      const res = await t.call(method, path, { body })
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(200)
      expect(roundTrips(res), `${method} ${path}`).toEqual({ http: 1, webSocket: 0 })
    }
    expect(await t.query("select type from events where type in ('signal-endpoint-created', 'signal-endpoint-updated', 'signal-endpoint-deleted') and coalesce(data, pre_data)->>'id' = $1 order by id", [String(id)])).toEqual([
      { type: 'signal-endpoint-created' },
      { type: 'signal-endpoint-updated' },
      { type: 'signal-endpoint-updated' },
      { type: 'signal-endpoint-deleted' },
    ])
  })

  it('stores a signal in two round trips: the token with its endpoint, then the signal', async () => {
    const endpoint = (await ok(t, 'POST', SE, { name: fresh('edge-signals') })).body
    const token = (await ok(t, 'POST', `${SE}/${endpoint.id}/tokens`, { name: 'grafana' })).body.token as string
    const res = await t.call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: `Bearer ${token}`, body: { alert: 'cpu' } })
    expect(res.status, res.text).toBe(200)
    expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
    expect({ afterHttp: res.afterHttp, afterWebSocket: res.afterWebSocket }).toEqual({ afterHttp: 0, afterWebSocket: 0 })
    expect(await t.query('select payload from signals where source_id = $1', [endpoint.id])).toEqual([{ payload: { alert: 'cpu' } }])
    expect((await t.call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: t.adminToken, body: {} })).status).toBe(401)
  })
})

describe('action sets at the edge', () => {
  async function killSwitch() {
    const project = (await ok(t, 'POST', '/api/admin/projects', { id: fresh('edge-kill'), name: 'Edge kill' })).body.id as string
    const flag = (await ok(t, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('edge-flag') })).body.name as string
    const endpoint = (await ok(t, 'POST', SE, { name: fresh('edge-alerts') })).body
    const token = (await ok(t, 'POST', `${SE}/${endpoint.id}/tokens`, { name: 'grafana' })).body.token as string
    const actor = (await ok(t, 'POST', '/api/admin/service-account', { username: fresh('edge-bot'), name: 'Bot', rootRole: 'Editor' })).body
    // Creating the service account forgot the remembered admin token: remember it again, so counts are the routes' own.
    await ok(t, 'GET', '/api/admin/projects')
    const body = { name: fresh('kill'), actorId: actor.id, match: { source: 'signal-endpoint', sourceId: endpoint.id, payload: { level: { operator: 'IN', values: ['critical'] } } }, actions: [{ action: 'TOGGLE_FEATURE_ON', sortOrder: 1, executionParams: { environment: 'development', featureName: flag } }] }
    return { project, flag, endpoint, token, actor, body }
  }

  it('are created, switched and deleted in one round trip each', async () => {
    const { project, body } = await killSwitch()
    const created = await t.call('POST', `/api/admin/projects/${project}/actions`, { body })
    expect(created.status, created.text).toBe(201)
    expect(roundTrips(created)).toEqual({ http: 1, webSocket: 0 })
    const id = created.body.id
    for (const [method, path, sent] of [['PUT', `/api/admin/projects/${project}/actions/${id}`, { ...body, name: fresh('renamed') }], ['POST', `/api/admin/projects/${project}/actions/${id}/off`], ['DELETE', `/api/admin/projects/${project}/actions/${id}`]] as const) {
      const res = await t.call(method, path, { body: sent })
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(200)
      expect(roundTrips(res), `${method} ${path}`).toEqual({ http: 1, webSocket: 0 })
    }
  })

  it('run after the response of a matching signal, as the service account, over HTTP only', async () => {
    const { project, flag, endpoint, token, actor, body } = await killSwitch()
    const id = (await ok(t, 'POST', `/api/admin/projects/${project}/actions`, body)).body.id
    const quiet = await t.call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: `Bearer ${token}`, body: { level: 'info' } })
    expect(roundTrips(quiet)).toEqual({ http: 2, webSocket: 0 })
    expect({ afterHttp: quiet.afterHttp, afterWebSocket: quiet.afterWebSocket }).toEqual({ afterHttp: 0, afterWebSocket: 0 })

    const res = await t.call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: `Bearer ${token}`, body: { level: 'critical' } })
    expect(res.status, res.text).toBe(200)
    expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(res.afterHttp).toBeGreaterThan(0)
    expect(res.afterWebSocket).toBe(0)
    expect(await t.query('select enabled from feature_environments where feature_name = $1 and environment = $2', [flag, 'development'])).toEqual([{ enabled: true }])
    expect(await t.query("select created_by from events where type = 'feature-environment-enabled' and feature_name = $1", [flag])).toEqual([{ created_by: actor.username }])
    const runs = (await ok(t, 'GET', `/api/admin/projects/${project}/actions/${id}/events`)).body.actionSetEvents
    expect(runs).toHaveLength(1)
    expect(runs[0]).toMatchObject({ state: 'success', signal: { payload: { level: 'critical' } }, actionSet: { actions: [{ state: 'success' }] } })
  })

  it('switch the flags of a tag after the response, as the service account, over HTTP only', async () => {
    const { project, flag, endpoint, token, actor, body } = await killSwitch()
    const tagTypes = await t.call('POST', '/api/admin/tag-types', { body: { name: 'edge-team' } })
    expect([201, 409]).toContain(tagTypes.status)
    const value = fresh('edge-tag')
    await ok(t, 'POST', `/api/admin/features/${flag}/tags`, { type: 'edge-team', value })
    const byTag = { ...body, name: fresh('by-tag'), actions: [{ action: 'TOGGLE_FEATURES_ON_BY_TAG', sortOrder: 1, executionParams: { environment: 'development', tag: `edge-team:${value}` } }] }
    await ok(t, 'GET', '/api/admin/projects')
    const created = await t.call('POST', `/api/admin/projects/${project}/actions`, { body: byTag })
    expect(created.status, created.text).toBe(201)
    expect(roundTrips(created)).toEqual({ http: 1, webSocket: 0 })
    const res = await t.call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: `Bearer ${token}`, body: { level: 'critical' } })
    expect(res.status, res.text).toBe(200)
    expect(res.afterWebSocket).toBe(0)
    expect(await t.query('select enabled from feature_environments where feature_name = $1 and environment = $2', [flag, 'development'])).toEqual([{ enabled: true }])
    expect(await t.query("select created_by from events where type = 'feature-environment-enabled' and feature_name = $1", [flag])).toEqual([{ created_by: actor.username }])
    const runs = (await ok(t, 'GET', `/api/admin/projects/${project}/actions/${created.body.id}/events`)).body.actionSetEvents
    expect(runs[0]).toMatchObject({ state: 'success', actionSet: { actions: [{ action: 'TOGGLE_FEATURES_ON_BY_TAG', state: 'success' }] } })
  })
})
