import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createPat, createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let owner: TestUser
let member: TestUser
let viewer: TestUser
beforeAll(async () => {
  t = await createTestApp()
  owner = await createSignedInUser(t, 'olga', 'Editor')
  member = await createSignedInUser(t, 'mo', 'Viewer')
  viewer = await createSignedInUser(t, 'vic', 'Viewer')
  expect((await t.call('POST', '/api/admin/projects', { body: { id: 'other', name: 'Other' } })).status).toBe(201)
})
afterAll(() => t.close())

const access = (projectId: string) => t.call('GET', `/api/admin/projects/${projectId}/access`)
const addAccess = (as: TestUser | null, projectId: string, body: unknown) =>
  as ? as.call('POST', `/api/admin/projects/${projectId}/access`, { body }) : t.call('POST', `/api/admin/projects/${projectId}/access`, { body })
const lastEvent = async (type: string) =>
  (await t.query<{ data: any; pre_data: any; created_by: string; project: string }>('select data, pre_data, created_by, project from events where type = $1 order by id desc limit 1', [type]))[0]

describe('the creator of a project', () => {
  it('becomes its Owner when a user, with a project-access-added event in the same change', async () => {
    const res = await owner.call('POST', '/api/admin/projects', { body: { id: 'shop', name: 'Shop' } })
    expect(res.status, res.text).toBe(201)
    const events = await t.query<{ type: string; data: any }>("select type, data from events where project = 'shop' order by id")
    expect(events).toEqual([
      expect.objectContaining({ type: 'project-created' }),
      { type: 'project-access-added', data: { roles: [{ roleId: 4, groupIds: [], userIds: [owner.id] }] } },
    ])
    const list = await access('shop')
    expect(list.body.users).toEqual([expect.objectContaining({ id: owner.id, username: 'olga', roles: [4] })])
    expect(list.body.roles.map((r: { name: string }) => r.name)).toEqual(['Owner', 'Member'])
  })

  it('is nobody’s when an API token created it', async () => {
    expect((await access('other')).body.users).toEqual([])
  })
})

describe('POST /api/admin/projects/:projectId/access', () => {
  it('gives users roles and records project-access-added', async () => {
    const res = await addAccess(owner, 'shop', { roles: [5], users: [member.id], groups: [] })
    expect(res.status, res.text).toBe(200)
    expect(await lastEvent('project-access-added')).toMatchObject({ project: 'shop', created_by: 'olga', data: { roles: [{ roleId: 5, groupIds: [], userIds: [member.id] }] } })
    expect((await access('shop')).body.users.find((u: { id: number }) => u.id === member.id).roles).toEqual([5])
  })

  it.each([
    ['a root role', { roles: [1], users: [3] }],
    ['an unknown role', { roles: [42], users: [3] }],
    ['an unknown user', { roles: [5], users: [9999] }],
    ['groups', { roles: [5], users: [], groups: [1] }],
    ['no roles', { roles: [], users: [3] }],
    ['ids that are not numbers', { roles: ['Member'], users: [3] }],
  ])('answers 400 for %s', async (_, body) => {
    const res = await addAccess(null, 'shop', body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
  })

  it('answers 404 for an unknown project, 401 without credentials', async () => {
    expect((await addAccess(null, 'nope', { roles: [5], users: [member.id] })).status).toBe(404)
    expect((await t.call('POST', '/api/admin/projects/shop/access', { token: null, body: { roles: [5], users: [member.id] } })).status).toBe(401)
    expect((await t.call('GET', '/api/admin/projects/shop/access', { token: null })).status).toBe(401)
  })

  it('needs UPDATE_PROJECT in the project: 403 for a Member and a Viewer', async () => {
    for (const as of [member, viewer]) {
      const res = await addAccess(as, 'shop', { roles: [5], users: [viewer.id] })
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining('permission=UPDATE_PROJECT in project=shop') })
    }
  })
})

describe('project roles grant permissions in their project', () => {
  it('lets a Member change flags in their project only', async () => {
    const created = await member.call('POST', '/api/admin/projects/shop/features', { body: { name: 'cart' } })
    expect(created.status, created.text).toBe(201)
    expect((await member.call('POST', '/api/admin/projects/shop/features/cart/environments/production/on')).status).toBe(200)
    const elsewhere = await member.call('POST', '/api/admin/projects/other/features', { body: { name: 'nope' } })
    expect(elsewhere.status).toBe(403)
    expect(elsewhere.body.message).toContain('permission=CREATE_FEATURE in project=other')
  })

  it('does the same through the Member’s personal access token', async () => {
    const pat = await createPat(member)
    expect((await t.call('POST', '/api/admin/projects/shop/features', { token: pat, body: { name: 'cart-2' } })).status).toBe(201)
    expect((await t.call('POST', '/api/admin/projects/other/features', { token: pat, body: { name: 'nope' } })).status).toBe(403)
  })

  it('does not let a Member change project settings, and lets the Owner', async () => {
    const denied = await member.call('PUT', '/api/admin/projects/shop', { body: { name: 'Shop!' } })
    expect(denied.status).toBe(403)
    expect(denied.body.message).toContain('permission=UPDATE_PROJECT in project=shop')
    const viewerOwner = await createSignedInUser(t, 'vo', 'Viewer')
    await addAccess(null, 'other', { roles: [4], users: [viewerOwner.id] })
    expect((await viewerOwner.call('PUT', '/api/admin/projects/other', { body: { name: 'Other!' } })).status).toBe(200)
    expect((await viewerOwner.call('PUT', '/api/admin/projects/shop', { body: { name: 'Shop!' } })).status).toBe(403)
  })

  it('applies a change of roles at the next request', async () => {
    expect((await viewer.call('POST', '/api/admin/projects/shop/features', { body: { name: 'late' } })).status).toBe(403)
    await addAccess(owner, 'shop', { roles: [5], users: [viewer.id] })
    expect((await viewer.call('POST', '/api/admin/projects/shop/features', { body: { name: 'late' } })).status).toBe(201)
  })
})

describe('PUT and DELETE /api/admin/projects/:projectId/users/:userId/roles', () => {
  it('replace a user’s roles and record project-access-user-roles-updated', async () => {
    const res = await owner.call('PUT', `/api/admin/projects/shop/users/${viewer.id}/roles`, { body: { roles: [4, 5] } })
    expect(res.status, res.text).toBe(200)
    expect(await lastEvent('project-access-user-roles-updated')).toMatchObject({ project: 'shop', data: { roles: [4, 5], userId: viewer.id }, pre_data: { roles: [5], userId: viewer.id } })
    expect((await access('shop')).body.users.find((u: { id: number }) => u.id === viewer.id).roles).toEqual([4, 5])
  })

  it('remove a user’s access and record project-access-user-roles-deleted', async () => {
    const res = await owner.call('DELETE', `/api/admin/projects/shop/users/${viewer.id}/roles`)
    expect(res.status, res.text).toBe(200)
    expect(await lastEvent('project-access-user-roles-deleted')).toMatchObject({ project: 'shop', pre_data: { roles: [4, 5], userId: viewer.id } })
    expect((await viewer.call('POST', '/api/admin/projects/shop/features', { body: { name: 'later' } })).status).toBe(403)
    expect((await owner.call('DELETE', `/api/admin/projects/shop/users/${viewer.id}/roles`)).status).toBe(404)
  })

  it('keep at least one owner', async () => {
    const res = await t.call('DELETE', `/api/admin/projects/shop/users/${owner.id}/roles`)
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('at least one owner')
    expect((await t.call('PUT', `/api/admin/projects/shop/users/${owner.id}/roles`, { body: { roles: [5] } })).status).toBe(400)
  })

  it('answer 400 for a role that is not a project role or an unknown user, 403 for a Member', async () => {
    expect((await t.call('PUT', `/api/admin/projects/shop/users/${member.id}/roles`, { body: { roles: [2] } })).status).toBe(400)
    expect((await t.call('PUT', '/api/admin/projects/shop/users/9999/roles', { body: { roles: [5] } })).status).toBe(400)
    expect((await member.call('PUT', `/api/admin/projects/shop/users/${member.id}/roles`, { body: { roles: [4] } })).status).toBe(403)
    expect((await t.call('PUT', '/api/admin/projects/shop/users/abc/roles', { body: { roles: [5] } })).status).toBe(400)
    expect((await t.call('DELETE', '/api/admin/projects/shop/users/abc/roles')).status).toBe(400)
    expect((await t.call('PUT', `/api/admin/projects/nope/users/${member.id}/roles`, { body: { roles: [5] } })).status).toBe(404)
    expect((await member.call('DELETE', `/api/admin/projects/shop/users/${owner.id}/roles`)).status).toBe(403)
  })
})
