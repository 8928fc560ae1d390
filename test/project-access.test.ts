import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createProject, fresh } from './helpers/factories.js'
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
})
afterAll(() => t.close())

const access = (projectId: string) => t.call('GET', `/api/admin/projects/${projectId}/access`)
const addAccess = (as: TestUser | null, projectId: string, body: unknown) =>
  as ? as.call('POST', `/api/admin/projects/${projectId}/access`, { body }) : t.call('POST', `/api/admin/projects/${projectId}/access`, { body })
const lastEvent = async (type: string) =>
  (await t.query<{ data: any; pre_data: any; created_by: string; project: string }>('select data, pre_data, created_by, project from events where type = $1 order by id desc limit 1', [type]))[0]

/** A fresh project olga created (so she owns it), with mo as Member unless told otherwise. */
async function shop({ withMember = true } = {}) {
  const id = await createProject(owner, { name: 'Shop' })
  if (withMember) expect((await addAccess(owner, id, { roles: [5], users: [member.id] })).status).toBe(200)
  return id
}
/** A fresh project an API token created: it has no members. */
const other = () => createProject(t, { name: 'Other' })

describe('the creator of a project', () => {
  it('becomes its Owner when a user, with a project-access-added event in the same change', async () => {
    const id = fresh('shop')
    const res = await owner.call('POST', '/api/admin/projects', { body: { id, name: 'Shop' } })
    expect(res.status, res.text).toBe(201)
    const events = await t.query<{ type: string; data: any }>('select type, data from events where project = $1 order by id', [id])
    expect(events).toEqual([
      expect.objectContaining({ type: 'project-created' }),
      { type: 'project-access-added', data: { roles: [{ roleId: 4, groupIds: [], userIds: [owner.id] }] } },
    ])
    const list = await access(id)
    expect(list.body.users).toEqual([expect.objectContaining({ id: owner.id, username: 'olga', roles: [4] })])
    expect(list.body.roles.map((r: { name: string }) => r.name)).toEqual(['Owner', 'Member'])
  })

  it('is nobody’s when an API token created it', async () => {
    expect((await access(await other())).body.users).toEqual([])
  })
})

describe('POST /api/admin/projects/:projectId/access', () => {
  it('gives users roles and records project-access-added', async () => {
    const id = await shop({ withMember: false })
    const res = await addAccess(owner, id, { roles: [5], users: [member.id], groups: [] })
    expect(res.status, res.text).toBe(200)
    expect(await lastEvent('project-access-added')).toMatchObject({ project: id, created_by: 'olga', data: { roles: [{ roleId: 5, groupIds: [], userIds: [member.id] }] } })
    expect((await access(id)).body.users.find((u: { id: number }) => u.id === member.id).roles).toEqual([5])
  })

  it.each([
    ['a root role', { roles: [1], users: [3] }],
    ['an unknown role', { roles: [42], users: [3] }],
    ['an unknown user', { roles: [5], users: [9999] }],
    ['groups', { roles: [5], users: [], groups: [1] }],
    ['no roles', { roles: [], users: [3] }],
    ['ids that are not numbers', { roles: ['Member'], users: [3] }],
  ])('answers 400 for %s', async (_, body) => {
    const res = await addAccess(null, await shop(), body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
  })

  it('answers 404 for an unknown project, 401 without credentials', async () => {
    const id = await shop()
    expect((await addAccess(null, 'nope', { roles: [5], users: [member.id] })).status).toBe(404)
    expect((await t.call('POST', `/api/admin/projects/${id}/access`, { token: null, body: { roles: [5], users: [member.id] } })).status).toBe(401)
    expect((await t.call('GET', `/api/admin/projects/${id}/access`, { token: null })).status).toBe(401)
  })

  it('needs UPDATE_PROJECT in the project: 403 for a Member and a Viewer', async () => {
    const id = await shop()
    for (const as of [member, viewer]) {
      const res = await addAccess(as, id, { roles: [5], users: [viewer.id] })
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining(`permission=UPDATE_PROJECT in project=${id}`) })
    }
  })
})

describe('project roles grant permissions in their project', () => {
  it('lets a Member change flags in their project only', async () => {
    const [id, elsewhere] = [await shop(), await other()]
    const cart = fresh('cart')
    const created = await member.call('POST', `/api/admin/projects/${id}/features`, { body: { name: cart } })
    expect(created.status, created.text).toBe(201)
    expect((await member.call('POST', `/api/admin/projects/${id}/features/${cart}/environments/production/on`)).status).toBe(200)
    const refused = await member.call('POST', `/api/admin/projects/${elsewhere}/features`, { body: { name: fresh('nope') } })
    expect(refused.status).toBe(403)
    expect(refused.body.message).toContain(`permission=CREATE_FEATURE in project=${elsewhere}`)
  })

  it('does the same through the Member’s personal access token', async () => {
    const [id, elsewhere] = [await shop(), await other()]
    const pat = await createPat(member)
    expect((await t.call('POST', `/api/admin/projects/${id}/features`, { token: pat, body: { name: fresh('cart') } })).status).toBe(201)
    expect((await t.call('POST', `/api/admin/projects/${elsewhere}/features`, { token: pat, body: { name: fresh('nope') } })).status).toBe(403)
  })

  it('does not let a Member change project settings, and lets the Owner', async () => {
    const [id, elsewhere] = [await shop(), await other()]
    const denied = await member.call('PUT', `/api/admin/projects/${id}`, { body: { name: 'Shop!' } })
    expect(denied.status).toBe(403)
    expect(denied.body.message).toContain(`permission=UPDATE_PROJECT in project=${id}`)
    const viewerOwner = await createSignedInUser(t, fresh('vo'), 'Viewer')
    await addAccess(null, elsewhere, { roles: [4], users: [viewerOwner.id] })
    expect((await viewerOwner.call('PUT', `/api/admin/projects/${elsewhere}`, { body: { name: 'Other!' } })).status).toBe(200)
    expect((await viewerOwner.call('PUT', `/api/admin/projects/${id}`, { body: { name: 'Shop!' } })).status).toBe(403)
  })

  it('applies a change of roles at the next request', async () => {
    const id = await shop()
    const late = fresh('late')
    expect((await viewer.call('POST', `/api/admin/projects/${id}/features`, { body: { name: late } })).status).toBe(403)
    await addAccess(owner, id, { roles: [5], users: [viewer.id] })
    expect((await viewer.call('POST', `/api/admin/projects/${id}/features`, { body: { name: late } })).status).toBe(201)
  })
})

describe('PUT and DELETE /api/admin/projects/:projectId/users/:userId/roles', () => {
  /** A shop where vic is a Member too. */
  const shopWithViewer = async () => {
    const id = await shop()
    expect((await addAccess(owner, id, { roles: [5], users: [viewer.id] })).status).toBe(200)
    return id
  }

  it('replace a user’s roles and record project-access-user-roles-updated', async () => {
    const id = await shopWithViewer()
    const res = await owner.call('PUT', `/api/admin/projects/${id}/users/${viewer.id}/roles`, { body: { roles: [4, 5] } })
    expect(res.status, res.text).toBe(200)
    expect(await lastEvent('project-access-user-roles-updated')).toMatchObject({ project: id, data: { roles: [4, 5], userId: viewer.id }, pre_data: { roles: [5], userId: viewer.id } })
    expect((await access(id)).body.users.find((u: { id: number }) => u.id === viewer.id).roles).toEqual([4, 5])
  })

  it('remove a user’s access and record project-access-user-roles-deleted', async () => {
    const id = await shopWithViewer()
    expect((await owner.call('PUT', `/api/admin/projects/${id}/users/${viewer.id}/roles`, { body: { roles: [4, 5] } })).status).toBe(200)
    const res = await owner.call('DELETE', `/api/admin/projects/${id}/users/${viewer.id}/roles`)
    expect(res.status, res.text).toBe(200)
    expect(await lastEvent('project-access-user-roles-deleted')).toMatchObject({ project: id, pre_data: { roles: [4, 5], userId: viewer.id } })
    expect((await viewer.call('POST', `/api/admin/projects/${id}/features`, { body: { name: fresh('later') } })).status).toBe(403)
    expect((await owner.call('DELETE', `/api/admin/projects/${id}/users/${viewer.id}/roles`)).status).toBe(404)
  })

  it('keep at least one owner', async () => {
    const id = await shop()
    const res = await t.call('DELETE', `/api/admin/projects/${id}/users/${owner.id}/roles`)
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('at least one owner')
    expect((await t.call('PUT', `/api/admin/projects/${id}/users/${owner.id}/roles`, { body: { roles: [5] } })).status).toBe(400)
  })

  it('answer 400 for a role that is not a project role or an unknown user, 403 for a Member', async () => {
    const id = await shop()
    expect((await t.call('PUT', `/api/admin/projects/${id}/users/${member.id}/roles`, { body: { roles: [2] } })).status).toBe(400)
    expect((await t.call('PUT', `/api/admin/projects/${id}/users/9999/roles`, { body: { roles: [5] } })).status).toBe(400)
    expect((await member.call('PUT', `/api/admin/projects/${id}/users/${member.id}/roles`, { body: { roles: [4] } })).status).toBe(403)
    expect((await t.call('PUT', `/api/admin/projects/${id}/users/abc/roles`, { body: { roles: [5] } })).status).toBe(400)
    expect((await t.call('DELETE', `/api/admin/projects/${id}/users/abc/roles`)).status).toBe(400)
    expect((await t.call('PUT', `/api/admin/projects/nope/users/${member.id}/roles`, { body: { roles: [5] } })).status).toBe(404)
    expect((await member.call('DELETE', `/api/admin/projects/${id}/users/${owner.id}/roles`)).status).toBe(403)
  })
})
