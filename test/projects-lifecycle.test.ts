import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { addToProject, createFlag, createProject, createSegment, createToken, createUser, enableFlag, fresh, ok } from './helpers/factories.js'

// Archiving, reviving and deleting projects: each route, its refusals, its events, who may, and what an archived or
// deleted project no longer does anywhere else (lists, writes, SDKs, the playground, tokens, change requests).

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const archive = (project: string, call = t.call) => call('POST', `/api/admin/projects/archive/${project}`)
const revive = (project: string, call = t.call) => call('POST', `/api/admin/projects/revive/${project}`)
const remove = (project: string, call = t.call) => call('DELETE', `/api/admin/projects/${project}`)
const features = (project: string) => `/api/admin/projects/${project}/features`

const eventsOf = (project: string) =>
  t.query<{ type: string; feature_name: string | null; data: any; pre_data: any; created_by: string }>('select type, feature_name, data, pre_data, created_by from events where project = $1 order by id', [project])
const listed = async (query = '') => ((await ok(t, 'GET', `/api/admin/projects${query}`)).body.projects as { id: string; archivedAt: string | null }[])

/** A fresh project with one archived flag. */
async function projectWithArchivedFlag(body: Record<string, unknown> = {}) {
  const project = await createProject(t, body)
  const flag = (await createFlag(t, {}, project)).name as string
  await ok(t, 'DELETE', `${features(project)}/${flag}`)
  return { project, flag }
}

describe('POST /api/admin/projects/archive/{projectId}', () => {
  it('archives a project without live flags, with its event, and lists it only with archived=true', async () => {
    const { project } = await projectWithArchivedFlag()
    const res = await archive(project)
    expect(res.status, res.text).toBe(200)
    const [event] = (await eventsOf(project)).filter((e) => e.type === 'project-archived')
    expect(event).toMatchObject({ data: { id: project, name: project, archivedAt: expect.any(String) }, pre_data: { id: project, name: project, archivedAt: null }, created_by: 'test-admin' })
    expect((await listed()).map((p) => p.id)).not.toContain(project)
    expect((await listed('?archived=true')).find((p) => p.id === project)).toMatchObject({ archivedAt: event!.data.archivedAt })
    expect((await listed('?archived=true')).every((p) => p.archivedAt !== null)).toBe(true)
    expect((await listed()).every((p) => p.archivedAt === null)).toBe(true)
    expect((await t.call('GET', `/api/admin/projects/${project}`)).status).toBe(404)
  })

  it('archiving an archived project changes nothing', async () => {
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
    expect((await archive(project)).status).toBe(200)
    expect((await eventsOf(project)).filter((e) => e.type === 'project-archived')).toHaveLength(1)
  })

  it('refuses a project with live flags (409), the default project (409) and an unknown one (404), writing nothing', async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    const live = await archive(project)
    expect(live.status).toBe(409)
    expect(live.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining(flag) })
    expect((await archive('default')).body).toMatchObject({ name: 'ConflictError', message: 'You can not archive the default project' })
    expect((await archive('no-such-project')).body).toMatchObject({ name: 'NotFoundError' })
    expect((await eventsOf(project)).map((e) => e.type)).not.toContain('project-archived')
    expect((await listed()).map((p) => p.id)).toContain(project)
  })

  it('an archived project takes no writes: flags, settings, environments, default strategies, tokens, change requests, favorites, segments', async () => {
    const { project, flag } = await projectWithArchivedFlag({ changeRequestEnvironments: [{ name: 'production' }] })
    await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
    const refused = async (method: string, path: string, body: unknown, status: number) => {
      const res = await t.call(method, path, { body })
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(status)
      expect(res.body.name).toBe(status === 404 ? 'NotFoundError' : 'ValidationError')
    }
    await refused('POST', features(project), { name: fresh('new') }, 404)
    await refused('PUT', `/api/admin/projects/${project}`, { name: 'Renamed' }, 404)
    await refused('POST', `/api/admin/projects/${project}/environments`, { environment: 'development' }, 404)
    await refused('PUT', `/api/admin/projects/${project}/environments/development/default-strategy`, { name: 'default' }, 404)
    await refused('POST', `/api/admin/projects/${project}/revive`, { features: [flag] }, 400)
    await refused('POST', `/api/admin/archive/revive/${flag}`, undefined, 400)
    await refused('POST', `/api/admin/projects/${project}/environments/production/change-requests`, { feature: flag, action: 'updateEnabled', payload: { enabled: true } }, 404)
    await refused('POST', `/api/admin/projects/${project}/favorites`, undefined, 404)
    await refused('POST', '/api/admin/api-tokens', { tokenName: fresh('t'), type: 'client', environment: 'development', projects: [project] }, 400)
    const segment = await t.call('POST', '/api/admin/segments', { body: { name: fresh('seg'), constraints: [], project } })
    expect(segment.status, segment.text).toBeGreaterThanOrEqual(400)
    expect(segment.status).toBeLessThan(500)
    // A flag moved into it.
    const other = await createProject(t)
    const moving = (await createFlag(t, {}, other)).name
    expect((await t.call('POST', `${features(other)}/${moving}/changeProject`, { body: { newProjectId: project } })).status).toBeGreaterThanOrEqual(400)
    expect((await eventsOf(project)).map((e) => e.type).at(-1)).toBe('project-archived')
  })

  it('an archived project serves nothing to SDKs, the frontend API or the playground, and a revived one serves its revived flags again', async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name as string
    await enableFlag(t, flag, 'development', project)
    const client = (await createToken(t, { type: 'client', environment: 'development', projects: [project] })).secret as string
    const web = (await createToken(t, { type: 'frontend', environment: 'development', projects: [project] })).secret as string
    const served = async () => ({
      client: ((await t.call('GET', '/api/client/features', { token: client })).body.features as { name: string }[]).map((f) => f.name),
      frontend: ((await t.call('GET', '/api/frontend?appName=web', { token: web })).body.toggles as { name: string }[]).map((f) => f.name),
      // Every project's flags: a playground naming an archived project is a 400, as for an unknown one.
      playground: ((await ok(t, 'POST', '/api/admin/playground', { environment: 'development', context: { appName: 'web' } })).body.features as { name: string; projectId: string }[]).filter((f) => f.projectId === project).map((f) => f.name),
    })
    expect(await served()).toEqual({ client: [flag], frontend: [flag], playground: [flag] })
    const etag = (await t.call('GET', '/api/client/features', { token: client })).headers.get('etag')
    await ok(t, 'DELETE', `${features(project)}/${flag}`)
    await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
    expect(await served()).toEqual({ client: [], frontend: [], playground: [] })
    expect((await t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: [project], context: { appName: 'web' } } })).body).toMatchObject({ name: 'ValidationError', message: `Unknown project ${project}` })
    expect((await t.call('GET', '/api/client/features', { token: client })).headers.get('etag')).not.toBe(etag)
    await ok(t, 'POST', `/api/admin/projects/revive/${project}`)
    await ok(t, 'POST', `/api/admin/projects/${project}/revive`, { features: [flag] })
    await enableFlag(t, flag, 'development', project)
    expect(await served()).toEqual({ client: [flag], frontend: [flag], playground: [flag] })
  })
})

describe('POST /api/admin/projects/revive/{projectId}', () => {
  it('revives an archived project with its event; its flags stay archived and it takes writes again', async () => {
    const { project, flag } = await projectWithArchivedFlag()
    await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
    const res = await revive(project)
    expect(res.status, res.text).toBe(200)
    const [event] = (await eventsOf(project)).filter((e) => e.type === 'project-revived')
    expect(event).toMatchObject({ data: { id: project, archivedAt: null }, pre_data: { id: project, archivedAt: expect.any(String) } })
    expect((await listed()).find((p) => p.id === project)).toMatchObject({ archivedAt: null })
    expect(await t.query('select archived_at is not null as archived from features where name = $1', [flag])).toEqual([{ archived: true }])
    await createFlag(t, {}, project)
  })

  it('reviving a live project changes nothing; an unknown one is a 404', async () => {
    const project = await createProject(t)
    expect((await revive(project)).status).toBe(200)
    expect((await eventsOf(project)).map((e) => e.type)).not.toContain('project-revived')
    expect((await revive('no-such-project')).body).toMatchObject({ name: 'NotFoundError' })
  })
})

describe('DELETE /api/admin/projects/{projectId}', () => {
  it('deletes a project with its archived flags, segments, members, favorites and tokens for it alone, each with its event', async () => {
    const { project, flag } = await projectWithArchivedFlag()
    const other = await createProject(t)
    const segment = (await createSegment(t, { project })).id as number
    const alone = await createToken(t, { type: 'client', environment: 'development', projects: [project] })
    const shared = await createToken(t, { type: 'client', environment: 'development', projects: [project, other] })
    const member = await createUser(t, 'Viewer')
    await addToProject(t, project, member.id)
    await ok(member, 'POST', `/api/admin/projects/${project}/favorites`)
    const res = await remove(project)
    expect(res.status, res.text).toBe(200)
    const written = (await eventsOf(project)).slice(-4)
    expect(written.map((e) => e.type)).toEqual(['feature-deleted', 'segment-deleted', 'api-token-deleted', 'project-deleted'])
    expect(written[0]).toMatchObject({ feature_name: flag, data: null, pre_data: { name: flag, project, archived: true } })
    expect(written[1]).toMatchObject({ data: null, pre_data: { id: segment, project } })
    expect(written[2]).toMatchObject({ pre_data: { tokenName: alone.tokenName, projects: [project] } })
    expect(written[3]).toMatchObject({ data: null, pre_data: { id: project, name: project, archivedAt: null } })
    expect(JSON.stringify(written[2]!.pre_data)).not.toContain(alone.secret)
    expect(await t.query('select 1 from projects where id = $1 union all select 1 from features where name = $2 union all select 1 from segments where id = $3', [project, flag, segment])).toEqual([])
    expect(await t.query('select 1 from project_members where project_id = $1 union all select 1 from favorite_projects where project = $1', [project])).toEqual([])
    expect((await t.call('GET', '/api/client/features', { token: alone.secret })).status).toBe(401)
    expect(await t.query('select projects from api_tokens where token_name = $1', [shared.tokenName])).toEqual([{ projects: [other] }])
    expect((await t.call('GET', `/api/admin/projects/${project}`)).status).toBe(404)
    expect((await remove(project)).status).toBe(404)
  })

  it('deletes an archived project', async () => {
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
    expect((await remove(project)).status).toBe(200)
    expect((await listed('?archived=true')).map((p) => p.id)).not.toContain(project)
  })

  it('refuses the default project, a project with live flags and one with open change requests (409), as archiving does, writing nothing', async () => {
    expect((await remove('default')).body).toMatchObject({ name: 'ConflictError', message: 'You can not delete the default project' })
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production' }] })
    const flag = (await createFlag(t, {}, project)).name
    expect((await remove(project)).body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining(flag) })
    await ok(t, 'POST', `/api/admin/projects/${project}/environments/production/change-requests`, { feature: flag, action: 'updateEnabled', payload: { enabled: true } })
    await ok(t, 'DELETE', `${features(project)}/${flag}`)
    for (const res of [await remove(project), await archive(project)]) {
      expect(res.status, res.text).toBe(409)
      expect(res.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining('open change requests') })
    }
    expect((await eventsOf(project)).map((e) => e.type)).not.toContain('project-deleted')
    expect((await eventsOf(project)).map((e) => e.type)).not.toContain('project-archived')
    expect((await t.query('select 1 from projects where id = $1', [project])).length).toBe(1)
  })
})

describe('who may', () => {
  it('an admin or the project’s Owner may archive and delete; Members and Editors may not; reviving needs UPDATE_PROJECT', async () => {
    const owner = await createUser(t, 'Viewer')
    const member = await createUser(t, 'Viewer')
    const editor = await createUser(t, 'Editor')
    const project = await createProject(t)
    await addToProject(t, project, owner.id, 'Owner')
    await addToProject(t, project, member.id)
    for (const [who, call] of [['member', member.call], ['editor', editor.call]] as const) {
      const res = await archive(project, call)
      expect(res.status, who).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining('DELETE_PROJECT') })
      expect((await remove(project, call)).status, who).toBe(403)
    }
    expect((await archive(project, owner.call)).status).toBe(200)
    expect((await revive(project, member.call)).status).toBe(403)
    expect((await revive(project, editor.call)).status).toBe(200)
    expect((await remove(project, owner.call)).status).toBe(200)
    expect((await eventsOf(project)).at(-1)).toMatchObject({ type: 'project-deleted', created_by: owner.username })
  })

  it('the Owner of a private project may archive and delete it while other private projects are hidden from them', async () => {
    await createProject(t, { mode: 'private' })
    const owner = await createUser(t, 'Viewer')
    const project = await createProject(t, { mode: 'private' })
    await addToProject(t, project, owner.id, 'Owner')
    expect((await archive(project, owner.call)).status).toBe(200)
    expect((await remove(project, owner.call)).status).toBe(200)
  })

  it('a private project is a 404 to those who may not read it, on every route', async () => {
    const project = await createProject(t, { mode: 'private' })
    const viewer = await createUser(t, 'Viewer')
    for (const res of [await archive(project, viewer.call), await revive(project, viewer.call), await remove(project, viewer.call)]) {
      expect(res.status).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
    expect((await viewer.call('GET', '/api/admin/projects?archived=true')).body.projects.map((p: { id: string }) => p.id)).not.toContain(project)
    expect((await listed('?archived=true')).map((p) => p.id)).toContain(project)
  })

  it('the events of a deleted private project stay hidden from those who could not read it', async () => {
    const project = await createProject(t, { mode: 'private' })
    const viewer = await createUser(t, 'Viewer')
    await ok(t, 'DELETE', `/api/admin/projects/${project}`)
    const seen = async (call: typeof t.call) => ((await call('GET', `/api/admin/search/events?project=IS:${project}`)).body.events as { type: string }[]).map((e) => e.type)
    expect(await seen(viewer.call)).toEqual([])
    expect(await seen(t.call)).toEqual(['project-deleted', 'project-created'])
    expect((await viewer.call('DELETE', `/api/admin/projects/${project}`)).body.name).toBe('NotFoundError')
  })
})

describe('at the edge', () => {
  let edge: EdgeApp
  beforeAll(async () => {
    edge = await createEdgeApp()
  })
  afterAll(() => edge.close())

  const write = async (method: string, path: string) => {
    await ok(edge, 'GET', '/api/admin/environments')
    const res = await edge.call(method, path)
    expect(res.status, res.text).toBe(200)
    return { http: res.http, webSocket: res.webSocket }
  }

  it('archiving, reviving and deleting are a read and one statement or batch each', async () => {
    const project = await createProject(edge)
    const flag = (await createFlag(edge, {}, project)).name
    await ok(edge, 'DELETE', `${features(project)}/${flag}`)
    await createToken(edge, { type: 'client', environment: 'development', projects: [project] })
    expect(await write('POST', `/api/admin/projects/archive/${project}`)).toEqual({ http: 2, webSocket: 0 })
    expect(await write('POST', `/api/admin/projects/revive/${project}`)).toEqual({ http: 2, webSocket: 0 })
    expect(await write('DELETE', `/api/admin/projects/${project}`)).toEqual({ http: 2, webSocket: 0 })
    expect(await edge.query('select type from events where project = $1 order by id', [project])).toEqual(
      ['project-created', 'feature-created', 'feature-archived', 'api-token-created', 'project-archived', 'project-revived', 'feature-deleted', 'api-token-deleted', 'project-deleted'].map((type) => ({ type })),
    )
  })
})
