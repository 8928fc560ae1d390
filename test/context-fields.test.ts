// Context fields (/api/admin/context): the routes, their errors and events, who may write them, the legal-values rule
// for constraints everywhere they are written, the 409 of a field in use, and what each write costs at the edge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { addStrategy, createFlag, createProject, createSegment, createToken, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

const C = '/api/admin/context'

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
  t.query<{ type: string; project: string | null; data: any; pre_data: any; created_by: string }>(
    "select type, project, data, pre_data, created_by from events where type like 'context-field-%' and coalesce(data, pre_data)->>'name' = $1 order by id",
    [name],
  )
/** A fresh context field (through the API), with `legalValues` when given. */
async function field(body: Record<string, unknown> = {}) {
  const name = fresh('tier')
  await ok(t, 'POST', C, { name, ...body })
  return name
}
const strategiesOf = (project: string, flag: string, environment = 'development') => `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`
const constraint = (contextName: string, values: string[], operator = 'IN') => ({ contextName, operator, values })

describe('reading context fields', () => {
  it('lists the fields Unleash ships, by sortOrder then name, each with its usage counts', async () => {
    const res = await t.call('GET', C)
    expect(res.status).toBe(200)
    const builtIn = res.body.filter((f: { name: string }) => ['environment', 'userId', 'appName', 'currentTime', 'sessionId'].includes(f.name))
    expect(builtIn.map((f: any) => [f.name, f.sortOrder, f.stickiness])).toEqual([
      ['environment', 0, false],
      ['userId', 1, false],
      ['appName', 2, false],
      ['currentTime', 3, false],
      ['sessionId', 4, true],
    ])
    expect(builtIn[0]).toEqual({
      name: 'environment',
      description: 'Allows you to constrain on application environment',
      stickiness: false,
      sortOrder: 0,
      createdAt: expect.any(String),
      legalValues: [],
      usedInFeatures: expect.any(Number),
      usedInProjects: expect.any(Number),
    })
    const orders = res.body.map((f: any) => [f.sortOrder, f.name])
    expect(orders).toEqual([...orders].sort((a: any, b: any) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)))
  })

  it('counts the live flags and projects whose strategies constrain a field; archived flags do not count', async () => {
    const name = await field({ sortOrder: 7 })
    const [p1, p2] = [await createProject(t), await createProject(t)]
    const f1 = (await createFlag(t, {}, p1)).name
    const f2 = (await createFlag(t, {}, p2)).name
    const archived = (await createFlag(t, {}, p2)).name
    for (const [p, f] of [[p1, f1], [p2, f2], [p2, archived]] as const) {
      await addStrategy(t, f, 'development', { name: 'default', constraints: [constraint(name, ['x'])] }, p)
      await addStrategy(t, f, 'production', { name: 'default', constraints: [constraint(name, ['y'])] }, p)
    }
    expect((await t.call('DELETE', `/api/admin/projects/${p2}/features/${archived}`)).status).toBe(202)
    const listed = (await t.call('GET', C)).body.find((f: any) => f.name === name)
    expect(listed).toMatchObject({ name, sortOrder: 7, usedInFeatures: 2, usedInProjects: 2 })
  })

  it('reads one field (without usage counts); 404 NotFoundError for an unknown one', async () => {
    const name = await field({ description: 'Plan', legalValues: [{ value: 'gold', description: 'Paying' }, { value: 'free' }] })
    const res = await t.call('GET', `${C}/${name}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ name, description: 'Plan', stickiness: false, sortOrder: 0, createdAt: expect.any(String), legalValues: [{ value: 'gold', description: 'Paying' }, { value: 'free' }] })
    const missing = await t.call('GET', `${C}/nope-${fresh('x')}`)
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ id: expect.any(String), name: 'NotFoundError', message: expect.stringContaining('nope-') })
  })

  it('is open to every signed-in user and admin token, and to no one unauthenticated', async () => {
    expect((await viewer.call('GET', C)).status).toBe(200)
    expect((await viewer.call('GET', `${C}/userId`)).status).toBe(200)
    expect((await viewer.call('GET', `${C}/userId/strategies`)).status).toBe(200)
    const anonymous = await t.call('GET', C, { token: null })
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.name).toBe('AuthenticationRequired')
  })

  it('GET …/{contextField}/strategies names the strategies of live flags constraining it, hides private projects, and is empty for an unknown field', async () => {
    const name = await field()
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    const used = await addStrategy(t, flag, 'production', { name: 'flexibleRollout', constraints: [constraint(name, ['a'])] }, project)
    await addStrategy(t, flag, 'production', { name: 'default' }, project)
    const res = await t.call('GET', `${C}/${name}/strategies`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ strategies: [{ id: used.id, featureName: flag, projectId: project, environment: 'production', strategyName: 'flexibleRollout' }] })
    expect((await t.call('GET', `${C}/unknown-${fresh('f')}/strategies`)).body).toEqual({ strategies: [] })

    const secret = await createProject(t, { mode: 'private' })
    const hidden = (await createFlag(t, {}, secret)).name
    await addStrategy(t, hidden, 'production', { name: 'default', constraints: [constraint(name, ['b'])] }, secret)
    expect((await t.call('GET', `${C}/${name}/strategies`)).body.strategies).toHaveLength(2)
    expect((await viewer.call('GET', `${C}/${name}/strategies`)).body.strategies.map((s: any) => s.featureName)).toEqual([flag])
  })
})

describe('writing context fields', () => {
  it('POST creates a field (201, Location) with context-field-created', async () => {
    const name = fresh('region')
    const body = { name, description: 'Where', stickiness: true, sortOrder: 3, legalValues: [{ value: 'north' }, { value: 'south', description: 'down' }] }
    const res = await t.call('POST', C, { body })
    expect(res.status, res.text).toBe(201)
    expect(res.headers.get('location')).toBe(`${C}/${name}`)
    const created = { name, description: 'Where', stickiness: true, sortOrder: 3, createdAt: expect.any(String), legalValues: [{ value: 'north' }, { value: 'south', description: 'down' }] }
    expect(res.body).toEqual(created)
    expect((await t.call('GET', `${C}/${name}`)).body).toEqual(res.body)
    expect(await eventsOf(name)).toEqual([{ type: 'context-field-created', project: null, data: res.body, pre_data: null, created_by: 'test-admin' }])
  })

  it('POST defaults: no description, no stickiness, sortOrder 0, no legal values', async () => {
    const name = fresh('plain')
    expect((await ok(t, 'POST', C, { name })).body).toEqual({ name, description: null, stickiness: false, sortOrder: 0, createdAt: expect.any(String), legalValues: [] })
  })

  it('POST refuses a taken name with 409 NameExistsError, built-in ones included, writing nothing', async () => {
    const name = await field()
    for (const taken of [name, 'userId']) {
      const res = await t.call('POST', C, { body: { name: taken, description: 'again' } })
      expect(res.status).toBe(409)
      expect(res.body).toEqual({ id: expect.any(String), name: 'NameExistsError', message: `A context field named ${taken} already exists` })
    }
    expect(await eventsOf(name)).toHaveLength(1)
  })

  it.each([
    ['a name that is not URL-friendly', { name: 'not very nice' }, 'body.name'],
    ['the name ..', { name: '..' }, 'body.name'],
    ['an empty name', { name: '' }, 'body.name'],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, 'body.name'],
    ['no name', { description: 'x' }, 'body.name'],
    ['a description over 250 characters', { name: 'ok-name', description: 'd'.repeat(251) }, 'body.description'],
    ['a legal value listed twice', { name: 'ok-name', legalValues: [{ value: 'a' }, { value: 'a' }] }, 'body.legalValues.1.value'],
    ['a legal value without value', { name: 'ok-name', legalValues: [{ description: 'b' }] }, 'body.legalValues.0.value'],
    ['a legal value as a string', { name: 'ok-name', legalValues: ['a'] }, 'body.legalValues.0'],
    ['a non-boolean stickiness', { name: 'ok-name', stickiness: 'yes' }, 'body.stickiness'],
    ['a project (project-scoped fields are not served)', { name: 'ok-name', project: 'default' }, 'body.project'],
  ])('POST refuses %s with 400 ValidationError and its details', async (_, body, path) => {
    const res = await t.call('POST', C, { body })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', details: expect.arrayContaining([expect.objectContaining({ path })]) })
    expect((await t.call('GET', `${C}/ok-name`)).status).toBe(404)
  })

  it('POST needs a JSON body (415)', async () => {
    const res = await t.call('POST', C, { body: 'name=x', headers: { 'content-type': 'text/plain' } })
    expect(res.status).toBe(415)
    expect(res.body.name).toBe('ContentTypeerror')
  })

  it('PUT replaces stickiness and legal values, keeps description and sortOrder when absent, answers 200, and writes context-field-updated', async () => {
    const name = await field({ description: 'Plan', stickiness: true, sortOrder: 5, legalValues: [{ value: 'gold' }] })
    const before = (await t.call('GET', `${C}/${name}`)).body
    const res = await t.call('PUT', `${C}/${name}`, { body: { name: 'ignored', legalValues: [{ value: 'silver', description: 's' }] } })
    expect(res.status, res.text).toBe(200)
    expect(res.text).toBe('')
    const after = { ...before, stickiness: false, legalValues: [{ value: 'silver', description: 's' }] }
    expect((await t.call('GET', `${C}/${name}`)).body).toEqual(after)
    await ok(t, 'PUT', `${C}/${name}`, { description: null, sortOrder: 1, stickiness: true })
    expect((await t.call('GET', `${C}/${name}`)).body).toMatchObject({ description: null, sortOrder: 1, stickiness: true, legalValues: [] })
    const events = await eventsOf(name)
    expect(events.map((e) => e.type)).toEqual(['context-field-created', 'context-field-updated', 'context-field-updated'])
    expect(events[1]).toMatchObject({ project: null, pre_data: before, data: after })
  })

  it('PUT of an unknown field is 404, of a bad body 400, and writes nothing; a PUT that changes nothing writes no event', async () => {
    expect((await t.call('PUT', `${C}/unknown-${fresh('f')}`, { body: {} })).status).toBe(404)
    const name = await field({ legalValues: [{ value: 'a' }] })
    const bad = await t.call('PUT', `${C}/${name}`, { body: { legalValues: [{ value: '' }] } })
    expect(bad.status).toBe(400)
    expect(bad.body.name).toBe('ValidationError')
    expect((await t.call('GET', `${C}/${name}`)).body.legalValues).toEqual([{ value: 'a' }])
    await ok(t, 'PUT', `${C}/${name}`, { legalValues: [{ value: 'a' }] })
    expect((await eventsOf(name)).map((e) => e.type)).toEqual(['context-field-created'])
  })

  it('POST …/legal-values adds a value or replaces its description; DELETE …/legal-values/{legalValue} removes it; each writes context-field-updated', async () => {
    const name = await field({ legalValues: [{ value: 'gold' }] })
    expect((await t.call('POST', `${C}/${name}/legal-values`, { body: { value: 'silver', description: 'grey' } })).status).toBe(200)
    expect((await t.call('POST', `${C}/${name}/legal-values`, { body: { value: 'gold', description: 'shiny' } })).status).toBe(200)
    expect((await t.call('GET', `${C}/${name}`)).body.legalValues).toEqual([{ value: 'gold', description: 'shiny' }, { value: 'silver', description: 'grey' }])
    const removed = await t.call('DELETE', `${C}/${name}/legal-values/gold`)
    expect(removed.status).toBe(200)
    expect((await t.call('GET', `${C}/${name}`)).body.legalValues).toEqual([{ value: 'silver', description: 'grey' }])
    // Nothing to change: no event.
    expect((await t.call('DELETE', `${C}/${name}/legal-values/unknown`)).status).toBe(200)
    expect((await t.call('POST', `${C}/${name}/legal-values`, { body: { value: 'silver', description: 'grey' } })).status).toBe(200)
    const events = await eventsOf(name)
    expect(events.map((e) => e.type)).toEqual(['context-field-created', 'context-field-updated', 'context-field-updated', 'context-field-updated'])
    expect(events[3]!.pre_data.legalValues).toEqual([{ value: 'gold', description: 'shiny' }, { value: 'silver', description: 'grey' }])
    expect(events[3]!.data.legalValues).toEqual([{ value: 'silver', description: 'grey' }])
  })

  it('the legal-value routes answer 404 for an unknown field and 400 for a bad value', async () => {
    const unknown = `unknown-${fresh('f')}`
    expect((await t.call('POST', `${C}/${unknown}/legal-values`, { body: { value: 'a' } })).status).toBe(404)
    expect((await t.call('DELETE', `${C}/${unknown}/legal-values/a`)).status).toBe(404)
    const name = await field()
    for (const body of [{}, { value: '' }, { value: 'x'.repeat(101) }, { value: 'a', extra: 1 }]) {
      const res = await t.call('POST', `${C}/${name}/legal-values`, { body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    expect((await t.call('GET', `${C}/${name}`)).body.legalValues).toEqual([])
  })

  it('POST /api/admin/context/validate: 200 for a free valid name, 409 for a taken one, 400 for an invalid one; writes nothing', async () => {
    expect((await t.call('POST', `${C}/validate`, { body: { name: fresh('free') } })).status).toBe(200)
    const taken = await t.call('POST', `${C}/validate`, { body: { name: 'environment' } })
    expect(taken.status).toBe(409)
    expect(taken.body.name).toBe('NameExistsError')
    const invalid = await t.call('POST', `${C}/validate`, { body: { name: 'not url friendly' } })
    expect(invalid.status).toBe(400)
    expect(invalid.body).toMatchObject({ name: 'ValidationError', details: [{ path: 'body.name', message: expect.stringContaining('URL friendly') }] })
  })

  it('DELETE deletes an unused field (200) with context-field-deleted; 404 for an unknown one', async () => {
    const name = await field({ legalValues: [{ value: 'a' }] })
    const before = (await t.call('GET', `${C}/${name}`)).body
    expect((await t.call('DELETE', `${C}/${name}`)).status).toBe(200)
    expect((await t.call('GET', `${C}/${name}`)).status).toBe(404)
    expect((await eventsOf(name)).at(-1)).toEqual({ type: 'context-field-deleted', project: null, data: null, pre_data: before, created_by: 'test-admin' })
    expect((await t.call('DELETE', `${C}/${name}`)).status).toBe(404)
  })

  it('DELETE of a field in use is a 409 ConflictError naming the flags, segments and default strategies using it; archived flags do not count', async () => {
    const name = await field()
    const project = await createProject(t, { environments: ['development', 'production'] })
    const flag = (await createFlag(t, {}, project)).name
    const strategy = await addStrategy(t, flag, 'development', { name: 'default', constraints: [constraint(name, ['a'])] }, project)
    const segment = await createSegment(t, { constraints: [constraint(name, ['b'])] })
    await ok(t, 'PUT', `/api/admin/projects/${project}/environments/production/default-strategy`, { name: 'default', constraints: [constraint(name, ['c'])] })
    const res = await t.call('DELETE', `${C}/${name}`)
    expect(res.status).toBe(409)
    expect(res.body).toEqual({ id: expect.any(String), name: 'ConflictError', message: expect.stringContaining(`flags ${flag}`) })
    expect(res.body.message).toContain(`segments ${segment.name}`)
    expect(res.body.message).toContain(`${project}/production`)
    expect((await t.call('GET', `${C}/${name}`)).status).toBe(200)

    await ok(t, 'DELETE', `/api/admin/segments/${segment.id}`)
    await ok(t, 'PUT', `/api/admin/projects/${project}/environments/production/default-strategy`, { name: 'default' })
    expect((await t.call('DELETE', `${C}/${name}`)).body.message).toBe(`Context field ${name} is in use by the strategies of flags ${flag}: remove those constraints first`)
    expect((await t.call('DELETE', `${strategiesOf(project, flag)}/${strategy.id}`)).status).toBe(200)
    const archived = (await createFlag(t, {}, project)).name
    await addStrategy(t, archived, 'development', { name: 'default', constraints: [constraint(name, ['a'])] }, project)
    expect((await t.call('DELETE', `/api/admin/projects/${project}/features/${archived}`)).status).toBe(202)
    expect((await t.call('DELETE', `${C}/${name}`)).status).toBe(200)
    expect((await eventsOf(name)).map((e) => e.type)).toEqual(['context-field-created', 'context-field-deleted'])
  })

  it('built-in fields may be deleted, as in Unleash', async () => {
    const own = await createTestApp()
    try {
      expect((await own.call('DELETE', `${C}/currentTime`)).status).toBe(200)
      expect((await own.call('GET', C)).body.map((f: any) => f.name)).toEqual(['environment', 'userId', 'appName', 'sessionId'])
    } finally {
      await own.close()
    }
  })
})

describe('who may write context fields', () => {
  const writes = (name: string): [string, string, unknown, string][] => [
    ['POST', C, { name: fresh('perm') }, 'CREATE_CONTEXT_FIELD'],
    ['PUT', `${C}/${name}`, { description: 'x' }, 'UPDATE_CONTEXT_FIELD'],
    ['POST', `${C}/${name}/legal-values`, { value: 'v' }, 'UPDATE_CONTEXT_FIELD'],
    ['DELETE', `${C}/${name}/legal-values/v`, undefined, 'UPDATE_CONTEXT_FIELD'],
    ['POST', `${C}/validate`, { name: fresh('perm') }, 'UPDATE_CONTEXT_FIELD'],
    ['DELETE', `${C}/${name}`, undefined, 'DELETE_CONTEXT_FIELD'],
  ]

  it('refuses a Viewer every write with 403 NoAccessError naming the permission, and changes nothing', async () => {
    const name = await field()
    for (const [method, path, body, permission] of writes(name)) {
      const res = await viewer.call(method, path, { body })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining(`permission=${permission}`) })
    }
    expect(await eventsOf(name)).toHaveLength(1)
  })

  it('lets an Editor (as in Unleash), an Admin and an admin token make every write', async () => {
    const admin = await createSignedInUser(t, fresh('admin'), 'Admin')
    const adminToken = (await createToken(t, { type: 'admin' })).secret as string
    const callers = [editor.call, admin.call, (m: string, p: string, o: { body?: unknown } = {}) => t.call(m, p, { body: o.body, token: adminToken })]
    for (const call of callers) {
      const name = await field()
      for (const [method, path, body] of writes(name)) {
        const res = await call(method, path, { body })
        expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300)
      }
    }
  })

  it('refuses client tokens with 403', async () => {
    const client = (await createToken(t, { type: 'client', environment: 'development' })).secret as string
    expect((await t.call('POST', C, { body: { name: fresh('x') }, token: client })).status).toBe(403)
  })
})

describe('constraints honour legal values', () => {
  it('a flag strategy may use only the legal values of a field that has some (400 naming the value and the field), in values and in value', async () => {
    const name = await field({ legalValues: [{ value: 'gold' }, { value: 'silver' }, { value: '42' }] })
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    const path = strategiesOf(project, flag)
    const refused = await t.call('POST', path, { body: { name: 'default', constraints: [constraint('userId', ['anyone']), constraint(name, ['gold', 'bronze'])] } })
    expect(refused.status).toBe(400)
    expect(refused.body).toEqual({
      id: expect.any(String),
      name: 'ValidationError',
      message: `Constraint values must be legal values of their context field: "bronze" is not a legal value of context field ${name}`,
      details: [{ path: 'body.constraints', message: `"bronze" is not a legal value of context field ${name}` }],
    })
    const single = await t.call('POST', path, { body: { name: 'default', constraints: [{ contextName: name, operator: 'NUM_EQ', value: '7' }] } })
    expect(single.status).toBe(400)
    expect(single.body.message).toContain('"7"')
    expect((await t.call('GET', path)).body).toEqual([])

    const added = await t.call('POST', path, { body: { name: 'default', constraints: [constraint(name, ['gold']), { contextName: name, operator: 'NUM_EQ', value: '42' }] } })
    expect(added.status, added.text).toBe(200)
    const update = await t.call('PUT', `${path}/${added.body.id}`, { body: { name: 'default', constraints: [constraint(name, ['platinum'])] } })
    expect(update.status).toBe(400)
    expect(update.body.message).toContain('"platinum"')
    expect((await t.call('GET', `${path}/${added.body.id}`)).body.constraints[0].values).toEqual(['gold'])
    expect((await t.call('PUT', `${path}/${added.body.id}`, { body: { name: 'default', constraints: [constraint(name, ['silver'])] } })).status).toBe(200)
  })

  it('a field without legal values accepts any value', async () => {
    const name = await field()
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    expect((await t.call('POST', strategiesOf(project, flag), { body: { name: 'default', constraints: [constraint(name, ['anything']), constraint('unknownField', ['x'])] } })).status).toBe(200)
  })

  it('removing a legal value a constraint uses is allowed, as in Unleash: the constraint stays; a later write of it must drop the value', async () => {
    const name = await field({ legalValues: [{ value: 'gold' }, { value: 'silver' }] })
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    const strategy = await addStrategy(t, flag, 'development', { name: 'default', constraints: [constraint(name, ['gold'])] }, project)
    expect((await t.call('DELETE', `${C}/${name}/legal-values/gold`)).status).toBe(200)
    expect((await t.call('GET', `${strategiesOf(project, flag)}/${strategy.id}`)).body.constraints[0].values).toEqual(['gold'])
    expect((await t.call('PUT', `${strategiesOf(project, flag)}/${strategy.id}`, { body: { name: 'default', constraints: [constraint(name, ['gold'])] } })).status).toBe(400)
    expect((await t.call('PUT', `${strategiesOf(project, flag)}/${strategy.id}`, { body: { name: 'default', constraints: [constraint(name, ['silver'])] } })).status).toBe(200)
  })

  it("a project's default strategy may use only legal values", async () => {
    const name = await field({ legalValues: [{ value: 'gold' }] })
    const project = await createProject(t)
    const path = `/api/admin/projects/${project}/environments/development/default-strategy`
    const res = await t.call('PUT', path, { body: { name: 'default', constraints: [constraint(name, ['tin'])] } })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain(`"tin" is not a legal value of context field ${name}`)
    expect((await t.call('PUT', path, { body: { name: 'default', constraints: [constraint(name, ['gold'])] } })).status).toBe(200)
  })

  it('a segment may use only legal values, on creation and on update', async () => {
    const name = await field({ legalValues: [{ value: 'gold' }] })
    const segmentName = fresh('vip')
    const created = await t.call('POST', '/api/admin/segments', { body: { name: segmentName, constraints: [constraint(name, ['tin'])] } })
    expect(created.status).toBe(400)
    expect(created.body.message).toContain(`"tin" is not a legal value of context field ${name}`)
    expect((await t.call('GET', '/api/admin/segments')).body.segments.some((s: any) => s.name === segmentName)).toBe(false)
    const segment = await createSegment(t, { name: segmentName, constraints: [constraint(name, ['gold'])] })
    const updated = await t.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: segmentName, constraints: [constraint(name, ['gold', 'tin'])] } })
    expect(updated.status).toBe(400)
    expect((await t.call('GET', `/api/admin/segments/${segment.id}`)).body.constraints[0].values).toEqual(['gold'])
  })

  it("a change request's strategy change is checked when it is applied: it no longer applies (409, naming the value and the field) and none of its changes is made", async () => {
    const name = await field({ legalValues: [{ value: 'gold' }] })
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const flag = (await createFlag(t, {}, project)).name
    const P = `/api/admin/projects/${project}`
    const draft = await t.call('POST', `${P}/environments/production/change-requests`, {
      body: [
        { feature: flag, action: 'updateEnabled', payload: { enabled: true } },
        { feature: flag, action: 'addStrategy', payload: { name: 'default', constraints: [constraint(name, ['gold'])] } },
      ],
    })
    expect(draft.status, draft.text).toBe(200)
    const id = draft.body.id as number
    expect((await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'In review' } })).status).toBe(200)
    const reviewer = (await createToken(t, { type: 'admin' })).secret as string
    expect((await t.call('POST', `${P}/change-requests/${id}/approve`, { token: reviewer })).status).toBe(200)
    // The value stops being legal between the review and applying.
    await ok(t, 'PUT', `${C}/${name}`, { legalValues: [{ value: 'silver' }] })
    const applied = await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Applied' } })
    // Applying answers a change that no longer applies with 409, giving the change's own 400 as the reason.
    expect(applied.status, applied.text).toBe(409)
    expect(applied.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining(`"gold" is not a legal value of context field ${name}`) })
    expect((await t.call('GET', strategiesOf(project, flag, 'production'))).body).toEqual([])
    expect((await t.call('GET', `${P}/change-requests/${id}`)).body.state).toBe('Approved')
  })
})

describe('context field writes at the edge', () => {
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
  const edgeEvents = (name: string) => e.query<{ type: string }>("select type from events where type like 'context-field-%' and coalesce(data, pre_data)->>'name' = $1 order by id", [name])

  it('creating is one statement; updating, a legal value and deleting a read and one statement; reading one round trip; never a WebSocket', async () => {
    const name = fresh('edge-tier')
    const created = await write('POST', C, { name, legalValues: [{ value: 'gold' }] })
    expect(created.status, created.text).toBe(201)
    expect(trips(created)).toEqual({ http: 1, webSocket: 0 })
    const taken = await write('POST', C, { name })
    expect([taken.status, taken.http, taken.webSocket]).toEqual([409, 1, 0])
    const updated = await write('PUT', `${C}/${name}`, { description: 'Plan', legalValues: [{ value: 'gold' }, { value: 'silver' }] })
    expect([updated.status, trips(updated)]).toEqual([200, { http: 2, webSocket: 0 }])
    const added = await write('POST', `${C}/${name}/legal-values`, { value: 'bronze' })
    expect([added.status, trips(added)]).toEqual([200, { http: 2, webSocket: 0 }])
    const removed = await write('DELETE', `${C}/${name}/legal-values/silver`)
    expect([removed.status, trips(removed)]).toEqual([200, { http: 2, webSocket: 0 }])
    const listed = await e.call('GET', C)
    expect([listed.status, trips(listed)]).toEqual([200, { http: 1, webSocket: 0 }])
    expect(listed.body.find((f: any) => f.name === name).legalValues).toEqual([{ value: 'gold' }, { value: 'bronze' }])
    const validated = await write('POST', `${C}/validate`, { name: fresh('edge-free') })
    expect([validated.status, trips(validated)]).toEqual([200, { http: 1, webSocket: 0 }])
    const deleted = await write('DELETE', `${C}/${name}`)
    expect([deleted.status, trips(deleted)]).toEqual([200, { http: 2, webSocket: 0 }])
    expect((await edgeEvents(name)).map((r) => r.type)).toEqual(['context-field-created', 'context-field-updated', 'context-field-updated', 'context-field-updated', 'context-field-deleted'])
  })

  it('a strategy write checks legal values in its own statement: no round trip more, and a refused one writes nothing', async () => {
    const name = fresh('edge-plan')
    await e.call('POST', C, { body: { name, legalValues: [{ value: 'gold' }] } })
    const flag = (await createFlag(e, {})).name as string
    const path = strategiesOf('default', flag)
    const first = await e.call('POST', path, { body: { name: 'default', constraints: [constraint(name, ['gold'])] } })
    expect(first.status, first.text).toBe(200)
    // The isolate knows the flag's version now: one statement.
    const second = await e.call('POST', path, { body: { name: 'default', constraints: [constraint(name, ['gold'])] } })
    expect([second.status, trips(second)]).toEqual([200, { http: 1, webSocket: 0 }])
    const refused = await e.call('POST', path, { body: { name: 'default', constraints: [constraint(name, ['tin'])] } })
    expect(refused.status).toBe(400)
    expect(refused.body.message).toContain(`"tin" is not a legal value of context field ${name}`)
    expect(refused.webSocket).toBe(0)
    expect((await e.call('GET', path)).body).toHaveLength(2)
  })
})
