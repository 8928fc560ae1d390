// A project's own context fields (/api/admin/projects/{projectId}/context): the routes, their errors and events, who
// may write them, names shared with global fields, what the global routes show of them, the rule that only the
// project's constraints may use them (with their legal values), private and archived projects, deleting a project,
// moving, exporting and importing flags, and what each write costs at the edge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { addStrategy, addToProject, createFlag, createProject, createSegment, createToken, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

const C = '/api/admin/context'
const P = (project: string) => `/api/admin/projects/${project}/context`

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
  t.query<{ type: string; project: string | null; feature_name: string | null; environment: string | null; data: any; pre_data: any; created_by: string }>(
    "select type, project, feature_name, environment, data, pre_data, created_by from events where type like 'context-field-%' and coalesce(data, pre_data)->>'name' = $1 order by id",
    [name],
  )
/** A fresh field of the project (through the API), with `legalValues` when given. */
async function projectField(project: string, body: Record<string, unknown> = {}) {
  const name = fresh('plan')
  await ok(t, 'POST', P(project), { name, ...body })
  return name
}
const strategiesOf = (project: string, flag: string, environment = 'development') => `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`
const constraint = (contextName: string, values: string[], operator = 'IN') => ({ contextName, operator, values })
const names = (list: { name: string }[]) => list.map((f) => f.name)

describe("reading a project's context fields", () => {
  it("lists the project's own fields (with project); include=root adds the global ones; 404 for an unknown project", async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const own = await projectField(project, { sortOrder: 2, legalValues: [{ value: 'gold' }] })
    const theirs = await projectField(other)
    const res = await t.call('GET', P(project))
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual([
      { name: own, description: null, stickiness: false, sortOrder: 2, createdAt: expect.any(String), legalValues: [{ value: 'gold' }], project, usedInFeatures: 0, usedInProjects: 0 },
    ])
    const withRoot = names((await ok(t, 'GET', `${P(project)}?include=root`)).body)
    expect(withRoot).toEqual(expect.arrayContaining([own, 'userId', 'environment']))
    expect(withRoot).not.toContain(theirs)
    expect((await t.call('GET', P(`no-such-${fresh('p')}`))).status).toBe(404)
  })

  it("the global list leaves projects' fields out unless include=project, which adds those of projects the caller may read", async () => {
    const open = await createProject(t)
    const secret = await createProject(t, { mode: 'private' })
    const [openField, secretField] = [await projectField(open), await projectField(secret)]
    expect(names((await ok(t, 'GET', C)).body)).not.toEqual(expect.arrayContaining([openField]))
    expect(names((await ok(t, 'GET', C)).body)).not.toContain(secretField)
    const all = (await ok(t, 'GET', `${C}?include=project`)).body
    expect(all.find((f: any) => f.name === openField)).toMatchObject({ project: open })
    expect(names(all)).toContain(secretField)
    expect(names(all)).toContain('userId')
    const asViewer = names((await ok(viewer, 'GET', `${C}?include=PROJECT`)).body)
    expect(asViewer).toContain(openField)
    expect(asViewer).not.toContain(secretField)
  })

  it("reads one field: the project route answers only the project's own; the global route a visible project's too", async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const own = await projectField(project, { description: 'Plan' })
    const one = await ok(t, 'GET', `${P(project)}/${own}`)
    expect(one.body).toEqual({ name: own, description: 'Plan', stickiness: false, sortOrder: 0, createdAt: expect.any(String), legalValues: [], project })
    expect((await ok(t, 'GET', `${C}/${own}`)).body).toEqual(one.body)
    for (const path of [`${P(other)}/${own}`, `${P(project)}/userId`, `${P(project)}/unknown-${fresh('f')}`]) {
      const res = await t.call('GET', path)
      expect(res.status, path).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
  })

  it("…/{contextField}/strategies under a project names the project's strategies only", async () => {
    const project = await createProject(t)
    const field = await projectField(project)
    const flag = (await createFlag(t, {}, project)).name
    const used = await addStrategy(t, flag, 'development', { name: 'default', constraints: [constraint(field, ['x'])] }, project)
    const res = await ok(t, 'GET', `${P(project)}/${field}/strategies`)
    expect(res.body).toEqual({ strategies: [{ id: used.id, featureName: flag, projectId: project, environment: 'development', strategyName: 'default' }] })
    expect((await ok(t, 'GET', `${P(await createProject(t))}/${field}/strategies`)).body).toEqual({ strategies: [] })
    expect((await ok(t, 'GET', `${P(project)}`)).body[0]).toMatchObject({ name: field, usedInFeatures: 1, usedInProjects: 1 })
  })
})

describe("writing a project's context fields", () => {
  it('POST creates the field (201, Location) with context-field-created carrying the project', async () => {
    const project = await createProject(t)
    const name = fresh('region')
    const res = await t.call('POST', P(project), { body: { name, description: 'Where', stickiness: true, sortOrder: 3, legalValues: [{ value: 'north' }], project } })
    expect(res.status, res.text).toBe(201)
    expect(res.headers.get('location')).toBe(`${P(project)}/${name}`)
    expect(res.body).toEqual({ name, description: 'Where', stickiness: true, sortOrder: 3, createdAt: expect.any(String), legalValues: [{ value: 'north' }], project })
    expect(await eventsOf(name)).toEqual([{ type: 'context-field-created', project, feature_name: null, environment: null, data: res.body, pre_data: null, created_by: 'test-admin' }])
  })

  it('names are unique across global and project fields (409 NameExistsError), as in Unleash', async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const theirs = await projectField(other)
    for (const taken of ['userId', theirs]) {
      const res = await t.call('POST', P(project), { body: { name: taken } })
      expect(res.status, taken).toBe(409)
      expect(res.body).toEqual({ id: expect.any(String), name: 'NameExistsError', message: `A context field named ${taken} already exists` })
    }
    const global = await t.call('POST', C, { body: { name: theirs } })
    expect([global.status, global.body.name]).toEqual([409, 'NameExistsError'])
    expect((await t.call('POST', `${P(project)}/validate`, { body: { name: theirs } })).status).toBe(409)
    expect((await t.call('POST', `${C}/validate`, { body: { name: theirs } })).status).toBe(409)
    expect((await t.call('POST', `${P(project)}/validate`, { body: { name: fresh('free') } })).status).toBe(200)
    expect((await t.call('POST', `${P(project)}/validate`, { body: { name: 'not url friendly' } })).status).toBe(400)
  })

  it('refuses a name that constraints outside the project use (409): they would name a field they may not use', async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const name = fresh('cohort')
    const flag = (await createFlag(t, {}, other)).name
    await addStrategy(t, flag, 'development', { name: 'default', constraints: [constraint(name, ['a'])] }, other)
    for (const res of [await t.call('POST', P(project), { body: { name } }), await t.call('POST', `${P(project)}/validate`, { body: { name } })]) {
      expect(res.status).toBe(409)
      expect(res.body).toMatchObject({ name: 'NameExistsError', message: expect.stringContaining(`used by constraints outside project ${project}`) })
    }
    const segmentName = fresh('seg-field')
    await createSegment(t, { constraints: [constraint(segmentName, ['a'])] })
    expect((await t.call('POST', P(project), { body: { name: segmentName } })).status).toBe(409)
    // Its own project's flags may already use the name.
    expect((await t.call('POST', P(other), { body: { name } })).status).toBe(201)
    expect(await eventsOf(name)).toHaveLength(1)
  })

  it("a body's project must be the path's (400); the global routes create no project field (400)", async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const name = fresh('x')
    const wrong = await t.call('POST', P(project), { body: { name, project: other } })
    expect(wrong.status).toBe(400)
    expect(wrong.body).toMatchObject({ name: 'ValidationError', details: [{ path: 'body.project', message: expect.stringContaining(project) }] })
    const global = await t.call('POST', C, { body: { name, project } })
    expect(global.status).toBe(400)
    expect(global.body.details[0].path).toBe('body.project')
    expect((await t.call('GET', `${C}/${name}`)).status).toBe(404)
  })

  it('PUT, legal values and DELETE write context-field-updated and -deleted with the project, preData the field before', async () => {
    const project = await createProject(t)
    const name = await projectField(project, { legalValues: [{ value: 'gold' }] })
    const created = (await ok(t, 'GET', `${P(project)}/${name}`)).body
    await ok(t, 'PUT', `${P(project)}/${name}`, { description: 'Plan', stickiness: true, legalValues: [{ value: 'gold' }, { value: 'silver' }] })
    const updated = (await ok(t, 'GET', `${P(project)}/${name}`)).body
    expect(updated).toEqual({ ...created, description: 'Plan', stickiness: true, legalValues: [{ value: 'gold' }, { value: 'silver' }] })
    await ok(t, 'POST', `${P(project)}/${name}/legal-values`, { value: 'bronze', description: 'third' })
    await ok(t, 'DELETE', `${P(project)}/${name}/legal-values/gold`)
    const last = (await ok(t, 'GET', `${P(project)}/${name}`)).body
    expect(last.legalValues).toEqual([{ value: 'silver' }, { value: 'bronze', description: 'third' }])
    expect((await t.call('DELETE', `${P(project)}/${name}`)).status).toBe(200)
    expect((await t.call('GET', `${P(project)}/${name}`)).status).toBe(404)
    const events = await eventsOf(name)
    expect(events.map((e) => [e.type, e.project])).toEqual([
      ['context-field-created', project],
      ['context-field-updated', project],
      ['context-field-updated', project],
      ['context-field-updated', project],
      ['context-field-deleted', project],
    ])
    expect(events[1]).toMatchObject({ pre_data: created, data: updated })
    expect(events[4]).toMatchObject({ data: null, pre_data: last })
  })

  it("each route writes only its own scope: the global routes 404 on a project's field, a project's on a global or another project's", async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const own = await projectField(project)
    const global = (await ok(t, 'POST', C, { name: fresh('global') })).body.name as string
    const attempts: [string, string, unknown?][] = [
      ['PUT', `${C}/${own}`, { description: 'x' }],
      ['POST', `${C}/${own}/legal-values`, { value: 'v' }],
      ['DELETE', `${C}/${own}`],
      ['PUT', `${P(project)}/${global}`, { description: 'x' }],
      ['DELETE', `${P(project)}/${global}`],
      ['PUT', `${P(other)}/${own}`, { description: 'x' }],
      ['POST', `${P(other)}/${own}/legal-values`, { value: 'v' }],
      ['DELETE', `${P(other)}/${own}/legal-values/v`],
      ['DELETE', `${P(other)}/${own}`],
    ]
    for (const [method, path, body] of attempts) {
      const res = await t.call(method, path, { body })
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    expect((await eventsOf(own)).map((e) => e.type)).toEqual(['context-field-created'])
    expect((await eventsOf(global)).map((e) => e.type)).toEqual(['context-field-created'])
  })

  it("DELETE of a field the project's constraints use is a 409 naming them; archived flags do not count", async () => {
    const project = await createProject(t, { environments: ['development', 'production'] })
    const name = await projectField(project)
    const flag = (await createFlag(t, {}, project)).name
    const strategy = await addStrategy(t, flag, 'development', { name: 'default', constraints: [constraint(name, ['a'])] }, project)
    const segment = await createSegment(t, { project, constraints: [constraint(name, ['b'])] })
    await ok(t, 'PUT', `/api/admin/projects/${project}/environments/production/default-strategy`, { name: 'default', constraints: [constraint(name, ['c'])] })
    const res = await t.call('DELETE', `${P(project)}/${name}`)
    expect(res.status).toBe(409)
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'ConflictError',
      message: `Context field ${name} is in use by the strategies of flags ${flag}; and by segments ${segment.name}; and by the default strategies of (project/environment) ${project}/production: remove those constraints first`,
    })
    await ok(t, 'DELETE', `/api/admin/segments/${segment.id}`)
    await ok(t, 'PUT', `/api/admin/projects/${project}/environments/production/default-strategy`, { name: 'default' })
    await ok(t, 'DELETE', `${strategiesOf(project, flag)}/${strategy.id}`)
    const archived = (await createFlag(t, {}, project)).name
    await addStrategy(t, archived, 'development', { name: 'default', constraints: [constraint(name, ['a'])] }, project)
    expect((await t.call('DELETE', `/api/admin/projects/${project}/features/${archived}`)).status).toBe(202)
    expect((await t.call('DELETE', `${P(project)}/${name}`)).status).toBe(200)
  })
})

describe("only the project's constraints use its fields", () => {
  it("its flags' strategies, default strategies and segments honour the field's legal values", async () => {
    const project = await createProject(t)
    const name = await projectField(project, { legalValues: [{ value: 'gold' }] })
    const flag = (await createFlag(t, {}, project)).name
    const refused = await t.call('POST', strategiesOf(project, flag), { body: { name: 'default', constraints: [constraint(name, ['tin'])] } })
    expect(refused.status).toBe(400)
    expect(refused.body.message).toBe(`Constraint values must be legal values of their context field: "tin" is not a legal value of context field ${name}`)
    expect((await t.call('POST', strategiesOf(project, flag), { body: { name: 'default', constraints: [constraint(name, ['gold'])] } })).status).toBe(200)
    const defaults = `/api/admin/projects/${project}/environments/development/default-strategy`
    expect((await t.call('PUT', defaults, { body: { name: 'default', constraints: [constraint(name, ['tin'])] } })).status).toBe(400)
    expect((await t.call('PUT', defaults, { body: { name: 'default', constraints: [constraint(name, ['gold'])] } })).status).toBe(200)
    const segment = { name: fresh('vip'), project, constraints: [constraint(name, ['tin'])] }
    expect((await t.call('POST', '/api/admin/segments', { body: segment })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/segments', { body: { ...segment, constraints: [constraint(name, ['gold'])] } })).status).toBe(201)
  })

  it("another project's flags, default strategies and segments, and global segments, may not use it (400), and change nothing", async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const name = await projectField(project, { legalValues: [{ value: 'gold' }] })
    const flag = (await createFlag(t, {}, other)).name
    const refused = await t.call('POST', strategiesOf(other, flag), { body: { name: 'default', constraints: [constraint(name, ['gold'])] } })
    expect(refused.status).toBe(400)
    expect(refused.body).toEqual({
      id: expect.any(String),
      name: 'ValidationError',
      message: `Constraints can use only global context fields and those of their own project: context field ${name} belongs to another project and cannot be used in project ${other}`,
      details: [{ path: 'body.constraints', message: `context field ${name} belongs to another project and cannot be used in project ${other}` }],
    })
    expect((await t.call('GET', strategiesOf(other, flag))).body).toEqual([])
    const defaults = await t.call('PUT', `/api/admin/projects/${other}/environments/development/default-strategy`, { body: { name: 'default', constraints: [constraint(name, ['gold'])] } })
    expect([defaults.status, defaults.body.message]).toEqual([400, expect.stringContaining(`cannot be used in project ${other}`)])
    for (const segmentProject of [other, null]) {
      const res = await t.call('POST', '/api/admin/segments', { body: { name: fresh('seg'), project: segmentProject, constraints: [constraint(name, ['gold'])] } })
      expect(res.status, String(segmentProject)).toBe(400)
      expect(res.body.message).toContain(segmentProject === null ? 'cannot be used by global segments' : `cannot be used in project ${other}`)
    }
  })

  it("moving a flag whose constraints use its project's fields is refused (400): they stay with the project", async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const name = await projectField(project)
    const flag = (await createFlag(t, {}, project)).name
    const strategy = await addStrategy(t, flag, 'development', { name: 'default', constraints: [constraint(name, ['a'])] }, project)
    const move = () => t.call('POST', `/api/admin/projects/${project}/features/${flag}/changeProject`, { body: { newProjectId: other } })
    const res = await move()
    expect(res.status).toBe(400)
    expect(res.body.message).toBe(`Strategies of ${flag} constrain context fields of project ${project} (${name}), which project ${other} cannot use`)
    await ok(t, 'DELETE', `${strategiesOf(project, flag)}/${strategy.id}`)
    expect((await move()).status).toBe(200)
  })

  it("a change request's strategy change is checked when applied: a value the project's field no longer allows makes it a 409", async () => {
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const name = await projectField(project, { legalValues: [{ value: 'gold' }] })
    const flag = (await createFlag(t, {}, project)).name
    const base = `/api/admin/projects/${project}`
    const draft = await ok(t, 'POST', `${base}/environments/production/change-requests`, { feature: flag, action: 'addStrategy', payload: { name: 'default', constraints: [constraint(name, ['gold'])] } })
    const id = draft.body.id as number
    await ok(t, 'PUT', `${base}/change-requests/${id}/state`, { state: 'In review' })
    const reviewer = (await createToken(t, { type: 'admin' })).secret as string
    expect((await t.call('POST', `${base}/change-requests/${id}/approve`, { token: reviewer })).status).toBe(200)
    await ok(t, 'PUT', `${P(project)}/${name}`, { legalValues: [{ value: 'silver' }] })
    const applied = await t.call('PUT', `${base}/change-requests/${id}/state`, { body: { state: 'Applied' } })
    expect(applied.status).toBe(409)
    expect(applied.body.message).toContain(`"gold" is not a legal value of context field ${name}`)
    expect((await t.call('GET', strategiesOf(project, flag, 'production'))).body).toEqual([])
  })
})

describe("a project's fields and its visibility and life", () => {
  it("a private project's fields are a 404 to those who may not read it, and its events are hidden from them", async () => {
    const secret = await createProject(t, { mode: 'private' })
    const name = await projectField(secret)
    for (const path of [P(secret), `${P(secret)}/${name}`, `${P(secret)}/${name}/strategies`, `${C}/${name}`]) {
      const res = await viewer.call('GET', path)
      expect(res.status, path).toBe(404)
    }
    const outsider = await viewer.call('POST', P(secret), { body: { name: fresh('x') } })
    expect(outsider.status).toBe(404)
    const search = `/api/admin/search/events?type=IS:context-field-created&query=${name}`
    expect((await ok(viewer, 'GET', search)).body.events).toEqual([])
    expect((await ok(t, 'GET', search)).body.events).toHaveLength(1)
    const member = await createSignedInUser(t, fresh('member'), 'Viewer')
    await addToProject(t, secret, member.id)
    expect((await ok(member, 'GET', `${P(secret)}/${name}`)).body.project).toBe(secret)
    expect((await ok(member, 'GET', search)).body.events).toHaveLength(1)
  })

  it('an archived project refuses its fields\' writes (404) but still lists them', async () => {
    const project = await createProject(t)
    const name = await projectField(project)
    await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
    const writes: [string, string, unknown?][] = [
      ['POST', P(project), { name: fresh('late') }],
      ['PUT', `${P(project)}/${name}`, { description: 'x' }],
      ['POST', `${P(project)}/${name}/legal-values`, { value: 'v' }],
      ['DELETE', `${P(project)}/${name}`],
    ]
    for (const [method, path, body] of writes) {
      const res = await t.call(method, path, { body })
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body).toMatchObject({ name: 'NotFoundError', message: `Could not find project ${project}` })
    }
    expect(names((await ok(t, 'GET', P(project))).body)).toEqual([name])
    expect((await eventsOf(name)).map((e) => e.type)).toEqual(['context-field-created'])
  })

  it('deleting the project deletes its fields, each with context-field-deleted in the same write', async () => {
    const project = await createProject(t)
    const [a, b] = [await projectField(project, { legalValues: [{ value: 'x' }] }), await projectField(project)]
    const before = (await ok(t, 'GET', `${P(project)}/${a}`)).body
    await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
    await ok(t, 'DELETE', `/api/admin/projects/${project}`)
    expect((await t.query('select name from context_fields where name = any($1)', [[a, b]]))).toEqual([])
    expect((await eventsOf(a)).at(-1)).toEqual({ type: 'context-field-deleted', project, feature_name: null, environment: null, data: null, pre_data: before, created_by: 'test-admin' })
    expect((await eventsOf(b)).map((e) => e.type)).toEqual(['context-field-created', 'context-field-deleted'])
    // The name is free again.
    expect((await t.call('POST', C, { body: { name: a } })).status).toBe(201)
  })
})

describe("who may write a project's fields", () => {
  const writes = (project: string, name: string): [string, string, unknown?][] => [
    ['POST', P(project), { name: fresh('perm') }],
    ['PUT', `${P(project)}/${name}`, { description: 'x' }],
    ['POST', `${P(project)}/${name}/legal-values`, { value: 'v' }],
    ['DELETE', `${P(project)}/${name}/legal-values/v`],
    ['POST', `${P(project)}/validate`, { name: fresh('perm') }],
    ['DELETE', `${P(project)}/${name}`],
  ]

  it("lets the project's Owner (as in Unleash), an Editor, an Admin and an admin token make every write", async () => {
    const project = await createProject(t)
    const owner = await createSignedInUser(t, fresh('owner'), 'Viewer')
    await addToProject(t, project, owner.id, 'Owner')
    const admin = await createSignedInUser(t, fresh('admin'), 'Admin')
    const adminToken = (await createToken(t, { type: 'admin' })).secret as string
    const callers = [owner.call, editor.call, admin.call, (m: string, p: string, o: { body?: unknown } = {}) => t.call(m, p, { body: o.body, token: adminToken })]
    for (const call of callers) {
      const name = await projectField(project)
      for (const [method, path, body] of writes(project, name)) {
        const res = await call(method, path, { body })
        expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300)
      }
    }
  })

  it('refuses a Member, a Viewer and the Owner of another project with 403 naming UPDATE_PROJECT_CONTEXT, changing nothing', async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const member = await createSignedInUser(t, fresh('member'), 'Viewer')
    await addToProject(t, project, member.id, 'Member')
    const elsewhere = await createSignedInUser(t, fresh('owner'), 'Viewer')
    await addToProject(t, other, elsewhere.id, 'Owner')
    const name = await projectField(project)
    for (const who of [member, viewer, elsewhere]) {
      for (const [method, path, body] of writes(project, name)) {
        const res = await who.call(method, path, { body })
        expect(res.status, `${who.username}: ${method} ${path}`).toBe(403)
        expect(res.body).toMatchObject({ name: 'NoAccessError', message: `You need permission=UPDATE_PROJECT_CONTEXT in project=${project} to perform this action` })
      }
    }
    expect(await eventsOf(name)).toHaveLength(1)
  })

  it('GET /api/admin/user lists UPDATE_PROJECT_CONTEXT among an Owner\'s permissions in the project', async () => {
    const project = await createProject(t)
    const owner = await createSignedInUser(t, fresh('owner'), 'Viewer')
    await addToProject(t, project, owner.id, 'Owner')
    expect((await ok(owner, 'GET', '/api/admin/user')).body.permissions).toContainEqual({ permission: 'UPDATE_PROJECT_CONTEXT', project })
  })
})

describe("exporting and importing flags that use a project's fields", () => {
  it('the export names the field with its project; importing it elsewhere creates it as the target project\'s own, with its event', async () => {
    const [project, target] = [await createProject(t), await createProject(t)]
    const name = await projectField(project, { legalValues: [{ value: 'gold' }] })
    const flag = (await createFlag(t, {}, project)).name as string
    await addStrategy(t, flag, 'development', { name: 'default', constraints: [constraint(name, ['gold'])] }, project)
    const exported = (await ok(t, 'POST', '/api/admin/features-batch/export', { environment: 'development', project })).body
    expect(exported.contextFields).toEqual([{ name, description: null, stickiness: false, sortOrder: 0, legalValues: [{ value: 'gold' }], project }])

    // Into another project, the field of the same name is another project's: refused.
    const copy = { ...exported, features: [{ ...exported.features[0], name: `${flag}-copy` }], featureStrategies: exported.featureStrategies.map((s: any) => ({ ...s, featureName: `${flag}-copy` })), featureEnvironments: [], featureTags: [], dependencies: [] }
    const validated = await ok(t, 'POST', '/api/admin/features-batch/validate', { project: target, environment: 'development', data: copy })
    expect(validated.body.errors).toEqual([{ message: `We detected the following context fields that belong to other projects, which the flags of project ${target} cannot use:`, affectedItems: [name] }])
    expect((await t.call('POST', '/api/admin/features-batch/import', { body: { project: target, environment: 'development', data: copy } })).status).toBe(400)

    // Once the source project is gone, the field is created as the target's own.
    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${flag}`)
    await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
    await ok(t, 'DELETE', `/api/admin/projects/${project}`)
    const imported = await t.call('POST', '/api/admin/features-batch/import', { body: { project: target, environment: 'development', data: copy } })
    expect(imported.status, imported.text).toBe(200)
    const field = (await ok(t, 'GET', `${P(target)}/${name}`)).body
    expect(field).toMatchObject({ name, project: target, legalValues: [{ value: 'gold' }] })
    expect((await eventsOf(name)).at(-1)).toMatchObject({ type: 'context-field-created', project: target, data: field })
  })
})

describe("a project's context field writes at the edge", () => {
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

  it('creating is one statement; updating, a legal value and deleting a read and one statement; listing one round trip; never a WebSocket', async () => {
    const project = (await ok(e, 'POST', '/api/admin/projects', { id: fresh('edge-project'), name: 'Edge' })).body.id as string
    const name = fresh('edge-plan')
    const created = await write('POST', P(project), { name, legalValues: [{ value: 'gold' }] })
    expect([created.status, trips(created)]).toEqual([201, { http: 1, webSocket: 0 }])
    const updated = await write('PUT', `${P(project)}/${name}`, { legalValues: [{ value: 'gold' }, { value: 'silver' }] })
    expect([updated.status, trips(updated)]).toEqual([200, { http: 2, webSocket: 0 }])
    const added = await write('POST', `${P(project)}/${name}/legal-values`, { value: 'bronze' })
    expect([added.status, trips(added)]).toEqual([200, { http: 2, webSocket: 0 }])
    const listed = await e.call('GET', P(project))
    expect([listed.status, trips(listed)]).toEqual([200, { http: 1, webSocket: 0 }])
    expect(listed.body[0].legalValues).toEqual([{ value: 'gold' }, { value: 'silver' }, { value: 'bronze' }])
    const deleted = await write('DELETE', `${P(project)}/${name}`)
    expect([deleted.status, trips(deleted)]).toEqual([200, { http: 2, webSocket: 0 }])
    const types = await e.query<{ type: string; project: string }>("select type, project from events where type like 'context-field-%' and coalesce(data, pre_data)->>'name' = $1 order by id", [name])
    expect(types).toEqual([
      { type: 'context-field-created', project },
      { type: 'context-field-updated', project },
      { type: 'context-field-updated', project },
      { type: 'context-field-deleted', project },
    ])
  })
})
