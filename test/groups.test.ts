import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createProject, fresh, ok } from './helpers/factories.js'
import { createPat, createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let editor: TestUser
beforeAll(async () => {
  t = await createTestApp()
  editor = await createSignedInUser(t, 'eddie', 'Editor')
})
afterAll(() => t.close())

const lastEvent = async (type: string) =>
  (await t.query<{ data: any; pre_data: any; created_by: string }>('select data, pre_data, created_by from events where type = $1 order by id desc limit 1', [type]))[0]
const eventCount = async (type: string) => (await t.query<{ n: number }>('select count(*)::int as n from events where type = $1', [type]))[0]!.n

const user = (rootRole: string | number = 'Viewer') => createSignedInUser(t, fresh('user'), rootRole)
const members = (...users: { id: number }[]) => users.map((u) => ({ user: { id: u.id } }))

/** A fresh group of the users given, with the root role given. */
async function createGroup(users: { id: number }[], rootRole?: number) {
  return (await ok(t, 'POST', '/api/admin/groups', { name: fresh('team'), users: members(...users), ...(rootRole ? { rootRole } : {}) })).body.id as number
}

describe('POST /api/admin/groups', () => {
  it('creates a group with its members and root role, records group-created, answers its location', async () => {
    const [ann, bob] = [await user(), await user()]
    const name = fresh('dx')
    const res = await t.call('POST', '/api/admin/groups', { body: { name, description: 'DX squad', mappingsSSO: ['dx'], rootRole: 2, users: members(bob, ann) } })
    expect(res.status, res.text).toBe(201)
    const id = res.body.id
    expect(res.headers.get('location')).toBe(`/api/admin/groups/${id}`)
    expect(res.body).toMatchObject({ id, name, description: 'DX squad', mappingsSSO: ['dx'], rootRole: 2, createdBy: 'test-admin', projects: [], userCount: 2, scimId: null })
    expect(await lastEvent('group-created')).toEqual({ created_by: 'test-admin', pre_data: null, data: { id, name, description: 'DX squad', mappingsSSO: ['dx'], rootRole: 2, users: [ann.id, bob.id].sort((a, b) => a - b) } })
    const group = (await ok(t, 'GET', `/api/admin/groups/${id}`)).body
    expect(group.users.map((u: { user: { id: number } }) => u.user.id)).toEqual([ann.id, bob.id].sort((a, b) => a - b))
    expect(group.users[0]).toMatchObject({ createdBy: 'test-admin', joinedAt: expect.any(String), user: { username: expect.any(String), imageUrl: expect.any(String) } })
  })

  it.each([
    ['an unknown user', () => ({ users: [{ user: { id: 999999 } }] }), 'Unknown user'],
    ['a project role as root role', () => ({ rootRole: 4 }), 'Not a root role'],
    ['an unknown root role', () => ({ rootRole: 999999 }), 'Not a root role'],
    ['an empty name', () => ({ name: ' ' }), 'Group name cannot be empty'],
    ['an empty SSO group ID', () => ({ mappingsSSO: ['dev', ' '] }), 'an SSO group ID must not be empty'],
    ['SSO group IDs that are not text', () => ({ mappingsSSO: [7] }), 'mappingsSSO'],
    ['more than 100 SSO group IDs', () => ({ mappingsSSO: Array.from({ length: 101 }, (_, i) => `g${i}`) }), 'at most 100 SSO group IDs'],
  ])('answers 400 for %s, writing nothing', async (_, body, message) => {
    const name = fresh('bad')
    const res = await t.call('POST', '/api/admin/groups', { body: { name, ...body() } })
    expect(res.status, res.text).toBe(400)
    expect(res.text).toContain(message)
    expect(await t.query('select id from groups where name = $1', [name])).toEqual([])
  })

  it('keeps SSO group IDs trimmed and each once', async () => {
    const res = await t.call('POST', '/api/admin/groups', { body: { name: fresh('mapped'), mappingsSSO: [' dev ', 'ops', 'dev'] } })
    expect(res.status, res.text).toBe(201)
    expect(res.body.mappingsSSO).toEqual(['dev', 'ops'])
  })

  it('answers 409 for a name another group has', async () => {
    const id = await createGroup([])
    const { name } = (await ok(t, 'GET', `/api/admin/groups/${id}`)).body
    const res = await t.call('POST', '/api/admin/groups', { body: { name } })
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ name: 'NameExistsError', message: 'Group name already exists' })
  })

  it('and the group routes are an admin’s: an Editor may neither list nor create groups', async () => {
    expect((await editor.call('GET', '/api/admin/groups')).status).toBe(403)
    expect((await editor.call('POST', '/api/admin/groups', { body: { name: fresh('mine'), rootRole: 1, users: members(editor) } })).status).toBe(403)
  })
})

describe('PUT /api/admin/groups/:groupId', () => {
  it('sets the members and the rest, with group-updated holding both', async () => {
    const [ann, bob, cid] = [await user(), await user(), await user()]
    const id = await createGroup([ann, bob], 3)
    const name = fresh('renamed')
    const res = await t.call('PUT', `/api/admin/groups/${id}`, { body: { name, rootRole: 2, users: members(bob, cid) } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ id, name, rootRole: 2, userCount: 2 })
    const event = (await lastEvent('group-updated'))!
    expect(event.pre_data).toMatchObject({ id, rootRole: 3, users: [ann.id, bob.id] })
    expect(event.data).toMatchObject({ id, name, rootRole: 2, users: [bob.id, cid.id] })
    expect((await ok(t, 'GET', `/api/admin/groups/${id}`)).body.users.map((u: { user: { id: number } }) => u.user.id)).toEqual([bob.id, cid.id])
  })

  it('keeps the members when `users` is absent', async () => {
    const ann = await user()
    const id = await createGroup([ann])
    await ok(t, 'PUT', `/api/admin/groups/${id}`, { name: fresh('renamed') })
    expect((await ok(t, 'GET', `/api/admin/groups/${id}`)).body.userCount).toBe(1)
  })

  it('answers 404 for an unknown group and 409 for a name another group has', async () => {
    const [a, b] = [await createGroup([]), await createGroup([])]
    expect((await t.call('PUT', '/api/admin/groups/999999', { body: { name: fresh('x') } })).status).toBe(404)
    const taken = (await ok(t, 'GET', `/api/admin/groups/${b}`)).body.name
    expect((await t.call('PUT', `/api/admin/groups/${a}`, { body: { name: taken } })).status).toBe(409)
  })
})

describe('DELETE /api/admin/groups/:groupId', () => {
  it('deletes the group with its roles in projects, recording group-deleted; an unknown group is a 200 that writes nothing', async () => {
    const ann = await user()
    const id = await createGroup([ann])
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [], groups: [id] })
    expect((await t.call('DELETE', `/api/admin/groups/${id}`)).status).toBe(200)
    expect(await lastEvent('group-deleted')).toMatchObject({ data: null, pre_data: { id, users: [ann.id] } })
    expect((await ok(t, 'GET', `/api/admin/projects/${project}/access`)).body.groups).toEqual([])
    const before = await eventCount('group-deleted')
    expect((await t.call('DELETE', `/api/admin/groups/${id}`)).status).toBe(200)
    expect(await eventCount('group-deleted')).toBe(before)
  })
})

describe('a group’s members', () => {
  it('hold its root role besides their own, and lose it at the next request once removed from the group', async () => {
    const viewer = await user('Viewer')
    const pat = await createPat(viewer)
    const id = await createGroup([viewer], 2)
    expect((await viewer.call('POST', '/api/admin/projects', { body: { name: 'Via group' } })).status).toBe(201)
    expect((await t.call('POST', '/api/admin/segments', { token: pat, body: { name: fresh('seg'), constraints: [] } })).status).toBe(201)
    await ok(t, 'PUT', `/api/admin/groups/${id}`, { name: fresh('team'), rootRole: 2, users: [] })
    expect((await viewer.call('POST', '/api/admin/projects', { body: { name: 'No more' } })).status).toBe(403)
    expect((await t.call('POST', '/api/admin/segments', { token: pat, body: { name: fresh('seg'), constraints: [] } })).status).toBe(403)
  })

  it('hold its custom root role', async () => {
    const role = (await ok(t, 'POST', '/api/admin/roles', { name: fresh('segmenter'), type: 'root-custom', permissions: [{ name: 'CREATE_SEGMENT' }] })).body.roles.id
    const viewer = await user('Viewer')
    await createGroup([viewer], role)
    expect((await viewer.call('POST', '/api/admin/segments', { body: { name: fresh('seg'), constraints: [] } })).status).toBe(201)
    expect((await viewer.call('POST', '/api/admin/projects', { body: { name: 'Nope' } })).status).toBe(403)
  })

  it('hold its roles in projects, on top of their own there', async () => {
    const releaser = (await ok(t, 'POST', '/api/admin/roles', { name: fresh('releaser'), permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }] })).body.roles.id
    const viewer = await user('Viewer')
    const project = await createProject(t)
    const id = await createGroup([viewer])
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [viewer.id] })
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [releaser], users: [], groups: [id] })
    const flag = fresh('flag')
    expect((await viewer.call('POST', `/api/admin/projects/${project}/features`, { body: { name: flag } })).status).toBe(201)
    expect((await viewer.call('POST', `/api/admin/projects/${project}/features/${flag}/environments/production/on`)).status).toBe(200)
    const permissions = (await viewer.call('GET', '/api/admin/user')).body.permissions
    expect(permissions).toContainEqual({ permission: 'CREATE_FEATURE', project })
    expect(permissions).toContainEqual({ permission: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production', project })
  })

  it('find the projects their group has a role in on their personal dashboard, the group’s members counted', async () => {
    const [ann, bob] = [await user('Viewer'), await user('Viewer')]
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [], groups: [await createGroup([ann, bob])] })
    const { projects } = (await ok(ann, 'GET', '/api/admin/personal-dashboard')).body
    expect(projects).toEqual([expect.objectContaining({ id: project, memberCount: 2 })])
  })

  it('leave their groups when deleted, each with group-user-removed', async () => {
    const ann = await user()
    const [a, b] = [await createGroup([ann]), await createGroup([ann])]
    await ok(t, 'DELETE', `/api/admin/user-admin/${ann.id}`)
    const events = await t.query<{ pre_data: any }>("select pre_data from events where type = 'group-user-removed' and (pre_data->>'userId')::int = $1 order by id", [ann.id])
    expect(events.map((e) => e.pre_data)).toEqual([
      { groupId: a, userId: ann.id },
      { groupId: b, userId: ann.id },
    ])
    expect((await ok(t, 'GET', `/api/admin/groups/${a}`)).body.userCount).toBe(0)
  })
})

describe('GET /api/admin/user-admin/access', () => {
  it('lists the users and groups, in short, to those who may manage project members (not to a Viewer)', async () => {
    const ann = await user()
    const id = await createGroup([ann], 3)
    expect((await ann.call('GET', '/api/admin/user-admin/access')).status).toBe(403)
    const { body } = await ok(editor, 'GET', '/api/admin/user-admin/access')
    expect(body.users).toContainEqual({ id: ann.id, name: null, username: ann.username, email: null, imageUrl: expect.any(String), accountType: 'User' })
    expect(body.groups).toContainEqual({ id, name: expect.any(String), description: null, rootRole: 3, userCount: 1 })
  })
})
