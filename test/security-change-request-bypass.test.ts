import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applyScheduledChangeRequests } from '../src/change-requests/scheduled.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addToProject, createFlag, createProject, createSegment, createToken, expectSkipNeeded } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/*
 * What reviewers approve is what gets applied: nobody who may not skip change requests changes, between approval and
 * application, what an approved change request will put in front of a protected environment's SDKs.
 */

let t: TestApp
let reviewer: string
/** Project Owner of each guarded project (root Viewer): may not skip change requests. */
let olga: TestUser
/** Root Editor: may change segments everywhere, not skip change requests. */
let ed: TestUser

beforeAll(async () => {
  t = await createTestApp()
  reviewer = (await createToken(t, { tokenName: 'reviewer', type: 'admin' })).secret
  olga = await createSignedInUser(t, 'olga', 'Viewer')
  ed = await createSignedInUser(t, 'ed', 'Editor')
})
afterAll(() => t.close())

const rollout = (percent: number, segments: number[] = []) => ({
  name: 'flexibleRollout',
  constraints: [],
  parameters: { rollout: String(percent), stickiness: 'default', groupId: 'g' },
  segments,
})

/** A project requiring change requests (one approval) in production, olga its Owner, with a production SDK token. */
async function guarded() {
  const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
  const P = `/api/admin/projects/${project}`
  await addToProject(t, project, olga.id, 'Owner')
  const sdk = (await createToken(t, { type: 'client', environment: 'production', projects: [project] })).secret as string
  const production = async () => {
    const res = await t.call('GET', '/api/client/features', { token: sdk, headers: { 'unleash-client-spec': '5.0.0' } })
    expect(res.status, res.text).toBe(200)
    return { features: res.body.features as any[], segments: res.body.segments as any[] }
  }
  return {
    project,
    P,
    production,
    /** olga proposes the changes and the reviewer approves them; the id of the approved request. */
    approved: async (changes: unknown) => {
      const draft = await olga.call('POST', `${P}/environments/production/change-requests`, { body: changes })
      expect(draft.status, draft.text).toBe(200)
      const id = draft.body.id as number
      expect((await olga.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'In review' } })).status).toBe(200)
      const approval = await t.call('POST', `${P}/change-requests/${id}/approve`, { token: reviewer })
      expect(approval.status, approval.text).toBe(200)
      return id
    },
    apply: async (id: number) => {
      const applied = await olga.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Applied' } })
      expect(applied.status, applied.text).toBe(200)
      expect(applied.body.state).toBe('Applied')
    },
  }
}

describe('the default strategy of a protected environment', () => {
  it('refuses a project Owner changing it between approval and application, and the applied request adds the strategy reviewers saw', async () => {
    const g = await guarded()
    expect((await t.call('PUT', `${g.P}/environments/production/default-strategy`, { body: rollout(0) })).status).toBe(200)
    const flag = (await createFlag(t, {}, g.project)).name as string
    const id = await g.approved([{ feature: flag, action: 'updateEnabled', payload: { enabled: true } }])
    expectSkipNeeded(await olga.call('PUT', `${g.P}/environments/production/default-strategy`, { body: rollout(100) }))
    expectSkipNeeded(await olga.call('POST', `${g.P}/environments/production/default-strategy`, { body: rollout(100) }))
    await g.apply(id)
    const served = (await g.production()).features.find((f) => f.name === flag)
    expect(served.enabled).toBe(true)
    expect(served.strategies.map((s: any) => s.parameters.rollout)).toEqual(['0'])
  })

  it('lets a project Owner change it where change requests are not required, and an admin change it anywhere', async () => {
    const g = await guarded()
    expect((await olga.call('PUT', `${g.P}/environments/development/default-strategy`, { body: rollout(100) })).status).toBe(200)
    expect((await t.call('PUT', `${g.P}/environments/production/default-strategy`, { body: rollout(50) })).status).toBe(200)
  })
})

describe('a segment named by a pending change request of a protected environment', () => {
  const nobody = [{ contextName: 'userId', operator: 'IN', values: ['nobody'] }]
  const everyone = [{ contextName: 'userId', operator: 'NOT_IN', values: ['nobody'] }]

  /** An approved, not yet applied request adding a strategy with a fresh segment that matches nobody. */
  async function approvedWithSegment() {
    const g = await guarded()
    const segment = (await createSegment(t, { constraints: nobody })) as { id: number; name: string }
    const flag = (await createFlag(t, {}, g.project)).name as string
    const id = await g.approved([
      { feature: flag, action: 'addStrategy', payload: { ...rollout(100), segments: [segment.id] } },
      { feature: flag, action: 'updateEnabled', payload: { enabled: true } },
    ])
    return { ...g, segment, flag, id }
  }

  it('refuses an Editor updating or deleting it between approval and application, and the applied request uses the segment reviewers saw', async () => {
    const s = await approvedWithSegment()
    expectSkipNeeded(await ed.call('PUT', `/api/admin/segments/${s.segment.id}`, { body: { name: s.segment.name, constraints: everyone } }))
    expectSkipNeeded(await ed.call('DELETE', `/api/admin/segments/${s.segment.id}`))
    await s.apply(s.id)
    const served = await s.production()
    expect(served.segments.find((x) => x.id === s.segment.id).constraints).toEqual([expect.objectContaining({ operator: 'IN', values: ['nobody'] })])
  })

  it('frees the segment once the request is cancelled, and lets an admin update it meanwhile', async () => {
    const s = await approvedWithSegment()
    expect((await t.call('PUT', `/api/admin/segments/${s.segment.id}`, { body: { name: s.segment.name, constraints: nobody } })).status).toBe(204)
    expect((await olga.call('PUT', `${s.P}/change-requests/${s.id}/state`, { body: { state: 'Cancelled' } })).status).toBe(200)
    expect((await ed.call('PUT', `/api/admin/segments/${s.segment.id}`, { body: { name: s.segment.name, constraints: everyone } })).status).toBe(204)
  })

  it('refuses an Editor updating a segment that the default strategy of a protected environment names', async () => {
    const g = await guarded()
    const segment = (await createSegment(t, { constraints: nobody })) as { id: number; name: string }
    expect((await t.call('PUT', `${g.P}/environments/production/default-strategy`, { body: rollout(100, [segment.id]) })).status).toBe(200)
    expectSkipNeeded(await ed.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: segment.name, constraints: everyone } }))
  })
})

describe('deleting a project named alone by an integration', () => {
  it('deletes the integration with addon-config-deleted, so that nobody can switch it back on for every project', async () => {
    const project = await createProject(t, { mode: 'private' })
    const created = await t.call('POST', '/api/admin/addons', {
      body: { provider: 'webhook', enabled: true, parameters: { url: 'https://hooks.example.invalid/flagpost' }, events: ['feature-created'], projects: [project] },
    })
    expect(created.status, created.text).toBe(200)
    const id = created.body.id as number
    expect((await t.call('DELETE', `/api/admin/projects/${project}`)).status).toBe(200)
    expect((await t.call('GET', `/api/admin/addons/${id}`)).status).toBe(404)
    // What the console sends to switch it back on cannot bring it back with `projects: []` (every project).
    const again = await t.call('PUT', `/api/admin/addons/${id}`, {
      body: { provider: 'webhook', enabled: true, parameters: { url: 'https://hooks.example.invalid/flagpost' }, events: ['feature-created'], projects: [] },
    })
    expect(again.status, again.text).toBe(404)
    const deleted = await t.query<{ pre_data: any }>(`select pre_data from events where type = 'addon-config-deleted' and (pre_data->>'id')::int = $1`, [id])
    expect(deleted.map((e) => e.pre_data.projects)).toEqual([[project]])
  })
})

describe('an environment removed from a protected project and added back', () => {
  const productionConfig = async (P: string) => (await t.call('GET', `${P}/change-requests/config`)).body.find((e: any) => e.environment === 'production')

  it('comes back requiring change requests, with its approvals, and a project Owner may not add it back without them', async () => {
    const g = await guarded()
    expect((await t.call('PUT', `${g.P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 2 } })).status).toBe(200)
    const flag = (await createFlag(t, {}, g.project)).name as string
    expect((await t.call('DELETE', `${g.P}/environments/production`)).status).toBe(200)
    expectSkipNeeded(await olga.call('POST', `${g.P}/environments`, { body: { environment: 'production', changeRequestsEnabled: false } }))
    const added = await olga.call('POST', `${g.P}/environments`, { body: { environment: 'production' } })
    expect(added.status, added.text).toBe(200)
    expect(await productionConfig(g.P)).toMatchObject({ changeRequestsEnabled: true, requiredApprovals: 2 })
    expectSkipNeeded(await olga.call('POST', `${g.P}/features/${flag}/environments/production/on`))
    expect((await g.production()).features.find((f) => f.name === flag)?.enabled ?? false).toBe(false)
    const event = await t.query<{ data: any }>(`select data from events where type = 'project-environment-added' and project = $1 order by id desc limit 1`, [g.project])
    expect(event[0]!.data).toEqual({ environment: 'production', changeRequestsEnabled: true, requiredApprovals: 2 })
  })

  it('comes back without change requests when whoever may skip them asks, and only the once', async () => {
    const g = await guarded()
    expect((await t.call('DELETE', `${g.P}/environments/production`)).status).toBe(200)
    expect((await t.call('POST', `${g.P}/environments`, { body: { environment: 'production', changeRequestsEnabled: false } })).status).toBe(200)
    expect(await productionConfig(g.P)).toMatchObject({ changeRequestsEnabled: false })
    expect((await t.call('DELETE', `${g.P}/environments/production`)).status).toBe(200)
    expect((await olga.call('POST', `${g.P}/environments`, { body: { environment: 'production', changeRequestsEnabled: false } })).status).toBe(200)
  })
})

describe('required approvals raised after a change request was approved', () => {
  it('refuses to apply, schedule or fire it until it holds as many approvals as its environment now requires (409)', async () => {
    const g = await guarded()
    const flag = (await createFlag(t, {}, g.project)).name as string
    const id = await g.approved([{ feature: flag, action: 'updateEnabled', payload: { enabled: true } }])
    const at = new Date(Date.now() + 3_600_000)
    expect((await olga.call('PUT', `${g.P}/change-requests/${id}/state`, { body: { state: 'Scheduled', scheduledAt: at.toISOString() } })).status).toBe(200)
    expect((await t.call('PUT', `${g.P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 3 } })).status).toBe(200)
    const applied = await olga.call('PUT', `${g.P}/change-requests/${id}/state`, { body: { state: 'Applied' } })
    expect(applied.status).toBe(409)
    expect(applied.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining('1 of the 3 approvals') })
    const rescheduled = await olga.call('PUT', `${g.P}/change-requests/${id}/state`, { body: { state: 'Scheduled', scheduledAt: new Date(at.getTime() + 60_000).toISOString() } })
    expect(rescheduled.status).toBe(409)
    // The schedule fires: it fails, saying why, and nothing reaches production.
    await applyScheduledChangeRequests(t.db, new Date(at.getTime() + 1_000))
    const view = await t.call('GET', `${g.P}/change-requests/${id}`)
    expect(view.body).toMatchObject({ state: 'Scheduled', schedule: { status: 'failed', reason: expect.stringContaining('1 of the 3 approvals') } })
    expect((await g.production()).features.find((f) => f.name === flag).enabled).toBe(false)
  })
})

describe('approvals given by someone who may no longer approve', () => {
  /** A root Editor (may approve in production: UPDATE_FEATURE_ENVIRONMENT) approves a request olga proposed. */
  async function approvedByEditor(g: Awaited<ReturnType<typeof guarded>>, name: string) {
    const approver = await createSignedInUser(t, name, 'Editor')
    const flag = (await createFlag(t, {}, g.project)).name as string
    const draft = await olga.call('POST', `${g.P}/environments/production/change-requests`, { body: [{ feature: flag, action: 'updateEnabled', payload: { enabled: true } }] })
    const id = draft.body.id as number
    expect((await olga.call('PUT', `${g.P}/change-requests/${id}/state`, { body: { state: 'In review' } })).status).toBe(200)
    const approval = await approver.call('POST', `${g.P}/change-requests/${id}/approve`)
    expect(approval.status, approval.text).toBe(200)
    expect(approval.body.state).toBe('Approved')
    return { approver, flag, id }
  }

  it('does not count once the approver is demoted: applying and scheduling answer 409, a scheduled one fails', async () => {
    const g = await guarded()
    const { approver, flag, id } = await approvedByEditor(g, 'demoted-approver')
    const at = new Date(Date.now() + 3_600_000)
    expect((await olga.call('PUT', `${g.P}/change-requests/${id}/state`, { body: { state: 'Scheduled', scheduledAt: at.toISOString() } })).status).toBe(200)
    expect((await t.call('PUT', `/api/admin/user-admin/${approver.id}`, { body: { rootRole: 'Viewer' } })).status).toBe(200)
    const applied = await olga.call('PUT', `${g.P}/change-requests/${id}/state`, { body: { state: 'Applied' } })
    expect(applied.status).toBe(409)
    expect(applied.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining('0 of the 1 approvals') })
    expect(applied.body.message).toContain('may no longer approve')
    const rescheduled = await olga.call('PUT', `${g.P}/change-requests/${id}/state`, { body: { state: 'Scheduled', scheduledAt: new Date(at.getTime() + 60_000).toISOString() } })
    expect(rescheduled.status).toBe(409)
    await applyScheduledChangeRequests(t.db, new Date(at.getTime() + 1_000))
    expect((await t.call('GET', `${g.P}/change-requests/${id}`)).body).toMatchObject({ schedule: { status: 'failed', reason: expect.stringContaining('0 of the 1 approvals') } })
    expect((await g.production()).features.find((f) => f.name === flag).enabled).toBe(false)
  })

  it('does not count once the approver is deleted; counts again for an approver who still may (promoted back)', async () => {
    const g = await guarded()
    const deleted = await approvedByEditor(g, 'deleted-approver')
    expect((await t.call('DELETE', `/api/admin/user-admin/${deleted.approver.id}`)).status).toBe(200)
    const refused = await olga.call('PUT', `${g.P}/change-requests/${deleted.id}/state`, { body: { state: 'Applied' } })
    expect(refused.status).toBe(409)
    const kept = await approvedByEditor(g, 'kept-approver')
    expect((await t.call('PUT', `/api/admin/user-admin/${kept.approver.id}`, { body: { rootRole: 'Viewer' } })).status).toBe(200)
    expect((await olga.call('PUT', `${g.P}/change-requests/${kept.id}/state`, { body: { state: 'Applied' } })).status).toBe(409)
    expect((await t.call('PUT', `/api/admin/user-admin/${kept.approver.id}`, { body: { rootRole: 'Editor' } })).status).toBe(200)
    await g.apply(kept.id)
    expect((await g.production()).features.find((f) => f.name === kept.flag).enabled).toBe(true)
  })
})
