import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, createSegment, createToken, enableFlag, fresh } from './helpers/factories.js'

let t: TestApp
let reviewer: string

beforeAll(async () => {
  t = await createTestApp()
  reviewer = (await createToken(t, { tokenName: 'reviewer', type: 'admin' })).secret
})
afterAll(() => t.close())

/**
 * A fresh project requiring change requests in production, with the flags checkout, banner, legacy and search
 * (fresh names) and a segment norway (country NO). Direct changes by the admin token (it has SKIP_CHANGE_REQUEST):
 * banner on for everyone, legacy on, search on for ann.
 */
async function shop() {
  const project = await createProject(t, { name: 'Shop', environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] })
  const P = `/api/admin/projects/${project}`
  const flag = async (name: string) => (await createFlag(t, { name: fresh(name) }, project)).name as string
  const [checkout, banner, legacy, search] = [await flag('checkout'), await flag('banner'), await flag('legacy'), await flag('search')]
  const segment = await createSegment(t, { name: fresh('norway'), constraints: [{ contextName: 'country', operator: 'IN', values: ['NO'] }] })
  for (const name of [banner, legacy]) await enableFlag(t, name, 'production', project)
  await addStrategy(t, search, 'production', { name: 'userWithId', parameters: { userIds: 'ann' } }, project)
  await enableFlag(t, search, 'production', project)
  return {
    project,
    P,
    F: `${P}/features`,
    checkout,
    banner,
    legacy,
    search,
    segment: segment as { id: number; name: string },
    /** A change request of the admin token with the changes (its open draft, if it has one). */
    changeRequest: async (changes: unknown): Promise<number> => {
      const res = await t.call('POST', `${P}/environments/production/change-requests`, { body: changes })
      expect(res.status, res.text).toBe(200)
      return res.body.id
    },
  }
}

const preview = (id: number | string, body: unknown) => t.call('POST', `/api/admin/playground/change-request/${id}`, { body })
const entriesOf = (res: { body: any }, name: string) => res.body.features.find((f: any) => f.name === name)?.environments.production as any[] | undefined
const snapshot = () =>
  t.query(`select
    (select json_agg(x order by x.feature_name, x.environment) from feature_environments x) as fe,
    (select json_agg(x order by x.id) from feature_strategies x) as strategies,
    (select json_agg(x order by x.name) from features x) as features,
    (select json_agg(x order by x.id) from change_requests x) as crs,
    (select count(*) from events) as events`)

describe('POST /api/admin/playground/change-request/:id', () => {
  it('shows a flag that is off before the change request as on in its preview, and writes nothing', async () => {
    const { project, checkout, changeRequest } = await shop()
    const id = await changeRequest({ feature: checkout, action: 'updateEnabled', payload: { enabled: true } })
    const context = { appName: 'web', userId: 'ann' }
    const current = await t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['production'], projects: [project], context } })
    expect(entriesOf(current, checkout)![0]).toMatchObject({ isEnabledInCurrentEnvironment: false, isEnabled: false })

    const before = await snapshot()
    const res = await preview(id, { context })
    expect(res.status, res.text).toBe(200)
    expect(res.body.input).toEqual({ environments: ['production'], projects: [project], context })
    const [entry] = entriesOf(res, checkout)!
    expect(entry).toMatchObject({ name: checkout, environment: 'production', projectId: project, context, isEnabledInCurrentEnvironment: true, isEnabled: true })
    // Enabling a flag with no strategy adds the default one, in the preview as in the real change.
    expect(entry.strategies.data).toEqual([
      expect.objectContaining({ name: 'flexibleRollout', id: expect.stringMatching(/^change-\d+$/), result: true, parameters: { rollout: '100', stickiness: 'default', groupId: checkout } }),
    ])
    expect(await snapshot()).toEqual(before)
    const after = await t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['production'], projects: [project], context } })
    expect(entriesOf(after, checkout)![0].isEnabled).toBe(false)
  })

  it('applies every pending change of the request, in order, to the preview only', async () => {
    const { P, F, banner, legacy, search, segment, changeRequest } = await shop()
    const [userStrategy] = (await t.call('GET', `${F}/${search}/environments/production/strategies`)).body
    const id = await changeRequest([
      { feature: search, action: 'updateStrategy', payload: { id: userStrategy.id, name: 'userWithId', parameters: { userIds: 'bob' } } },
      { feature: search, action: 'addStrategy', payload: { name: 'default', segments: [segment.id], sortOrder: -1 } },
      { feature: banner, action: 'patchVariant', payload: { variants: [{ name: 'red', payload: { type: 'string', value: 'r' } }] } },
      { feature: banner, action: 'addDependency', payload: { feature: search } },
      { feature: legacy, action: 'archiveFeature' },
    ])
    const before = await snapshot()
    const res = await preview(id, { context: { appName: 'web', userId: 'ann,bob', properties: { country: 'NO,SE' } } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.features.map((f: any) => f.name)).not.toContain(legacy)
    const searched = entriesOf(res, search)!
    expect(searched.map((e) => [e.context.userId, e.context.country, e.isEnabled])).toEqual([
      ['ann', 'NO', true],
      ['ann', 'SE', false],
      ['bob', 'NO', true],
      ['bob', 'SE', true],
    ])
    expect(searched[0].strategies.data.map((s: any) => s.name)).toEqual(['default', 'userWithId'])
    expect(searched[0].strategies.data[0].segments).toEqual([expect.objectContaining({ id: segment.id, name: segment.name, result: true })])
    const bannered = entriesOf(res, banner)!
    expect(bannered.map((e) => e.isEnabled)).toEqual([true, false, true, true])
    expect(bannered[0].variant).toEqual({ name: 'red', enabled: true, feature_enabled: true, payload: { type: 'string', value: 'r' } })
    expect(bannered[0].variants).toEqual([{ name: 'red', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'r' } }])
    expect(await snapshot()).toEqual(before)
    expect((await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Cancelled' } })).status).toBe(200)
  })

  it('evaluates a closed change request as the flags are now: it has no pending changes', async () => {
    const { P, banner, changeRequest } = await shop()
    const id = await changeRequest({ feature: banner, action: 'updateEnabled', payload: { enabled: false } })
    expect(entriesOf(await preview(id, { context: { appName: 'web' } }), banner)![0].isEnabled).toBe(false)
    expect((await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Cancelled' } })).status).toBe(200)
    expect(entriesOf(await preview(id, { context: { appName: 'web' } }), banner)![0].isEnabled).toBe(true)
  })

  it('is 409 when a pending change no longer applies, as applying it would be', async () => {
    const { P, F, banner, changeRequest } = await shop()
    const strategy = (await t.call('POST', `${F}/${banner}/environments/production/strategies`, { body: { name: 'userWithId', parameters: { userIds: 'x' } } })).body
    const id = await changeRequest({ feature: banner, action: 'deleteStrategy', payload: { id: strategy.id } })
    expect((await t.call('DELETE', `${F}/${banner}/environments/production/strategies/${strategy.id}`)).status).toBe(200)
    const res = await preview(id, { context: { appName: 'web' } })
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining(strategy.id) })
    await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Cancelled' } })
  })

  it('is 404 for an unknown change request and 400 for a bad context', async () => {
    const { checkout, changeRequest } = await shop()
    for (const id of ['99999', 'abc', '0']) {
      const res = await preview(id, { context: { appName: 'web' } })
      expect(res.status, id).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    const id = await changeRequest({ feature: checkout, action: 'updateEnabled', payload: { enabled: false } })
    for (const body of [{}, { context: {} }, { context: { appName: '' } }, { context: { appName: 'web', properties: { a: 1 } } }]) {
      const res = await preview(id, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
  })

  it('warns about top-level context fields of the wrong type, and previews the change a reviewer is about to approve', async () => {
    const { P, checkout, changeRequest } = await shop()
    await changeRequest({ feature: checkout, action: 'updateEnabled', payload: { enabled: false } })
    const [open] = (await t.call('GET', `${P}/change-requests?state=Draft`)).body
    expect((await t.call('PUT', `${P}/change-requests/${open.id}/state`, { body: { state: 'In review' } })).status).toBe(200)
    const res = await t.call('POST', `/api/admin/playground/change-request/${open.id}`, { body: { context: { appName: 'web', tries: 3 } }, token: reviewer })
    expect(res.status).toBe(200)
    expect(res.body.warnings).toEqual({ invalidContextProperties: ['tries'] })
  })
})
