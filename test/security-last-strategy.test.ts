import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createToken } from '../src/api-tokens/store.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { createTestApp, type TestApp } from './helpers/app.js'

// An enabled environment never serves an empty strategy list: SDKs read `enabled: true, strategies: []` as on
// for everyone. Every way of leaving an enabled environment without an enabled strategy switches it off.

let t: TestApp
let clientToken: string
let reviewer: string
const P = '/api/admin/projects/default'
const F = `${P}/features`
const CR_P = '/api/admin/projects/guarded'

beforeAll(async () => {
  t = await createTestApp()
  const token = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'sdk', type: 'client', environment: 'development', projects: ['*'] } })
  expect(token.status, token.text).toBe(201)
  clientToken = token.body.secret
  reviewer = (await createToken(t.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'reviewer', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
  const project = await t.call('POST', '/api/admin/projects', { body: { id: 'guarded', name: 'Guarded', environments: ['production'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] } })
  expect(project.status, project.text).toBe(201)
})
afterAll(() => t.close())

const rollout = { name: 'flexibleRollout', constraints: [], parameters: { rollout: '10', stickiness: 'default', groupId: 'x' } }

/** A flag on in development with one 10 % rollout; returns the strategy's id. */
async function flagWithRollout(name: string, project = P, environment = 'development'): Promise<string> {
  expect((await t.call('POST', `${project}/features`, { body: { name } })).status).toBe(201)
  const strategy = await t.call('POST', `${project}/features/${name}/environments/${environment}/strategies`, { body: rollout })
  expect(strategy.status, strategy.text).toBe(200)
  expect((await t.call('POST', `${project}/features/${name}/environments/${environment}/on`)).status).toBe(200)
  return strategy.body.id
}

const served = async (name: string) => {
  const res = await t.call('GET', '/api/client/features', { token: clientToken })
  expect(res.status, res.text).toBe(200)
  return res.body.features.find((f: any) => f.name === name)
}
const environmentOf = async (name: string, environment = 'development', project = P) =>
  (await t.call('GET', `${project}/features/${name}`)).body.environments.find((e: any) => e.name === environment)
const switchEvents = (name: string) =>
  t.query<{ type: string; environment: string; created_by: string; data: any; pre_data: any; tags: any }>(
    "select type, environment, created_by, data, pre_data, tags from events where feature_name = $1 and type like 'feature-environment-%' order by id",
    [name],
  )
const playground = async (name: string, environment = 'development') => {
  const res = await t.call('POST', '/api/admin/playground/advanced', { body: { environments: [environment], projects: '*', context: { appName: 'web', userId: '1' } } })
  expect(res.status, res.text).toBe(200)
  return res.body.features.find((f: any) => f.name === name).environments[environment][0]
}

describe('the last enabled strategy of an enabled environment', () => {
  it('deleted: the environment is switched off in the same change, with feature-environment-disabled', async () => {
    const id = await flagWithRollout('deleted-last')
    expect((await t.call('DELETE', `${F}/deleted-last/environments/development/strategies/${id}`)).status).toBe(200)
    expect(await served('deleted-last')).toMatchObject({ enabled: false, strategies: [] })
    expect((await environmentOf('deleted-last')).enabled).toBe(false)
    expect((await switchEvents('deleted-last')).map((e) => [e.type, e.environment, e.data, e.pre_data, e.created_by])).toEqual([
      ['feature-environment-enabled', 'development', { enabled: true }, { enabled: false }, 'test-admin'],
      ['feature-environment-disabled', 'development', { enabled: false }, { enabled: true }, 'test-admin'],
    ])
    expect(await playground('deleted-last')).toMatchObject({ isEnabled: false, isEnabledInCurrentEnvironment: false })
  })

  it('disabled with PUT: switched off, and the playground shows it unevaluated with an unknown result', async () => {
    const id = await flagWithRollout('disabled-last')
    const res = await t.call('PUT', `${F}/disabled-last/environments/development/strategies/${id}`, { body: { ...rollout, disabled: true } })
    expect(res.status, res.text).toBe(200)
    expect(await served('disabled-last')).toMatchObject({ enabled: false, strategies: [] })
    expect((await switchEvents('disabled-last')).map((e) => e.type)).toEqual(['feature-environment-enabled', 'feature-environment-disabled'])
    const shown = await playground('disabled-last')
    expect(shown).toMatchObject({ isEnabled: false, strategies: { result: 'unknown' } })
    expect(shown.strategies.data).toEqual([expect.objectContaining({ id, disabled: true, result: { enabled: false, evaluationStatus: 'unevaluated' } })])
  })

  it('leaves the environment on while another strategy is enabled, and writes no switch event', async () => {
    const id = await flagWithRollout('two-strategies')
    expect((await t.call('POST', `${F}/two-strategies/environments/development/strategies`, { body: { ...rollout, parameters: { rollout: '50' } } })).status).toBe(200)
    expect((await t.call('DELETE', `${F}/two-strategies/environments/development/strategies/${id}`)).status).toBe(200)
    expect(await served('two-strategies')).toMatchObject({ enabled: true, strategies: [expect.objectContaining({ parameters: expect.objectContaining({ rollout: '50' }) })] })
    expect((await switchEvents('two-strategies')).map((e) => e.type)).toEqual(['feature-environment-enabled'])
  })

  it('a disabled environment stays as it is: removing its strategies writes no switch event', async () => {
    expect((await t.call('POST', F, { body: { name: 'already-off' } })).status).toBe(201)
    const strategy = await t.call('POST', `${F}/already-off/environments/development/strategies`, { body: rollout })
    expect((await t.call('DELETE', `${F}/already-off/environments/development/strategies/${strategy.body.id}`)).status).toBe(200)
    expect(await switchEvents('already-off')).toEqual([])
  })

  it('switching on again with only disabled strategies adds an enabled default strategy, so SDKs never get an empty list', async () => {
    const id = await flagWithRollout('back-on')
    expect((await t.call('PUT', `${F}/back-on/environments/development/strategies/${id}`, { body: { ...rollout, disabled: true } })).status).toBe(200)
    expect((await t.call('POST', `${F}/back-on/environments/development/on`)).status).toBe(200)
    const flag = await served('back-on')
    expect(flag.enabled).toBe(true)
    expect(flag.strategies.length).toBeGreaterThan(0)
  })

  it('deleted through an applied change request: switched off in the apply, and its preview says so first', async () => {
    const id = await flagWithRollout('through-review', CR_P, 'production')
    const draft = await t.call('POST', `${CR_P}/environments/production/change-requests`, { body: { feature: 'through-review', action: 'deleteStrategy', payload: { id } } })
    expect(draft.status, draft.text).toBe(200)
    const preview = await t.call('POST', `/api/admin/playground/change-request/${draft.body.id}`, { body: { context: { appName: 'web' } } })
    expect(preview.status, preview.text).toBe(200)
    expect(preview.body.features.find((f: any) => f.name === 'through-review').environments.production[0]).toMatchObject({ isEnabled: false, isEnabledInCurrentEnvironment: false })
    expect((await t.call('PUT', `${CR_P}/change-requests/${draft.body.id}/state`, { body: { state: 'In review' } })).status).toBe(200)
    expect((await t.call('POST', `${CR_P}/change-requests/${draft.body.id}/approve`, { token: reviewer })).status).toBe(200)
    const applied = await t.call('PUT', `${CR_P}/change-requests/${draft.body.id}/state`, { body: { state: 'Applied' } })
    expect(applied.status, applied.text).toBe(200)
    expect((await environmentOf('through-review', 'production', CR_P)).enabled).toBe(false)
    expect((await switchEvents('through-review')).map((e) => [e.type, e.environment])).toEqual([
      ['feature-environment-enabled', 'production'],
      ['feature-environment-disabled', 'production'],
    ])
  })

  it('an environment stored on without an enabled strategy (before this rule) is served off to SDKs and in the playground', async () => {
    const id = await flagWithRollout('stored-badly')
    // Written behind the API's back, as a bug before the rule could leave it (the payload is built after, at the flag's last revision).
    await t.query('update feature_strategies set disabled = true where id = $1', [id])
    expect(await served('stored-badly')).toMatchObject({ enabled: false, strategies: [] })
    expect(await playground('stored-badly')).toMatchObject({ isEnabled: false, strategies: { result: 'unknown' } })
  })
})
