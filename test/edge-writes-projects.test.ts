// The writes of projects, project access, environments, integrations and the OIDC settings at the edge: each makes at
// most two database round trips before its response and opens no WebSocket (no interactive transaction), and writes
// its change and its events as before. Writes decided on a read that another writer makes stale are tried again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { createFlag, createProject, fresh, ok } from './helpers/factories.js'
import { racing } from './helpers/racing.js'
import { createPat } from '../src/api-tokens/personal-access-tokens.js'
import { callerOf, SYSTEM_ACTOR } from '../src/core/principal.js'
import { updateProject } from '../src/projects/store.js'
import { setRoles } from '../src/projects/access.js'
import { createAddon, deleteAddon, updateAddon } from '../src/integrations/store.js'

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
})
afterAll(() => t.close())

const OWNER = 4
const MEMBER = 5
const system = () => ({ actor: SYSTEM_ACTOR, now: new Date() })
/** An admin token's caller, for writes that check what their caller may give. */
const asAdmin = () => callerOf({ kind: 'admin-token', tokenId: 0, name: 'system', rootRole: 'Admin' }, new Date())

/**
 * A write's answer and its own round trips: a write through the app forgets the principals it remembers, so the
 * token is looked up again first (by a read), and the count is the route's alone.
 */
async function write(method: string, path: string, body?: unknown, token?: string) {
  await ok({ call: (m, p) => t.call(m, p, { token }) }, 'GET', '/api/admin/environments')
  return t.call(method, path, { body, token })
}
const trips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })

const eventsOf = (type: string, column: 'project' | 'environment' | 'id', value: string) =>
  t.query<{ type: string; project: string | null; environment: string | null; data: any; pre_data: any; created_by: string }>(
    `select type, project, environment, data, pre_data, created_by from events where type = $1 and ${column === 'id' ? "coalesce(data, pre_data)->>'id'" : column} = $2 order by id`,
    [type, value],
  )

/** A user with a personal access token, to act as them at the edge. */
async function user(rootRole = 'Editor') {
  const username = fresh('user')
  const res = await ok(t, 'POST', '/api/admin/user-admin', { username, password: 'correct horse battery', rootRole, sendEmail: false })
  const pat = await createPat(t.db, system(), { userId: res.body.id, kind: 'user' }, { description: 'edge', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
  return { id: res.body.id as number, username, token: pat.secret }
}

describe('projects at the edge', () => {
  it('POST /api/admin/projects: a read and one statement', async () => {
    const id = fresh('edge-project')
    const res = await write('POST', '/api/admin/projects', { id, name: 'Edge', environments: ['production'], changeRequestEnvironments: [{ name: 'development', requiredApprovals: 2 }] })
    expect(res.status, res.text).toBe(201)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    const created = { id, name: 'Edge', description: null, featureLimit: null, mode: 'open', defaultStickiness: 'default', environments: ['production', 'development'], changeRequestEnvironments: [{ name: 'development', requiredApprovals: 2 }] }
    expect(res.body).toEqual(created)
    expect((await t.call('GET', '/api/admin/projects')).body.projects.find((p: { id: string }) => p.id === id)).toMatchObject({ name: 'Edge', environments: ['development', 'production'] })
    expect(await t.query('select environment_name, change_requests_enabled, required_approvals from project_environments where project_id = $1 order by 1', [id])).toEqual([
      { environment_name: 'development', change_requests_enabled: true, required_approvals: 2 },
      { environment_name: 'production', change_requests_enabled: false, required_approvals: 1 },
    ])
    expect(await eventsOf('project-created', 'project', id)).toEqual([expect.objectContaining({ data: created, created_by: 'edge-admin' })])
  })

  it('GET /api/admin/projects/{projectId}/overview (what the console shows above the flags) is one round trip, a batch', async () => {
    const id = fresh('edge-summary')
    await ok(t, 'POST', '/api/admin/projects', { id, name: 'Summary' })
    await ok(t, 'GET', '/api/admin/environments')
    const res = await t.call('GET', `/api/admin/projects/${id}/overview`)
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    expect(res.body).toMatchObject({ name: 'Summary', archivedAt: null, onboardingStatus: { status: 'onboarding-started' } })
  })

  it('POST /api/admin/projects by a user makes them its Owner in the same statement', async () => {
    const olga = await user()
    const id = fresh('edge-owned')
    const res = await write('POST', '/api/admin/projects', { id, name: 'Owned' }, olga.token)
    expect(res.status, res.text).toBe(201)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', `/api/admin/projects/${id}/access`)).body.users).toEqual([expect.objectContaining({ id: olga.id, roles: [OWNER] })])
    const events = await t.query<{ type: string; data: unknown }>('select type, data from events where project = $1 order by id', [id])
    expect(events).toEqual([
      expect.objectContaining({ type: 'project-created' }),
      { type: 'project-access-added', data: { roles: [{ roleId: OWNER, groupIds: [], userIds: [olga.id] }] } },
    ])
  })

  it('POST /api/admin/projects answers 409 for a taken id, writing nothing, and gives concurrent creations of one name their own ids', async () => {
    const id = await createProject(t)
    const res = await write('POST', '/api/admin/projects', { id, name: 'Again' })
    expect(res.status).toBe(409)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(await eventsOf('project-created', 'project', id)).toHaveLength(1)
    const name = fresh('Edge Race')
    const results = await Promise.all(Array.from({ length: 4 }, () => t.call('POST', '/api/admin/projects', { body: { name } })))
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201])
    expect(results.every((r) => r.webSocket === 0)).toBe(true)
    const ids = results.map((r) => r.body.id as string)
    expect(new Set(ids).size).toBe(4)
    for (const created of ids) expect(await eventsOf('project-created', 'project', created)).toEqual([expect.objectContaining({ data: expect.objectContaining({ id: created }) })])
  })

  it('PUT /api/admin/projects/{projectId}: a read and one statement', async () => {
    const id = await createProject(t, { description: 'before' })
    const res = await write('PUT', `/api/admin/projects/${id}`, { name: 'Renamed', featureLimit: 3, featureNaming: { pattern: 'edge-.+', example: 'edge-1' } })
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.query('select name, description, feature_limit, feature_naming_pattern, updated_at from projects where id = $1', [id]))[0]).toMatchObject({
      name: 'Renamed',
      description: 'before',
      feature_limit: 3,
      feature_naming_pattern: 'edge-.+',
      updated_at: expect.any(Date),
    })
    const [event] = await eventsOf('project-updated', 'project', id)
    expect(event!.pre_data).toMatchObject({ id, name: id, description: 'before', featureLimit: null, featureNaming: { pattern: null } })
    expect(event!.data).toEqual({ id, name: 'Renamed', description: 'before', mode: 'open', defaultStickiness: 'default', featureLimit: 3, featureNaming: { pattern: 'edge-.+', example: 'edge-1', description: null } })
  })

  it('POST /api/admin/projects/{projectId}/environments: a read and one batch that adds the environment to every flag and moves their versions', async () => {
    const id = await createProject(t, { environments: ['production'] })
    const flag = (await createFlag(t, {}, id)).name as string
    const version = (await t.query<{ version: number }>('select version from features where name = $1', [flag]))[0]!.version
    const res = await write('POST', `/api/admin/projects/${id}/environments`, { environment: 'development', changeRequestsEnabled: true })
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(await t.query('select environment, enabled from feature_environments where feature_name = $1 order by 1', [flag])).toEqual([
      { environment: 'development', enabled: false },
      { environment: 'production', enabled: false },
    ])
    expect((await t.query<{ version: number }>('select version from features where name = $1', [flag]))[0]!.version).toBeGreaterThan(version)
    expect((await t.call('GET', `/api/admin/projects/${id}/features/${flag}`)).body.environments.map((e: { name: string }) => e.name)).toEqual(['development', 'production'])
    expect(await eventsOf('project-environment-added', 'project', id)).toEqual([
      expect.objectContaining({ environment: 'development', data: { environment: 'development', changeRequestsEnabled: true, requiredApprovals: 1 } }),
    ])
  })

  it('POST /api/admin/projects/{projectId}/environments: of two concurrent additions of one environment, one is made and the other is a 409', async () => {
    const id = await createProject(t, { environments: ['production'] })
    await createFlag(t, {}, id)
    const results = await Promise.all([0, 1].map(() => t.call('POST', `/api/admin/projects/${id}/environments`, { body: { environment: 'development' } })))
    expect(results.map((r) => r.status).sort()).toEqual([200, 409])
    expect(results.every((r) => r.webSocket === 0)).toBe(true)
    expect(await eventsOf('project-environment-added', 'project', id)).toHaveLength(1)
  })

  it('PUT /api/admin/projects/{projectId}/environments/{environment}/default-strategy: a read and one statement', async () => {
    const id = await createProject(t)
    const strategy = { name: 'flexibleRollout', parameters: { rollout: '25' }, constraints: [] }
    const res = await write('PUT', `/api/admin/projects/${id}/environments/production/default-strategy`, strategy)
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(res.body).toMatchObject({ name: 'flexibleRollout', parameters: { rollout: '25', stickiness: 'default' }, sortOrder: 0 })
    const [row] = await t.query<{ default_strategy: unknown }>("select default_strategy from project_environments where project_id = $1 and environment_name = 'production'", [id])
    expect(row!.default_strategy).toEqual(res.body)
    expect(await eventsOf('default-strategy-updated', 'project', id)).toEqual([expect.objectContaining({ environment: 'production', data: res.body, pre_data: null })])
    const again = await write('POST', `/api/admin/projects/${id}/environments/production/default-strategy`, { name: 'default' })
    expect(trips(again)).toEqual({ http: 2, webSocket: 0 })
    expect((await eventsOf('default-strategy-updated', 'project', id))[1]).toMatchObject({ data: { name: 'default' }, pre_data: res.body })
  })

  it('PUT .../default-strategy: a 404 for an environment the project lacks comes before a 400 for an unknown segment', async () => {
    const id = await createProject(t, { environments: ['production'] })
    const strategy = { name: 'default', segments: [987654] }
    expect((await write('PUT', `/api/admin/projects/${id}/environments/development/default-strategy`, strategy)).status).toBe(404)
    const refused = await write('PUT', `/api/admin/projects/${id}/environments/production/default-strategy`, strategy)
    expect(refused.status).toBe(400)
    expect(refused.body.message).toContain('987654')
    expect(await eventsOf('default-strategy-updated', 'project', id)).toEqual([])
  })
})

describe('project access at the edge', () => {
  it('POST /api/admin/projects/{projectId}/access: one batch', async () => {
    const id = await createProject(t)
    const mo = await user('Viewer')
    const res = await write('POST', `/api/admin/projects/${id}/access`, { roles: [MEMBER], users: [mo.id] })
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    expect((await t.call('GET', `/api/admin/projects/${id}/access`)).body.users).toEqual([expect.objectContaining({ id: mo.id, roles: [MEMBER] })])
    expect(await eventsOf('project-access-added', 'project', id)).toEqual([expect.objectContaining({ data: { roles: [{ roleId: MEMBER, groupIds: [], userIds: [mo.id] }] } })])
  })

  it('POST /api/admin/projects/{projectId}/access: when the batch writes nothing, a read names why', async () => {
    const id = await createProject(t)
    const mo = await user('Viewer')
    const unknownProject = await write('POST', '/api/admin/projects/nope/access', { roles: [MEMBER], users: [mo.id] })
    expect(unknownProject.status).toBe(404)
    const rootRole = await write('POST', `/api/admin/projects/${id}/access`, { roles: [1], users: [mo.id] })
    expect(rootRole.status).toBe(400)
    expect(trips(rootRole)).toEqual({ http: 2, webSocket: 0 })
    expect((await write('POST', `/api/admin/projects/${id}/access`, { roles: [MEMBER], users: [999999] })).status).toBe(400)
    expect(await eventsOf('project-access-added', 'project', id)).toEqual([])
  })

  it('PUT /api/admin/projects/{projectId}/users/{userId}/roles: a read and one batch', async () => {
    const id = await createProject(t)
    const mo = await user('Viewer')
    await ok(t, 'POST', `/api/admin/projects/${id}/access`, { roles: [MEMBER], users: [mo.id] })
    const res = await write('PUT', `/api/admin/projects/${id}/users/${mo.id}/roles`, { roles: [OWNER, MEMBER] })
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(await t.query('select role_id from project_members where project_id = $1 and user_id = $2 order by 1', [id, mo.id])).toEqual([{ role_id: OWNER }, { role_id: MEMBER }])
    expect(await eventsOf('project-access-user-roles-updated', 'project', id)).toEqual([
      expect.objectContaining({ data: { roles: [OWNER, MEMBER], userId: mo.id }, pre_data: { roles: [MEMBER], userId: mo.id } }),
    ])
  })

  it('DELETE /api/admin/projects/{projectId}/users/{userId}/roles: a read and one batch', async () => {
    const id = await createProject(t)
    const mo = await user('Viewer')
    await ok(t, 'POST', `/api/admin/projects/${id}/access`, { roles: [MEMBER], users: [mo.id] })
    const res = await write('DELETE', `/api/admin/projects/${id}/users/${mo.id}/roles`)
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(await t.query('select role_id from project_members where project_id = $1 and user_id = $2', [id, mo.id])).toEqual([])
    expect(await eventsOf('project-access-user-roles-deleted', 'project', id)).toEqual([expect.objectContaining({ data: null, pre_data: { roles: [MEMBER], userId: mo.id } })])
  })

  it('keeps an owner when two owners give up the role at once: one change is made, the other is refused', async () => {
    const [olga, mo] = [await user(), await user()]
    const id = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${id}/access`, { roles: [OWNER], users: [olga.id, mo.id] })
    const results = await Promise.all([olga, mo].map((u) => t.call('DELETE', `/api/admin/projects/${id}/users/${u.id}/roles`)))
    expect(results.map((r) => r.status).sort()).toEqual([200, 400])
    expect(results.every((r) => r.webSocket === 0)).toBe(true)
    expect(await t.query('select user_id from project_members where project_id = $1 and role_id = $2', [id, OWNER])).toHaveLength(1)
    expect(await eventsOf('project-access-user-roles-deleted', 'project', id)).toHaveLength(1)
  })

  it('decides a change of roles again when the roles it read change before it is written', async () => {
    const [olga, mo] = [await user(), await user()]
    const id = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${id}/access`, { roles: [OWNER], users: [olga.id, mo.id] })
    // Between olga's read and her write, mo stops being an owner: olga is then the last, and keeps the role.
    const raced = racing(t.db, () => ok(t, 'PUT', `/api/admin/projects/${id}/users/${mo.id}/roles`, { roles: [MEMBER] }))
    await expect(setRoles(raced.db, asAdmin(), id, { kind: 'user', id: olga.id }, [MEMBER])).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringContaining('at least one owner') })
    expect(raced.state.raced).toBe(true)
    expect(await t.query('select user_id, role_id from project_members where project_id = $1 order by 1, 2', [id])).toEqual([
      { user_id: olga.id, role_id: OWNER },
      { user_id: mo.id, role_id: MEMBER },
    ])
    expect((await eventsOf('project-access-user-roles-updated', 'project', id)).map((e) => e.data.userId)).toEqual([mo.id])
  })
})

describe('the project settings when the project changes between the read and the write', () => {
  it('PUT /api/admin/projects/{projectId} is made from a fresh read, and its event follows the other change', async () => {
    const id = await createProject(t, { description: 'first' })
    const raced = racing(t.db, () => ok(t, 'PUT', `/api/admin/projects/${id}`, { name: 'Other', description: 'second' }))
    await updateProject(raced.db, system(), id, { name: 'Mine', featureLimit: 7 })
    expect(raced.state.raced).toBe(true)
    expect((await t.query('select name, description, feature_limit from projects where id = $1', [id]))[0]).toEqual({ name: 'Mine', description: 'second', feature_limit: 7 })
    const events = await eventsOf('project-updated', 'project', id)
    expect(events.map((e) => [e.pre_data.name, e.data.name])).toEqual([
      [id, 'Other'],
      ['Other', 'Mine'],
    ])
    expect(events[1]!.pre_data).toEqual(events[0]!.data)
  })

  it('two concurrent updates are both made, one after the other, their events chained', async () => {
    const id = await createProject(t)
    const results = await Promise.all(['a', 'b'].map((name) => t.call('PUT', `/api/admin/projects/${id}`, { body: { name, description: name } })))
    expect(results.map((r) => r.status)).toEqual([200, 200])
    expect(results.every((r) => r.webSocket === 0)).toBe(true)
    const events = await eventsOf('project-updated', 'project', id)
    expect(events).toHaveLength(2)
    expect(events[1]!.pre_data).toEqual(events[0]!.data)
    expect((await t.query('select name from projects where id = $1', [id]))[0]!.name).toBe(events[1]!.data.name)
  })
})

describe('environments at the edge', () => {
  it('POST /api/admin/environments: one statement', async () => {
    const name = fresh('edge-env')
    const res = await write('POST', '/api/admin/environments', { name, type: 'test', sortOrder: 7 })
    expect(res.status, res.text).toBe(201)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    const environment = { name, type: 'test', enabled: true, protected: false, sortOrder: 7, projectCount: 0, apiTokenCount: 0 }
    expect(res.body).toEqual(environment)
    expect((await t.call('GET', '/api/admin/environments')).body.environments.find((e: { name: string }) => e.name === name)).toEqual(environment)
    expect(await eventsOf('environment-created', 'environment', name)).toEqual([expect.objectContaining({ data: environment })])
    const again = await write('POST', '/api/admin/environments', { name, type: 'test' })
    expect(again.status).toBe(409)
    expect(trips(again)).toEqual({ http: 1, webSocket: 0 })
    expect(await eventsOf('environment-created', 'environment', name)).toHaveLength(1)
  })
})

describe('integrations at the edge', () => {
  const webhook = (extra: Record<string, unknown> = {}) => ({
    provider: 'webhook',
    enabled: true,
    parameters: { url: 'https://hooks.example.com/flagpost', authorization: 'Bearer s3cret' },
    events: ['feature-created'],
    ...extra,
  })

  it('POST, PUT and DELETE /api/admin/addons: a read and one batch or statement each, the secrets masked', async () => {
    const created = await write('POST', '/api/admin/addons', webhook({ description: 'edge', environments: ['production'] }))
    expect(created.status, created.text).toBe(200)
    expect(trips(created)).toEqual({ http: 2, webSocket: 0 })
    const id = created.body.id as number
    const view = { id, provider: 'webhook', description: 'edge', enabled: true, parameters: { url: '*****', authorization: '*****' }, events: ['feature-created'], projects: [], environments: ['production'] }
    expect(created.body).toEqual(view)
    expect((await t.call('GET', `/api/admin/addons/${id}`)).body).toEqual(view)
    expect(await eventsOf('addon-config-created', 'id', String(id))).toEqual([expect.objectContaining({ data: view })])

    const updated = await write('PUT', `/api/admin/addons/${id}`, webhook({ enabled: false, parameters: { url: '*****', authorization: '*****' } }))
    expect(updated.status, updated.text).toBe(200)
    expect(trips(updated)).toEqual({ http: 2, webSocket: 0 })
    const after = { ...view, description: null, enabled: false, environments: [] }
    expect(updated.body).toEqual(after)
    // The masks sent back keep the stored secrets.
    expect((await t.query<{ parameters: unknown }>('select parameters from addons where id = $1', [id]))[0]!.parameters).toEqual({ url: 'https://hooks.example.com/flagpost', authorization: 'Bearer s3cret' })
    expect(await eventsOf('addon-config-updated', 'id', String(id))).toEqual([expect.objectContaining({ data: after, pre_data: view })])

    const deleted = await write('DELETE', `/api/admin/addons/${id}`)
    expect(deleted.status, deleted.text).toBe(200)
    expect(trips(deleted)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', `/api/admin/addons/${id}`)).status).toBe(404)
    expect(await eventsOf('addon-config-deleted', 'id', String(id))).toEqual([expect.objectContaining({ data: null, pre_data: after })])
    expect(JSON.stringify(await t.query("select data, pre_data from events where type like 'addon-config-%'"))).not.toContain('s3cret')
  })

  it('queues an integration its own creation, and its update by the configuration it is given, as before: its event is written after it', async () => {
    // Through the stores: the outbox is read before any delivery is attempted.
    const input = webhook({ events: ['addon-config-created', 'addon-config-updated', 'addon-config-deleted'] }) as never
    const { id } = await createAddon(t.db, system(), input, false)
    const queued = async () => (await t.query<{ type: string }>('select e.type from integration_outbox o join events e on e.id = o.event_id where o.integration_id = $1 order by o.id', [id])).map((r) => r.type)
    expect(await queued()).toEqual(['addon-config-created'])
    await updateAddon(t.db, system(), id, { ...(input as object), enabled: false } as never, false)
    expect(await queued()).toEqual(['addon-config-created'])
    await updateAddon(t.db, system(), id, input, false)
    expect(await queued()).toEqual(['addon-config-created', 'addon-config-updated'])
    await deleteAddon(t.db, system(), id)
    expect(await t.query('select * from integration_outbox where integration_id = $1', [id])).toEqual([])
  })

  it('PUT /api/admin/addons/{id} is made from a fresh read when the integration changes meanwhile', async () => {
    const id = (await ok(t, 'POST', '/api/admin/addons', webhook())).body.id as number
    const raced = racing(t.db, () => ok(t, 'PUT', `/api/admin/addons/${id}`, webhook({ description: 'theirs' })))
    const answer = await updateAddon(raced.db, system(), id, { ...webhook({ enabled: false, parameters: { url: '*****', authorization: 'Bearer mine' } }) } as never, false)
    expect(raced.state.raced).toBe(true)
    expect(answer).toMatchObject({ id, enabled: false, description: null })
    const events = await eventsOf('addon-config-updated', 'id', String(id))
    expect(events.map((e) => [e.pre_data.description, e.data.description])).toEqual([
      [null, 'theirs'],
      ['theirs', null],
    ])
    expect(events[1]!.pre_data).toEqual(events[0]!.data)
    expect((await t.query<{ parameters: unknown }>('select parameters from addons where id = $1', [id]))[0]!.parameters).toEqual({ url: 'https://hooks.example.com/flagpost', authorization: 'Bearer mine' })
  })
})

describe('the OIDC settings at the edge', () => {
  it('POST /api/admin/auth/oidc/settings: a read and one statement, the secret neither answered nor recorded', async () => {
    const body = { enabled: true, clientId: 'flagpost', secret: 'oidc-secret-123', discoverUrl: 'https://accounts.example.com/.well-known/openid-configuration', defaultRootRoleId: 2 }
    const res = await write('POST', '/api/admin/auth/oidc/settings', body)
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(res.body).toMatchObject({ enabled: true, clientId: 'flagpost', secret: expect.not.stringContaining('oidc-secret'), defaultRootRoleId: 2, defaultRootRole: 'Editor' })
    const again = await write('POST', '/api/admin/auth/oidc/settings', { ...body, clientId: 'other', secret: res.body.secret })
    expect(again.status, again.text).toBe(200)
    expect(trips(again)).toEqual({ http: 2, webSocket: 0 })
    const events = await t.query<{ type: string; data: any; pre_data: any }>("select type, data, pre_data from events where type like 'setting-%' order by id")
    expect(events.map((e) => e.type)).toEqual(['setting-created', 'setting-updated'])
    expect(events[1]).toMatchObject({ data: { id: 'oidc', clientId: 'other', secretChanged: false }, pre_data: { id: 'oidc', clientId: 'flagpost' } })
    expect(JSON.stringify(events)).not.toContain('oidc-secret-123')
    expect((await t.query<{ content: any }>("select content from settings where name = 'oidc'"))[0]!.content).toMatchObject({ clientId: 'other', secret: 'oidc-secret-123' })
  })
})
