import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, addToProject, createFlag, createProject, createSegment, expectSkipNeeded, fresh } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/* Strategy patches, segment name validation, and which strategies use which segments. */

let t: TestApp
/** Root Viewer, member of no project. */
let viv: TestUser

beforeAll(async () => {
  t = await createTestApp()
  viv = await createSignedInUser(t, 'viv', 'Viewer')
})
afterAll(() => t.close())

const rollout = (percent: string, segments: number[] = []) => ({ name: 'flexibleRollout', parameters: { rollout: percent, stickiness: 'default', groupId: 'g' }, constraints: [], segments })
const strategyEvents = (flag: string) => t.query<{ type: string; data: any; pre_data: any }>("select type, data, pre_data from events where feature_name = $1 and type = 'feature-strategy-update' order by id", [flag])

/** A project requiring change requests in production, with an Owner who may not skip them, and a flag with a strategy there. */
async function guarded() {
  const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
  const owner = await createSignedInUser(t, fresh('owner'), 'Viewer')
  await addToProject(t, project, owner.id, 'Owner')
  const flag = (await createFlag(t, {}, project)).name as string
  const strategy = await addStrategy(t, flag, 'production', rollout('10'), project)
  return { project, owner, flag, strategy }
}

describe('PATCH of a strategy', () => {
  it('applies the patch and writes it as the PUT does, with feature-strategy-update', async () => {
    const flag = (await createFlag(t)).name
    const strategy = await addStrategy(t, flag, 'development', rollout('10'))
    const path = `/api/admin/projects/default/features/${flag}/environments/development/strategies/${strategy.id}`
    const res = await t.call('PATCH', path, { body: [{ op: 'replace', path: '/parameters/rollout', value: '55' }, { op: 'replace', path: '/title', value: 'half' }] })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ id: strategy.id, title: 'half', parameters: { rollout: '55', groupId: 'g' } })
    const [event] = await strategyEvents(flag)
    expect(event!.pre_data.parameters.rollout).toBe('10')
    expect(event!.data.parameters.rollout).toBe('55')
  })

  it('refuses an invalid result (400), an unknown strategy (404), a caller without UPDATE_FEATURE_STRATEGY (403)', async () => {
    const flag = (await createFlag(t)).name
    const strategy = await addStrategy(t, flag, 'development', rollout('10'))
    const path = `/api/admin/projects/default/features/${flag}/environments/development/strategies/${strategy.id}`
    const bad = await t.call('PATCH', path, { body: [{ op: 'replace', path: '/parameters/rollout', value: '500' }] })
    expect(bad.status, bad.text).toBe(400)
    expect(bad.body.name).toBe('ValidationError')
    expect((await t.call('PATCH', path, { body: [{ op: 'remove', path: '/nothing' }] })).status).toBe(400)
    expect((await t.call('PATCH', path.replace(strategy.id, '00000000-0000-4000-8000-000000000000'), { body: [] })).status).toBe(404)
    expect((await viv.call('PATCH', path, { body: [{ op: 'replace', path: '/title', value: 'x' }] })).status).toBe(403)
    expect(await strategyEvents(flag)).toHaveLength(0)
  })

  it('needs SKIP_CHANGE_REQUEST in a protected environment, and hides a private project', async () => {
    const g = await guarded()
    expectSkipNeeded(await g.owner.call('PATCH', `/api/admin/projects/${g.project}/features/${g.flag}/environments/production/strategies/${g.strategy.id}`, { body: [{ op: 'replace', path: '/parameters/rollout', value: '100' }] }))
    expect(await strategyEvents(g.flag)).toHaveLength(0)
    const vault = await createProject(t, { mode: 'private' })
    const v = (await createFlag(t, {}, vault)).name
    const s = await addStrategy(t, v, 'development', rollout('1'), vault)
    expect((await viv.call('PATCH', `/api/admin/projects/${vault}/features/${v}/environments/development/strategies/${s.id}`, { body: [] })).status).toBe(404)
  })
})

describe('segment name validation', () => {
  it('answers 204 for a free name, 409 for a taken one, 400 for none', async () => {
    const segment = await createSegment(t)
    expect((await viv.call('POST', '/api/admin/segments/validate', { body: { name: fresh('free') } })).status).toBe(204)
    const taken = await viv.call('POST', '/api/admin/segments/validate', { body: { name: segment.name } })
    expect(taken.status).toBe(409)
    expect(taken.body.name).toBe('NameExistsError')
    expect((await t.call('POST', '/api/admin/segments/validate', { body: {} })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/segments/validate', { body: { name: 'x' }, token: null })).status).toBe(401)
  })
})

describe('strategies and their segments', () => {
  it("lists a strategy's segments and a segment's strategies, hiding private projects", async () => {
    const segment = await createSegment(t)
    const flag = (await createFlag(t)).name
    const strategy = await addStrategy(t, flag, 'development', rollout('10', [segment.id]))
    const bySegment = await viv.call('GET', `/api/admin/segments/${segment.id}/strategies`)
    expect(bySegment.status, bySegment.text).toBe(200)
    expect(bySegment.body.strategies).toEqual([{ id: strategy.id, featureName: flag, projectId: 'default', environment: 'development', strategyName: 'flexibleRollout' }])
    const byStrategy = await viv.call('GET', `/api/admin/segments/strategies/${strategy.id}`)
    expect(byStrategy.body.segments.map((s: any) => s.id)).toEqual([segment.id])
    expect((await viv.call('GET', '/api/admin/segments/strategies/not-a-strategy')).body).toEqual({ segments: [] })
    expect((await t.call('GET', '/api/admin/segments/999999/strategies')).status).toBe(404)

    const vault = await createProject(t, { mode: 'private', environments: ['development'] })
    const v = (await createFlag(t, {}, vault)).name
    const hidden = await addStrategy(t, v, 'development', rollout('10', [segment.id]), vault)
    expect((await viv.call('GET', `/api/admin/segments/${segment.id}/strategies`)).body.strategies).toHaveLength(1)
    expect((await t.call('GET', `/api/admin/segments/${segment.id}/strategies`)).body.strategies).toHaveLength(2)
    expect((await viv.call('GET', `/api/admin/segments/strategies/${hidden.id}`)).body).toEqual({ segments: [] })
    const vaultSegment = await createSegment(t, { project: vault })
    expect((await viv.call('GET', `/api/admin/segments/${vaultSegment.id}/strategies`)).status).toBe(404)
  })

  it('lists the strategies using a segment in open change requests', async () => {
    const g = await guarded()
    const segment = await createSegment(t)
    const draft = await t.call('POST', `/api/admin/projects/${g.project}/environments/production/change-requests`, {
      body: { feature: g.flag, action: 'updateStrategy', payload: { id: g.strategy.id, ...rollout('20', [segment.id]) } },
    })
    expect(draft.status, draft.text).toBe(200)
    const res = await t.call('GET', `/api/admin/segments/${segment.id}/strategies`)
    expect(res.body.strategies).toEqual([])
    expect(res.body.changeRequestStrategies).toEqual([{ id: g.strategy.id, featureName: g.flag, projectId: g.project, environment: 'production', strategyName: 'flexibleRollout' }])
  })

  it("sets a strategy's segments as replacing the strategy does, with its permission and change-request rule", async () => {
    const segment = await createSegment(t)
    const flag = (await createFlag(t)).name
    const strategy = await addStrategy(t, flag, 'development', rollout('10'))
    const body = { projectId: 'default', strategyId: strategy.id, environmentId: 'development', segmentIds: [segment.id] }
    expect((await viv.call('POST', '/api/admin/segments/strategies', { body })).status).toBe(403)
    const res = await t.call('POST', '/api/admin/segments/strategies', { body })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toEqual(body)
    const [event] = await strategyEvents(flag)
    expect(event!.data.segments).toEqual([segment.id])
    expect(event!.data.parameters.rollout).toBe('10')
    expect((await t.call('POST', '/api/admin/segments/strategies', { body: { ...body, segmentIds: [999999] } })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/segments/strategies', { body: { ...body, environmentId: 'production' } })).status).toBe(404)

    const g = await guarded()
    expectSkipNeeded(await g.owner.call('POST', '/api/admin/segments/strategies', { body: { projectId: g.project, strategyId: g.strategy.id, environmentId: 'production', segmentIds: [segment.id] } }))
    expect(await strategyEvents(g.flag)).toHaveLength(0)
    const vault = await createProject(t, { mode: 'private' })
    expect((await viv.call('POST', '/api/admin/segments/strategies', { body: { ...body, projectId: vault } })).status).toBe(404)
  })
})

describe('constraint validation', () => {
  it("answers 204 for a valid constraint, 400 for a malformed one or a value its field's legal values exclude", async () => {
    const ok204 = await viv.call('POST', '/api/admin/constraints/validate', { body: { contextName: 'userId', operator: 'IN', values: ['a'] } })
    expect(ok204.status, ok204.text).toBe(204)
    // An IN list with no values is accepted, as the strategy routes (and Unleash) accept it.
    const empty = await viv.call('POST', '/api/admin/constraints/validate', { body: { contextName: 'userId', operator: 'IN', values: [] } })
    expect(empty.status, empty.text).toBe(204)
    const malformed = await viv.call('POST', '/api/admin/constraints/validate', { body: { contextName: 'userId', operator: 'NOT_AN_OPERATOR', values: ['a'] } })
    expect(malformed.status).toBe(400)
    expect(malformed.body.name).toBe('ValidationError')
    expect((await t.call('POST', '/api/admin/constraints/validate', { body: { contextName: 'x', operator: 'NUM_GT', value: 'ten' } })).status).toBe(400)
    const field = fresh('region')
    expect((await t.call('POST', '/api/admin/context', { body: { name: field, legalValues: [{ value: 'eu' }] } })).status).toBe(201)
    expect((await t.call('POST', '/api/admin/constraints/validate', { body: { contextName: field, operator: 'IN', values: ['eu'] } })).status).toBe(204)
    const illegal = await t.call('POST', '/api/admin/constraints/validate', { body: { contextName: field, operator: 'IN', values: ['us'] } })
    expect(illegal.status, illegal.text).toBe(400)
    expect((await t.call('POST', '/api/admin/constraints/validate', { body: { contextName: 'userId', operator: 'IN', values: ['a'] }, token: null })).status).toBe(401)
  })
})
