// The writes of roles, groups and project access at the edge: each makes at most two database round trips before its
// response (a read, then one checked statement or batch) and opens no WebSocket; and a checked write that finds its
// read out of date is made again from a fresh read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { racing } from './helpers/racing.js'
import { createProject, fresh, ok } from './helpers/factories.js'
import { callerOf, type Principal } from '../src/core/principal.js'
import { updateRole } from '../src/roles/store.js'
import { updateGroup } from '../src/groups/store.js'
import { setRoles } from '../src/projects/access.js'

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
})
afterAll(() => t.close())

const trips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })
/** A write's answer and its own round trips: the token is looked up first (a write forgets the principals), so the count is the route's alone. */
async function write(method: string, path: string, body?: unknown) {
  await ok(t, 'GET', '/api/admin/environments')
  return t.call(method, path, { body })
}
const admin = () => callerOf({ kind: 'admin-token', tokenId: 0, name: 'edge-admin', rootRole: 'Admin' } as Principal, new Date())
const createUser = async () => (await ok(t, 'POST', '/api/admin/user-admin', { username: fresh('user'), rootRole: 'Viewer', sendEmail: false })).body.id as number
const lastEvent = async (type: string) => (await t.query<{ data: any; pre_data: any }>('select data, pre_data from events where type = $1 order by id desc limit 1', [type]))[0]

describe('roles at the edge', () => {
  it('POST, PUT and DELETE /api/admin/roles: a read and one statement each', async () => {
    const created = await write('POST', '/api/admin/roles', { name: fresh('releaser'), permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }] })
    expect(created.status, created.text).toBe(201)
    expect(trips(created)).toEqual({ http: 2, webSocket: 0 })
    const id = created.body.roles.id
    const updated = await write('PUT', `/api/admin/roles/${id}`, { name: fresh('renamed'), permissions: [{ name: 'CREATE_FEATURE' }] })
    expect(updated.status, updated.text).toBe(200)
    expect(trips(updated)).toEqual({ http: 2, webSocket: 0 })
    const deleted = await write('DELETE', `/api/admin/roles/${id}`)
    expect(deleted.status, deleted.text).toBe(200)
    expect(trips(deleted)).toEqual({ http: 2, webSocket: 0 })
    expect(await t.query('select * from role_permissions where role_id = $1', [id])).toEqual([])
  })

  it('an update that finds the role changed since its read is made again from a fresh read, its event following the other', async () => {
    const id = (await ok(t, 'POST', '/api/admin/roles', { name: fresh('releaser'), permissions: [{ name: 'CREATE_FEATURE' }] })).body.roles.id
    const other = fresh('other')
    const raced = racing(t.db, () => ok(t, 'PUT', `/api/admin/roles/${id}`, { name: other, permissions: [{ name: 'DELETE_FEATURE' }] }))
    await updateRole(raced.db, admin(), id, { name: fresh('mine'), permissions: [{ name: 'UPDATE_FEATURE' }] })
    expect(raced.state.raced).toBe(true)
    expect(await t.query('select permission from role_permissions where role_id = $1', [id])).toEqual([{ permission: 'UPDATE_FEATURE' }])
    expect((await lastEvent('role-updated'))!.pre_data).toMatchObject({ name: other, permissions: [{ name: 'DELETE_FEATURE' }] })
  })
})

describe('groups at the edge', () => {
  it('POST, PUT and DELETE /api/admin/groups: a read and one statement each', async () => {
    const [ann, bob] = [await createUser(), await createUser()]
    const created = await write('POST', '/api/admin/groups', { name: fresh('team'), rootRole: 2, users: [{ user: { id: ann } }] })
    expect(created.status, created.text).toBe(201)
    expect(trips(created)).toEqual({ http: 2, webSocket: 0 })
    const id = created.body.id
    const updated = await write('PUT', `/api/admin/groups/${id}`, { name: fresh('team'), users: [{ user: { id: bob } }] })
    expect(updated.status, updated.text).toBe(200)
    expect(trips(updated)).toEqual({ http: 2, webSocket: 0 })
    expect(await t.query('select user_id from group_users where group_id = $1', [id])).toEqual([{ user_id: bob }])
    const deleted = await write('DELETE', `/api/admin/groups/${id}`)
    expect(deleted.status, deleted.text).toBe(200)
    expect(trips(deleted)).toEqual({ http: 2, webSocket: 0 })
  })

  it('an update that finds the members changed since its read is made again from a fresh read', async () => {
    const [ann, bob, cid] = [await createUser(), await createUser(), await createUser()]
    const id = (await ok(t, 'POST', '/api/admin/groups', { name: fresh('team'), users: [{ user: { id: ann } }] })).body.id
    const name = fresh('team')
    const raced = racing(t.db, () => ok(t, 'PUT', `/api/admin/groups/${id}`, { name: fresh('team'), users: [{ user: { id: bob } }] }))
    await updateGroup(raced.db, admin(), id, { name, users: [{ user: { id: cid } }] })
    expect(raced.state.raced).toBe(true)
    expect(await t.query('select user_id from group_users where group_id = $1', [id])).toEqual([{ user_id: cid }])
    expect((await lastEvent('group-updated'))).toMatchObject({ pre_data: { users: [bob] }, data: { name, users: [cid] } })
  })
})

describe('project access at the edge', () => {
  it('PUT and DELETE …/groups/:groupId/roles and PUT …/access: a read and one batch each', async () => {
    const project = await createProject(t)
    const group = (await ok(t, 'POST', '/api/admin/groups', { name: fresh('team') })).body.id
    const set = await write('PUT', `/api/admin/projects/${project}/groups/${group}/roles`, { roles: [5] })
    expect(set.status, set.text).toBe(200)
    expect(trips(set)).toEqual({ http: 2, webSocket: 0 })
    const removed = await write('DELETE', `/api/admin/projects/${project}/groups/${group}/roles`)
    expect(removed.status, removed.text).toBe(200)
    expect(trips(removed)).toEqual({ http: 2, webSocket: 0 })
    const whole = await write('PUT', `/api/admin/projects/${project}/access`, { roles: [{ id: 4, groups: [group] }] })
    expect(whole.status, whole.text).toBe(200)
    expect(trips(whole)).toEqual({ http: 2, webSocket: 0 })
    expect(await t.query('select group_id, role_id from group_roles where project_id = $1', [project])).toEqual([{ group_id: group, role_id: 4 }])
    // Reading it back is one round trip: the project, its roles, users, groups and the groups' members together.
    const read = await write('GET', `/api/admin/projects/${project}/access`)
    expect(read.body.groups).toEqual([expect.objectContaining({ id: group, roles: [4] })])
    expect(trips(read)).toEqual({ http: 1, webSocket: 0 })
  })

  it('POST …/access with groups by an admin: one batch', async () => {
    const project = await createProject(t)
    const group = (await ok(t, 'POST', '/api/admin/groups', { name: fresh('team') })).body.id
    const res = await write('POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [], groups: [group] })
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    const unknown = await write('POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [], groups: [999999] })
    expect(unknown.status).toBe(400)
    expect(trips(unknown)).toEqual({ http: 2, webSocket: 0 })
  })

  it('a change of a group’s roles that finds the access changed since its read is decided again', async () => {
    const project = await createProject(t)
    const [a, b] = [(await ok(t, 'POST', '/api/admin/groups', { name: fresh('team') })).body.id, (await ok(t, 'POST', '/api/admin/groups', { name: fresh('team') })).body.id]
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [4], users: [], groups: [a, b] })
    // Between the read and the write, b stops owning the project: a is then the last owner, and keeps the role.
    const raced = racing(t.db, () => ok(t, 'PUT', `/api/admin/projects/${project}/groups/${b}/roles`, { roles: [5] }))
    await expect(setRoles(raced.db, admin(), project, { kind: 'group', id: a }, [5])).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringContaining('at least one owner') })
    expect(raced.state.raced).toBe(true)
    expect(await t.query('select group_id, role_id from group_roles where project_id = $1 order by 1', [project])).toEqual([
      { group_id: a, role_id: 4 },
      { group_id: b, role_id: 5 },
    ])
  })
})
