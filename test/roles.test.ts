import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createEnvironment, createFlag, createProject, fresh, ok } from './helpers/factories.js'
import { createPat, createSignedInUser, type TestUser } from './helpers/users.js'
import { PERMISSION_INFO } from '../src/core/permissions.js'

let t: TestApp
let editor: TestUser
beforeAll(async () => {
  t = await createTestApp()
  editor = await createSignedInUser(t, 'eddie', 'Editor')
})
afterAll(() => t.close())

const lastEvent = async (type: string) =>
  (await t.query<{ data: any; pre_data: any; created_by: string }>('select data, pre_data, created_by from events where type = $1 order by id desc limit 1', [type]))[0]

/** A fresh custom role (a project role unless `type` says otherwise). */
async function createRole(permissions: unknown[], type?: 'custom' | 'root-custom') {
  const res = await ok(t, 'POST', '/api/admin/roles', { name: fresh('role'), ...(type ? { type } : {}), permissions })
  return res.body.roles as { id: number; name: string; type: string }
}

/** A fresh signed-in user with the root role given. */
const user = (rootRole: string | number = 'Viewer') => createSignedInUser(t, fresh('user'), rootRole)

describe('GET /api/admin/permissions', () => {
  it('lists every permission Flagpost checks: root and project ones, and the environment ones for each environment', async () => {
    const staging = (await createEnvironment(t)).name as string
    const res = await ok(t, 'GET', '/api/admin/permissions')
    const { root, project, environments } = res.body.permissions
    const listed = [...root, ...project, ...environments[0].permissions].map((p: { name: string }) => p.name).sort()
    expect(listed).toEqual(Object.keys(PERMISSION_INFO).sort())
    expect(root).toContainEqual({ id: 1, name: 'ADMIN', displayName: 'Admin', type: 'root' })
    expect(project).toContainEqual(expect.objectContaining({ name: 'CREATE_FEATURE', type: 'project' }))
    const stagingPermissions = environments.find((e: { name: string }) => e.name === staging).permissions
    expect(stagingPermissions).toContainEqual(expect.objectContaining({ name: 'UPDATE_FEATURE_ENVIRONMENT', type: 'environment', environment: staging }))
    expect(environments.map((e: { name: string }) => e.name)).toEqual(expect.arrayContaining(['development', 'production', staging]))
  })

  it('answers any signed-in user, and nobody without credentials', async () => {
    expect((await (await user()).call('GET', '/api/admin/permissions')).status).toBe(200)
    expect((await t.call('GET', '/api/admin/permissions', { token: null })).status).toBe(401)
  })
})

describe('GET /api/admin/roles', () => {
  it('lists the built-in roles and the custom ones', async () => {
    const custom = await createRole([{ name: 'CREATE_FEATURE' }])
    const { body } = await ok(t, 'GET', '/api/admin/roles')
    expect(body.version).toBe(1)
    expect(body.roles.slice(0, 5).map((r: { name: string; type: string }) => `${r.type}:${r.name}`)).toEqual(['root:Admin', 'root:Editor', 'root:Viewer', 'project:Owner', 'project:Member'])
    expect(body.roles).toContainEqual({ id: custom.id, type: 'custom', name: custom.name, description: '' })
  })

  it('gives a role with its permissions: a built-in one as Flagpost grants it', async () => {
    const editorRole = (await ok(t, 'GET', '/api/admin/roles/2')).body
    expect(editorRole).toMatchObject({ id: 2, name: 'Editor', type: 'root' })
    expect(editorRole.permissions.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['CREATE_PROJECT', 'UPDATE_FEATURE']))
    expect((await ok(t, 'GET', '/api/admin/roles/1')).body.permissions).toEqual([{ id: 1, name: 'ADMIN', displayName: 'Admin', type: 'root' }])
    expect((await t.call('GET', '/api/admin/roles/999999')).status).toBe(404)
    expect((await t.call('GET', '/api/admin/roles/abc')).status).toBe(400)
  })
})

describe('POST /api/admin/roles', () => {
  it('creates a custom project role with an environment permission, records role-created and answers its location', async () => {
    const name = fresh('releaser')
    const res = await t.call('POST', '/api/admin/roles', { body: { name, description: 'Ships to production', permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }, { name: 'CREATE_FEATURE' }] } })
    expect(res.status, res.text).toBe(201)
    const id = res.body.roles.id
    expect(res.body).toEqual({ version: 1, roles: { id, type: 'custom', name, description: 'Ships to production' } })
    expect(res.headers.get('location')).toBe(`/api/admin/roles/${id}`)
    expect((await ok(t, 'GET', `/api/admin/roles/${id}`)).body.permissions).toEqual([
      expect.objectContaining({ name: 'CREATE_FEATURE', type: 'project' }),
      expect.objectContaining({ name: 'UPDATE_FEATURE_ENVIRONMENT', type: 'environment', environment: 'production' }),
    ])
    expect(await lastEvent('role-created')).toEqual({
      created_by: 'test-admin',
      pre_data: null,
      data: { id, name, description: 'Ships to production', type: 'custom', permissions: [{ name: 'CREATE_FEATURE' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }] },
    })
  })

  it('takes permissions by their number too, and an empty environment as every one', async () => {
    const { body: list } = await ok(t, 'GET', '/api/admin/permissions')
    const createFeature = list.permissions.project.find((p: { name: string }) => p.name === 'CREATE_FEATURE').id
    const role = await createRole([{ id: createFeature }, { name: 'UPDATE_FEATURE_STRATEGY', environment: '' }])
    expect((await ok(t, 'GET', `/api/admin/roles/${role.id}`)).body.permissions.map((p: { name: string; environment?: string }) => [p.name, p.environment])).toEqual([
      ['CREATE_FEATURE', undefined],
      ['UPDATE_FEATURE_STRATEGY', undefined],
    ])
  })

  it.each([
    ['an unknown permission', { permissions: [{ name: 'FLY' }] }, "don't exist: FLY"],
    ['an unknown permission number', { permissions: [{ id: 9999 }] }, 'permission with ID: 9999'],
    ['a root permission in a project role', { permissions: [{ name: 'CREATE_PROJECT' }] }, 'CREATE_PROJECT is a root permission'],
    ['a project permission in a root role', { type: 'root-custom', permissions: [{ name: 'UPDATE_FEATURE' }] }, 'UPDATE_FEATURE is a project permission'],
    ['an environment on a project permission', { permissions: [{ name: 'CREATE_FEATURE', environment: 'production' }] }, 'takes no environment'],
    ['an unknown environment', { permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'mars' }] }, 'no environment mars'],
    ['an empty name', { name: '  ' }, 'name'],
    ['an unknown type', { type: 'root' }, 'type'],
  ])('answers 400 for %s, writing nothing', async (_, body, message) => {
    const name = fresh('bad')
    const res = await t.call('POST', '/api/admin/roles', { body: { name, ...body } })
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.text).toContain(message)
    expect(await t.query('select id from roles where name = $1', [name])).toEqual([])
  })

  it('answers 409 for a name another role has (a built-in one too)', async () => {
    const role = await createRole([])
    for (const name of [role.name, 'Editor']) {
      const res = await t.call('POST', '/api/admin/roles', { body: { name } })
      expect(res.status).toBe(409)
      expect(res.body).toMatchObject({ name: 'NameExistsError', message: `There already exists a role with the name ${name}` })
    }
  })

  it('is for admins only: an Editor is refused', async () => {
    const res = await editor.call('POST', '/api/admin/roles', { body: { name: fresh('mine'), permissions: [] } })
    expect(res.status).toBe(403)
    expect(res.body.message).toContain('permission=ADMIN')
  })
})

describe('POST /api/admin/roles/validate', () => {
  it('accepts a free name and valid permissions, refuses a taken name (409) or bad permissions (400), and writes nothing', async () => {
    const role = await createRole([])
    const before = (await t.query<{ n: number }>('select count(*)::int as n from roles'))[0]!.n
    expect((await t.call('POST', '/api/admin/roles/validate', { body: { name: fresh('free'), permissions: [{ name: 'CREATE_FEATURE' }] } })).status).toBe(200)
    expect((await t.call('POST', '/api/admin/roles/validate', { body: { name: role.name } })).status).toBe(409)
    expect((await t.call('POST', '/api/admin/roles/validate', { body: { name: fresh('free'), type: 'root-custom', permissions: [{ name: 'CREATE_FEATURE' }] } })).status).toBe(400)
    expect((await t.query<{ n: number }>('select count(*)::int as n from roles'))[0]!.n).toBe(before)
  })
})

describe('PUT /api/admin/roles/:roleId', () => {
  it('replaces the name, description and permissions, with role-updated holding both', async () => {
    const role = await createRole([{ name: 'CREATE_FEATURE' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' }])
    const name = fresh('renamed')
    const res = await t.call('PUT', `/api/admin/roles/${role.id}`, { body: { name, description: 'now', permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }, { name: 'CREATE_FEATURE' }] } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ version: 1, roles: { id: role.id, type: 'custom', name, description: 'now' } })
    expect(await lastEvent('role-updated')).toMatchObject({
      pre_data: { id: role.id, name: role.name, permissions: [{ name: 'CREATE_FEATURE' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' }] },
      data: { id: role.id, name, description: 'now', permissions: [{ name: 'CREATE_FEATURE' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }] },
    })
    expect(await t.query('select permission, environment from role_permissions where role_id = $1 order by permission', [role.id])).toEqual([
      { permission: 'CREATE_FEATURE', environment: null },
      { permission: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' },
    ])
  })

  it('keeps the permissions when none are given', async () => {
    const role = await createRole([{ name: 'CREATE_FEATURE' }])
    await ok(t, 'PUT', `/api/admin/roles/${role.id}`, { name: fresh('kept') })
    expect((await ok(t, 'GET', `/api/admin/roles/${role.id}`)).body.permissions.map((p: { name: string }) => p.name)).toEqual(['CREATE_FEATURE'])
  })

  it('refuses built-in roles (403), unknown ones (404) and a taken name (409), writing nothing', async () => {
    const role = await createRole([])
    const other = await createRole([])
    const before = (await t.query<{ n: number }>("select count(*)::int as n from events where type = 'role-updated'"))[0]!.n
    for (const id of [1, 2, 3, 4, 5]) {
      const res = await t.call('PUT', `/api/admin/roles/${id}`, { body: { name: fresh('mine') } })
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining('built in roles') })
    }
    expect((await t.call('PUT', '/api/admin/roles/999999', { body: { name: fresh('x') } })).status).toBe(404)
    expect((await t.call('PUT', `/api/admin/roles/${role.id}`, { body: { name: other.name } })).status).toBe(409)
    expect((await t.query<{ n: number }>("select count(*)::int as n from events where type = 'role-updated'"))[0]!.n).toBe(before)
    expect((await ok(t, 'GET', '/api/admin/roles/4')).body.name).toBe('Owner')
  })
})

describe("PUT /api/admin/roles/:roleId: a custom role's type (as Unleash allows)", () => {
  const typeChanges = async () => (await t.query<{ n: number }>("select count(*)::int as n from events where type = 'role-updated' and data->>'type' <> pre_data->>'type'"))[0]!.n

  it('changes an unused role to the other type, with permissions of that type, recording both in role-updated', async () => {
    const role = await createRole([{ name: 'CREATE_FEATURE' }])
    const res = await t.call('PUT', `/api/admin/roles/${role.id}`, { body: { name: role.name, type: 'root-custom', permissions: [{ name: 'CREATE_SEGMENT' }] } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.roles).toMatchObject({ id: role.id, type: 'root-custom' })
    expect((await ok(t, 'GET', `/api/admin/roles/${role.id}`)).body).toMatchObject({ type: 'root-custom', permissions: [expect.objectContaining({ name: 'CREATE_SEGMENT', type: 'root' })] })
    expect(await lastEvent('role-updated')).toMatchObject({
      data: { id: role.id, type: 'root-custom', permissions: [{ name: 'CREATE_SEGMENT' }] },
      pre_data: { id: role.id, type: 'custom', permissions: [{ name: 'CREATE_FEATURE' }] },
    })
    // Now a root role: it can be given as one.
    const someone = await user(role.id)
    expect((await someone.call('POST', '/api/admin/segments', { body: { name: fresh('seg'), constraints: [] } })).status).toBe(201)
    // Back to a project role while held as a root role: 409.
    const back = await t.call('PUT', `/api/admin/roles/${role.id}`, { body: { name: role.name, type: 'custom', permissions: [] } })
    expect(back.status).toBe(409)
  })

  it('keeps the type when none is given, and refuses a new type whose kind the kept permissions do not fit (400)', async () => {
    const role = await createRole([{ name: 'UPDATE_FEATURE' }])
    expect((await ok(t, 'PUT', `/api/admin/roles/${role.id}`, { name: role.name, description: 'same kind' })).body.roles.type).toBe('custom')
    const before = await typeChanges()
    const res = await t.call('PUT', `/api/admin/roles/${role.id}`, { body: { name: role.name, type: 'root-custom' } })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('UPDATE_FEATURE is a project permission')
    expect(await typeChanges()).toBe(before)
    // A role with no permissions changes type with nothing else said.
    const empty = await createRole([])
    expect((await ok(t, 'PUT', `/api/admin/roles/${empty.id}`, { name: empty.name, type: 'root-custom' })).body.roles.type).toBe('root-custom')
  })

  it('refuses with 409, naming them, while users, service accounts, groups or invite links hold a root role, or users and groups hold a project role; writes nothing', async () => {
    const rootRole = await createRole([{ name: 'CREATE_SEGMENT' }], 'root-custom')
    await user(rootRole.id)
    await ok(t, 'POST', '/api/admin/service-account', { username: fresh('bot'), name: 'Bot', rootRole: rootRole.id })
    await ok(t, 'POST', '/api/admin/groups', { name: fresh('team'), rootRole: rootRole.id })
    await ok(t, 'POST', '/api/admin/invite-link/tokens', { name: fresh('invite'), expiresAt: new Date(Date.now() + 86_400_000).toISOString(), role: rootRole.id })
    const before = await typeChanges()
    const held = await t.call('PUT', `/api/admin/roles/${rootRole.id}`, { body: { name: rootRole.name, type: 'custom', permissions: [{ name: 'CREATE_FEATURE' }] } })
    expect(held.status).toBe(409)
    expect(held.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining('the root role of 1 user and 1 service account and 1 group and 1 invite link') })
    expect(held.body.message).toContain('before changing its type (root-custom to custom)')

    const projectRole = await createRole([{ name: 'CREATE_FEATURE' }])
    const project = await createProject(t)
    const member = await user()
    const bot = (await ok(t, 'POST', '/api/admin/service-account', { username: fresh('bot'), name: 'Bot', rootRole: 'Viewer' })).body.id
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [projectRole.id], users: [member.id, bot] })
    const inProject = await t.call('PUT', `/api/admin/roles/${projectRole.id}`, { body: { name: projectRole.name, type: 'root-custom', permissions: [{ name: 'CREATE_SEGMENT' }] } })
    expect(inProject.status).toBe(409)
    expect(inProject.body.message).toContain(`held in project ${project} by 1 user and 1 service account`)
    expect((await ok(t, 'GET', `/api/admin/projects/roles/${projectRole.id}/access`)).body.projects).toEqual([{ project, role: projectRole.id, userCount: 1, groupCount: 0, serviceAccountCount: 1 }])
    expect(await typeChanges()).toBe(before)
    // Renaming a role in use is still fine.
    expect((await t.call('PUT', `/api/admin/roles/${projectRole.id}`, { body: { name: fresh('renamed') } })).status).toBe(200)
  })

  it('a deleted user whose root role it was gets Viewer when it becomes a project role', async () => {
    const role = await createRole([], 'root-custom')
    const gone = await user(role.id)
    await ok(t, 'DELETE', `/api/admin/user-admin/${gone.id}`)
    await ok(t, 'PUT', `/api/admin/roles/${role.id}`, { name: role.name, type: 'custom' })
    expect(await t.query('select root_role_id from users where id = $1', [gone.id])).toEqual([{ root_role_id: 3 }])
  })
})

describe('DELETE /api/admin/roles/:roleId', () => {
  it('deletes an unused custom role with role-deleted', async () => {
    const role = await createRole([{ name: 'CREATE_FEATURE' }])
    expect((await t.call('DELETE', `/api/admin/roles/${role.id}`)).status).toBe(200)
    expect(await lastEvent('role-deleted')).toMatchObject({ data: null, pre_data: { id: role.id, name: role.name, type: 'custom', permissions: [{ name: 'CREATE_FEATURE' }] } })
    expect((await t.call('GET', `/api/admin/roles/${role.id}`)).status).toBe(404)
    expect(await t.query('select * from role_permissions where role_id = $1', [role.id])).toEqual([])
  })

  it('refuses with 409 while the role is held, saying where, and then deletes it once nobody holds it', async () => {
    const rootRole = await createRole([{ name: 'CREATE_SEGMENT' }], 'root-custom')
    const someone = await user(rootRole.id)
    const group = (await ok(t, 'POST', '/api/admin/groups', { name: fresh('team'), rootRole: rootRole.id })).body.id
    const held = await t.call('DELETE', `/api/admin/roles/${rootRole.id}`)
    expect(held.status).toBe(409)
    expect(held.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining('the root role of 1 user and 1 group') })

    const projectRole = await createRole([{ name: 'CREATE_FEATURE' }])
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [projectRole.id], users: [someone.id], groups: [group] })
    const inProject = await t.call('DELETE', `/api/admin/roles/${projectRole.id}`)
    expect(inProject.status).toBe(409)
    expect(inProject.body.message).toContain(`held in project ${project} by 1 user and 1 group`)
    expect((await ok(t, 'GET', `/api/admin/projects/roles/${projectRole.id}/access`)).body).toEqual({ projects: [{ project, role: projectRole.id, userCount: 1, groupCount: 1, serviceAccountCount: 0 }] })

    await ok(t, 'PUT', `/api/admin/projects/${project}/access`, { roles: [] })
    expect((await t.call('DELETE', `/api/admin/roles/${projectRole.id}`)).status).toBe(200)
    // A deleted user's root role does not keep the role: the user's row stays, with the Viewer role.
    await ok(t, 'DELETE', `/api/admin/user-admin/${someone.id}`)
    await ok(t, 'PUT', `/api/admin/groups/${group}`, { name: fresh('team'), rootRole: null })
    expect((await t.call('DELETE', `/api/admin/roles/${rootRole.id}`)).status).toBe(200)
    expect(await t.query('select root_role_id from users where id = $1', [someone.id])).toEqual([{ root_role_id: 3 }])
  })

  it('is refused while a usable invite link gives the role (naming it); links switched off or expired are moved to Viewer, each with its event, and the role goes', async () => {
    let ahead = 0
    const clocked = await createTestApp({ now: () => new Date(Date.now() + ahead) })
    try {
      const role = (await ok(clocked, 'POST', '/api/admin/roles', { name: fresh('role'), type: 'root-custom', permissions: [{ name: 'CREATE_SEGMENT' }] })).body.roles as { id: number; name: string; type: string; description: string }
      const link = async (name: string, days: number) =>
        (await ok(clocked, 'POST', '/api/admin/invite-link/tokens', { name, expiresAt: new Date(Date.now() + days * 86_400_000).toISOString(), role: role.id })).body as { secret: string }
      const switchedOff = await link('switched off', 20)
      const usable = await link('still usable', 20)
      await link('soon expired', 1)
      await ok(clocked, 'PUT', `/api/admin/invite-link/tokens/${switchedOff.secret}`, { enabled: false })
      const linksOf = () => clocked.query<{ name: string; role_id: number }>('select name, role_id from public_signup_tokens order by name')
      const linkEvents = () => clocked.query<{ data: any; pre_data: any; created_by: string }>(`select data, pre_data, created_by from events where type = 'public-signup-token-updated' order by id`)
      ahead = 2 * 86_400_000 // 'soon expired' has expired; 'still usable' has not.
      const admin = await createSignedInUser(clocked, fresh('admin'), 'Admin')

      const blocked = await admin.call('DELETE', `/api/admin/roles/${role.id}`)
      expect(blocked.status, blocked.text).toBe(409)
      expect(blocked.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining('the root role of 1 invite link ("still usable")') })
      // Nothing moved, nothing recorded.
      expect((await linksOf()).map((l) => l.role_id)).toEqual([role.id, role.id, role.id])
      const eventsBefore = (await linkEvents()).length

      await ok(clocked, 'PUT', `/api/admin/invite-link/tokens/${usable.secret}`, { enabled: false })
      const deleted = await admin.call('DELETE', `/api/admin/roles/${role.id}`)
      expect(deleted.status, deleted.text).toBe(200)
      expect((await clocked.call('GET', `/api/admin/roles/${role.id}`)).status).toBe(404)
      expect(await linksOf()).toEqual([
        { name: 'soon expired', role_id: 3 },
        { name: 'still usable', role_id: 3 },
        { name: 'switched off', role_id: 3 },
      ])
      const moved = (await linkEvents()).slice(eventsBefore + 1)
      expect(moved.map((e) => e.pre_data.name).sort()).toEqual(['soon expired', 'still usable', 'switched off'])
      const asRole = (r: { id: number; name: string; type: string; description: string }) => ({ id: r.id, name: r.name, type: r.type, description: r.description })
      const viewer = (await ok(clocked, 'GET', '/api/admin/roles/3')).body
      for (const event of moved) {
        expect(event.created_by).toBe(admin.username)
        expect(event.pre_data.role).toEqual(asRole(role))
        expect(event.data).toEqual({ ...event.pre_data, role: asRole(viewer) })
        expect(Object.keys(event.data).sort()).toEqual(['createdAt', 'createdBy', 'enabled', 'expiresAt', 'name', 'role', 'secret'])
      }
      // The links list with Viewer now.
      const listed = (await ok(clocked, 'GET', '/api/admin/invite-link/tokens')).body.tokens as { name: string; role: { name: string } }[]
      expect(listed.map((l) => l.role.name)).toEqual(['Viewer', 'Viewer', 'Viewer'])
    } finally {
      await clocked.close()
    }
  })

  it('refuses built-in roles (403) and unknown ones (404)', async () => {
    for (const id of [1, 2, 3, 4, 5]) expect((await t.call('DELETE', `/api/admin/roles/${id}`)).status).toBe(403)
    expect((await t.call('DELETE', '/api/admin/roles/999999')).status).toBe(404)
    expect((await ok(t, 'GET', '/api/admin/roles')).body.roles.slice(0, 5)).toHaveLength(5)
  })
})

describe('a custom root role', () => {
  it('can be given to a user by id, not by a custom project role’s id', async () => {
    const role = await createRole([{ name: 'CREATE_SEGMENT' }], 'root-custom')
    const created = await t.call('POST', '/api/admin/user-admin', { body: { username: fresh('segmenter'), rootRole: role.id } })
    expect(created.status, created.text).toBe(201)
    expect(created.body.rootRole).toBe(role.id)
    const projectRole = await createRole([])
    const refused = await t.call('POST', '/api/admin/user-admin', { body: { username: fresh('nope'), rootRole: projectRole.id } })
    expect(refused.status).toBe(400)
    expect((await t.call('PUT', `/api/admin/user-admin/${created.body.id}`, { body: { rootRole: projectRole.id } })).status).toBe(400)
    expect((await ok(t, 'GET', '/api/admin/user-admin')).body.rootRoles).toContainEqual(expect.objectContaining({ id: role.id, type: 'root-custom' }))
  })

  it('grants exactly its permissions, through a session and a personal access token, and a change of them holds at the next request', async () => {
    const role = await createRole([{ name: 'CREATE_SEGMENT' }], 'root-custom')
    const segmenter = await user(role.id)
    const pat = await createPat(segmenter)
    expect((await segmenter.call('POST', '/api/admin/segments', { body: { name: fresh('beta'), constraints: [] } })).status).toBe(201)
    expect((await t.call('POST', '/api/admin/segments', { token: pat, body: { name: fresh('beta'), constraints: [] } })).status).toBe(201)
    for (const refused of [
      await segmenter.call('POST', '/api/admin/projects', { body: { name: 'Mine' } }),
      await segmenter.call('POST', '/api/admin/context', { body: { name: fresh('tier') } }),
      await segmenter.call('POST', '/api/admin/user-admin', { body: { username: fresh('me2'), rootRole: 'Admin' } }),
      await segmenter.call('PUT', `/api/admin/user-admin/${segmenter.id}`, { body: { rootRole: 'Admin' } }),
      await segmenter.call('PUT', `/api/admin/roles/${role.id}`, { body: { name: role.name, permissions: [{ name: 'ADMIN' }] } }),
    ])
      expect(refused.status).toBe(403)

    await ok(t, 'PUT', `/api/admin/roles/${role.id}`, { name: role.name, permissions: [{ name: 'CREATE_CONTEXT_FIELD' }] })
    expect((await segmenter.call('POST', '/api/admin/segments', { body: { name: fresh('beta'), constraints: [] } })).status).toBe(403)
    expect((await segmenter.call('POST', '/api/admin/context', { body: { name: fresh('tier') } })).status).toBe(201)
    expect((await segmenter.call('GET', '/api/admin/user')).body.permissions).toEqual([{ permission: 'CREATE_CONTEXT_FIELD' }])
  })
})

describe('a custom project role', () => {
  it('lets a Viewer switch flags in the one environment it names, and in no other', async () => {
    const role = await createRole([{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' }])
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    const viewer = await user('Viewer')
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [role.id], users: [viewer.id] })
    const environment = (env: string) => `/api/admin/projects/${project}/features/${flag}/environments/${env}`
    expect((await viewer.call('POST', `${environment('development')}/on`)).status).toBe(200)
    const production = await viewer.call('POST', `${environment('production')}/on`)
    expect(production.status).toBe(403)
    expect(production.body.message).toBe(`You need permission=UPDATE_FEATURE_ENVIRONMENT defined for environment=production in project=${project} to perform this action`)
    // Holding a permission in one environment is not holding it in the project: a strategy needs its own permission.
    expect((await viewer.call('POST', `${environment('development')}/strategies`, { body: { name: 'default' } })).status).toBe(403)
    expect((await viewer.call('GET', '/api/admin/user')).body.permissions).toEqual([{ permission: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development', project }])
  })

  it('grants nothing outside its project', async () => {
    const role = await createRole([{ name: 'CREATE_FEATURE' }])
    const [mine, other] = [await createProject(t), await createProject(t)]
    const viewer = await user('Viewer')
    await ok(t, 'POST', `/api/admin/projects/${mine}/access`, { roles: [role.id], users: [viewer.id] })
    expect((await viewer.call('POST', `/api/admin/projects/${mine}/features`, { body: { name: fresh('flag') } })).status).toBe(201)
    expect((await viewer.call('POST', `/api/admin/projects/${other}/features`, { body: { name: fresh('flag') } })).status).toBe(403)
  })

  it('loses what a change of the role takes away at the next request', async () => {
    const role = await createRole([{ name: 'CREATE_FEATURE' }])
    const project = await createProject(t)
    const viewer = await user('Viewer')
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [role.id], users: [viewer.id] })
    expect((await viewer.call('POST', `/api/admin/projects/${project}/features`, { body: { name: fresh('flag') } })).status).toBe(201)
    await ok(t, 'PUT', `/api/admin/roles/${role.id}`, { name: role.name, permissions: [] })
    expect((await viewer.call('POST', `/api/admin/projects/${project}/features`, { body: { name: fresh('flag') } })).status).toBe(403)
  })
})
