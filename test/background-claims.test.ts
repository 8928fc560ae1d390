// Claimed background work handed back: a process that stops hands back the action runs and webhook deliveries it
// claimed and did not finish (src/http/background.ts claimLedger; releaseRunClaims, releaseDeliveryClaims), so another
// process makes them at its next sweep instead of after the claim's lease (5 minutes) runs out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { fresh, ok } from './helpers/factories.js'
import { claimLedger, type ClaimLedger } from '../src/http/background.js'
import { releaseRunClaims, runPendingActions } from '../src/actions/runs.js'
import { DEFAULT_DELIVERY_OPTIONS, deliverPending, releaseDeliveryClaims, type DeliveryOptions } from '../src/integrations/delivery.js'

let t: TestApp
// Nothing runs after a response: the test makes the background work itself, as a given process would.
beforeAll(async () => (t = await createTestApp({ background: () => {}, delivery: { allowPrivateTargets: true } })))
afterAll(() => t.close())

/** A ledger that stops (as at SIGTERM) the moment its process claims something. */
function stoppingOnClaim(): ClaimLedger {
  const ledger = claimLedger()
  return { ...ledger, hold: (queue, id, at) => (ledger.hold(queue, id, at), void ledger.stop()) }
}

async function queueActionRun() {
  const project = (await ok(t, 'POST', '/api/admin/projects', { id: fresh('claims'), name: 'Claims' })).body.id as string
  const flag = (await ok(t, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('kill') })).body.name as string
  const endpoint = (await ok(t, 'POST', '/api/admin/signal-endpoints', { name: fresh('alerts') })).body as { id: number; name: string }
  const token = (await ok(t, 'POST', `/api/admin/signal-endpoints/${endpoint.id}/tokens`, { name: 'grafana' })).body.token as string
  const actor = (await ok(t, 'POST', '/api/admin/service-account', { username: fresh('bot'), name: 'Bot', rootRole: 'Editor' })).body.id as number
  await ok(t, 'POST', `/api/admin/projects/${project}/actions`, {
    name: fresh('on-alert'),
    actorId: actor,
    match: { source: 'signal-endpoint', sourceId: endpoint.id, payload: {} },
    actions: [{ action: 'TOGGLE_FEATURE_ON', sortOrder: 1, executionParams: { environment: 'development', featureName: flag } }],
  })
  expect((await t.call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: `Bearer ${token}`, body: { alert: 'down' } })).status).toBe(200)
  const [run] = await t.query<{ id: number }>("select id from action_set_events where state = 'started' order by id desc limit 1")
  return { runId: Number(run!.id), flag }
}

const runRow = async (id: number) => (await t.query<{ state: string; claimed_at: Date | null }>('select state, claimed_at from action_set_events where id = $1', [id]))[0]!

describe('claimed background work at shutdown', () => {
  it('an action run claimed and not begun is handed back at once, and the next sweep of another process makes it', async () => {
    const { runId, flag } = await queueActionRun()
    const stopping = stoppingOnClaim()
    expect(await runPendingActions(t.db, () => new Date(), { claims: stopping })).toEqual({ runs: 0, changed: false })
    expect(await runRow(runId)).toMatchObject({ state: 'started', claimed_at: expect.any(Date) })
    // Its claim is fresh: without the hand-back, another process would leave it for five minutes.
    expect((await runPendingActions(t.db, () => new Date())).runs).toBe(0)

    const held = stopping.held()
    expect(held).toEqual([{ queue: 'action_runs', id: runId, at: expect.any(Date) }])
    expect(await releaseRunClaims(t.db, held)).toBe(1)
    expect(await runRow(runId)).toMatchObject({ state: 'started', claimed_at: null })
    expect(await runPendingActions(t.db, () => new Date())).toEqual({ runs: 1, changed: true })
    expect(await runRow(runId)).toMatchObject({ state: 'success', claimed_at: null })
    expect((await t.query<{ enabled: boolean }>("select enabled from feature_environments where feature_name = $1 and environment = 'development'", [flag]))[0]!.enabled).toBe(true)
  })

  it('hands back only its own claim: a run another process has taken over since stays with it', async () => {
    const { runId } = await queueActionRun()
    const stopping = stoppingOnClaim()
    await runPendingActions(t.db, () => new Date(), { claims: stopping })
    const takenOver = new Date(Date.now() + 1000)
    await t.query('update action_set_events set claimed_at = $1 where id = $2', [takenOver, runId])
    expect(await releaseRunClaims(t.db, stopping.held())).toBe(0)
    expect((await runRow(runId)).claimed_at!.getTime()).toBe(takenOver.getTime())
    await t.query('update action_set_events set claimed_at = null where id = $1', [runId])
    await runPendingActions(t.db, () => new Date())
  })

  it('a webhook delivery under way at shutdown is handed back, and another process delivers it', async () => {
    await t.query('delete from integration_outbox')
    await ok(t, 'POST', '/api/admin/addons', { provider: 'webhook', enabled: true, parameters: { url: 'https://hooks.example.com/flagpost' }, events: ['feature-created'] })
    await ok(t, 'POST', '/api/admin/projects/default/features', { name: fresh('delivered') })
    const [queued] = await t.query<{ id: number }>('select id from integration_outbox')
    expect(queued).toBeDefined()

    let answer: (status: number) => void = () => {}
    let sent = 0
    const hanging: DeliveryOptions = { ...DEFAULT_DELIVERY_OPTIONS, allowPrivateTargets: true, send: () => (sent++, new Promise<number>((resolve) => (answer = resolve))) }
    const ledger = claimLedger()
    const underway = deliverPending(t.db, () => new Date(), hanging, ledger)
    await expect.poll(() => sent).toBe(1)
    // SIGTERM: no more claims; the delivery is still waiting for its target.
    const held = ledger.stop()
    expect(held).toEqual([{ queue: 'integration_deliveries', id: Number(queued!.id), at: expect.any(Date) }])
    expect(await releaseDeliveryClaims(t.db, held)).toBe(1)
    expect((await t.query('select claimed_at from integration_outbox where id = $1', [queued!.id]))[0]).toEqual({ claimed_at: null })

    let delivered = 0
    expect(await deliverPending(t.db, () => new Date(), { ...hanging, send: async () => (delivered++, 200) })).toBe(1)
    expect(delivered).toBe(1)
    answer(200)
    await underway
    expect(await t.query('select id from integration_outbox')).toEqual([])
  })

  it('claims nothing once stopped', async () => {
    await ok(t, 'POST', '/api/admin/projects/default/features', { name: fresh('after-stop') })
    const ledger = claimLedger()
    ledger.stop()
    expect(await deliverPending(t.db, () => new Date(), { ...DEFAULT_DELIVERY_OPTIONS, send: async () => 200 }, ledger)).toBe(0)
    expect((await t.query<{ n: number }>('select count(*)::int as n from integration_outbox where claimed_at is null'))[0]!.n).toBeGreaterThan(0)
    await t.query('delete from integration_outbox')
  })
})
