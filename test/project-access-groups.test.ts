import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { grantHelpers, MEMBER, OWNER } from './helpers/grants.js'
import { createProject, fresh, ok } from './helpers/factories.js'
import type { TestUser } from './helpers/users.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const { user, createRole, createGroup } = grantHelpers(() => t)

const access = async (project: string) => (await ok(t, 'GET', `/api/admin/projects/${project}/access`)).body
const events = (project: string, type: string) => t.query<{ data: any; pre_data: any; created_by: string }>('select data, pre_data, created_by from events where project = $1 and type = $2 order by id', [project, type])

describe('groups in a project', () => {
  it('get roles with POST …/access, and GET …/access shows them with their members', async () => {
    const ann = await user()
    const group = await createGroup([ann])
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [MEMBER, OWNER], users: [], groups: [group] })
    expect(await events(project, 'project-access-added')).toEqual([
      expect.objectContaining({ data: { roles: [{ roleId: OWNER, groupIds: [group], userIds: [] }, { roleId: MEMBER, groupIds: [group], userIds: [] }] } }),
    ])
    const { groups, users } = await access(project)
    expect(users).toEqual([])
    expect(groups).toEqual([expect.objectContaining({ id: group, roles: [OWNER, MEMBER], users: [expect.objectContaining({ user: expect.objectContaining({ id: ann.id }) })], addedAt: expect.any(String) })])
  })

  it('have their roles set and taken with PUT and DELETE …/groups/:groupId/roles', async () => {
    const group = await createGroup()
    const project = await createProject(t)
    // Another owner, so that the group may give the role up.
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [OWNER], users: [(await user()).id] })
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [MEMBER], users: [], groups: [group] })
    await ok(t, 'PUT', `/api/admin/projects/${project}/groups/${group}/roles`, { roles: [OWNER, MEMBER] })
    expect(await events(project, 'project-access-group-roles-updated')).toEqual([expect.objectContaining({ data: { roles: [OWNER, MEMBER], groupId: group }, pre_data: { roles: [MEMBER], groupId: group } })])
    await ok(t, 'DELETE', `/api/admin/projects/${project}/groups/${group}/roles`)
    expect(await events(project, 'project-access-group-roles-deleted')).toEqual([expect.objectContaining({ data: null, pre_data: { roles: [OWNER, MEMBER], groupId: group } })])
    expect((await access(project)).groups).toEqual([])
    expect((await t.call('DELETE', `/api/admin/projects/${project}/groups/${group}/roles`)).status).toBe(404)
    expect((await t.call('PUT', `/api/admin/projects/${project}/groups/999999/roles`, { body: { roles: [MEMBER] } })).status).toBe(400)
  })

  it('count as owners: the last user owner may leave while a group owns the project, not the other way round', async () => {
    const olga = await user()
    const group = await createGroup()
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [OWNER], users: [olga.id], groups: [group] })
    expect((await t.call('DELETE', `/api/admin/projects/${project}/users/${olga.id}/roles`)).status).toBe(200)
    const last = await t.call('DELETE', `/api/admin/projects/${project}/groups/${group}/roles`)
    expect(last.status).toBe(400)
    expect(last.body.message).toContain('at least one owner')
  })
})

describe('the project overview', () => {
  it('counts the members of the groups holding a role there, and sees a group’s members change', async () => {
    const [ann, bob] = [await user(), await user()]
    const project = await createProject(t)
    const group = await createGroup([ann, bob])
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [MEMBER], users: [ann.id], groups: [group] })
    const members = async () => (await ok(t, 'GET', `/api/admin/projects/${project}`)).body.members
    expect(await members()).toBe(2)
    await ok(t, 'PUT', `/api/admin/groups/${group}`, { name: fresh('team'), users: [{ user: { id: bob.id } }, { user: { id: (await user()).id } }] })
    expect(await members()).toBe(3)
  })
})

describe('PUT /api/admin/projects/:projectId/access', () => {
  it('makes the access exactly the one given, recording project-access-updated with before and after', async () => {
    const [ann, bob] = [await user(), await user()]
    const group = await createGroup()
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [OWNER], users: [ann.id] })
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [MEMBER], users: [bob.id] })
    await ok(t, 'PUT', `/api/admin/projects/${project}/access`, { roles: [{ id: OWNER, users: [bob.id], groups: [group] }, { id: MEMBER, users: [bob.id] }] })
    const after = await access(project)
    expect(after.users.map((u: { id: number; roles: number[] }) => [u.id, u.roles])).toEqual([[bob.id, [OWNER, MEMBER]]])
    expect(after.groups.map((g: { id: number; roles: number[] }) => [g.id, g.roles])).toEqual([[group, [OWNER]]])
    expect(await events(project, 'project-access-updated')).toEqual([
      expect.objectContaining({
        pre_data: { roles: [{ roleId: OWNER, userIds: [ann.id], groupIds: [] }, { roleId: MEMBER, userIds: [bob.id], groupIds: [] }] },
        data: { roles: [{ roleId: OWNER, userIds: [bob.id], groupIds: [group] }, { roleId: MEMBER, userIds: [bob.id], groupIds: [] }] },
      }),
    ])
  })

  it('refuses to leave no owner where there was one, and unknown roles, users and groups', async () => {
    const ann = await user()
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [OWNER], users: [ann.id] })
    for (const roles of [[{ id: MEMBER, users: [ann.id] }], [{ id: 1, users: [ann.id] }], [{ id: OWNER, users: [999999] }], [{ id: OWNER, groups: [999999] }]]) {
      const res = await t.call('PUT', `/api/admin/projects/${project}/access`, { body: { roles } })
      expect(res.status, JSON.stringify(roles)).toBe(400)
    }
    expect((await access(project)).users.map((u: { roles: number[] }) => u.roles)).toEqual([[OWNER]])
    expect(await events(project, 'project-access-updated')).toEqual([])
  })
})

describe("Unleash's older routes for one role", () => {
  it('POST …/role/:roleId/access gives one role to users and groups, recording project-access-added as Unleash did', async () => {
    const ann = await user()
    const group = await createGroup()
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/role/${MEMBER}/access`, { users: [{ id: ann.id }], groups: [{ id: group }] })
    expect(await events(project, 'project-access-added')).toEqual([expect.objectContaining({ data: { roles: { roleId: MEMBER, groupIds: [group], userIds: [ann.id] } } })])
    expect((await t.call('POST', `/api/admin/projects/${project}/role/1/access`, { body: { users: [{ id: ann.id }], groups: [] } })).status).toBe(400)
  })

  it('give, change and take one role of a user, each with its event', async () => {
    const ann = await user()
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [OWNER], users: [(await user()).id] })
    const path = (role: number) => `/api/admin/projects/${project}/users/${ann.id}/roles/${role}`
    await ok(t, 'POST', path(MEMBER))
    expect((await t.call('POST', path(MEMBER))).status).toBe(409)
    await ok(t, 'PUT', path(OWNER))
    await ok(t, 'PUT', path(OWNER))
    await ok(t, 'DELETE', path(OWNER))
    expect((await t.call('DELETE', path(OWNER))).status).toBe(404)
    expect((await events(project, 'project-user-added')).map((e) => e.data)).toEqual([{ userId: ann.id, roleId: MEMBER, roleName: 'Member' }])
    expect((await events(project, 'project-user-role-changed')).map((e) => [e.pre_data, e.data])).toEqual([
      [{ userId: ann.id, roleId: MEMBER, roleName: 'Member', roles: [MEMBER] }, { userId: ann.id, roleId: OWNER, roleName: 'Owner' }],
    ])
    expect((await events(project, 'project-user-removed')).map((e) => e.pre_data)).toEqual([{ userId: ann.id, roleId: OWNER, roleName: 'Owner' }])
  })

  it('give, change and take one role of a group, each with its event', async () => {
    const group = await createGroup()
    const project = await createProject(t)
    const path = (role: number) => `/api/admin/projects/${project}/groups/${group}/roles/${role}`
    await ok(t, 'POST', path(MEMBER))
    await ok(t, 'PUT', path(OWNER))
    expect((await t.call('PUT', `/api/admin/projects/${project}/groups/${await createGroup()}/roles/${OWNER}`)).status).toBe(404)
    await ok(t, 'POST', path(MEMBER))
    await ok(t, 'DELETE', path(MEMBER))
    expect((await events(project, 'project-group-added')).map((e) => e.data)).toEqual([
      { groupId: group, projectId: project, roleId: MEMBER, roleName: 'Member' },
      { groupId: group, projectId: project, roleId: MEMBER, roleName: 'Member' },
    ])
    expect((await events(project, 'project-group-role-changed')).map((e) => e.data)).toEqual([{ groupId: group, projectId: project, roleId: OWNER, roleName: 'Owner' }])
    expect((await events(project, 'project-group-removed')).map((e) => e.pre_data)).toEqual([{ groupId: group, projectId: project, roleId: MEMBER, roleName: 'Member' }])
    expect((await access(project)).groups.map((g: { roles: number[] }) => g.roles)).toEqual([[OWNER]])
  })
})

describe('private projects', () => {
  it('are visible to the members of a group holding a role there, and hidden again once they leave it', async () => {
    const viewer = await user('Viewer')
    const project = await createProject(t, { mode: 'private' })
    const group = await createGroup([viewer])
    const listed = async () => (await ok(viewer, 'GET', '/api/admin/projects')).body.projects.map((p: { id: string }) => p.id)
    expect((await viewer.call('GET', `/api/admin/projects/${project}`)).status).toBe(404)
    expect(await listed()).not.toContain(project)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [MEMBER], users: [], groups: [group] })
    expect((await viewer.call('GET', `/api/admin/projects/${project}`)).status).toBe(200)
    expect(await listed()).toContain(project)
    await ok(t, 'PUT', `/api/admin/groups/${group}`, { name: fresh('team'), users: [] })
    expect((await viewer.call('GET', `/api/admin/projects/${project}`)).status).toBe(404)
    expect(await listed()).not.toContain(project)
  })
})

describe('nobody gives more than they hold', () => {
  /** A project where a fresh Viewer holds a custom role able to manage access and create flags, and switch them in development only. */
  async function manager() {
    const role = await createRole([{ name: 'UPDATE_PROJECT' }, { name: 'CREATE_FEATURE' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' }])
    const project = await createProject(t)
    const who = await user('Viewer')
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [role], users: [who.id] })
    return { project, who, role }
  }

  it('a custom role holder gives roles made of what they hold, and no others, whichever route they take', async () => {
    const { project, who } = await manager()
    const target = await user('Viewer')
    const group = await createGroup()
    const within = await createRole([{ name: 'CREATE_FEATURE' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' }])
    const production = await createRole([{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }])
    const everywhere = await createRole([{ name: 'UPDATE_FEATURE_ENVIRONMENT' }])
    expect((await who.call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [within], users: [target.id] } })).status).toBe(200)
    const attempts: [string, string, unknown][] = [
      ['POST', `/api/admin/projects/${project}/access`, { roles: [MEMBER], users: [target.id] }],
      ['POST', `/api/admin/projects/${project}/access`, { roles: [OWNER], users: [who.id] }],
      ['POST', `/api/admin/projects/${project}/access`, { roles: [production], users: [target.id] }],
      ['POST', `/api/admin/projects/${project}/access`, { roles: [everywhere], users: [], groups: [group] }],
      ['PUT', `/api/admin/projects/${project}/users/${who.id}/roles`, { roles: [OWNER] }],
      ['PUT', `/api/admin/projects/${project}/groups/${group}/roles`, { roles: [MEMBER] }],
      ['PUT', `/api/admin/projects/${project}/access`, { roles: [{ id: OWNER, users: [who.id] }] }],
      ['POST', `/api/admin/projects/${project}/role/${OWNER}/access`, { users: [{ id: who.id }], groups: [] }],
      ['POST', `/api/admin/projects/${project}/users/${target.id}/roles/${MEMBER}`, undefined],
      ['PUT', `/api/admin/projects/${project}/users/${target.id}/roles/${OWNER}`, undefined],
    ]
    for (const [method, path, body] of attempts) {
      const res = await who.call(method, path, { body })
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`).toBe(403)
      expect(res.body.name).toBe('NoAccessError')
    }
    const refused = await who.call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [production], users: [target.id] } })
    expect(refused.body.message).toContain('permission=UPDATE_FEATURE_ENVIRONMENT defined for environment=production')
    expect((await access(project)).users.find((u: { id: number }) => u.id === target.id).roles).toEqual([within])
  })

  it('the project’s Owner gives Owner, Member and custom roles made of what Owner holds, not one granting what Owner lacks', async () => {
    const owner = await user('Viewer')
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [OWNER], users: [owner.id] })
    const skipper = await createRole([{ name: 'SKIP_CHANGE_REQUEST', environment: 'production' }])
    const switcher = await createRole([{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }, { name: 'UPDATE_PROJECT' }])
    const target = await user('Viewer')
    expect((await owner.call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [switcher, OWNER], users: [target.id] } })).status).toBe(200)
    const refused = await owner.call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [skipper, OWNER], users: [target.id] } })
    expect(refused.status).toBe(403)
    expect(refused.body.message).toContain('permission=SKIP_CHANGE_REQUEST defined for environment=production')
  })

  it('an Owner through a group manages the project’s access as one', async () => {
    const viewer = await user('Viewer')
    const group = await createGroup([viewer])
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [OWNER], users: [], groups: [group] })
    const target = await user('Viewer')
    expect((await viewer.call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [OWNER], users: [target.id] } })).status).toBe(200)
  })

  it('an Editor who does not own a project gives Member there, not Owner', async () => {
    const editor = await user('Editor')
    const project = await createProject(t)
    const target = await user('Viewer')
    expect((await editor.call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [MEMBER], users: [target.id] } })).status).toBe(200)
    const owner = await editor.call('PUT', `/api/admin/projects/${project}/users/${target.id}/roles`, { body: { roles: [OWNER] } })
    expect(owner.status).toBe(403)
    expect(owner.body.message).toContain('permission=DELETE_PROJECT')
  })

  it('a Member, without UPDATE_PROJECT, changes nobody’s roles', async () => {
    const member = await user('Viewer')
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [MEMBER], users: [member.id] })
    const res = await member.call('POST', `/api/admin/projects/${project}/users/${member.id}/roles/${OWNER}`)
    expect(res.status).toBe(403)
    expect(res.body.message).toContain(`permission=UPDATE_PROJECT in project=${project}`)
  })
})

describe('what a project role gives, through a group', () => {
  let viewer: TestUser
  let group: number
  let project: string
  beforeAll(async () => {
    viewer = await user('Viewer')
    group = await createGroup([viewer])
    project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [MEMBER], users: [], groups: [group] })
  })

  it('holds until the group loses the role, then is gone at the next request', async () => {
    expect((await viewer.call('POST', `/api/admin/projects/${project}/features`, { body: { name: fresh('flag') } })).status).toBe(201)
    await ok(t, 'DELETE', `/api/admin/projects/${project}/groups/${group}/roles`)
    expect((await viewer.call('POST', `/api/admin/projects/${project}/features`, { body: { name: fresh('flag') } })).status).toBe(403)
  })
})
