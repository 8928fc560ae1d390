// Unleash Edge's calls upstream at the edge (the worker's app over Neon's driver): token validation is one query, and a
// bulk of reports from a known token is one round trip (the inbox rows and the seen tokens, together), opening no
// WebSocket; folding it runs after the response, in the request's background work (waitUntil on Workers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { createToken, fresh, ok } from './helpers/factories.js'

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
  await ok(t, 'GET', '/api/admin/projects')
})
afterAll(() => t.close())

const roundTrips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })

describe('Unleash Edge’s upstream calls at the edge', () => {
  it('validates tokens in one round trip, with no token of its own', async () => {
    const token = (await createToken(t, { type: 'client', environment: 'development', projects: ['default'] })).secret as string
    const res = await t.call('POST', '/edge/validate', { token: null, body: { tokens: [token, 'default:development.unknown'] } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.tokens).toEqual([{ token, type: 'client', projects: ['default'], environment: 'development' }])
    expect(roundTrips(res)).toEqual({ http: 1, webSocket: 0 })
  })

  it('stores a bulk in one round trip once its token is known, and folds it after the response', async () => {
    const token = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    const seen = (await createToken(t, { type: 'frontend', environment: 'development', projects: ['default'] })).secret as string
    const flag = (await ok(t, 'POST', '/api/admin/projects/default/features', { name: fresh('edge-bulk') })).body.name as string
    // The token's first use looks it up (with the revision): the bulk after it is the route's own cost.
    expect((await t.call('POST', '/api/client/metrics/bulk', { token, body: { applications: [], metrics: [] } })).status).toBe(202)
    const appName = fresh('behind-edge')
    const now = new Date().toISOString()
    const res = await t.call('POST', '/api/client/metrics/bulk', {
      token,
      body: {
        applications: [{ appName, instanceId: 'pod-1', environment: 'development', strategies: ['default'], started: now, interval: 15 }],
        metrics: [{ featureName: flag, appName, environment: 'development', timestamp: now, yes: 3, no: 1, variants: {} }],
        impactMetrics: [{ name: 'orders', help: 'Orders', type: 'counter', samples: [{ value: 1, labels: { appName } }] }],
        seenTokens: [seen],
      },
    })
    expect(res.status, res.text).toBe(202)
    expect(roundTrips(res)).toEqual({ http: 1, webSocket: 0 })
    expect(res.afterHttp + res.afterWebSocket).toBeGreaterThan(0)
    expect(await t.query('select yes::int, no::int from client_metrics_hourly where feature_name = $1', [flag])).toEqual([{ yes: 3, no: 1 }])
    expect(await t.query('select name, value from client_impact_metrics where app_name = $1', [appName])).toEqual([{ name: 'orders', value: 1 }])
  })
})
