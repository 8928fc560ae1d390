import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createProject, fresh } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const create = (body: unknown) => t.call('POST', '/api/admin/projects', { body })
const projectRow = async (id: string) => (await t.query('select * from projects where id = $1', [id]))[0]
const eventCount = async () => Number((await t.query<{ n: string }>('select count(*) as n from events'))[0]!.n)
// No test here creates an enabled environment: a project created without a list gets every enabled one.

describe('POST /api/admin/projects (operation 12)', () => {
  it('creates a project with defaults, a Location header and a project-created event', async () => {
    const id = fresh('checkout')
    const res = await create({ id, name: 'Checkout' })
    expect(res.status, res.text).toBe(201)
    expect(res.headers.get('location')).toBe(`/api/admin/projects/${id}`)
    expect(res.body).toEqual({
      id,
      name: 'Checkout',
      description: null,
      featureLimit: null,
      mode: 'open',
      defaultStickiness: 'default',
      environments: ['development', 'production'],
      changeRequestEnvironments: [],
    })
    const events = await t.query<{ type: string; project: string; created_by: string; data: unknown }>(
      "select * from events where type = 'project-created' and project = $1",
      [id],
    )
    expect(events).toHaveLength(1)
    expect(events[0]!.created_by).toBe('test-admin')
    expect(events[0]!.data).toEqual(res.body)
    const envs = await t.query('select environment_name from project_environments where project_id = $1 order by 1', [id])
    expect(envs.map((e) => e.environment_name)).toEqual(['development', 'production'])
  })

  it('generates the id from the name when it is absent or empty, with -1, -2 on collision', async () => {
    const first = await create({ name: 'Team Ünicorn  Project!' })
    expect(first.status).toBe(201)
    expect(first.body.id).toBe('team-unicorn-project')
    const second = await create({ id: '', name: 'Team Ünicorn  Project!' })
    expect(second.body.id).toBe('team-unicorn-project-1')
    const third = await create({ name: 'team unicorn project' })
    expect(third.body.id).toBe('team-unicorn-project-2')
  })

  it('gives a name with nothing URL-friendly a usable id', async () => {
    const res = await create({ name: '🚀🚀' })
    expect(res.status).toBe(201)
    expect(res.body.id).toMatch(/^project(-\d+)?$/)
  })

  it("takes an id Unleash takes (- _ . ! ~ ' ( )) but never * (API tokens read it as every project)", async () => {
    const id = fresh("team(a)!~'")
    const res = await create({ id, name: 'Parens' })
    expect(res.status, res.text).toBe(201)
    expect((await t.call('GET', `/api/admin/projects/${id}`)).body.name).toBe('Parens')
    for (const bad of ['*', 'all*', 'with space', 'sla/sh']) expect((await create({ id: bad, name: 'Bad' })).status, bad).toBe(400)
  })

  it('keeps the given environments, mode, stickiness and description', async () => {
    const id = fresh('p-envs')
    const res = await create({ id, name: 'Envs', description: 'd', mode: 'protected', defaultStickiness: 'userId', environments: ['production'] })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ description: 'd', mode: 'protected', defaultStickiness: 'userId', environments: ['production'] })
    expect(await projectRow(id)).toMatchObject({ mode: 'protected', default_stickiness: 'userId', description: 'd' })
  })

  it('enables change-request environments, even those not listed, with requiredApprovals clamped to 1..10', async () => {
    const res = await create({
      id: 'p-cr',
      name: 'CR',
      environments: ['development'],
      changeRequestEnvironments: [{ name: 'production', requiredApprovals: 50 }, { name: 'development', requiredApprovals: 0 }],
    })
    expect(res.status, res.text).toBe(201)
    expect(res.body.environments).toEqual(['development', 'production'])
    expect(res.body.changeRequestEnvironments).toEqual([
      { name: 'production', requiredApprovals: 10 },
      { name: 'development', requiredApprovals: 1 },
    ])
    const rows = await t.query('select environment_name, change_requests_enabled, required_approvals from project_environments where project_id = $1 order by 1', ['p-cr'])
    expect(rows).toEqual([
      { environment_name: 'development', change_requests_enabled: true, required_approvals: 1 },
      { environment_name: 'production', change_requests_enabled: true, required_approvals: 10 },
    ])
  })

  it('defaults requiredApprovals to 1', async () => {
    const res = await create({ id: 'p-cr-default', name: 'CR', changeRequestEnvironments: [{ name: 'production' }] })
    expect(res.body.changeRequestEnvironments).toEqual([{ name: 'production', requiredApprovals: 1 }])
  })

  it('leaves deprecated environments out when environments is omitted', async () => {
    expect((await t.call('POST', '/api/admin/environments', { body: { name: 'legacy', type: 'test', enabled: false } })).status).toBe(201)
    const res = await create({ id: 'p-no-legacy', name: 'No legacy' })
    expect(res.body.environments).toEqual(['development', 'production'])
  })

  it('answers 409 NameExistsError for an existing id, and writes nothing', async () => {
    const id = await createProject(t, { name: 'Checkout' })
    const before = await eventCount()
    const res = await create({ id, name: 'Again' })
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ name: 'NameExistsError' })
    expect((await projectRow(id))!.name).toBe('Checkout')
    expect(await eventCount()).toBe(before)
  })

  it.each([
    ['a missing name', { id: 'x1' }],
    ['a blank name', { name: '   ' }],
    ['an id with a space', { id: 'bad id', name: 'x' }],
    ['an id with a slash', { id: 'a/b', name: 'x' }],
    ['an unknown mode', { name: 'x', mode: 'secret' }],
    ['an empty environments list', { name: 'x', environments: [] }],
    ['a non-string environment', { name: 'x', environments: [1] }],
    ['a fractional requiredApprovals', { name: 'x', changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1.5 }] }],
    ['a name that is a number', { name: 42 }],
    ['an array body', [{ name: 'x' }]],
  ])('answers 400 ValidationError for %s, and creates nothing', async (_, body) => {
    const before = await eventCount()
    const res = await create(body)
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError' })
    expect(typeof res.body.id).toBe('string')
    expect(Array.isArray(res.body.details)).toBe(true)
    expect(await eventCount()).toBe(before)
  })

  it('answers 400 naming the unknown environments', async () => {
    const res = await create({ id: 'p-unknown-env', name: 'x', environments: ['development', 'staging'], changeRequestEnvironments: [{ name: 'qa' }] })
    expect(res.status).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.body.message).toContain('staging')
    expect(res.body.message).toContain('qa')
    expect(await projectRow('p-unknown-env')).toBeUndefined()
  })

  it('creates one project per concurrent request for the same name, each with its own id', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => create({ name: 'Concurrent' })))
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201))
    const ids = results.map((r) => r.body.id).sort()
    expect(new Set(ids).size).toBe(10)
  })

  it('answers one 201 and 409s for concurrent creations of one explicit id', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => create({ id: 'race', name: 'Race' })))
    expect(results.filter((r) => r.status === 201)).toHaveLength(1)
    expect(results.filter((r) => r.status === 409)).toHaveLength(9)
  })
})

describe('GET /api/admin/projects', () => {
  it('lists projects with their environments', async () => {
    const envs = await createProject(t, { name: 'Envs', environments: ['production'] })
    const res = await t.call('GET', '/api/admin/projects')
    expect(res.status).toBe(200)
    expect(res.body.version).toBe(1)
    const def = res.body.projects.find((p: { id: string }) => p.id === 'default')
    expect(def).toMatchObject({ id: 'default', name: 'Default', environments: ['development', 'production'], mode: 'open' })
    expect(res.body.projects.find((p: { id: string }) => p.id === envs).environments).toEqual(['production'])
  })
})

describe('POST /api/admin/projects/:projectId/environments', () => {
  /** A fresh project in production only: development is an environment it does not have. */
  const productionOnly = () => createProject(t, { environments: ['production'] })

  it('adds an environment to a project and records project-environment-added', async () => {
    const project = await productionOnly()
    const res = await t.call('POST', `/api/admin/projects/${project}/environments`, { body: { environment: 'development', changeRequestsEnabled: true } })
    expect(res.status, res.text).toBe(200)
    const rows = await t.query("select * from project_environments where project_id = $1 and environment_name = 'development'", [project])
    expect(rows[0]).toMatchObject({ change_requests_enabled: true })
    const events = await t.query("select * from events where type = 'project-environment-added' and project = $1", [project])
    expect(events[0]).toMatchObject({ environment: 'development' })
  })

  it('answers 409 when the environment is already enabled', async () => {
    const res = await t.call('POST', `/api/admin/projects/${await productionOnly()}/environments`, { body: { environment: 'production' } })
    expect(res.status).toBe(409)
    expect(res.body.name).toBe('NameExistsError')
  })

  it('answers 404 for an unknown project or environment', async () => {
    expect((await t.call('POST', '/api/admin/projects/nope/environments', { body: { environment: 'development' } })).body.name).toBe('NotFoundError')
    const res = await t.call('POST', `/api/admin/projects/${await productionOnly()}/environments`, { body: { environment: 'nope' } })
    expect(res.status).toBe(404)
    expect(res.body.message).toContain('nope')
  })

  it('answers 400 for unknown fields rather than ignoring them', async () => {
    const res = await t.call('POST', `/api/admin/projects/${await productionOnly()}/environments`, { body: { environment: 'development', defaultStrategy: { name: 'default' } } })
    expect(res.status).toBe(400)
  })
})
