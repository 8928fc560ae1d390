import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addToProject, createFlag, createProject, expectSkipNeeded, fresh } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
/** Root Viewer: may change nothing outside projects where they are a member. */
let viv: TestUser

beforeAll(async () => {
  t = await createTestApp()
  viv = await createSignedInUser(t, 'viv', 'Viewer')
})
afterAll(() => t.close())

const eventsOf = (type: string, feature: string) => t.query<{ type: string }>('select type from events where type = $1 and feature_name = $2', [type, feature])
const envOf = async (project: string, flag: string, env: string) => (await t.call('GET', `/api/admin/projects/${project}/features/${flag}`)).body.environments.find((e: any) => e.name === env)

describe('bulk switch of flags in an environment', () => {
  it('switches every flag named on, then off, with one event per flag as the single switch', async () => {
    const project = await createProject(t, { environments: ['development'] })
    const a = (await createFlag(t, {}, project)).name
    const b = (await createFlag(t, {}, project)).name
    const on = await t.call('POST', `/api/admin/projects/${project}/bulk_features/environments/development/on`, { body: { features: [a, b, a] } })
    expect(on.status, on.text).toBe(200)
    expect((await envOf(project, a, 'development')).enabled).toBe(true)
    expect((await envOf(project, b, 'development')).strategies).toHaveLength(1)
    expect(await eventsOf('feature-environment-enabled', a)).toHaveLength(1)
    const off = await t.call('POST', `/api/admin/projects/${project}/bulk_features/environments/development/off`, { body: { features: [a, b] } })
    expect(off.status, off.text).toBe(200)
    expect((await envOf(project, b, 'development')).enabled).toBe(false)
    expect(await eventsOf('feature-environment-disabled', b)).toHaveLength(1)
  })

  it('answers 404 for a name that is no flag of the project and switches nothing', async () => {
    const project = await createProject(t, { environments: ['development'] })
    const a = (await createFlag(t, {}, project)).name
    const other = (await createFlag(t)).name
    const res = await t.call('POST', `/api/admin/projects/${project}/bulk_features/environments/development/on`, { body: { features: [a, other] } })
    expect(res.status, res.text).toBe(404)
    expect(res.body.name).toBe('NotFoundError')
    expect((await envOf(project, a, 'development')).enabled).toBe(false)
    const bad = await t.call('POST', `/api/admin/projects/${project}/bulk_features/environments/development/on`, { body: { features: 'x' } })
    expect(bad.status).toBe(400)
    expect(bad.body.name).toBe('ValidationError')
  })

  it('refuses a caller without UPDATE_FEATURE_ENVIRONMENT, and hides a private project', async () => {
    const project = await createProject(t, { environments: ['development'] })
    const a = (await createFlag(t, {}, project)).name
    const res = await viv.call('POST', `/api/admin/projects/${project}/bulk_features/environments/development/on`, { body: { features: [a] } })
    expect(res.status).toBe(403)
    const vault = await createProject(t, { mode: 'private', environments: ['development'] })
    const v = (await createFlag(t, {}, vault)).name
    const hidden = await viv.call('POST', `/api/admin/projects/${vault}/bulk_features/environments/development/on`, { body: { features: [v] } })
    expect(hidden.status).toBe(404)
  })

  it('does not bypass change requests: a project Owner gets 403 in a protected environment and nothing is switched', async () => {
    const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const owner = await createSignedInUser(t, fresh('owner'), 'Viewer')
    await addToProject(t, project, owner.id, 'Owner')
    const a = (await createFlag(t, {}, project)).name
    expectSkipNeeded(await owner.call('POST', `/api/admin/projects/${project}/bulk_features/environments/production/on`, { body: { features: [a] } }))
    expect((await envOf(project, a, 'production')).enabled).toBe(false)
    expect((await owner.call('POST', `/api/admin/projects/${project}/bulk_features/environments/development/on`, { body: { features: [a] } })).status).toBe(200)
  })
})

describe('PUT of a flag', () => {
  it('changes only the properties sent, with the events of the JSON Patch', async () => {
    const flag = await createFlag(t, { description: 'before', impressionData: true })
    const res = await t.call('PUT', `/api/admin/projects/default/features/${flag.name}`, { body: { stale: true, type: 'kill-switch' } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ name: flag.name, stale: true, type: 'kill-switch', description: 'before', impressionData: true })
    expect(await eventsOf('feature-stale-on', flag.name)).toHaveLength(1)
    expect(await eventsOf('feature-type-updated', flag.name)).toHaveLength(1)
    expect(await eventsOf('feature-metadata-updated', flag.name)).toHaveLength(1)
  })

  it('answers 400 for an unknown type, 404 for a flag of another project, 403 without UPDATE_FEATURE', async () => {
    const flag = await createFlag(t)
    const bad = await t.call('PUT', `/api/admin/projects/default/features/${flag.name}`, { body: { type: 'nonsense' } })
    expect(bad.status).toBe(400)
    expect(bad.body.name).toBe('ValidationError')
    const project = await createProject(t)
    expect((await t.call('PUT', `/api/admin/projects/${project}/features/${flag.name}`, { body: { stale: true } })).status).toBe(404)
    expect((await viv.call('PUT', `/api/admin/projects/default/features/${flag.name}`, { body: { stale: true } })).status).toBe(403)
  })

  it('needs SKIP_CHANGE_REQUEST where the project requires change requests, except for the description alone', async () => {
    const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const owner = await createSignedInUser(t, fresh('owner'), 'Viewer')
    await addToProject(t, project, owner.id, 'Owner')
    const flag = (await createFlag(t, {}, project)).name
    expectSkipNeeded(await owner.call('PUT', `/api/admin/projects/${project}/features/${flag}`, { body: { stale: true } }))
    const described = await owner.call('PUT', `/api/admin/projects/${project}/features/${flag}`, { body: { description: 'fine' } })
    expect(described.status, described.text).toBe(200)
    expect(described.body.stale).toBe(false)
  })
})

describe('marking flags stale in bulk', () => {
  it('marks the flags named, ignores unknown names, and emits feature-stale-on/-off', async () => {
    const a = (await createFlag(t)).name
    const b = (await createFlag(t)).name
    const res = await t.call('POST', '/api/admin/projects/default/stale', { body: { features: [a, b, 'no-such-flag'], stale: true } })
    expect(res.status, res.text).toBe(202)
    expect((await t.call('GET', `/api/admin/projects/default/features/${b}`)).body.stale).toBe(true)
    expect(await eventsOf('feature-stale-on', a)).toHaveLength(1)
    expect((await t.call('POST', '/api/admin/projects/default/stale', { body: { features: [a], stale: false } })).status).toBe(202)
    expect(await eventsOf('feature-stale-off', a)).toHaveLength(1)
    expect((await t.call('POST', '/api/admin/projects/default/stale', { body: { features: [a] } })).status).toBe(400)
    expect((await viv.call('POST', '/api/admin/projects/default/stale', { body: { features: [a], stale: true } })).status).toBe(403)
  })

  it('needs SKIP_CHANGE_REQUEST where the project requires change requests', async () => {
    const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const owner = await createSignedInUser(t, fresh('owner'), 'Viewer')
    await addToProject(t, project, owner.id, 'Owner')
    const flag = (await createFlag(t, {}, project)).name
    expectSkipNeeded(await owner.call('POST', `/api/admin/projects/${project}/stale`, { body: { features: [flag], stale: true } }))
    expect(await eventsOf('feature-stale-on', flag)).toHaveLength(0)
  })
})

describe('a flag in one environment', () => {
  it('answers the environment, 404 for an unknown environment or flag, 404 for a hidden private project', async () => {
    const flag = (await createFlag(t)).name
    await t.call('POST', `/api/admin/projects/default/features/${flag}/environments/development/on`)
    const res = await viv.call('GET', `/api/admin/projects/default/features/${flag}/environments/development`)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ name: 'development', environment: 'development', featureName: flag, enabled: true })
    expect(res.body.strategies).toHaveLength(1)
    expect((await t.call('GET', `/api/admin/projects/default/features/${flag}/environments/nowhere`)).status).toBe(404)
    expect((await t.call('GET', `/api/admin/projects/default/features/no-such/environments/development`)).status).toBe(404)
    const vault = await createProject(t, { mode: 'private', environments: ['development'] })
    const v = (await createFlag(t, {}, vault)).name
    expect((await viv.call('GET', `/api/admin/projects/${vault}/features/${v}/environments/development`)).status).toBe(404)
  })
})

describe('validating a flag name', () => {
  it('answers 200 for a free valid name, 409 for a taken one (archived too), 400 for a bad name or naming pattern', async () => {
    expect((await viv.call('POST', '/api/admin/features/validate', { body: { name: fresh('free') } })).status).toBe(200)
    const flag = (await createFlag(t)).name
    const taken = await viv.call('POST', '/api/admin/features/validate', { body: { name: flag } })
    expect(taken.status).toBe(409)
    expect(taken.body.name).toBe('NameExistsError')
    await t.call('DELETE', `/api/admin/projects/default/features/${flag}`)
    expect((await t.call('POST', '/api/admin/features/validate', { body: { name: flag } })).status).toBe(409)
    expect((await t.call('POST', '/api/admin/features/validate', { body: { name: 'not url friendly' } })).status).toBe(400)
    const project = await createProject(t)
    expect((await t.call('PUT', `/api/admin/projects/${project}`, { body: { name: project, featureNaming: { pattern: '^team-.*' } } })).status).toBe(200)
    expect((await t.call('POST', '/api/admin/features/validate', { body: { name: fresh('other'), projectId: project } })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/features/validate', { body: { name: fresh('team'), projectId: project } })).status).toBe(200)
    expect((await t.call('POST', '/api/admin/features/validate', { body: { name: fresh('x'), projectId: 'no-such-project' } })).status).toBe(404)
    expect((await t.call('POST', '/api/admin/features/validate', { body: { name: 'x' }, token: null })).status).toBe(401)
  })

  it('answers a private project the caller may not read as unknown', async () => {
    const vault = await createProject(t, { mode: 'private' })
    const res = await viv.call('POST', '/api/admin/features/validate', { body: { name: fresh('other'), projectId: vault } })
    expect(res.status).toBe(404)
  })
})

describe('variants on several environments at once', () => {
  const variant = (name: string) => ({ name, weightType: 'variable', weight: 1000, stickiness: 'default' })
  const variantEvents = (flag: string) => t.query<{ environment: string }>("select environment from events where type = 'feature-environment-variants-updated' and feature_name = $1 order by environment", [flag])

  it('replaces the variants of each environment named, one event each', async () => {
    const flag = (await createFlag(t)).name
    const res = await t.call('PUT', `/api/admin/projects/default/features/${flag}/variants-batch`, { body: { variants: [variant('blue')], environments: ['development', 'production'] } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.variants.map((v: any) => v.name)).toEqual(['blue'])
    expect((await envOf('default', flag, 'production')).variants.map((v: any) => v.name)).toEqual(['blue'])
    expect((await variantEvents(flag)).map((e) => e.environment)).toEqual(['development', 'production'])
  })

  it('writes nothing when a variant is invalid (400), an environment unknown (404) or one not permitted (403)', async () => {
    const flag = (await createFlag(t)).name
    const path = `/api/admin/projects/default/features/${flag}/variants-batch`
    expect((await t.call('PUT', path, { body: { variants: [{ ...variant('x'), weightType: 'nonsense' }], environments: ['development'] } })).status).toBe(400)
    expect((await t.call('PUT', path, { body: { variants: [variant('x')], environments: ['development', 'nowhere'] } })).status).toBe(404)
    expect((await viv.call('PUT', path, { body: { variants: [variant('x')], environments: ['development'] } })).status).toBe(403)
    expect(await variantEvents(flag)).toHaveLength(0)
  })

  it('needs SKIP_CHANGE_REQUEST in a protected environment named, checked before any environment is written', async () => {
    const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const owner = await createSignedInUser(t, fresh('owner'), 'Viewer')
    await addToProject(t, project, owner.id, 'Owner')
    const flag = (await createFlag(t, {}, project)).name
    expectSkipNeeded(await owner.call('PUT', `/api/admin/projects/${project}/features/${flag}/variants-batch`, { body: { variants: [variant('x')], environments: ['development', 'production'] } }))
    expect(await variantEvents(flag)).toHaveLength(0)
    const vault = await createProject(t, { mode: 'private' })
    const v = (await createFlag(t, {}, vault)).name
    expect((await viv.call('PUT', `/api/admin/projects/${vault}/features/${v}/variants-batch`, { body: { variants: [], environments: ['development'] } })).status).toBe(404)
  })
})
