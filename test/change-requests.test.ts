import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rootRolePermissions } from '../src/core/permissions.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createEnvironment, createFlag, createProject, createToken, enableFlag, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let reviewer: string
let secondReviewer: string
/** Two Editors who review each other, and a Viewer: real users, signed in. */
let vera: TestUser
let walt: TestUser
let viv: TestUser

beforeAll(async () => {
  t = await createTestApp()
  reviewer = (await createToken(t, { tokenName: 'reviewer', type: 'admin' })).secret
  secondReviewer = (await createToken(t, { tokenName: 'second-reviewer', type: 'admin' })).secret
  vera = await createSignedInUser(t, 'vera', 'Editor')
  walt = await createSignedInUser(t, 'walt', 'Editor')
  viv = await createSignedInUser(t, 'viv', 'Viewer')
})
afterAll(() => t.close())

/** A fresh project that requires two approvals in production, with the flags checkout, cart and basket (fresh names). */
async function shop() {
  const project = await createProject(t, { name: 'Shop', environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 2 }] })
  const P = `/api/admin/projects/${project}`
  const F = `${P}/features`
  const flag = async (name: string) => (await createFlag(t, { name: fresh(name) }, project)).name as string
  return {
    project,
    P,
    F,
    CR: `${P}/environments/production/change-requests`,
    checkout: await flag('checkout'),
    cart: await flag('cart'),
    basket: await flag('basket'),
    flag,
    strategiesOf: async (flag: string, env = 'production') => (await t.call('GET', `${F}/${flag}/environments/${env}/strategies`)).body as any[],
  }
}
type Shop = Awaited<ReturnType<typeof shop>>

/** The admin token's draft: checkout enabled with a userWithId strategy added, and cart's variants set to blue. */
async function adminDraft(s: Shop): Promise<number> {
  const created = await t.call('POST', s.CR, { body: { feature: s.checkout, action: 'updateEnabled', payload: { enabled: true } } })
  expect(created.status, created.text).toBe(200)
  const more = await t.call('POST', s.CR, {
    body: [
      { feature: s.checkout, action: 'addStrategy', payload: { name: 'userWithId', parameters: { userIds: 'ann' } } },
      { feature: s.cart, action: 'patchVariant', payload: { variants: [{ name: 'blue' }] } },
    ],
  })
  expect(more.body.id).toBe(created.body.id)
  return created.body.id
}
/** The admin token's draft, sent to review by it. */
async function adminDraftInReview(s: Shop): Promise<number> {
  const id = await adminDraft(s)
  expect((await t.call('PUT', `${s.P}/change-requests/${id}/state`, { body: { state: 'In review' } })).status).toBe(200)
  return id
}

const eventsSince = (id: number) => t.query<{ type: string; feature_name: string | null; environment: string | null; created_by: string; data: any; pre_data: any }>('select * from events where id > $1 order by id', [id])
const lastEventId = async () => (await t.query<{ id: number }>('select coalesce(max(id), 0)::int as id from events'))[0]!.id
const snapshot = () =>
  t.query(`select
    (select json_agg(x order by x.feature_name, x.environment) from feature_environments x) as fe,
    (select json_agg(x order by x.id) from feature_strategies x) as strategies,
    (select json_agg(x order by x.child) from feature_dependencies x) as dependencies,
    (select json_agg(x order by x.name) from features x) as features,
    (select json_agg(x order by x.id) from change_requests x) as crs,
    (select json_agg(x order by x.change_request_id, x.principal) from change_request_approvals x) as approvals,
    (select count(*) from events) as events`)

describe('change request settings', () => {
  it('takes changeRequestEnvironments at project creation and shows them per environment', async () => {
    const { P } = await shop()
    const res = await t.call('GET', `${P}/change-requests/config`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([
      { environment: 'development', type: 'development', changeRequestsEnabled: false, requiredApprovals: 1 },
      { environment: 'production', type: 'production', changeRequestsEnabled: true, requiredApprovals: 2 },
    ])
  })

  it('turns change requests on and off per environment, with change-request-configuration-updated', async () => {
    const { P } = await shop()
    const before = await lastEventId()
    const on = await t.call('PUT', `${P}/change-requests/config`, { body: { environment: 'development', changeRequestsEnabled: true, requiredApprovals: 50 } })
    expect(on.status, on.text).toBe(200)
    expect(on.body[0]).toMatchObject({ environment: 'development', changeRequestsEnabled: true, requiredApprovals: 10 })
    const off = await t.call('PUT', `${P}/change-requests/config`, { body: [{ environment: 'development', changeRequestsEnabled: false, requiredApprovals: 1 }] })
    expect(off.body[0]).toMatchObject({ changeRequestsEnabled: false, requiredApprovals: 1 })
    const events = await eventsSince(before)
    expect(events.map((e) => [e.type, e.environment, e.data, e.pre_data])).toEqual([
      ['change-request-configuration-updated', 'development', { changeRequestsEnabled: true, requiredApprovals: 10 }, { changeRequestsEnabled: false, requiredApprovals: 1 }],
      ['change-request-configuration-updated', 'development', { changeRequestsEnabled: false, requiredApprovals: 1 }, { changeRequestsEnabled: true, requiredApprovals: 10 }],
    ])
  })

  it('refuses an environment of another project (404), an unknown project (404) and a bad body (400)', async () => {
    const { P } = await shop()
    const staging = (await createEnvironment(t, { type: 'preproduction' })).name
    expect((await t.call('PUT', `${P}/change-requests/config`, { body: { environment: staging, changeRequestsEnabled: true } })).status).toBe(404)
    expect((await t.call('PUT', '/api/admin/projects/nope/change-requests/config', { body: { environment: 'production', changeRequestsEnabled: true } })).status).toBe(404)
    const bad = await t.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: 'yes' } })
    expect(bad.status).toBe(400)
    expect(bad.body.details).toEqual([expect.objectContaining({ path: 'body.changeRequestsEnabled' })])
  })

  it('needs UPDATE_PROJECT to change the settings', async () => {
    const { P } = await shop()
    const res = await viv.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: false } })
    expect(res.status).toBe(403)
  })
})

describe('direct changes where change requests are required', () => {
  it('Editor lacks SKIP_CHANGE_REQUEST (Admin implies it)', () => {
    expect(rootRolePermissions.Editor!.has('SKIP_CHANGE_REQUEST')).toBe(false)
  })

  it('refuses an Editor on/off, strategies and variants in production with 403 naming SKIP_CHANGE_REQUEST, and changes nothing', async () => {
    const { F, cart } = await shop()
    const id = (await t.call('POST', `${F}/${cart}/environments/production/strategies`, { body: { name: 'default' } })).body.id
    const before = await snapshot()
    const attempts: [string, string, unknown?][] = [
      ['POST', `${F}/${cart}/environments/production/on`],
      ['POST', `${F}/${cart}/environments/production/off`],
      ['POST', `${F}/${cart}/environments/production/strategies`, { name: 'default' }],
      ['PUT', `${F}/${cart}/environments/production/strategies/${id}`, { name: 'default' }],
      ['DELETE', `${F}/${cart}/environments/production/strategies/${id}`],
      ['POST', `${F}/${cart}/environments/production/strategies/set-sort-order`, []],
      ['PUT', `${F}/${cart}/environments/production/variants`, [{ name: 'a' }]],
      ['PATCH', `${F}/${cart}/environments/production/variants`, [{ op: 'add', path: '/-', value: { name: 'a' } }]],
      ['PATCH', `${F}/${cart}/variants`, [{ op: 'add', path: '/-', value: { name: 'a' } }]],
    ]
    for (const [method, path, body] of attempts) {
      const res = await vera.call(method, path, { body })
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(403)
      expect(res.body.name).toBe('NoAccessError')
      expect(res.body.message).toContain('SKIP_CHANGE_REQUEST')
      expect(res.body.message).toContain('production')
    }
    expect(await snapshot()).toEqual(before)
  })

  it('lets the Editor change environments without change requests, and admin tokens everywhere', async () => {
    const { F, cart } = await shop()
    expect((await vera.call('POST', `${F}/${cart}/environments/development/on`)).status).toBe(200)
    expect((await vera.call('PUT', `${F}/${cart}/environments/development/variants`, { body: [{ name: 'a' }] })).status).toBe(200)
    expect((await t.call('POST', `${F}/${cart}/environments/production/on`)).status).toBe(200)
    expect((await t.call('POST', `${F}/${cart}/environments/production/off`)).status).toBe(200)
  })
})

describe('creating change requests', () => {
  it('creates a Draft with one change: change-request-created and change-added', async () => {
    const { project, CR, checkout } = await shop()
    const before = await lastEventId()
    const res = await t.call('POST', CR, { body: { feature: checkout, action: 'updateEnabled', payload: { enabled: true } } })
    expect(res.status, res.text).toBe(200)
    const id = res.body.id
    expect(res.body).toMatchObject({
      id: expect.any(Number),
      title: `Change request #${id}`,
      project,
      environment: 'production',
      state: 'Draft',
      minApprovals: 2,
      createdBy: { id: -42, username: 'test-admin' },
      approvals: [],
      features: [{ name: checkout, changes: [{ id: expect.any(Number), action: 'updateEnabled', payload: { enabled: true }, createdBy: { username: 'test-admin' } }] }],
    })
    const events = await eventsSince(before)
    expect(events.map((e) => [e.type, e.feature_name, e.environment])).toEqual([
      ['change-request-created', null, 'production'],
      ['change-added', checkout, 'production'],
    ])
    expect(events[1]!.data).toMatchObject({ changeRequestId: id, change: { action: 'updateEnabled', payload: { enabled: true } } })
  })

  it("collects further changes in the caller's open draft, from a list", async () => {
    const { CR, checkout, cart } = await shop()
    const id = (await ok(t, 'POST', CR, { feature: checkout, action: 'updateEnabled', payload: { enabled: true } })).body.id
    const before = await lastEventId()
    const res = await t.call('POST', CR, {
      body: [
        { feature: checkout, action: 'addStrategy', payload: { name: 'userWithId', parameters: { userIds: 'ann' } } },
        { feature: cart, action: 'patchVariant', payload: { variants: [{ name: 'blue' }] } },
      ],
    })
    expect(res.status, res.text).toBe(200)
    expect(res.body.id).toBe(id)
    expect(res.body.features.map((f: any) => [f.name, f.changes.map((c: any) => c.action)])).toEqual([
      [checkout, ['updateEnabled', 'addStrategy']],
      [cart, ['patchVariant']],
    ])
    expect((await eventsSince(before)).map((e) => e.type)).toEqual(['change-added', 'change-added'])
  })

  it('gives another caller a draft of their own', async () => {
    const s = await shop()
    const id = await adminDraft(s)
    const res = await t.call('POST', s.CR, { body: { feature: s.cart, action: 'updateEnabled', payload: { enabled: true } }, token: reviewer })
    expect(res.status).toBe(200)
    expect(res.body.id).not.toBe(id)
    expect(res.body.createdBy.username).toBe('reviewer')
  })

  it('validates each payload as the direct route does, and writes nothing on failure (400)', async () => {
    const { CR, checkout } = await shop()
    const before = await snapshot()
    const cases: [unknown, string][] = [
      [{ feature: checkout, action: 'addStrategy', payload: { name: 'default', constraints: [{ contextName: 'email', operator: 'NUM_EQ', value: 'not a number' }] } }, 'body.payload.constraints.0.value'],
      [{ feature: checkout, action: 'addStrategy', payload: { name: 'flexibleRollout', parameters: { rollout: '250' } } }, 'body.payload.parameters'],
      [[{ feature: checkout, action: 'updateEnabled', payload: { enabled: true } }, { feature: checkout, action: 'updateEnabled', payload: { enabled: 'yes' } }], 'body.1.payload.enabled'],
      [{ feature: checkout, action: 'renameFeature', payload: {} }, 'body.action'],
      [{ feature: checkout, action: 'patchVariant', payload: { variants: [{ name: 'a', weightType: 'fix', weight: 1001 }] } }, 'body.payload.variants.0.weight'],
      [{ feature: checkout, action: 'patchVariant', payload: { variants: [{ name: 'a', weightType: 'fix', weight: 600 }, { name: 'b', weightType: 'fix', weight: 600 }] } }, 'body.payload.variants'],
      [{ feature: checkout, action: 'addStrategy', payload: { name: 'default', segments: [999] } }, 'body.payload.segments'],
      [{ feature: checkout, action: 'addDependency', payload: { feature: checkout } }, 'body.payload.feature'],
      [[], 'body'],
    ]
    for (const [body, path] of cases) {
      const res = await t.call('POST', CR, { body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
      expect(res.body.details.map((d: any) => d.path), JSON.stringify(res.body)).toContain(path)
    }
    expect(await snapshot()).toEqual(before)
  })

  it('refuses an unknown flag, strategy or dependency with 404, and an environment without change requests with 400', async () => {
    const { P, CR, checkout, cart } = await shop()
    const notFound = [
      { feature: 'nope', action: 'updateEnabled', payload: { enabled: true } },
      { feature: checkout, action: 'deleteStrategy', payload: { id: crypto.randomUUID() } },
      { feature: checkout, action: 'updateStrategy', payload: { id: crypto.randomUUID(), name: 'default' } },
      { feature: checkout, action: 'deleteDependency', payload: { feature: cart } },
    ]
    for (const body of notFound) expect((await t.call('POST', CR, { body })).status, JSON.stringify(body)).toBe(404)
    expect((await t.call('POST', `${P}/environments/staging/change-requests`, { body: notFound[0] })).status).toBe(404)
    const dev = await t.call('POST', `${P}/environments/development/change-requests`, { body: { feature: checkout, action: 'updateEnabled', payload: { enabled: true } } })
    expect(dev.status).toBe(400)
    expect(dev.body.message).toContain('not enabled')
  })

  it('needs the permission of each change: a Viewer gets 403', async () => {
    const { CR, checkout } = await shop()
    const res = await viv.call('POST', CR, { body: { feature: checkout, action: 'updateEnabled', payload: { enabled: true } } })
    expect(res.status).toBe(403)
    expect(res.body.message).toContain('UPDATE_FEATURE_ENVIRONMENT')
  })

  it('reads one change request and lists them, by state; unknown ids are 404', async () => {
    const s = await shop()
    const { P } = s
    const id = await adminDraft(s)
    expect((await t.call('POST', s.CR, { body: { feature: s.cart, action: 'updateEnabled', payload: { enabled: true } }, token: reviewer })).status).toBe(200)
    const one = await t.call('GET', `${P}/change-requests/${id}`)
    expect(one.status).toBe(200)
    expect(one.body.features).toHaveLength(2)
    const list = await t.call('GET', `${P}/change-requests?state=Draft`)
    expect(list.status).toBe(200)
    expect(list.body.map((c: any) => c.state)).toEqual(['Draft', 'Draft'])
    expect((await t.call('GET', `${P}/change-requests?state=Applied`)).body).toEqual([])
    expect((await t.call('GET', `${P}/change-requests?state=Nope`)).status).toBe(400)
    expect((await t.call('GET', `${P}/change-requests/99999`)).status).toBe(404)
    expect((await t.call('GET', `${P}/change-requests/abc`)).status).toBe(404)
    expect((await t.call('GET', `/api/admin/projects/default/change-requests/${id}`)).status).toBe(404)
  })
})

describe('review and apply', () => {
  const state = (s: Shop, id: number, body: unknown, token?: string) => t.call('PUT', `${s.P}/change-requests/${id}/state`, { body, ...(token ? { token } : {}) })
  const approve = (s: Shop, id: number, token: string) => t.call('POST', `${s.P}/change-requests/${id}/approve`, { token })

  it('cannot be approved or applied as a Draft (409), nor sent to review by someone else (403)', async () => {
    const s = await shop()
    const id = await adminDraft(s)
    expect((await approve(s, id, reviewer)).status).toBe(409)
    expect((await state(s, id, { state: 'Applied' })).status).toBe(409)
    const other = await state(s, id, { state: 'In review' }, reviewer)
    expect(other.status).toBe(403)
    expect(other.body.name).toBe('NoAccessError')
  })

  it('goes to review by its author: change-request-sent-to-review', async () => {
    const s = await shop()
    const id = await adminDraft(s)
    const before = await lastEventId()
    const res = await state(s, id, { state: 'In review' })
    expect(res.status, res.text).toBe(200)
    expect(res.body.state).toBe('In review')
    expect((await eventsSince(before)).map((e) => [e.type, e.data.state, e.pre_data.state])).toEqual([['change-request-sent-to-review', 'In review', 'Draft']])
    // A new change now starts a new draft.
    const next = await t.call('POST', s.CR, { body: { feature: s.basket, action: 'archiveFeature' } })
    expect(next.body.id).not.toBe(id)
    expect((await state(s, next.body.id, { state: 'Cancelled' })).body.state).toBe('Cancelled')
  })

  it('is never approved by its author (403)', async () => {
    const s = await shop()
    const id = await adminDraftInReview(s)
    const res = await approve(s, id, t.adminToken)
    expect(res.status).toBe(403)
    expect(res.body.message).toContain('own change request')
  })

  it('needs the required approvals: approval-added, then approved; one approval per approver (409)', async () => {
    const s = await shop()
    const id = await adminDraftInReview(s)
    const before = await lastEventId()
    const first = await approve(s, id, reviewer)
    expect(first.status, first.text).toBe(200)
    expect(first.body).toMatchObject({ state: 'In review', approvals: [{ createdBy: { username: 'reviewer' } }] })
    expect((await approve(s, id, reviewer)).status).toBe(409)
    expect((await state(s, id, { state: 'Applied' })).status).toBe(409)
    const second = await approve(s, id, secondReviewer)
    expect(second.body.state).toBe('Approved')
    expect(second.body.approvals).toHaveLength(2)
    expect((await eventsSince(before)).map((e) => [e.type, e.created_by, e.data.approvals])).toEqual([
      ['change-request-approval-added', 'reviewer', 1],
      ['change-request-approved', 'second-reviewer', 2],
    ])
  })

  it('applies every change in one transaction with its normal events, attributed to whoever applies it', async () => {
    const s = await shop()
    const { F, checkout, cart } = s
    const id = await adminDraftInReview(s)
    expect((await approve(s, id, reviewer)).status).toBe(200)
    expect((await approve(s, id, secondReviewer)).body.state).toBe('Approved')
    const before = await lastEventId()
    const res = await state(s, id, { state: 'Applied' }, reviewer)
    expect(res.status, res.text).toBe(200)
    expect(res.body.state).toBe('Applied')
    const events = await eventsSince(before)
    expect(events.map((e) => [e.type, e.feature_name])).toEqual([
      ['feature-strategy-add', checkout],
      ['feature-environment-enabled', checkout],
      ['feature-strategy-add', checkout],
      ['feature-environment-variants-updated', cart],
      ['change-request-applied', null],
    ])
    expect(new Set(events.map((e) => e.created_by))).toEqual(new Set(['reviewer']))
    const checkoutNow = await t.call('GET', `${F}/${checkout}`)
    expect(checkoutNow.body.environments.find((e: any) => e.name === 'production')).toMatchObject({ enabled: true })
    expect((await s.strategiesOf(checkout)).map((s) => s.name)).toEqual(['flexibleRollout', 'userWithId'])
    expect((await t.call('GET', `${F}/${cart}/environments/production/variants`)).body.variants.map((v: any) => v.name)).toEqual(['blue'])
    expect((await state(s, id, { state: 'Applied' })).status).toBe(409)
    expect((await state(s, id, { state: 'Cancelled' })).status).toBe(409)
  })
})

/** A change request of `changes` by the admin token, In review and approved by both reviewers. */
async function approved(s: Shop, changes: unknown): Promise<number> {
  const created = await t.call('POST', s.CR, { body: changes })
  expect(created.status, created.text).toBe(200)
  const id = created.body.id as number
  expect((await t.call('PUT', `${s.P}/change-requests/${id}/state`, { body: { state: 'In review' } })).status).toBe(200)
  expect((await t.call('POST', `${s.P}/change-requests/${id}/approve`, { token: reviewer })).status).toBe(200)
  expect((await t.call('POST', `${s.P}/change-requests/${id}/approve`, { token: secondReviewer })).body.state).toBe('Approved')
  return id
}

describe('every action', () => {
  it('applies updateStrategy, deleteStrategy, addDependency, deleteDependency, updateEnabled and archiveFeature through their write paths', async () => {
    const s = await shop()
    const { P, F, checkout } = s
    // checkout on in production (with its default flexibleRollout) and a userWithId strategy after it.
    await enableFlag(t, checkout, 'production', s.project)
    await addStrategy(t, checkout, 'production', { name: 'userWithId', parameters: { userIds: 'ann' } }, s.project)
    const [parent, kid, old] = [await s.flag('parent'), await s.flag('kid'), await s.flag('old')]
    expect((await t.call('POST', `${F}/${kid}/dependencies`, { body: { feature: parent } })).status).toBe(200)
    const [rollout, users] = await s.strategiesOf(checkout)
    const id = await approved(s, [
      { feature: checkout, action: 'updateStrategy', payload: { id: rollout.id, name: 'flexibleRollout', parameters: { rollout: '25' } } },
      { feature: checkout, action: 'deleteStrategy', payload: { id: users.id } },
      { feature: kid, action: 'deleteDependency', payload: { feature: parent } },
      { feature: parent, action: 'addDependency', payload: { feature: checkout, variants: ['blue'] } },
      { feature: checkout, action: 'updateEnabled', payload: { enabled: false } },
      { feature: old, action: 'archiveFeature' },
    ])
    const before = await lastEventId()
    const res = await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Applied' } })
    expect(res.status, res.text).toBe(200)
    expect((await eventsSince(before)).map((e) => [e.type, e.feature_name])).toEqual([
      ['feature-strategy-update', checkout],
      ['feature-strategy-remove', checkout],
      ['feature-dependency-removed', kid],
      ['feature-dependency-added', parent],
      ['feature-environment-disabled', checkout],
      ['feature-archived', old],
      ['change-request-applied', null],
    ])
    expect(await s.strategiesOf(checkout)).toEqual([expect.objectContaining({ id: rollout.id, parameters: { rollout: '25', stickiness: 'default', groupId: checkout } })])
    expect(await t.query('select child, parent, variants from feature_dependencies where child = any($1) or parent = any($1) order by child', [[parent, kid, old, checkout]])).toEqual([
      { child: parent, parent: checkout, variants: ['blue'] },
    ])
    expect((await t.call('GET', `${F}/${old}`)).body.archived).toBe(true)
  })
})

describe('a change request that no longer applies', () => {
  it('fails the whole apply with 409 when a strategy is gone, and changes nothing', async () => {
    const s = await shop()
    const { P, F, cart } = s
    const strategy = (await t.call('POST', `${F}/${cart}/environments/production/strategies`, { body: { name: 'userWithId', parameters: { userIds: 'zed' } } })).body
    const id = await approved(s, [
      { feature: cart, action: 'updateEnabled', payload: { enabled: true } },
      { feature: cart, action: 'deleteStrategy', payload: { id: strategy.id } },
    ])
    expect((await t.call('DELETE', `${F}/${cart}/environments/production/strategies/${strategy.id}`)).status).toBe(200)
    const before = await snapshot()
    const res = await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Applied' } })
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining(`deleteStrategy on ${cart}`) })
    expect(await snapshot()).toEqual(before)
    expect((await t.call('GET', `${P}/change-requests/${id}`)).body.state).toBe('Approved')
  })

  it('fails with 409 when its flag was archived, and changes nothing', async () => {
    const s = await shop()
    const { P, F, cart } = s
    const doomed = await s.flag('doomed')
    const id = await approved(s, [
      { feature: cart, action: 'patchVariant', payload: { variants: [{ name: 'green' }] } },
      { feature: doomed, action: 'updateEnabled', payload: { enabled: true } },
    ])
    expect((await t.call('DELETE', `${F}/${doomed}`)).status).toBe(202)
    const before = await snapshot()
    const res = await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Applied' } })
    expect(res.status).toBe(409)
    expect(await snapshot()).toEqual(before)
  })
})

describe('rejecting and cancelling', () => {
  it('is rejected by a reviewer, never by its author, with change-request-rejected', async () => {
    const { P, CR, cart } = await shop()
    const created = await t.call('POST', CR, { body: { feature: cart, action: 'updateEnabled', payload: { enabled: true } } })
    const id = created.body.id
    expect((await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Rejected' }, token: reviewer })).status).toBe(409)
    await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'In review' } })
    expect((await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Rejected' } })).status).toBe(403)
    const before = await lastEventId()
    const res = await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Rejected', comment: 'not now' }, token: reviewer })
    expect(res.body.state).toBe('Rejected')
    expect((await eventsSince(before)).map((e) => [e.type, e.data])).toEqual([['change-request-rejected', { changeRequestId: id, state: 'Rejected', comment: 'not now' }]])
    expect((await t.call('POST', `${P}/change-requests/${id}/approve`, { token: secondReviewer })).status).toBe(409)
  })

  it('is cancelled by its author or an admin, not by another Editor, with change-request-cancelled', async () => {
    const { P, CR, cart } = await shop()
    const created = await vera.call('POST', CR, { body: { feature: cart, action: 'updateEnabled', payload: { enabled: true } } })
    expect(created.status, created.text).toBe(200)
    const id = created.body.id
    expect(created.body.createdBy).toEqual({ id: vera.id, username: 'vera' })
    expect((await walt.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Cancelled' } })).status).toBe(403)
    const before = await lastEventId()
    const res = await vera.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Cancelled' } })
    expect(res.body.state).toBe('Cancelled')
    expect((await eventsSince(before)).map((e) => [e.type, e.created_by])).toEqual([['change-request-cancelled', 'vera']])
  })

  it('lets Editors review each other: one creates, another approves, the author applies', async () => {
    const { P, F, CR, cart } = await shop()
    expect((await t.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 1 } })).status).toBe(200)
    const created = await vera.call('POST', CR, { body: { feature: cart, action: 'updateEnabled', payload: { enabled: true } } })
    const id = created.body.id
    expect((await vera.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'In review' } })).status).toBe(200)
    expect((await vera.call('POST', `${P}/change-requests/${id}/approve`)).status).toBe(403)
    expect((await walt.call('POST', `${P}/change-requests/${id}/approve`)).body.state).toBe('Approved')
    const applied = await vera.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Applied' } })
    expect(applied.status, applied.text).toBe(200)
    expect((await t.call('GET', `${F}/${cart}`)).body.environments.find((e: any) => e.name === 'production').enabled).toBe(true)
  })
})
