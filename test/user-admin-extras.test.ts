import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addToProject, createProject, createUser, createUserWithEmail, fresh, ok } from './helpers/factories.js'

let now = new Date('2026-03-01T10:00:00Z')
let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ now: () => now, signIn: { perMinute: 0 } })
})
afterAll(() => t.close())

describe('GET /api/admin/user-admin/admin-count', () => {
  it('counts admins with and without a password, and admin service accounts; admins only', async () => {
    const before = (await ok(t, 'GET', '/api/admin/user-admin/admin-count')).body
    await createUser(t, 'Admin')
    await ok(t, 'POST', '/api/admin/user-admin', { username: fresh('nopw'), rootRole: 'Admin', sendEmail: false })
    await ok(t, 'POST', '/api/admin/service-account', { username: fresh('svc'), name: 'svc', rootRole: 1 })
    const after = (await ok(t, 'GET', '/api/admin/user-admin/admin-count')).body
    expect(after).toEqual({ password: before.password + 1, noPassword: before.noPassword + 1, service: before.service + 1 })
    const editor = await createUser(t, 'Editor')
    expect((await editor.call('GET', '/api/admin/user-admin/admin-count')).status).toBe(403)
  })
})

describe('inactive users', () => {
  it('lists users not seen for 180 days, and deletes only those of them asked for, with user-deleted', async () => {
    const old = await createUserWithEmail(t, 'Viewer')
    const oldToo = await createUser(t, 'Viewer')
    now = new Date(now.getTime() + 181 * 86_400_000)
    const fresh1 = await createUser(t, 'Viewer')
    const list = (await ok(t, 'GET', '/api/admin/user-admin/inactive')).body
    expect(list.version).toBe(1)
    const ids = list.inactiveUsers.map((u: { id: number }) => u.id)
    expect(ids).toEqual(expect.arrayContaining([old.id, oldToo.id]))
    expect(ids).not.toContain(fresh1.id)
    expect(list.inactiveUsers.find((u: { id: number }) => u.id === old.id)).toMatchObject({ email: old.email, username: old.username })
    expect(Object.keys(list.inactiveUsers[0])).not.toContain('passwordHash')

    const viewer = await createUser(t, 'Viewer')
    expect((await viewer.call('POST', '/api/admin/user-admin/inactive/delete', { body: { ids: [old.id] } })).status).toBe(403)
    expect((await t.call('POST', '/api/admin/user-admin/inactive/delete', { body: { ids: ['x'] } })).status).toBe(400)
    await ok(t, 'POST', '/api/admin/user-admin/inactive/delete', { ids: [old.id, fresh1.id] })
    expect((await t.call('GET', `/api/admin/user-admin/${old.id}`)).status).toBe(404)
    expect((await t.call('GET', `/api/admin/user-admin/${fresh1.id}`)).status).toBe(200)
    expect((await t.call('GET', `/api/admin/user-admin/${oldToo.id}`)).status).toBe(200)
    const events = await t.query<{ type: string }>(`select type from events where type = 'user-deleted' and pre_data->>'id' = $1`, [String(old.id)])
    expect(events).toHaveLength(1)
  })
})

describe('DELETE /api/admin/user-admin/scim-users', () => {
  it('deletes nobody (Flagpost has no SCIM) and is for admins only', async () => {
    const user = await createUser(t, 'Viewer')
    expect((await t.call('DELETE', '/api/admin/user-admin/scim-users')).status).toBe(200)
    expect((await t.call('GET', `/api/admin/user-admin/${user.id}`)).status).toBe(200)
    expect((await user.call('DELETE', '/api/admin/user-admin/scim-users')).status).toBe(403)
  })
})

describe('GET /api/admin/user/profile and /api/admin/user/roles', () => {
  it('shows the caller their root role, projects, groups and roles; nothing of others', async () => {
    const user = await createUser(t, 'Viewer')
    const project = await createProject(t)
    const privateProject = await createProject(t, { mode: 'private' })
    await addToProject(t, project, user.id, 'Owner')
    const group = (await ok(t, 'POST', '/api/admin/groups', { name: fresh('group'), users: [{ user: { id: user.id } }] })).body
    const profile = (await ok(user, 'GET', '/api/admin/user/profile')).body
    expect(profile).toMatchObject({ rootRole: { id: 3, name: 'Viewer' }, projects: [project], subscriptions: [], features: [], canChangePassword: true })
    expect(profile.groups.map((g: { id: number }) => g.id)).toEqual([group.id])
    const roles = (await ok(user, 'GET', `/api/admin/user/roles?projectId=${project}`)).body
    expect(roles).toEqual({ version: 1, roles: [expect.objectContaining({ id: 4, name: 'Owner' })] })
    expect((await ok(user, 'GET', '/api/admin/user/roles')).body.roles.map((r: { name: string }) => r.name)).toEqual(['Viewer'])
    expect((await ok(user, 'GET', `/api/admin/user/roles?projectId=${privateProject}`)).body.roles).toEqual([])
    expect((await t.call('GET', '/api/admin/user/profile')).status).toBe(400)
    expect((await t.call('GET', '/api/admin/user/profile', { token: null })).status).toBe(401)
  })
})
