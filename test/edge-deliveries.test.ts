// On Workers, a write claims integration deliveries after its response only when it queued some: a write that
// no integration listens to makes no round trip after its response, and one that an integration listens to
// still has its delivery made right after it (not left for the cron trigger).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebhookRequest } from '../src/integrations/delivery.js'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { createProject, fresh, ok } from './helpers/factories.js'

let t: EdgeApp
const sent: WebhookRequest[] = []

beforeAll(async () => {
  t = await createEdgeApp({ delivery: { allowPrivateTargets: true, send: async (request) => (sent.push(request), 200) } })
  // The admin token looked up once and remembered: the counts below are the routes' own.
  await ok(t, 'GET', '/api/admin/projects')
})
afterAll(async () => {
  await t?.close()
})

const createFlag = (project: string) => t.call('POST', `/api/admin/projects/${project}/features`, { body: { name: fresh('flag') } })

describe('integration deliveries after a write on Workers', () => {
  it('claims nothing after a write whose events no integration listens to', async () => {
    const project = await createProject(t)
    const created = await createFlag(project)
    expect(created.status, created.text).toBe(201)
    expect({ afterHttp: created.afterHttp, afterWebSocket: created.afterWebSocket }).toEqual({ afterHttp: 0, afterWebSocket: 0 })
    expect(await t.query(`select count(*)::int as n from integration_outbox`)).toEqual([{ n: 0 }])
  })

  it('claims and delivers right after a write whose event an integration listens to', async () => {
    const project = await createProject(t)
    const url = `http://127.0.0.1:9/${fresh('hook')}`
    await ok(t, 'POST', '/api/admin/addons', { provider: 'webhook', enabled: true, parameters: { url }, events: ['feature-created'], projects: [project] })
    const created = await createFlag(project)
    expect(created.status, created.text).toBe(201)
    // The claim, the integrations and events it names (one round trip), the record of the delivery.
    expect(created.afterHttp).toBe(3)
    expect(created.afterWebSocket).toBe(0)
    const delivered = sent.filter((request) => request.url === url)
    expect(delivered).toHaveLength(1)
    expect(JSON.parse(delivered[0]!.body)).toMatchObject({ type: 'feature-created', featureName: created.body.name, project })
    expect(await t.query(`select count(*)::int as n from integration_outbox`)).toEqual([{ n: 0 }])
  })

  it('claims nothing for a write in a project the integration does not listen to', async () => {
    const listened = await createProject(t)
    const other = await createProject(t)
    await ok(t, 'POST', '/api/admin/addons', { provider: 'webhook', enabled: true, parameters: { url: `http://127.0.0.1:9/${fresh('hook')}` }, events: ['feature-created'], projects: [listened] })
    const created = await createFlag(other)
    expect(created.status, created.text).toBe(201)
    expect(created.afterHttp).toBe(0)
  })
})
