// Change requests, complete: editing and discarding a single change, discarding a draft, and scheduling an approved
// request, applied by the scheduled-application job (its entry point, with a controlled clock), failed with why,
// or suspended when its author loses access or a conflicting change lands on a flag of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'
import { applyScheduledChangeRequests } from '../src/change-requests/scheduled.js'

let t: TestApp
/** The app's clock, fixed at the test's start (sign-in cookies expire from it, so near the real time); the job is run at times after it. */
const now = new Date(Math.floor(Date.now() / 60_000) * 60_000)
/** Editors: the author of the change requests and the one who reviews them; an admin; a Viewer. */
let ann: TestUser
let rob: TestUser
let ada: TestUser
let viv: TestUser

beforeAll(async () => {
  t = await createTestApp({ now: () => now })
  ann = await createSignedInUser(t, 'ann', 'Editor')
  rob = await createSignedInUser(t, 'rob', 'Editor')
  ada = await createSignedInUser(t, 'ada', 'Admin')
  viv = await createSignedInUser(t, 'viv', 'Viewer')
})
afterAll(() => t.close())

const minutes = (n: number) => new Date(now.getTime() + n * 60_000)
const lastEventId = async () => (await t.query<{ id: number }>('select coalesce(max(id), 0)::int as id from events'))[0]!.id
type EventRow = { type: string; feature_name: string | null; created_by: string; data: any; pre_data: any }
const eventsSince = (id: number) => t.query<EventRow>('select type, feature_name, created_by, data, pre_data from events where id > $1 order by id', [id])
/** The events since `id` about a change request or its flag (the job runs every schedule due, those of other tests too). */
const eventsOf = async (since: number, changeRequestId: number, flag?: string) =>
  (await eventsSince(since)).filter((e) => e.data?.changeRequestId === changeRequestId || e.pre_data?.changeRequestId === changeRequestId || (flag !== undefined && e.feature_name === flag))
/** Runs the scheduled-application job at `at` (its entry point, as the Node timer and the Workers cron call it). */
const job = (at: Date) => applyScheduledChangeRequests(t.db, at)
const crRows = () => t.query(`select (select json_agg(x order by x.id) from change_requests x) as crs, (select json_agg(x order by x.id) from change_request_changes x) as changes,
  (select json_agg(x order by x.change_request_id, x.principal) from change_request_approvals x) as approvals, (select json_agg(x order by x.change_request_id) from change_request_schedules x) as schedules`)

/** A fresh project requiring change requests (one approval) in production, with a flag that has a strategy there. */
async function shop() {
  const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] })
  const P = `/api/admin/projects/${project}`
  const flag = (await createFlag(t, { name: fresh('checkout') }, project)).name as string
  const strategy = await addStrategy(t, flag, 'production', { name: 'flexibleRollout', parameters: { rollout: '10', stickiness: 'default', groupId: flag } }, project)
  return { project, P, flag, strategy, CR: `${P}/environments/production/change-requests` }
}
type Shop = Awaited<ReturnType<typeof shop>>

/** Ann's draft: the flag on, and its strategy's rollout to 50%. */
async function draft(s: Shop) {
  const res = await ann.call('POST', s.CR, {
    body: [
      { feature: s.flag, action: 'updateEnabled', payload: { enabled: true } },
      { feature: s.flag, action: 'updateStrategy', payload: { id: s.strategy.id, name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: s.flag } } },
    ],
  })
  expect(res.status, res.text).toBe(200)
  const [enable, rollout] = res.body.features[0].changes
  return { id: res.body.id as number, enable, rollout, path: `${s.P}/change-requests/${res.body.id}` }
}
/** Ann's draft, sent to review by her and approved by Rob. */
async function approved(s: Shop) {
  const d = await draft(s)
  await ok(ann, 'PUT', `${d.path}/state`, { state: 'In review' })
  expect((await ok(rob, 'POST', `${d.path}/approve`)).body.state).toBe('Approved')
  return d
}
/** Ann's approved request, scheduled by Ann for `at`. */
async function scheduled(s: Shop, at = minutes(30)) {
  const d = await approved(s)
  const res = await ann.call('PUT', `${d.path}/state`, { body: { state: 'Scheduled', scheduledAt: at.toISOString() } })
  expect(res.status, res.text).toBe(200)
  return d
}
const stateOf = async (s: Shop, flag = s.flag) => {
  const env = (await ok(t, 'GET', `${s.P}/features/${flag}`)).body.environments.find((e: { name: string }) => e.name === 'production')
  return { enabled: env.enabled, rollout: env.strategies.map((st: any) => st.parameters.rollout) }
}

describe('editing a change', () => {
  it('replaces the payload of a change with change-edited, and checks it as adding it is', async () => {
    const s = await shop()
    const d = await draft(s)
    const since = await lastEventId()
    const payload = { id: s.strategy.id, name: 'flexibleRollout', parameters: { rollout: '75', stickiness: 'default', groupId: s.flag } }
    const res = await ann.call('PUT', `${d.path}/changes/${d.rollout.id}`, { body: { feature: s.flag, action: 'updateStrategy', payload } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.features[0].changes[1]).toMatchObject({ id: d.rollout.id, action: 'updateStrategy', payload: { parameters: { rollout: '75' } } })
    const [event] = await eventsSince(since)
    expect(event).toMatchObject({ type: 'change-edited', feature_name: s.flag, created_by: 'ann' })
    expect(event!.data.change).toMatchObject({ id: d.rollout.id, payload: { parameters: { rollout: '75' } } })
    expect(event!.pre_data.change).toMatchObject({ id: d.rollout.id, payload: { parameters: { rollout: '50' } } })

    const before = await crRows()
    for (const [body, status] of [
      [{ feature: s.flag, action: 'updateEnabled', payload: { enabled: false } }, 400],
      [{ feature: s.flag, action: 'updateStrategy', payload: { ...payload, id: crypto.randomUUID() } }, 404],
      [{ feature: s.flag, action: 'updateStrategy', payload: { ...payload, parameters: { rollout: '75' }, segments: [999999] } }, 400],
      [{ feature: s.flag, action: 'updateStrategy', payload: { ...payload, name: 'no-such-type' } }, 400],
    ] as const) {
      const refused = await ann.call('PUT', `${d.path}/changes/${d.rollout.id}`, { body })
      expect(refused.status, `${JSON.stringify(body)}: ${refused.text}`).toBe(status)
    }
    expect((await ann.call('PUT', `${d.path}/changes/999999`, { body: { feature: s.flag, action: 'updateEnabled', payload: { enabled: false } } })).status).toBe(404)
    expect(await crRows()).toEqual(before)
  })

  it('lets only the author or an admin edit, with the permission of the change', async () => {
    const s = await shop()
    const d = await draft(s)
    const body = { feature: s.flag, action: 'updateEnabled', payload: { enabled: false } }
    const byRob = await rob.call('PUT', `${d.path}/changes/${d.enable.id}`, { body })
    expect(byRob.status).toBe(403)
    expect(byRob.body.message).toContain('Only the author')
    expect((await viv.call('PUT', `${d.path}/changes/${d.enable.id}`, { body })).status).toBe(403)
    expect((await ada.call('PUT', `${d.path}/changes/${d.enable.id}`, { body })).status).toBe(200)
  })

  it('withdraws the approvals of an Approved request, which goes back to In review', async () => {
    const s = await shop()
    const d = await approved(s)
    const since = await lastEventId()
    const res = await ann.call('PUT', `${d.path}/changes/${d.enable.id}`, { body: { feature: s.flag, action: 'updateEnabled', payload: { enabled: false } } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ state: 'In review', approvals: [] })
    expect((await eventsSince(since)).map((e) => [e.type, e.data.state, e.data.approvalsWithdrawn, e.pre_data.state])).toEqual([['change-edited', 'In review', 1, 'Approved']])
  })

  it('refuses to edit a Scheduled or closed request (409)', async () => {
    const s = await shop()
    const d = await scheduled(s)
    const res = await ann.call('PUT', `${d.path}/changes/${d.enable.id}`, { body: { feature: s.flag, action: 'updateEnabled', payload: { enabled: false } } })
    expect(res.status).toBe(409)
    expect(res.body.message).toContain('is Scheduled')
  })
})

describe('discarding', () => {
  it('discards one change with change-discarded, but never the only one', async () => {
    const s = await shop()
    const d = await draft(s)
    const since = await lastEventId()
    const res = await ann.call('DELETE', `${d.path}/changes/${d.rollout.id}`)
    expect(res.status, res.text).toBe(200)
    expect(res.body.features[0].changes.map((c: { id: number }) => c.id)).toEqual([d.enable.id])
    expect(await eventsSince(since)).toMatchObject([{ type: 'change-discarded', feature_name: s.flag, created_by: 'ann', data: { changeRequestId: d.id, changeId: d.rollout.id }, pre_data: { change: { id: d.rollout.id, action: 'updateStrategy' } } }])
    const last = await ann.call('DELETE', `${d.path}/changes/${d.enable.id}`)
    expect(last.status).toBe(409)
    expect(last.body.message).toContain('discard the change request instead')
    expect((await rob.call('DELETE', `${d.path}/changes/${d.enable.id}`)).status).toBe(403)
  })

  it('discards a draft with change-request-discarded; the author then starts a new one', async () => {
    const s = await shop()
    const d = await draft(s)
    expect((await rob.call('DELETE', d.path)).status).toBe(403)
    const since = await lastEventId()
    expect((await ann.call('DELETE', d.path)).status).toBe(200)
    expect(await eventsSince(since)).toMatchObject([{ type: 'change-request-discarded', created_by: 'ann', data: null, pre_data: { changeRequestId: d.id, state: 'Draft' } }])
    expect((await t.call('GET', d.path)).status).toBe(404)
    expect(await t.query('select count(*)::int as n from change_request_changes where change_request_id = $1', [d.id])).toEqual([{ n: 0 }])
    const next = await draft(s)
    expect(next.id).not.toBe(d.id)
  })

  it('lets an admin discard a draft, and refuses to discard one that is no longer a Draft', async () => {
    const s = await shop()
    expect((await ada.call('DELETE', (await draft(s)).path)).status).toBe(200)
    const d = await approved(s)
    const res = await ann.call('DELETE', d.path)
    expect(res.status).toBe(409)
    expect(res.body.message).toContain('can only be discarded when it is Draft')
  })
})

describe('scheduling', () => {
  it('schedules an Approved request with change-request-scheduled, shows the schedule, and the job applies it once due, as its author', async () => {
    const s = await shop()
    const d = await approved(s)
    const at = minutes(30)
    const since = await lastEventId()
    const res = await ann.call('PUT', `${d.path}/state`, { body: { state: 'Scheduled', scheduledAt: at.toISOString() } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ state: 'Scheduled', schedule: { scheduledAt: at.toISOString(), status: 'pending', scheduledBy: { id: ann.id, username: 'ann' } } })
    expect(await eventsSince(since)).toMatchObject([{ type: 'change-request-scheduled', created_by: 'ann', data: { changeRequestId: d.id, state: 'Scheduled', scheduledDate: at.toISOString() }, pre_data: { state: 'Approved' } }])

    // Not yet due: nothing happens.
    await job(minutes(29))
    expect(await stateOf(s)).toEqual({ enabled: false, rollout: ['10'] })
    const before = await lastEventId()
    expect((await job(minutes(31))).applied).toBeGreaterThanOrEqual(1)
    expect(await stateOf(s)).toEqual({ enabled: true, rollout: ['50'] })
    expect((await ok(t, 'GET', d.path)).body.state).toBe('Applied')
    expect((await ok(t, 'GET', d.path)).body.schedule).toBeUndefined()
    const written = await eventsOf(before, d.id, s.flag)
    expect(written.map((e) => [e.type, e.created_by])).toEqual([
      ['feature-environment-enabled', 'ann'],
      ['feature-strategy-update', 'ann'],
      ['change-request-applied', 'ann'],
      ['change-request-scheduled-application-success', 'ann'],
    ])
    // A second run (the other home's, or a late one) applies nothing again.
    await job(minutes(32))
    expect(await eventsOf(before, d.id, s.flag)).toHaveLength(4)
  })

  it('refuses a time not in the future, a schedule of a request not Approved, and a caller who may not apply', async () => {
    const s = await shop()
    const d = await draft(s)
    expect((await ann.call('PUT', `${d.path}/state`, { body: { state: 'Scheduled', scheduledAt: minutes(10).toISOString() } })).status).toBe(409)
    await ok(ann, 'PUT', `${d.path}/state`, { state: 'In review' })
    await ok(rob, 'POST', `${d.path}/approve`)
    for (const [body, status] of [
      [{ state: 'Scheduled', scheduledAt: minutes(-1).toISOString() }, 400],
      [{ state: 'Scheduled', scheduledAt: now.toISOString() }, 400],
      [{ state: 'Scheduled' }, 400],
      [{ state: 'Scheduled', scheduledAt: 'tomorrow' }, 400],
      [{ state: 'Applied', scheduledAt: minutes(10).toISOString() }, 400],
    ] as const) {
      const res = await ann.call('PUT', `${d.path}/state`, { body })
      expect(res.status, JSON.stringify(body)).toBe(status)
      expect(res.body.name).toBe('ValidationError')
    }
    const refused = await viv.call('PUT', `${d.path}/state`, { body: { state: 'Scheduled', scheduledAt: minutes(10).toISOString() } })
    expect(refused.status).toBe(403)
    expect((await ok(t, 'GET', d.path)).body.state).toBe('Approved')
  })

  it('reschedules, applies now, and cancels or rejects a Scheduled request (its schedule dropped)', async () => {
    const s = await shop()
    const d = await scheduled(s)
    const later = minutes(120)
    const res = await rob.call('PUT', `${d.path}/state`, { body: { state: 'Scheduled', scheduledAt: later.toISOString() } })
    expect(res.body).toMatchObject({ state: 'Scheduled', schedule: { scheduledAt: later.toISOString(), status: 'pending', scheduledBy: { username: 'rob' } } })
    await job(minutes(60))
    expect((await ok(t, 'GET', d.path)).body.state).toBe('Scheduled')
    expect((await ok(ann, 'PUT', `${d.path}/state`, { state: 'Cancelled' })).body).toMatchObject({ state: 'Cancelled' })
    expect(await t.query('select count(*)::int as n from change_request_schedules where change_request_id = $1', [d.id])).toEqual([{ n: 0 }])
    await job(minutes(200))
    expect((await ok(t, 'GET', d.path)).body.state).toBe('Cancelled')
    expect(await stateOf(s)).toEqual({ enabled: false, rollout: ['10'] })

    const other = await scheduled(s)
    expect((await ok(rob, 'PUT', `${other.path}/state`, { state: 'Rejected' })).body.state).toBe('Rejected')
    const third = await scheduled(s)
    expect((await ok(rob, 'PUT', `${third.path}/state`, { state: 'Applied' })).body.state).toBe('Applied')
    expect(await stateOf(s)).toEqual({ enabled: true, rollout: ['50'] })
    expect(await t.query('select count(*)::int as n from change_request_schedules where change_request_id = any($1)', [[other.id, third.id]])).toEqual([{ n: 0 }])
  })

  it('records a failure, attributed to its author and saying why, when a change no longer applies; nothing is applied', async () => {
    const s = await shop()
    const child = (await createFlag(t, { name: fresh('child') }, s.project)).name as string
    // A dependency the request removes, removed directly meanwhile: not a conflict by Unleash's rule, a failure when applied.
    await ok(t, 'POST', `${s.P}/features/${child}/dependencies`, { feature: s.flag })
    const res = await ann.call('POST', s.CR, { body: [{ feature: s.flag, action: 'updateEnabled', payload: { enabled: true } }, { feature: child, action: 'deleteDependency', payload: { feature: s.flag } }] })
    const path = `${s.P}/change-requests/${res.body.id}`
    await ok(ann, 'PUT', `${path}/state`, { state: 'In review' })
    await ok(rob, 'POST', `${path}/approve`)
    await ok(ann, 'PUT', `${path}/state`, { state: 'Scheduled', scheduledAt: minutes(5).toISOString() })
    await ok(t, 'DELETE', `${s.P}/features/${child}/dependencies/${s.flag}`)
    const since = await lastEventId()
    expect((await job(minutes(6))).failed).toBeGreaterThanOrEqual(1)
    expect(await stateOf(s)).toEqual({ enabled: false, rollout: ['10'] })
    const [event, ...rest] = await eventsOf(since, res.body.id, s.flag)
    expect(rest).toEqual([])
    expect(event).toMatchObject({ type: 'change-request-scheduled-application-failure', created_by: 'ann', data: { changeRequestId: res.body.id } })
    expect(event!.data.reason).toMatch(new RegExp(`deleteDependency on ${child}.*no longer applies`))
    const view = (await ok(t, 'GET', path)).body
    expect(view).toMatchObject({ state: 'Scheduled', schedule: { status: 'failed', reason: event!.data.reason, failureReason: event!.data.reason } })
    // A failed schedule is not tried again until it is rescheduled.
    const after = await lastEventId()
    await job(minutes(10))
    expect(await eventsOf(after, res.body.id, s.flag)).toEqual([])
  })

  it('suspends a schedule when a conflicting change lands: the strategy it updates changed, the flag archived, the variants it sets changed', async () => {
    const s = await shop()
    const d = await scheduled(s)
    const unrelated = await scheduled(await shop())
    const since = await lastEventId()
    await ok(t, 'PUT', `${s.P}/features/${s.flag}/environments/production/strategies/${s.strategy.id}`, { name: 'flexibleRollout', parameters: { rollout: '20', stickiness: 'default', groupId: s.flag } })
    await job(minutes(1))
    const [event] = (await eventsOf(since, d.id)).filter((e) => e.type === 'change-request-schedule-suspended')
    expect(event).toMatchObject({ created_by: 'system', data: { changeRequestId: d.id, scheduledBy: { id: ann.id, username: 'ann' } } })
    expect(event!.data.reason).toContain(`The strategy ${s.strategy.id} of ${s.flag} in production was changed`)
    expect((await ok(t, 'GET', d.path)).body.schedule).toMatchObject({ status: 'suspended', reason: event!.data.reason })
    // Due, it is not applied; the unrelated one is.
    await job(minutes(31))
    expect((await ok(t, 'GET', unrelated.path)).body.state).toBe('Applied')
    expect((await ok(t, 'GET', d.path)).body.state).toBe('Scheduled')
    expect(await stateOf(s)).toEqual({ enabled: false, rollout: ['20'] })
    // Rescheduled, the change made before counts no more: it is applied, over it.
    await ok(ann, 'PUT', `${d.path}/state`, { state: 'Scheduled', scheduledAt: minutes(40).toISOString() })
    await job(minutes(41))
    expect((await ok(t, 'GET', d.path)).body.state).toBe('Applied')
    expect(await stateOf(s)).toEqual({ enabled: true, rollout: ['50'] })

    const archivedFlag = await shop()
    const archived = await scheduled(archivedFlag)
    await ok(t, 'DELETE', `${archivedFlag.P}/features/${archivedFlag.flag}`)
    await job(minutes(1))
    expect((await ok(t, 'GET', archived.path)).body.schedule).toMatchObject({ status: 'suspended', reason: `The flag ${archivedFlag.flag} was archived` })

    const variants = await shop()
    const res = await ann.call('POST', variants.CR, { body: { feature: variants.flag, action: 'patchVariant', payload: { variants: [{ name: 'blue' }] } } })
    const path = `${variants.P}/change-requests/${res.body.id}`
    await ok(ann, 'PUT', `${path}/state`, { state: 'In review' })
    await ok(rob, 'POST', `${path}/approve`)
    await ok(ann, 'PUT', `${path}/state`, { state: 'Scheduled', scheduledAt: minutes(5).toISOString() })
    // Variants of another environment are no conflict; production's are.
    await ok(t, 'PUT', `${variants.P}/features/${variants.flag}/environments/development/variants`, [{ name: 'red' }])
    await job(minutes(1))
    expect((await ok(t, 'GET', path)).body.schedule.status).toBe('pending')
    await ok(t, 'PUT', `${variants.P}/features/${variants.flag}/environments/production/variants`, [{ name: 'red' }])
    await job(minutes(1))
    expect((await ok(t, 'GET', path)).body.schedule).toMatchObject({ status: 'suspended', reason: expect.stringContaining(`The variants of ${variants.flag} in production were changed`) })
  })

  it("suspends a schedule whose author is deleted, or loses the permission to apply", async () => {
    const s = await shop()
    const dana = await createSignedInUser(t, fresh('dana'), 'Editor')
    const d = await approved(s)
    await ok(dana, 'PUT', `${d.path}/state`, { state: 'Scheduled', scheduledAt: minutes(5).toISOString() })
    await ok(t, 'PUT', `/api/admin/user-admin/${dana.id}`, { rootRole: 'Viewer' })
    const since = await lastEventId()
    await job(minutes(6))
    expect(await stateOf(s)).toEqual({ enabled: false, rollout: ['10'] })
    const [event] = await eventsOf(since, d.id)
    expect(event).toMatchObject({ type: 'change-request-schedule-suspended', data: { reason: `${dana.username}, who scheduled it, no longer has permission=UPDATE_FEATURE_ENVIRONMENT in environment production of project ${s.project}` } })

    const erin = await createSignedInUser(t, fresh('erin'), 'Editor')
    const other = await approved(s)
    await ok(erin, 'PUT', `${other.path}/state`, { state: 'Scheduled', scheduledAt: minutes(5).toISOString() })
    await ok(t, 'DELETE', `/api/admin/user-admin/${erin.id}`)
    await job(minutes(1))
    expect((await ok(t, 'GET', other.path)).body.schedule).toMatchObject({ status: 'suspended', reason: `${erin.username}, who scheduled it, no longer exists` })
  })
})
