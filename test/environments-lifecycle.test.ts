// Environments through their whole life: read one and a project's, change their type and order, deprecate and
// bring back, delete (with the flags' configuration and the tokens in them), and take one out of a project; the
// events of each, their 4xx, who may, what SDKs are served afterwards, and the round trips at the edge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { addStrategy, addToProject, createEnvironment, createFlag, createProject, createToken, createUser, enableFlag, fresh, ok } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const eventsOf = (type: string, environment: string) =>
  t.query<{ type: string; project: string | null; environment: string | null; data: any; pre_data: any }>('select type, project, environment, data, pre_data from events where type = $1 and environment = $2 order by id', [type, environment])
const poll = (token: string) => t.call('GET', '/api/client/features', { token })
const served = async (token: string, flag: string) => {
  const res = await poll(token)
  expect(res.status, res.text).toBe(200)
  return res.body.features.find((f: { name: string }) => f.name === flag)
}

/** A fresh environment, a project with it and development, a flag on in it (a default strategy), and a client token of it. */
async function flagOnIn(body: Record<string, unknown> = {}) {
  const environment = (await createEnvironment(t, { type: 'test', ...body })).name as string
  const project = await createProject(t, { environments: ['development', environment] })
  const flag = (await createFlag(t, {}, project)).name as string
  await enableFlag(t, flag, environment, project)
  const token = (await createToken(t, { type: 'client', environment, projects: [project] })).secret as string
  return { environment, project, flag, token }
}

describe('GET /api/admin/environments/{name}', () => {
  it('answers the environment with its counts, and 404 for an unknown name', async () => {
    const { environment } = await flagOnIn({ sortOrder: 42 })
    const res = await t.call('GET', `/api/admin/environments/${environment}`)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ name: environment, type: 'test', enabled: true, protected: false, sortOrder: 42, projectCount: 1, apiTokenCount: 1 })
    const missing = await t.call('GET', '/api/admin/environments/nowhere')
    expect(missing.status).toBe(404)
    expect(missing.body.name).toBe('NotFoundError')
  })
})

describe('GET /api/admin/environments/project/{projectId}', () => {
  it('lists every environment, visible where the project has it, with its tokens, enabled flags and default strategy there', async () => {
    const { environment, project } = await flagOnIn()
    await ok(t, 'PUT', `/api/admin/projects/${project}/environments/${environment}/default-strategy`, { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: '' } })
    const res = await t.call('GET', `/api/admin/environments/project/${project}`)
    expect(res.status, res.text).toBe(200)
    const byName = new Map(res.body.environments.map((e: { name: string }) => [e.name, e]))
    expect(byName.get(environment)).toMatchObject({ name: environment, type: 'test', visible: true, projectApiTokenCount: 1, projectEnabledToggleCount: 1, defaultStrategy: { name: 'flexibleRollout' } })
    expect(byName.get('development')).toMatchObject({ visible: true, projectApiTokenCount: 0, projectEnabledToggleCount: 0 })
    expect(byName.get('production')).toMatchObject({ visible: false })
    expect(byName.get('production')).not.toHaveProperty('defaultStrategy')
  })

  it('answers 404 for an unknown project, and for a private one the caller may not read', async () => {
    expect((await t.call('GET', '/api/admin/environments/project/nowhere')).status).toBe(404)
    const secret = await createProject(t, { mode: 'private' })
    const viewer = await createUser(t, 'Viewer')
    const res = await viewer.call('GET', `/api/admin/environments/project/${secret}`)
    expect(res.status).toBe(404)
    expect(res.body.name).toBe('NotFoundError')
  })
})

describe('PUT /api/admin/environments/{name}', () => {
  it('sets type and sortOrder, keeps what is left out, and records environment-updated with the old and new state', async () => {
    const name = (await createEnvironment(t, { type: 'development', sortOrder: 3 })).name as string
    const res = await t.call('PUT', `/api/admin/environments/${name}`, { body: { type: 'production' } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ name, type: 'production', enabled: true, protected: false, sortOrder: 3, projectCount: 0, apiTokenCount: 0 })
    expect((await ok(t, 'PUT', `/api/admin/environments/${name}`, { sortOrder: 9 })).body).toMatchObject({ type: 'production', sortOrder: 9 })
    expect(await eventsOf('environment-updated', name)).toEqual([
      // As the route answers it (and environment-created carries it).
      expect.objectContaining({ data: res.body, pre_data: { ...res.body, type: 'development' } }),
      expect.objectContaining({ data: expect.objectContaining({ sortOrder: 9 }), pre_data: expect.objectContaining({ sortOrder: 3 }) }),
    ])
    // The same values again change nothing and record nothing.
    await ok(t, 'PUT', `/api/admin/environments/${name}`, { type: 'production', sortOrder: 9 })
    expect(await eventsOf('environment-updated', name)).toHaveLength(2)
  })

  it('answers 404 for an unknown name, 400 for bad input or a protected environment, 415 without JSON', async () => {
    expect((await t.call('PUT', '/api/admin/environments/nowhere', { body: { type: 'test' } })).status).toBe(404)
    const name = (await createEnvironment(t)).name as string
    for (const body of [{ type: '' }, { sortOrder: 1.5 }, { sortOrder: 'first' }]) {
      const res = await t.call('PUT', `/api/admin/environments/${name}`, { body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    expect((await t.call('PUT', `/api/admin/environments/${name}`, { body: 'type=test', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
    // No route makes an environment protected (Unleash's are seeded so): set it as an older install would have it.
    const guarded = (await createEnvironment(t)).name as string
    await t.query('update environments set protected = true where name = $1', [guarded])
    const res = await t.call('PUT', `/api/admin/environments/${guarded}`, { body: { type: 'test' } })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('protected')
    expect(await eventsOf('environment-updated', guarded)).toEqual([])
  })
})

describe('PUT /api/admin/environments/sort-order', () => {
  it('sets the order of those named, one environment-updated each that changes', async () => {
    const a = (await createEnvironment(t, { sortOrder: 1 })).name as string
    const b = (await createEnvironment(t, { sortOrder: 2 })).name as string
    const res = await t.call('PUT', '/api/admin/environments/sort-order', { body: { [a]: 20, [b]: 2 } })
    expect(res.status, res.text).toBe(200)
    expect((await t.call('GET', `/api/admin/environments/${a}`)).body.sortOrder).toBe(20)
    expect((await eventsOf('environment-updated', a)).map((e) => [e.pre_data.sortOrder, e.data.sortOrder])).toEqual([[1, 20]])
    expect(await eventsOf('environment-updated', b)).toEqual([])
  })

  it('answers 404 naming unknown environments and changes none, 400 for orders that are not integers', async () => {
    const a = (await createEnvironment(t, { sortOrder: 1 })).name as string
    const res = await t.call('PUT', '/api/admin/environments/sort-order', { body: { [a]: 5, nowhere: 6 } })
    expect(res.status).toBe(404)
    expect(res.body.message).toContain('nowhere')
    expect((await t.call('GET', `/api/admin/environments/${a}`)).body.sortOrder).toBe(1)
    expect((await t.call('PUT', '/api/admin/environments/sort-order', { body: { [a]: 'first' } })).status).toBe(400)
    expect((await t.call('PUT', '/api/admin/environments/sort-order', { body: [1] })).status).toBe(400)
  })
})

describe('POST /api/admin/environments/{name}/on and /off', () => {
  it('deprecates an environment: new projects no longer get it, projects that have it keep it, and its SDKs are served as before', async () => {
    const { environment, project, flag, token } = await flagOnIn()
    const before = await served(token, flag)
    expect(before.enabled).toBe(true)
    const res = await t.call('POST', `/api/admin/environments/${environment}/off`)
    expect(res.status, res.text).toBe(204)
    expect((await t.call('GET', `/api/admin/environments/${environment}`)).body.enabled).toBe(false)
    expect(await eventsOf('environment-updated', environment)).toEqual([expect.objectContaining({ data: expect.objectContaining({ enabled: false }), pre_data: expect.objectContaining({ enabled: true }) })])
    // As in Unleash: tokens and payloads of a deprecated environment keep working.
    expect(await served(token, flag)).toEqual(before)
    const listed = (await t.call('GET', '/api/admin/projects')).body.projects.find((p: { id: string }) => p.id === project)
    expect(listed.environments).toContain(environment)
    const created = await ok(t, 'POST', '/api/admin/projects', { id: fresh('after-deprecation'), name: 'After' })
    expect(created.body.environments).not.toContain(environment)

    // Off again changes nothing and records nothing; on brings it back for new projects.
    expect((await t.call('POST', `/api/admin/environments/${environment}/off`)).status).toBe(204)
    expect(await eventsOf('environment-updated', environment)).toHaveLength(1)
    expect((await t.call('POST', `/api/admin/environments/${environment}/on`)).status).toBe(204)
    expect((await eventsOf('environment-updated', environment)).map((e) => e.data.enabled)).toEqual([false, true])
    expect((await ok(t, 'POST', '/api/admin/projects', { id: fresh('after-return'), name: 'Back' })).body.environments).toContain(environment)
  })

  it('answers 404 for an unknown environment', async () => {
    for (const state of ['on', 'off']) {
      const res = await t.call('POST', `/api/admin/environments/nowhere/${state}`)
      expect(res.status).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
  })
})

describe('DELETE /api/admin/environments/{name}', () => {
  it('deletes it with the flags’ configuration in it, the projects’ settings of it and its tokens, which stop serving at once', async () => {
    const { environment, project, flag, token } = await flagOnIn()
    const frontend = (await createToken(t, { type: 'frontend', environment, projects: [project] })).secret as string
    const version = (await t.query<{ version: number }>('select version from features where name = $1', [flag]))[0]!.version
    expect((await served(token, flag)).enabled).toBe(true)

    const res = await t.call('DELETE', `/api/admin/environments/${environment}`)
    expect(res.status, res.text).toBe(200)
    expect((await t.call('GET', `/api/admin/environments/${environment}`)).status).toBe(404)
    expect(await t.query('select 1 from feature_environments where environment = $1', [environment])).toEqual([])
    expect(await t.query('select 1 from feature_strategies where environment = $1', [environment])).toEqual([])
    expect(await t.query('select 1 from project_environments where environment_name = $1', [environment])).toEqual([])
    expect(await t.query('select 1 from api_tokens where environment = $1', [environment])).toEqual([])
    // The flag's other environments stay, and its version moved on (cached flag states are read again).
    const read = await ok(t, 'GET', `/api/admin/projects/${project}/features/${flag}`)
    expect(read.body.environments.map((e: { name: string }) => e.name)).toEqual(['development'])
    expect((await t.query<{ version: number }>('select version from features where name = $1', [flag]))[0]!.version).toBeGreaterThan(version)
    // A token of a deleted environment never serves again.
    expect((await poll(token)).status).toBe(401)
    expect((await t.call('GET', '/api/frontend', { token: frontend })).status).toBe(401)

    expect(await eventsOf('environment-deleted', environment)).toEqual([
      expect.objectContaining({ project: null, data: null, pre_data: { name: environment, type: 'test', enabled: true, protected: false, sortOrder: 0, projectCount: 1, apiTokenCount: 2 } }),
    ])
    const tokenEvents = await eventsOf('api-token-deleted', environment)
    expect(tokenEvents.map((e) => e.pre_data.type).sort()).toEqual(['client', 'frontend'])
    expect(JSON.stringify(tokenEvents)).not.toContain(token.split('.')[1])
  })

  it('refuses a protected environment and the only environment of a project (400), and an unknown one (404), changing nothing', async () => {
    expect((await t.call('DELETE', '/api/admin/environments/nowhere')).status).toBe(404)
    const guarded = (await createEnvironment(t)).name as string
    await t.query('update environments set protected = true where name = $1', [guarded])
    const protectedRes = await t.call('DELETE', `/api/admin/environments/${guarded}`)
    expect(protectedRes.status).toBe(400)
    expect(protectedRes.body.message).toContain('protected')

    const only = (await createEnvironment(t)).name as string
    const project = await createProject(t, { environments: [only] })
    const res = await t.call('DELETE', `/api/admin/environments/${only}`)
    expect(res.status).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.body.message).toContain(project)
    expect((await t.call('GET', `/api/admin/environments/${only}`)).status).toBe(200)
    expect(await eventsOf('environment-deleted', only)).toEqual([])
  })

  it('is refused to an Editor (DELETE_ENVIRONMENT is an admin’s)', async () => {
    const name = (await createEnvironment(t)).name as string
    const editor = await createUser(t, 'Editor')
    const res = await editor.call('DELETE', `/api/admin/environments/${name}`)
    expect(res.status).toBe(403)
    expect(res.body.message).toContain('DELETE_ENVIRONMENT')
  })
})

describe('DELETE /api/admin/projects/{projectId}/environments/{environment}', () => {
  it('takes the environment out of the project with its flags’ configuration there, which SDKs of it then get off', async () => {
    const { environment, project, flag, token } = await flagOnIn()
    await ok(t, 'PUT', `/api/admin/projects/${project}/features/${flag}/environments/${environment}/variants`, [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }])
    const other = (await createFlag(t, {}, 'default')).name as string
    await addStrategy(t, other, 'development')

    const res = await t.call('DELETE', `/api/admin/projects/${project}/environments/${environment}`)
    expect(res.status, res.text).toBe(200)
    expect((await ok(t, 'GET', '/api/admin/projects')).body.projects.find((p: { id: string }) => p.id === project).environments).toEqual(['development'])
    expect((await ok(t, 'GET', `/api/admin/projects/${project}/features/${flag}`)).body.environments.map((e: { name: string }) => e.name)).toEqual(['development'])
    expect(await t.query('select 1 from feature_strategies where environment = $1', [environment])).toEqual([])
    expect(await served(token, flag)).toMatchObject({ enabled: false, strategies: [], variants: [] })
    // The environment itself, and other projects, are untouched.
    expect((await t.call('GET', `/api/admin/environments/${environment}`)).status).toBe(200)
    expect(await t.query('select 1 from feature_strategies where feature_name = $1', [other])).toHaveLength(1)

    expect(await eventsOf('project-environment-removed', environment)).toEqual([
      { type: 'project-environment-removed', project, environment, data: null, pre_data: { environment, changeRequestsEnabled: false, requiredApprovals: 1, defaultStrategy: null } },
    ])
    // Added back, it starts from off.
    await ok(t, 'POST', `/api/admin/projects/${project}/environments`, { environment })
    expect((await ok(t, 'GET', `/api/admin/projects/${project}/features/${flag}`)).body.environments.find((e: { name: string }) => e.name === environment)).toMatchObject({ enabled: false, strategies: [] })
  })

  it('answers 400 for the project’s last environment and 404 for an unknown project or an environment it does not have', async () => {
    const project = await createProject(t, { environments: ['development'] })
    const last = await t.call('DELETE', `/api/admin/projects/${project}/environments/development`)
    expect(last.status).toBe(400)
    expect(last.body.name).toBe('ValidationError')
    expect((await t.call('DELETE', `/api/admin/projects/${project}/environments/production`)).status).toBe(404)
    expect((await t.call('DELETE', '/api/admin/projects/nowhere/environments/development')).status).toBe(404)
    expect(await t.query("select 1 from events where type = 'project-environment-removed' and project = $1", [project])).toEqual([])
  })

  it('needs UPDATE_PROJECT in the project and, where it requires change requests, SKIP_CHANGE_REQUEST there; a private project is a 404 to others', async () => {
    const project = await createProject(t, { environments: ['development', 'production'], changeRequestEnvironments: [{ name: 'production' }] })
    const owner = await createUser(t, 'Viewer')
    await addToProject(t, project, owner.id, 'Owner')
    const member = await createUser(t, 'Viewer')
    await addToProject(t, project, member.id, 'Member')
    expect((await member.call('DELETE', `/api/admin/projects/${project}/environments/development`)).status).toBe(403)
    const guarded = await owner.call('DELETE', `/api/admin/projects/${project}/environments/production`)
    expect(guarded.status).toBe(403)
    expect(guarded.body.message).toContain('SKIP_CHANGE_REQUEST')
    expect((await owner.call('DELETE', `/api/admin/projects/${project}/environments/development`)).status).toBe(200)

    const secret = await createProject(t, { mode: 'private', environments: ['development', 'production'] })
    const editor = await createUser(t, 'Viewer')
    expect((await editor.call('DELETE', `/api/admin/projects/${secret}/environments/development`)).status).toBe(404)
  })
})

describe('an open change request of a removed project environment', () => {
  it('can no longer be applied (409), writing nothing', async () => {
    const project = await createProject(t, { environments: ['development', 'production'], changeRequestEnvironments: [{ name: 'production' }] })
    const flag = (await createFlag(t, {}, project)).name as string
    const author = (await createToken(t, { type: 'admin' })).secret as string
    const P = `/api/admin/projects/${project}`
    const cr = await ok({ call: (m, path, o) => t.call(m, path, { ...o, token: author }) }, 'POST', `${P}/environments/production/change-requests`, [
      { feature: flag, action: 'addStrategy', payload: { name: 'default' } },
      { feature: flag, action: 'updateEnabled', payload: { enabled: true } },
    ])
    await ok({ call: (m, path, o) => t.call(m, path, { ...o, token: author }) }, 'PUT', `${P}/change-requests/${cr.body.id}/state`, { state: 'In review' })
    await ok(t, 'DELETE', `${P}/environments/production`)
    await ok(t, 'PUT', `${P}/change-requests/${cr.body.id}/state`, { state: 'Approved' })
    const applied = await t.call('PUT', `${P}/change-requests/${cr.body.id}/state`, { body: { state: 'Applied' } })
    expect(applied.status).toBe(409)
    expect(await t.query('select environment from feature_environments where feature_name = $1', [flag])).toEqual([{ environment: 'development' }])
    expect(await t.query('select 1 from feature_strategies where feature_name = $1', [flag])).toEqual([])
  })
})

describe('POST /api/admin/environments/{name}/clone', () => {
  it('copies the source’s flag configuration (switches, strategies with segments, variants) and project settings into a new environment', async () => {
    const { environment, project, flag } = await flagOnIn()
    const segment = (await ok(t, 'POST', '/api/admin/segments', { name: fresh('segment'), constraints: [] })).body.id as number
    await addStrategy(t, flag, environment, { name: 'flexibleRollout', parameters: { rollout: '25', stickiness: 'default', groupId: flag }, segments: [segment], constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }] }, project)
    await ok(t, 'PUT', `/api/admin/projects/${project}/features/${flag}/environments/${environment}/variants`, [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }])
    const off = (await createFlag(t, {}, project)).name as string
    await ok(t, 'PUT', `/api/admin/projects/${project}/environments/${environment}/default-strategy`, { name: 'default' })
    const elsewhere = await createProject(t, { environments: ['development', environment] })

    const copy = fresh('copy')
    const res = await t.call('POST', `/api/admin/environments/${environment}/clone`, { body: { name: copy, type: 'preproduction', projects: [project] } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ name: copy, type: 'preproduction', enabled: true, protected: false, sortOrder: 0, projectCount: 1, apiTokenCount: 0 })

    const source = (await ok(t, 'GET', `/api/admin/projects/${project}/features/${flag}`)).body.environments.find((e: { name: string }) => e.name === environment)
    const cloned = (await ok(t, 'GET', `/api/admin/projects/${project}/features/${flag}`)).body.environments.find((e: { name: string }) => e.name === copy)
    const withoutIds = (strategies: { id: string }[]) => strategies.map(({ id: _, ...rest }) => rest)
    expect(cloned).toMatchObject({ enabled: true, variants: source.variants })
    expect(withoutIds(cloned.strategies)).toEqual(withoutIds(source.strategies))
    expect(cloned.strategies.map((s: { segments: number[] }) => s.segments)).toContainEqual([segment])
    expect((await ok(t, 'GET', `/api/admin/projects/${project}/features/${off}`)).body.environments.find((e: { name: string }) => e.name === copy)).toMatchObject({ enabled: false, strategies: [] })
    const projectEnvs = (await ok(t, 'GET', `/api/admin/environments/project/${project}`)).body.environments
    expect(projectEnvs.find((e: { name: string }) => e.name === copy)).toMatchObject({ visible: true, defaultStrategy: { name: 'default' } })
    // Only the projects named.
    expect((await ok(t, 'GET', `/api/admin/environments/project/${elsewhere}`)).body.environments.find((e: { name: string }) => e.name === copy).visible).toBe(false)

    // A token of the new environment is served the copy.
    const token = (await createToken(t, { type: 'client', environment: copy, projects: [project] })).secret as string
    expect(await served(token, flag)).toMatchObject({ enabled: true, variants: [expect.objectContaining({ name: 'blue' })] })

    const events = await t.query<{ type: string; project: string | null; feature_name: string | null }>('select type, project, feature_name from events where environment = $1 order by id', [copy])
    expect(events.map((e) => e.type)).toEqual(['environment-created', 'project-environment-added', 'feature-strategy-add', 'feature-strategy-add', 'feature-environment-variants-updated', 'feature-environment-enabled', 'api-token-created'])
  })

  it('copies into every project with the source when none are named', async () => {
    const { environment, project } = await flagOnIn()
    const other = await createProject(t, { environments: ['development', environment] })
    const copy = fresh('copy')
    expect((await ok(t, 'POST', `/api/admin/environments/${environment}/clone`, { name: copy, type: 'test' })).body.projectCount).toBe(2)
    for (const id of [project, other]) expect((await ok(t, 'GET', '/api/admin/projects')).body.projects.find((p: { id: string }) => p.id === id).environments).toContain(copy)
  })

  it('answers 404 for an unknown source, 409 for a taken name, 400 for bad input or a project without the source, writing nothing', async () => {
    const { environment } = await flagOnIn()
    expect((await t.call('POST', '/api/admin/environments/nowhere/clone', { body: { name: fresh('copy'), type: 'test' } })).status).toBe(404)
    const taken = await t.call('POST', `/api/admin/environments/${environment}/clone`, { body: { name: 'production', type: 'test' } })
    expect(taken.status).toBe(409)
    expect(taken.body.name).toBe('NameExistsError')
    const copy = fresh('copy')
    const without = await t.call('POST', `/api/admin/environments/${environment}/clone`, { body: { name: copy, type: 'test', projects: ['default'] } })
    expect(without.status).toBe(400)
    expect(without.body.message).toContain('default')
    for (const body of [{ name: 'has space', type: 'test' }, { name: fresh('copy') }, { name: fresh('copy'), type: 'test', projects: 'default' }]) {
      expect((await t.call('POST', `/api/admin/environments/${environment}/clone`, { body })).status, JSON.stringify(body)).toBe(400)
    }
    expect((await t.call('GET', `/api/admin/environments/${copy}`)).status).toBe(404)
  })
})

describe('at the edge', () => {
  let edge: EdgeApp
  beforeAll(async () => {
    edge = await createEdgeApp()
  })
  afterAll(() => edge.close())

  /** A write's own round trips: the token is remembered by a read first. */
  async function write(method: string, path: string, body?: unknown) {
    await edge.call('GET', '/api/admin/environments')
    const res = await edge.call(method, path, { body })
    expect(res.status, res.text).toBeLessThan(300)
    return { http: res.http, webSocket: res.webSocket }
  }
  const environment = async (body: Record<string, unknown> = {}) => (await edge.call('POST', '/api/admin/environments', { body: { name: fresh('edge-env'), type: 'test', ...body } })).body.name as string

  it('every environment write is a read and one statement or batch: two round trips, no WebSocket', async () => {
    const a = await environment()
    const b = await environment()
    expect(await write('PUT', `/api/admin/environments/${a}`, { type: 'production' })).toEqual({ http: 2, webSocket: 0 })
    expect(await write('PUT', '/api/admin/environments/sort-order', { [a]: 7, [b]: 8 })).toEqual({ http: 2, webSocket: 0 })
    expect(await write('POST', `/api/admin/environments/${a}/off`)).toEqual({ http: 2, webSocket: 0 })
    expect(await write('POST', `/api/admin/environments/${a}/on`)).toEqual({ http: 2, webSocket: 0 })

    const project = fresh('edge-envs')
    await edge.call('POST', '/api/admin/projects', { body: { id: project, name: 'Edge', environments: ['development', a, b] } })
    await edge.call('POST', `/api/admin/projects/${project}/features`, { body: { name: fresh('edge-flag') } })
    await edge.call('POST', '/api/admin/api-tokens', { body: { tokenName: fresh('edge'), type: 'client', environment: a, projects: [project] } })
    expect(await write('POST', `/api/admin/environments/${b}/clone`, { name: fresh('edge-copy'), type: 'test' })).toEqual({ http: 2, webSocket: 0 })
    expect(await write('DELETE', `/api/admin/projects/${project}/environments/${b}`)).toEqual({ http: 2, webSocket: 0 })
    expect(await write('DELETE', `/api/admin/environments/${a}`)).toEqual({ http: 2, webSocket: 0 })
    const events = await edge.query<{ type: string }>('select type from events where environment = any($1) order by id', [[a, b]])
    expect(events.map((e) => e.type)).toEqual([
      'environment-created',
      'environment-created',
      'environment-updated',
      'environment-updated',
      'environment-updated',
      'environment-updated',
      'environment-updated',
      'api-token-created',
      'project-environment-removed',
      'api-token-deleted',
      'environment-deleted',
    ])
  })
})
