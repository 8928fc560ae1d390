import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createUser, ok } from './helpers/factories.js'

// The instance keeps an active human Admin: neither deleting one user, nor deleting inactive users (an admin API token may
// call both), nor two deletes racing each other leave it with none.
let now = new Date('2026-03-01T10:00:00Z')
let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ now: () => now, signIn: { perMinute: 0 } })
})
afterAll(() => t.close())

async function activeAdminIds(): Promise<number[]> {
  const users = (await ok(t, 'GET', '/api/admin/user-admin')).body.users as { id: number; rootRole: number }[]
  return users.filter((u) => u.rootRole === 1).map((u) => u.id)
}
const humanAdmins = async () => {
  const count = (await ok(t, 'GET', '/api/admin/user-admin/admin-count')).body
  return count.password + count.noPassword
}

describe('the last active Admin', () => {
  it('POST /api/admin/user-admin/inactive/delete with every Admin inactive deletes all but one', async () => {
    await createUser(t, 'Admin')
    await createUser(t, 'Admin')
    now = new Date(now.getTime() + 181 * 86_400_000)
    const inactive = ((await ok(t, 'GET', '/api/admin/user-admin/inactive')).body.inactiveUsers as { id: number }[]).map((u) => u.id)
    const admins = await activeAdminIds()
    expect(admins.length).toBeGreaterThanOrEqual(2)
    expect(admins.every((id) => inactive.includes(id))).toBe(true)
    await ok(t, 'POST', '/api/admin/user-admin/inactive/delete', { ids: admins })
    expect(await humanAdmins()).toBe(1)
    expect(await activeAdminIds()).toHaveLength(1)
  })

  it('DELETE /api/admin/user-admin/{id} refuses the last one with a ValidationError, and deletes it once another Admin exists', async () => {
    const [last] = await activeAdminIds()
    const res = await t.call('DELETE', `/api/admin/user-admin/${last}`)
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/last active Admin/) })
    expect(await activeAdminIds()).toEqual([last])
    const other = await createUser(t, 'Admin')
    await ok(t, 'DELETE', `/api/admin/user-admin/${last}`)
    expect(await activeAdminIds()).toEqual([other.id])
  })

  it('of two deletes racing for the last two Admins, one is refused', async () => {
    await createUser(t, 'Admin')
    const [a, b] = await activeAdminIds()
    const results = await Promise.all([t.call('DELETE', `/api/admin/user-admin/${a}`), t.call('DELETE', `/api/admin/user-admin/${b}`)])
    expect(results.map((r) => r.status).sort()).toEqual([200, 400])
    expect(await humanAdmins()).toBe(1)
    // The same for two inactive-user deletes racing.
    await createUser(t, 'Admin')
    now = new Date(now.getTime() + 181 * 86_400_000)
    const [c, d] = await activeAdminIds()
    await Promise.all([ok(t, 'POST', '/api/admin/user-admin/inactive/delete', { ids: [c] }), ok(t, 'POST', '/api/admin/user-admin/inactive/delete', { ids: [d] })])
    expect(await humanAdmins()).toBe(1)
  })
  it('PUT /api/admin/user-admin/{id} refuses to make the last one anything but Admin', async () => {
    const [last] = await activeAdminIds()
    const res = await t.call('PUT', `/api/admin/user-admin/${last}`, { body: { rootRole: 'Editor' } })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/last active Admin/) })
    expect(await activeAdminIds()).toEqual([last])
    const other = await createUser(t, 'Admin')
    await ok(t, 'PUT', `/api/admin/user-admin/${last}`, { rootRole: 'Editor' })
    expect(await activeAdminIds()).toEqual([other.id])
  })
})

describe('Admins through a group count', () => {
  it('a user whose group is Admin keeps the instance administered: the direct Admin may go, the group Admin may not be the last to go', async () => {
    const fresh = await createTestApp()
    try {
      const direct = await createUser(fresh, 'Admin')
      const viaGroup = await createUser(fresh, 'Viewer')
      await ok(fresh, 'POST', '/api/admin/groups', { name: 'admins', rootRole: 1, users: [{ user: { id: viaGroup.id } }] })
      // Another Admin remains (through the group): the direct one may be demoted, then deleted.
      expect((await fresh.call('PUT', `/api/admin/user-admin/${direct.id}`, { body: { rootRole: 'Editor' } })).status).toBe(200)
      expect((await fresh.call('DELETE', `/api/admin/user-admin/${direct.id}`)).status).toBe(200)
      // The group's member is now the last active Admin.
      const refused = await fresh.call('DELETE', `/api/admin/user-admin/${viaGroup.id}`)
      expect(refused.status).toBe(400)
      expect(refused.body.message).toContain('last active Admin')
      expect(await fresh.query('select deleted_at from users where id = $1', [viaGroup.id])).toEqual([{ deleted_at: null }])
    } finally {
      await fresh.close()
    }
  })
})
