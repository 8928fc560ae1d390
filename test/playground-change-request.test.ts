import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createToken } from '../src/api-tokens/store.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { createTestApp, type TestApp } from './helpers/app.js'

let t: TestApp
let reviewer: string
let segmentId: number
const P = '/api/admin/projects/shop'
const F = `${P}/features`
const CR = `${P}/environments/production/change-requests`

beforeAll(async () => {
  t = await createTestApp()
  reviewer = (await createToken(t.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'reviewer', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
  expect((await t.call('POST', '/api/admin/projects', { body: { id: 'shop', name: 'Shop', environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] } })).status).toBe(201)
  for (const name of ['checkout', 'banner', 'legacy', 'search']) expect((await t.call('POST', F, { body: { name } })).status).toBe(201)
  segmentId = (await t.call('POST', '/api/admin/segments', { body: { name: 'norway', constraints: [{ contextName: 'country', operator: 'IN', values: ['NO'] }] } })).body.id
  // Direct changes by the admin token (it has SKIP_CHANGE_REQUEST): banner on for everyone, legacy on, search on for ann.
  for (const name of ['banner', 'legacy']) expect((await t.call('POST', `${F}/${name}/environments/production/on`)).status).toBe(200)
  expect((await t.call('POST', `${F}/search/environments/production/strategies`, { body: { name: 'userWithId', parameters: { userIds: 'ann' } } })).status).toBe(200)
  expect((await t.call('POST', `${F}/search/environments/production/on`)).status).toBe(200)
})
afterAll(() => t.close())

const preview = (id: number | string, body: unknown) => t.call('POST', `/api/admin/playground/change-request/${id}`, { body })
const entriesOf = (res: { body: any }, name: string) => res.body.features.find((f: any) => f.name === name)?.environments.production as any[] | undefined
const snapshot = () =>
  t.query(`select
    (select json_agg(x order by x.feature_name, x.environment) from feature_environments x) as fe,
    (select json_agg(x order by x.id) from feature_strategies x) as strategies,
    (select json_agg(x order by x.name) from features x) as features,
    (select json_agg(x order by x.id) from change_requests x) as crs,
    (select count(*) from events) as events`)

async function changeRequest(changes: unknown): Promise<number> {
  const res = await t.call('POST', CR, { body: changes })
  expect(res.status, res.text).toBe(200)
  return res.body.id
}

describe('POST /api/admin/playground/change-request/:id', () => {
  it('shows a flag that is off before the change request as on in its preview, and writes nothing', async () => {
    const id = await changeRequest({ feature: 'checkout', action: 'updateEnabled', payload: { enabled: true } })
    const context = { appName: 'web', userId: 'ann' }
    const current = await t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['production'], projects: ['shop'], context } })
    expect(entriesOf(current, 'checkout')![0]).toMatchObject({ isEnabledInCurrentEnvironment: false, isEnabled: false })

    const before = await snapshot()
    const res = await preview(id, { context })
    expect(res.status, res.text).toBe(200)
    expect(res.body.input).toEqual({ environments: ['production'], projects: ['shop'], context })
    const [checkout] = entriesOf(res, 'checkout')!
    expect(checkout).toMatchObject({ name: 'checkout', environment: 'production', projectId: 'shop', context, isEnabledInCurrentEnvironment: true, isEnabled: true })
    // Enabling a flag with no strategy adds the default one, in the preview as in the real change.
    expect(checkout.strategies.data).toEqual([
      expect.objectContaining({ name: 'flexibleRollout', id: expect.stringMatching(/^change-\d+$/), result: true, parameters: { rollout: '100', stickiness: 'default', groupId: 'checkout' } }),
    ])
    expect(await snapshot()).toEqual(before)
    const after = await t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['production'], projects: ['shop'], context } })
    expect(entriesOf(after, 'checkout')![0].isEnabled).toBe(false)
  })

  it('applies every pending change of the request, in order, to the preview only', async () => {
    const [userStrategy] = (await t.call('GET', `${F}/search/environments/production/strategies`)).body
    const id = await changeRequest([
      { feature: 'search', action: 'updateStrategy', payload: { id: userStrategy.id, name: 'userWithId', parameters: { userIds: 'bob' } } },
      { feature: 'search', action: 'addStrategy', payload: { name: 'default', segments: [segmentId], sortOrder: -1 } },
      { feature: 'banner', action: 'patchVariant', payload: { variants: [{ name: 'red', payload: { type: 'string', value: 'r' } }] } },
      { feature: 'banner', action: 'addDependency', payload: { feature: 'search' } },
      { feature: 'legacy', action: 'archiveFeature' },
    ])
    const before = await snapshot()
    const res = await preview(id, { context: { appName: 'web', userId: 'ann,bob', properties: { country: 'NO,SE' } } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.features.map((f: any) => f.name)).not.toContain('legacy')
    const search = entriesOf(res, 'search')!
    expect(search.map((e) => [e.context.userId, e.context.country, e.isEnabled])).toEqual([
      ['ann', 'NO', true],
      ['ann', 'SE', false],
      ['bob', 'NO', true],
      ['bob', 'SE', true],
    ])
    expect(search[0].strategies.data.map((s: any) => s.name)).toEqual(['default', 'userWithId'])
    expect(search[0].strategies.data[0].segments).toEqual([expect.objectContaining({ id: segmentId, name: 'norway', result: true })])
    const banner = entriesOf(res, 'banner')!
    expect(banner.map((e) => e.isEnabled)).toEqual([true, false, true, true])
    expect(banner[0].variant).toEqual({ name: 'red', enabled: true, feature_enabled: true, payload: { type: 'string', value: 'r' } })
    expect(banner[0].variants).toEqual([{ name: 'red', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'r' } }])
    expect(await snapshot()).toEqual(before)
    expect((await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Cancelled' } })).status).toBe(200)
  })

  it('evaluates a closed change request as the flags are now: it has no pending changes', async () => {
    const id = await changeRequest({ feature: 'banner', action: 'updateEnabled', payload: { enabled: false } })
    expect(entriesOf(await preview(id, { context: { appName: 'web' } }), 'banner')![0].isEnabled).toBe(false)
    expect((await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Cancelled' } })).status).toBe(200)
    expect(entriesOf(await preview(id, { context: { appName: 'web' } }), 'banner')![0].isEnabled).toBe(true)
  })

  it('is 409 when a pending change no longer applies, as applying it would be', async () => {
    const strategy = (await t.call('POST', `${F}/banner/environments/production/strategies`, { body: { name: 'userWithId', parameters: { userIds: 'x' } } })).body
    const id = await changeRequest({ feature: 'banner', action: 'deleteStrategy', payload: { id: strategy.id } })
    expect((await t.call('DELETE', `${F}/banner/environments/production/strategies/${strategy.id}`)).status).toBe(200)
    const res = await preview(id, { context: { appName: 'web' } })
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining(strategy.id) })
    await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Cancelled' } })
  })

  it('is 404 for an unknown change request and 400 for a bad context', async () => {
    for (const id of ['99999', 'abc', '0']) {
      const res = await preview(id, { context: { appName: 'web' } })
      expect(res.status, id).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    const id = await changeRequest({ feature: 'checkout', action: 'updateEnabled', payload: { enabled: false } })
    for (const body of [{}, { context: {} }, { context: { appName: '' } }, { context: { appName: 'web', properties: { a: 1 } } }]) {
      const res = await preview(id, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
  })

  it('warns about top-level context fields of the wrong type, and previews the change a reviewer is about to approve', async () => {
    const [open] = (await t.call('GET', `${P}/change-requests?state=Draft`)).body
    expect((await t.call('PUT', `${P}/change-requests/${open.id}/state`, { body: { state: 'In review' } })).status).toBe(200)
    const res = await t.call('POST', `/api/admin/playground/change-request/${open.id}`, { body: { context: { appName: 'web', tries: 3 } }, token: reviewer })
    expect(res.status).toBe(200)
    expect(res.body.warnings).toEqual({ invalidContextProperties: ['tries'] })
  })
})
