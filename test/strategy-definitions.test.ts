// Strategy definitions (/api/admin/strategies, Unleash's strategy types): the routes, their errors and events, who may
// write them, flag strategies (direct, default and change requests) checked against them, and the edge round trips.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { createFlag, createProject, createToken, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

const S = '/api/admin/strategies'

let t: TestApp
let viewer: TestUser
let editor: TestUser
beforeAll(async () => {
  t = await createTestApp()
  viewer = await createSignedInUser(t, fresh('viewer'), 'Viewer')
  editor = await createSignedInUser(t, fresh('editor'), 'Editor')
})
afterAll(() => t.close())

const eventsOf = (name: string) =>
  t.query<{ type: string; project: string | null; feature_name: string | null; data: any; pre_data: any; created_by: string }>(
    "select type, project, feature_name, data, pre_data, created_by from events where type like 'strategy-%' and type <> 'strategy-order-changed' and coalesce(data, pre_data)->>'name' = $1 order by id",
    [name],
  )
const PARAMETERS = [
  { name: 'tenants', type: 'list', description: 'Tenants to enable', required: true },
  { name: 'limit', type: 'number', description: '', required: false },
  { name: 'share', type: 'percentage', description: '', required: false },
  { name: 'beta', type: 'boolean', description: '', required: false },
  { name: 'note', type: 'string', description: '', required: false },
]
/** A fresh custom definition with PARAMETERS (unless given). */
async function definition(parameters: unknown[] = PARAMETERS) {
  const name = fresh('tenant')
  await ok(t, 'POST', S, { name, description: 'By tenant', parameters })
  return name
}
const strategiesOf = (flag: string, environment = 'development', project = 'default') => `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`
const newFlag = async (project = 'default') => (await createFlag(t, {}, project)).name as string

describe('reading strategy definitions', () => {
  it('lists the built-in ones first, not editable, the gradualRollout ones deprecated, in a version 1 envelope', async () => {
    const res = await t.call('GET', S)
    expect(res.status).toBe(200)
    expect(res.body.version).toBe(1)
    const builtIn = res.body.strategies.filter((s: any) => !s.editable)
    expect(builtIn.map((s: any) => [s.name, s.deprecated])).toEqual([
      ['default', false],
      ['flexibleRollout', false],
      ['userWithId', false],
      ['remoteAddress', false],
      ['applicationHostname', false],
      ['gradualRolloutRandom', true],
      ['gradualRolloutSessionId', true],
      ['gradualRolloutUserId', true],
    ])
    expect(builtIn[3]).toEqual({
      title: null,
      name: 'remoteAddress',
      displayName: 'IPs',
      description: 'Enable the feature for a specific set of IP addresses.',
      editable: false,
      deprecated: false,
      parameters: [{ name: 'IPs', type: 'list', description: 'List of IPs to enable the feature toggle for.', required: true }],
    })
  })

  it('answers one by name, 404 for an unknown one; open to Viewers and admin tokens', async () => {
    const name = await definition()
    const res = await viewer.call('GET', `${S}/${name}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ title: null, name, displayName: null, description: 'By tenant', editable: true, deprecated: false, parameters: PARAMETERS })
    expect((await t.call('GET', `${S}/flexibleRollout`)).body.editable).toBe(false)
    const missing = await t.call('GET', `${S}/nope-${fresh('x')}`)
    expect([missing.status, missing.body.name]).toEqual([404, 'NotFoundError'])
    expect((await viewer.call('GET', S)).status).toBe(200)
    expect((await t.call('GET', S, { token: null })).status).toBe(401)
  })
})

describe('writing strategy definitions', () => {
  it('POST creates one (201, Location) with strategy-created, description and required filled in', async () => {
    const name = fresh('region')
    const res = await t.call('POST', S, { body: { name, title: 'Region', parameters: [{ name: 'regions', type: 'list' }], editable: false, deprecated: true } })
    expect(res.status, res.text).toBe(201)
    expect(res.headers.get('location')).toBe(`${S}/${name}`)
    const created = { title: 'Region', name, displayName: null, description: null, editable: true, deprecated: false, parameters: [{ name: 'regions', type: 'list', description: '', required: false }] }
    expect(res.body).toEqual(created)
    expect(await eventsOf(name)).toEqual([{ type: 'strategy-created', project: null, feature_name: null, data: created, pre_data: null, created_by: 'test-admin' }])
    expect((await t.call('GET', S)).body.strategies.find((s: any) => s.name === name)).toEqual(created)
  })

  it('refuses a taken name (409 NameExistsError, built-in ones too) and bad input (400) without an event', async () => {
    const name = await definition()
    const taken = await t.call('POST', S, { body: { name, parameters: [] } })
    expect([taken.status, taken.body.name]).toEqual([409, 'NameExistsError'])
    expect((await t.call('POST', S, { body: { name: 'default', parameters: [] } })).status).toBe(409)
    const bad = [
      { name: 'has space', parameters: [] },
      { name: '', parameters: [] },
      { name: 'x'.repeat(101), parameters: [] },
      { name: fresh('ok'), parameters: [{ name: 'a', type: 'date' }] },
      { name: fresh('ok'), parameters: [{ name: 'a', type: 'string' }, { name: 'a', type: 'number' }] },
      { name: fresh('ok'), parameters: [{ type: 'string' }] },
      { name: fresh('ok') },
    ]
    for (const body of bad) {
      const res = await t.call('POST', S, { body })
      expect([res.status, res.body.name], JSON.stringify(body)).toEqual([400, 'ValidationError'])
    }
    const plain = await t.call('POST', S, { body: JSON.stringify({ name: fresh('ok'), parameters: [] }), headers: { 'content-type': 'text/plain' } })
    expect(plain.status).toBe(415)
    expect((await eventsOf(name)).map((e) => e.type)).toEqual(['strategy-created'])
  })

  it('PUT replaces the parameters, keeps title and description when absent, with strategy-updated (none when nothing changes)', async () => {
    const name = await definition()
    const res = await t.call('PUT', `${S}/${name}`, { body: { name: 'ignored', parameters: [{ name: 'tenants', type: 'list', required: false }] } })
    expect([res.status, res.text]).toEqual([200, ''])
    const after = (await t.call('GET', `${S}/${name}`)).body
    expect(after).toEqual({ title: null, name, displayName: null, description: 'By tenant', editable: true, deprecated: false, parameters: [{ name: 'tenants', type: 'list', description: '', required: false }] })
    expect((await t.call('PUT', `${S}/${name}`, { body: { parameters: [{ name: 'tenants', type: 'list' }] } })).status).toBe(200)
    const events = await eventsOf(name)
    expect(events.map((e) => e.type)).toEqual(['strategy-created', 'strategy-updated'])
    expect(events[1]!.data).toEqual(after)
    expect(events[1]!.pre_data.parameters).toEqual(PARAMETERS)
  })

  it('PUT refuses a built-in one (400), an unknown one (404) and bad parameters (400)', async () => {
    const builtIn = await t.call('PUT', `${S}/flexibleRollout`, { body: { parameters: [] } })
    expect([builtIn.status, builtIn.body.name]).toEqual([400, 'ValidationError'])
    expect(builtIn.body.message).toContain('built in')
    expect((await t.call('PUT', `${S}/${fresh('nope')}`, { body: { parameters: [] } })).status).toBe(404)
    const name = await definition()
    expect((await t.call('PUT', `${S}/${name}`, { body: {} })).status).toBe(400)
    expect((await t.call('PUT', `${S}/${name}`, { body: { parameters: [{ name: 'a', type: 'float' }] } })).status).toBe(400)
  })

  it('deprecate and reactivate write their events (none when nothing changes); built-in ones may be deprecated, as in Unleash; 404 for an unknown one', async () => {
    const name = await definition()
    expect((await t.call('POST', `${S}/${name}/deprecate`)).status).toBe(200)
    expect((await t.call('GET', `${S}/${name}`)).body.deprecated).toBe(true)
    expect((await t.call('POST', `${S}/${name}/deprecate`)).status).toBe(200)
    expect((await t.call('POST', `${S}/${name}/reactivate`)).status).toBe(200)
    expect((await t.call('POST', `${S}/${name}/reactivate`)).status).toBe(200)
    const events = await eventsOf(name)
    expect(events.map((e) => e.type)).toEqual(['strategy-created', 'strategy-deprecated', 'strategy-reactivated'])
    expect([events[1]!.data.deprecated, events[1]!.pre_data.deprecated, events[1]!.data.name]).toEqual([true, false, name])
    expect((await t.call('POST', `${S}/${fresh('nope')}/deprecate`)).status).toBe(404)
    expect((await t.call('POST', `${S}/${fresh('nope')}/reactivate`)).status).toBe(404)
    expect((await t.call('POST', `${S}/applicationHostname/deprecate`)).status).toBe(200)
    expect((await t.call('GET', `${S}/applicationHostname`)).body.deprecated).toBe(true)
    expect((await t.call('POST', `${S}/applicationHostname/reactivate`)).status).toBe(200)
    expect((await t.call('GET', `${S}/applicationHostname`)).body.deprecated).toBe(false)
  })

  it('DELETE removes an unused custom one with strategy-deleted; a built-in one is 400, an unknown one 404', async () => {
    const name = await definition()
    const res = await t.call('DELETE', `${S}/${name}`)
    expect([res.status, res.text]).toEqual([200, ''])
    expect((await t.call('GET', `${S}/${name}`)).status).toBe(404)
    const events = await eventsOf(name)
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['strategy-created', events[0]!.data],
      ['strategy-deleted', { name }],
    ])
    expect(events[1]!.pre_data.name).toBe(name)
    const builtIn = await t.call('DELETE', `${S}/default`)
    expect([builtIn.status, builtIn.body.name]).toEqual([400, 'ValidationError'])
    expect((await t.call('DELETE', `${S}/${fresh('nope')}`)).status).toBe(404)
  })

  it('DELETE of one in use by a live flag or a default strategy is a 409 naming them; an archived flag does not count', async () => {
    const name = await definition([])
    const flag = await newFlag()
    await ok(t, 'POST', strategiesOf(flag), { name })
    const inUse = await t.call('DELETE', `${S}/${name}`)
    expect([inUse.status, inUse.body.name]).toEqual([409, 'ConflictError'])
    expect(inUse.body.message).toContain(flag)
    const project = await createProject(t, {})
    await ok(t, 'PUT', `/api/admin/projects/${project}/environments/development/default-strategy`, { name })
    expect((await t.call('DELETE', `/api/admin/projects/default/features/${flag}`)).status).toBe(202)
    const byDefault = await t.call('DELETE', `${S}/${name}`)
    expect(byDefault.status).toBe(409)
    expect(byDefault.body.message).toContain(`${project}/development`)
    expect(byDefault.body.message).not.toContain(flag)
    await ok(t, 'PUT', `/api/admin/projects/${project}/environments/development/default-strategy`, { name: 'default' })
    expect((await t.call('DELETE', `${S}/${name}`)).status).toBe(200)
  })
})

describe('who may write strategy definitions', () => {
  it('Editors may create, update, deprecate and delete, as in Unleash; Viewers get 403 naming the permission', async () => {
    const name = fresh('ed-strategy')
    expect((await editor.call('POST', S, { body: { name, parameters: [] } })).status).toBe(201)
    expect((await editor.call('PUT', `${S}/${name}`, { body: { parameters: [{ name: 'a', type: 'string' }] } })).status).toBe(200)
    expect((await editor.call('POST', `${S}/${name}/deprecate`)).status).toBe(200)
    for (const [method, path, body, permission] of [
      ['POST', S, { name: fresh('v'), parameters: [] }, 'CREATE_STRATEGY'],
      ['PUT', `${S}/${name}`, { parameters: [] }, 'UPDATE_STRATEGY'],
      ['POST', `${S}/${name}/reactivate`, undefined, 'UPDATE_STRATEGY'],
      ['DELETE', `${S}/${name}`, undefined, 'DELETE_STRATEGY'],
    ] as const) {
      const res = await viewer.call(method, path, { body })
      expect([res.status, res.body.name], `${method} ${path}`).toEqual([403, 'NoAccessError'])
      expect(res.body.message).toContain(permission)
    }
    expect((await editor.call('DELETE', `${S}/${name}`)).status).toBe(200)
    expect((await eventsOf(name)).map((e) => [e.type, e.created_by])).toEqual([
      ['strategy-created', editor.username],
      ['strategy-updated', editor.username],
      ['strategy-deprecated', editor.username],
      ['strategy-deleted', editor.username],
    ])
  })
})

describe('flag strategies are checked against their definition', () => {
  it('an unknown strategy name is refused with 400, as Unleash refuses it', async () => {
    const flag = await newFlag()
    const res = await t.call('POST', strategiesOf(flag), { body: { name: fresh('unknown') } })
    expect([res.status, res.body.name]).toEqual([400, 'ValidationError'])
    expect(res.body.message).toContain('Could not find strategy type with name')
    expect((await t.call('GET', strategiesOf(flag))).body).toEqual([])
  })

  it("a custom one's parameters: required present, number, percentage and boolean typed, list and string any text", async () => {
    const name = await definition()
    const flag = await newFlag()
    const cases: [Record<string, string>, number, string?][] = [
      [{}, 400, 'parameter tenants'],
      [{ tenants: '' }, 400, 'parameter tenants'],
      [{ tenants: 'a,b', limit: 'ten' }, 400, 'parameter limit'],
      [{ tenants: 'a,b', share: '101' }, 400, 'parameter share'],
      [{ tenants: 'a,b', share: '5.5' }, 400, 'parameter share'],
      [{ tenants: 'a,b', beta: 'yes' }, 400, 'parameter beta'],
      [{ tenants: 'a,b', limit: '-2.5', share: '100', beta: 'false', note: 'any text', extra: 'kept' }, 200],
      [{ tenants: 'a', limit: '', share: '', beta: '' }, 200],
    ]
    for (const [parameters, status, message] of cases) {
      const res = await t.call('POST', strategiesOf(flag), { body: { name, parameters } })
      expect(res.status, `${JSON.stringify(parameters)}: ${res.text}`).toBe(status)
      if (message) expect(res.body.message).toContain(message)
    }
    const stored = (await t.call('GET', strategiesOf(flag))).body
    expect(stored.map((s: any) => s.parameters.extra ?? null)).toEqual(['kept', null])
    // An update is checked the same way.
    const res = await t.call('PUT', `${strategiesOf(flag)}/${stored[0].id}`, { body: { name, parameters: { tenants: 'a', limit: 'x' } } })
    expect(res.status).toBe(400)
  })

  it('built-in ones keep the rules they had: remoteAddress without IPs is accepted, a rollout above 100 is not', async () => {
    const flag = await newFlag()
    expect((await t.call('POST', strategiesOf(flag), { body: { name: 'remoteAddress' } })).status).toBe(200)
    expect((await t.call('POST', strategiesOf(flag), { body: { name: 'flexibleRollout', parameters: { rollout: '101' } } })).status).toBe(400)
  })

  it('a deprecated one is accepted as Unleash accepts it (deprecation hides it from the console only): added, switched to, updated', async () => {
    const name = await definition([])
    const flag = await newFlag()
    const existing = (await ok(t, 'POST', strategiesOf(flag), { name })).body
    await ok(t, 'POST', `${S}/${name}/deprecate`)
    expect((await t.call('POST', strategiesOf(flag), { body: { name } })).status).toBe(200)
    for (const builtIn of ['gradualRolloutRandom', 'gradualRolloutUserId', 'gradualRolloutSessionId']) {
      const added = await t.call('POST', strategiesOf(flag), { body: { name: builtIn, parameters: { percentage: '5', groupId: 'g' } } })
      expect([builtIn, added.status, added.text]).toEqual([builtIn, 200, expect.any(String)])
    }
    expect((await t.call('PUT', `${strategiesOf(flag)}/${existing.id}`, { body: { name, parameters: { a: 'b' } } })).status).toBe(200)
    const other = (await ok(t, 'POST', strategiesOf(flag), { name: 'default' })).body
    expect((await t.call('PUT', `${strategiesOf(flag)}/${other.id}`, { body: { name } })).status).toBe(200)
  })

  it('a stored strategy written back unchanged is never refused for a value its definition now dislikes; a changed value still is', async () => {
    const name = await definition([{ name: 'limit', type: 'string' }])
    const flag = await newFlag()
    const stored = (await ok(t, 'POST', strategiesOf(flag), { name, parameters: { limit: 'ten' } })).body
    // The definition changes under the stored strategy: limit becomes a required number, a new required parameter appears.
    await ok(t, 'PUT', `${S}/${name}`, { parameters: [{ name: 'limit', type: 'number', required: true }, { name: 'tenants', type: 'list', required: true }] })
    const back = await t.call('PUT', `${strategiesOf(flag)}/${stored.id}`, { body: { name, parameters: { limit: 'ten' }, title: 'renamed' } })
    expect([back.status, back.body.title]).toEqual([200, 'renamed'])
    const changed = await t.call('PUT', `${strategiesOf(flag)}/${stored.id}`, { body: { name, parameters: { limit: 'eleven' } } })
    expect([changed.status, changed.body.message]).toEqual([400, expect.stringContaining('parameter limit')])
    // A new strategy gets no such grace.
    expect((await t.call('POST', strategiesOf(flag), { body: { name, parameters: { limit: 'ten' } } })).status).toBe(400)
    // A project's default strategy likewise.
    const project = await createProject(t, {})
    const path = `/api/admin/projects/${project}/environments/development/default-strategy`
    await ok(t, 'PUT', `${S}/${name}`, { parameters: [{ name: 'limit', type: 'string' }] })
    await ok(t, 'PUT', path, { name, parameters: { limit: 'ten' } })
    await ok(t, 'PUT', `${S}/${name}`, { parameters: [{ name: 'limit', type: 'number', required: true }] })
    expect((await t.call('PUT', path, { body: { name, parameters: { limit: 'ten' }, title: 'kept' } })).status).toBe(200)
    expect((await t.call('PUT', path, { body: { name, parameters: { limit: 'x' } } })).status).toBe(400)
  })

  it("a project's default strategy: unknown refused, deprecated accepted, parameters checked", async () => {
    const project = await createProject(t, {})
    const path = `/api/admin/projects/${project}/environments/development/default-strategy`
    expect((await t.call('PUT', path, { body: { name: fresh('unknown') } })).status).toBe(400)
    expect((await t.call('PUT', path, { body: { name: 'gradualRolloutUserId', parameters: { percentage: '10', groupId: 'g' } } })).status).toBe(200)
    const name = await definition()
    expect((await t.call('PUT', path, { body: { name, parameters: { limit: '3' } } })).body.message).toContain('parameter tenants')
    expect((await t.call('PUT', path, { body: { name, parameters: { tenants: 'a' } } })).status).toBe(200)
  })

  it('change requests: an unknown or misfitting strategy refused when proposed; one of a deprecated type applied', async () => {
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const flag = await newFlag(project)
    const CR = `/api/admin/projects/${project}/environments/production/change-requests`
    const unknown = await t.call('POST', CR, { body: { feature: flag, action: 'addStrategy', payload: { name: fresh('unknown') } } })
    expect([unknown.status, unknown.body.name]).toEqual([400, 'ValidationError'])
    const name = await definition()
    const missing = await t.call('POST', CR, { body: { feature: flag, action: 'addStrategy', payload: { name } } })
    expect([missing.status, missing.body.message]).toEqual([400, expect.stringContaining('parameter tenants')])
    const id = (await ok(t, 'POST', CR, { feature: flag, action: 'addStrategy', payload: { name, parameters: { tenants: 'a' } } })).body.id
    await ok(t, 'PUT', `/api/admin/projects/${project}/change-requests/${id}/state`, { state: 'In review' })
    const other = (await createToken(t, { type: 'admin' })).secret as string
    expect((await t.call('POST', `/api/admin/projects/${project}/change-requests/${id}/approve`, { token: other })).status).toBe(200)
    await ok(t, 'POST', `${S}/${name}/deprecate`)
    expect((await t.call('PUT', `/api/admin/projects/${project}/change-requests/${id}/state`, { body: { state: 'Applied' } })).status).toBe(200)
    expect((await t.call('GET', strategiesOf(flag, 'production', project))).body.map((s: any) => s.name)).toEqual([name])
  })
})

describe('strategy definitions at the edge', () => {
  let e: EdgeApp
  beforeAll(async () => {
    e = await createEdgeApp()
  })
  afterAll(() => e.close())
  const trips = (r: { http: number; webSocket: number }) => ({ http: r.http, webSocket: r.webSocket })
  /** The admin token looked up first (by a read), so a count is the route's own. */
  async function write(method: string, path: string, body?: unknown) {
    await e.call('GET', '/api/admin/environments')
    return e.call(method, path, { body })
  }

  it('creating is one statement; updating, deprecating, reactivating and deleting a read and one statement; reading one round trip', async () => {
    const name = fresh('edge-kind')
    const created = await write('POST', S, { name, parameters: [{ name: 'n', type: 'number' }] })
    expect([created.status, trips(created)]).toEqual([201, { http: 1, webSocket: 0 }])
    const taken = await write('POST', S, { name, parameters: [] })
    expect([taken.status, trips(taken)]).toEqual([409, { http: 1, webSocket: 0 }])
    for (const [method, path, body] of [
      ['PUT', `${S}/${name}`, { parameters: [{ name: 'n', type: 'number', required: true }] }],
      ['POST', `${S}/${name}/deprecate`, undefined],
      ['POST', `${S}/${name}/reactivate`, undefined],
      ['DELETE', `${S}/${name}`, undefined],
    ] as const) {
      const res = await write(method, path, body)
      expect([res.status, trips(res)], `${method} ${path}`).toEqual([200, { http: 2, webSocket: 0 }])
    }
    const listed = await e.call('GET', S)
    expect([listed.status, trips(listed)]).toEqual([200, { http: 1, webSocket: 0 }])
    const types = await e.query<{ type: string }>("select type from events where type like 'strategy-%' and coalesce(data, pre_data)->>'name' = $1 order by id", [name])
    expect(types.map((r) => r.type)).toEqual(['strategy-created', 'strategy-updated', 'strategy-deprecated', 'strategy-reactivated', 'strategy-deleted'])
  })

  it('a flag strategy write checks its definition in its own statement: no round trip more, and a refused one writes nothing', async () => {
    const name = fresh('edge-kind')
    await e.call('POST', S, { body: { name, parameters: [{ name: 'n', type: 'number', required: true }] } })
    const flag = (await createFlag(e, {})).name as string
    const first = await e.call('POST', strategiesOf(flag), { body: { name, parameters: { n: '1' } } })
    expect(first.status, first.text).toBe(200)
    // The isolate knows the flag's version now: one statement.
    const second = await e.call('POST', strategiesOf(flag), { body: { name, parameters: { n: '2' } } })
    expect([second.status, trips(second)]).toEqual([200, { http: 1, webSocket: 0 }])
    const refused = await e.call('POST', strategiesOf(flag), { body: { name, parameters: { n: 'two' } } })
    expect([refused.status, refused.webSocket]).toEqual([400, 0])
    expect(refused.body.message).toContain('parameter n')
    const unknown = await e.call('POST', strategiesOf(flag), { body: { name: fresh('unknown') } })
    expect([unknown.status, unknown.webSocket]).toEqual([400, 0])
    expect((await e.call('GET', strategiesOf(flag))).body).toHaveLength(2)
  })
})
