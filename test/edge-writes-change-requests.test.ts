// Editing, discarding and scheduling change requests at the edge: each write is its reads and one batch over Neon's
// HTTP (no WebSocket), and the scheduled-application job applies a due request through the worker's database, its
// one interactive transaction over the WebSocket pool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { createFlag, createProject, createToken, ok } from './helpers/factories.js'
import { applyScheduledChangeRequests } from '../src/change-requests/scheduled.js'

let t: EdgeApp
let other: string
beforeAll(async () => {
  t = await createEdgeApp()
  other = (await createToken(t, { type: 'admin' })).secret as string
})
afterAll(() => t.close())

const trips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })

/** A draft of the other admin token with two changes to a flag in production, where change requests are required. */
async function draft() {
  const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] })
  const flag = (await createFlag(t, {}, project)).name as string
  const res = await t.call('POST', `/api/admin/projects/${project}/environments/production/change-requests`, {
    token: other,
    body: [
      { feature: flag, action: 'updateEnabled', payload: { enabled: true } },
      { feature: flag, action: 'patchVariant', payload: { variants: [{ name: 'blue' }] } },
    ],
  })
  expect(res.status, res.text).toBe(200)
  const path = `/api/admin/projects/${project}/change-requests/${res.body.id}`
  return { project, flag, path, changes: res.body.features[0].changes.map((c: { id: number }) => c.id) as number[] }
}

describe('change requests at the edge', () => {
  it('edits a change in three round trips and discards one in two, over HTTP', async () => {
    const d = await draft()
    await ok(t, 'GET', d.path, undefined)
    const edited = await t.call('PUT', `${d.path}/changes/${d.changes[1]}`, { token: other, body: { feature: d.flag, action: 'patchVariant', payload: { variants: [{ name: 'red' }] } } })
    expect(edited.status, edited.text).toBe(200)
    // The request and the change, what checking it reads, then the batch.
    expect(trips(edited)).toEqual({ http: 3, webSocket: 0 })
    const discarded = await t.call('DELETE', `${d.path}/changes/${d.changes[1]}`, { token: other })
    expect(discarded.status, discarded.text).toBe(200)
    expect(trips(discarded)).toEqual({ http: 2, webSocket: 0 })
    expect(discarded.body.features[0].changes).toHaveLength(1)
    const gone = await t.call('DELETE', d.path, { token: other })
    expect(gone.status, gone.text).toBe(200)
    expect(trips(gone)).toEqual({ http: 2, webSocket: 0 })
  })

  it('schedules in three round trips; the job applies the due request through the worker\'s database', async () => {
    const d = await draft()
    await ok({ call: (m, p, o) => t.call(m, p, { ...o, token: other }) }, 'PUT', `${d.path}/state`, { state: 'In review' })
    await ok(t, 'POST', `${d.path}/approve`)
    const at = new Date(Date.now() + 3_600_000)
    const scheduled = await t.call('PUT', `${d.path}/state`, { body: { state: 'Scheduled', scheduledAt: at.toISOString() } })
    expect(scheduled.status, scheduled.text).toBe(200)
    // The request, the approvals its environment requires now (raised since the approval, it may not be scheduled), then the batch.
    expect(trips(scheduled)).toEqual({ http: 3, webSocket: 0 })
    const handle = t.openWorkerDb()
    try {
      expect(await applyScheduledChangeRequests(handle.db, new Date(at.getTime() + 60_000))).toEqual({ applied: 1, failed: 0, suspended: 0 })
    } finally {
      await handle.close()
    }
    expect((await ok(t, 'GET', d.path)).body.state).toBe('Applied')
    const flag = (await ok(t, 'GET', `/api/admin/projects/${d.project}/features/${d.flag}`)).body
    expect(flag.environments.find((e: { name: string }) => e.name === 'production')).toMatchObject({ enabled: true, variants: [{ name: 'blue' }] })
    expect(await t.query(`select type, created_by from events where type like 'change-request-%' and (data->>'changeRequestId')::int = $1 order by id`, [Number(d.path.split('/').pop())])).toEqual([
      { type: 'change-request-created', created_by: expect.any(String) },
      { type: 'change-request-sent-to-review', created_by: expect.any(String) },
      { type: 'change-request-approved', created_by: 'edge-admin' },
      { type: 'change-request-scheduled', created_by: 'edge-admin' },
      { type: 'change-request-applied', created_by: 'edge-admin' },
      { type: 'change-request-scheduled-application-success', created_by: 'edge-admin' },
    ])
  })
})
