import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { grantHelpers, MEMBER, OWNER } from './helpers/grants.js'
import { addToProject, createFlag, createProject, fresh, ok } from './helpers/factories.js'

/*
 * Nobody but an admin grants a permission they do not hold. A project Owner (root Viewer) holds every project
 * permission but SKIP_CHANGE_REQUEST; whatever route they take, they may not give themselves or anyone else a role
 * with it, and the routes that grant instance-wide (roles, groups, users, service accounts, invite links, action sets)
 * are the admin's alone.
 */

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const { user, createRole, createGroup } = grantHelpers(() => t)

const rolesOf = async (project: string) => {
  const { users, groups } = (await ok(t, 'GET', `/api/admin/projects/${project}/access`)).body
  return { users: users.map((u: any) => [u.id, u.roles]), groups: groups.map((g: any) => [g.id, g.roles]) }
}

function expectRefused(res: { status: number; body: any; text: string }, what: string) {
  expect(res.status, `${what}: ${res.text}`).toBe(403)
  expect(res.body).toMatchObject({ id: expect.any(String), name: 'NoAccessError', message: expect.any(String) })
}

/** A project requiring change requests in production, owned by a fresh root Viewer, with a flag off in production. */
async function ownedGuardedProject() {
  const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
  const owner = await user('Viewer')
  await addToProject(t, project, owner.id, 'Owner')
  const flag = (await createFlag(t, {}, project)).name as string
  return { project, owner, flag, P: `/api/admin/projects/${project}` }
}

describe('a project Owner gives only what the Owner role holds', () => {
  it('cannot give themselves SKIP_CHANGE_REQUEST and then switch production directly', async () => {
    const { project, owner, flag, P } = await ownedGuardedProject()
    const skipper = await createRole([{ name: 'SKIP_CHANGE_REQUEST', environment: 'production' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }])
    const res = await owner.call('POST', `${P}/access`, { body: { roles: [skipper], users: [owner.id] } })
    expectRefused(res, 'giving themselves the role')
    expect(res.body.message).toContain(`permission=SKIP_CHANGE_REQUEST defined for environment=production in project=${project}`)
    const on = await owner.call('POST', `${P}/features/${flag}/environments/production/on`)
    expect(on.status, on.text).toBe(403)
    expect(on.body.message).toContain('SKIP_CHANGE_REQUEST')
    const features = (await ok(t, 'GET', `${P}/features/${flag}`)).body
    expect(features.environments.find((e: any) => e.name === 'production').enabled).toBe(false)
  })

  it("GET …/access says which roles the caller may give there: an Owner not a role with a permission they lack, an admin every one", async () => {
    const { owner, P } = await ownedGuardedProject()
    const skipper = await createRole([{ name: 'SKIP_CHANGE_REQUEST', environment: 'production' }])
    const editorLike = await createRole([{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }])
    const givable = (body: { roles: { id: number; givable: boolean }[] }) => Object.fromEntries(body.roles.map((r) => [r.id, r.givable]))
    const asOwner = await owner.call('GET', `${P}/access`)
    expect(asOwner.status, asOwner.text).toBe(200)
    expect(givable(asOwner.body)).toMatchObject({ [OWNER]: true, [MEMBER]: true, [skipper]: false, [editorLike]: true })
    // As the write routes judge it: the role the answer says cannot be given is refused, the other given.
    expectRefused(await owner.call('POST', `${P}/access`, { body: { roles: [skipper], users: [owner.id] } }), 'a role said not givable')
    expect((await owner.call('POST', `${P}/access`, { body: { roles: [editorLike], users: [owner.id] } })).status).toBe(200)
    expect(Object.values(givable((await ok(t, 'GET', `${P}/access`)).body)).every(Boolean)).toBe(true)
    // A Member (no UPDATE_PROJECT there) may give no role at all: none is givable.
    const member = await user('Viewer')
    await ok(t, 'POST', `${P}/access`, { roles: [MEMBER], users: [member.id] })
    expect(Object.values(givable((await member.call('GET', `${P}/access`)).body)).some(Boolean)).toBe(false)
  })

  it('is refused a role granting SKIP_CHANGE_REQUEST on every route that gives project roles, to users and to groups, and nothing changes', async () => {
    const { project, owner, P } = await ownedGuardedProject()
    const skipper = await createRole([{ name: 'SKIP_CHANGE_REQUEST' }])
    const target = await user('Viewer')
    const group = await createGroup([target])
    await ok(t, 'POST', `${P}/access`, { roles: [MEMBER], users: [target.id], groups: [group] })
    const before = await rolesOf(project)
    const eventCount = async () => (await t.query<{ n: number }>('select count(*)::int as n from events where project = $1', [project]))[0]!.n
    const eventsBefore = await eventCount()
    const attempts: [string, string, unknown][] = [
      ['POST', `${P}/access`, { roles: [skipper], users: [owner.id] }],
      ['POST', `${P}/access`, { roles: [OWNER, skipper], users: [target.id] }],
      ['POST', `${P}/access`, { roles: [skipper], users: [], groups: [group] }],
      ['PUT', `${P}/access`, { roles: [{ id: OWNER, users: [owner.id] }, { id: skipper, users: [owner.id, target.id], groups: [group] }] }],
      ['POST', `${P}/role/${skipper}/access`, { users: [{ id: owner.id }], groups: [] }],
      ['POST', `${P}/role/${skipper}/access`, { users: [], groups: [{ id: group }] }],
      ['PUT', `${P}/users/${owner.id}/roles`, { roles: [OWNER, skipper] }],
      ['PUT', `${P}/users/${target.id}/roles`, { roles: [skipper] }],
      ['PUT', `${P}/groups/${group}/roles`, { roles: [MEMBER, skipper] }],
      ['POST', `${P}/users/${owner.id}/roles/${skipper}`, undefined],
      ['POST', `${P}/groups/${group}/roles/${skipper}`, undefined],
      ['PUT', `${P}/users/${target.id}/roles/${skipper}`, undefined],
      ['PUT', `${P}/groups/${group}/roles/${skipper}`, undefined],
    ]
    for (const [method, path, body] of attempts) {
      const res = await owner.call(method, path, { body })
      expectRefused(res, `${method} ${path} ${JSON.stringify(body)}`)
      expect(res.body.message).toContain('permission=SKIP_CHANGE_REQUEST')
    }
    expect(await rolesOf(project)).toEqual(before)
    expect(await eventCount()).toBe(eventsBefore)
  })

  it('gives Owner, Member and custom roles made of what Owner holds, by the fast route too', async () => {
    const { project, owner, P } = await ownedGuardedProject()
    const switcher = await createRole([{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }, { name: 'UPDATE_PROJECT' }, { name: 'DELETE_PROJECT' }])
    const [a, b, c] = [await user(), await user(), await user()]
    expect((await owner.call('POST', `${P}/access`, { body: { roles: [OWNER, MEMBER], users: [a.id] } })).status).toBe(200)
    expect((await owner.call('POST', `${P}/access`, { body: { roles: [switcher], users: [b.id] } })).status).toBe(200)
    expect((await owner.call('PUT', `${P}/users/${c.id}/roles`, { body: { roles: [switcher, MEMBER] } })).status).toBe(200)
    const { users } = await rolesOf(project)
    expect(users).toEqual(expect.arrayContaining([[a.id, [OWNER, MEMBER]], [b.id, [switcher]], [c.id, [MEMBER, switcher].sort((x, y) => x - y)]]))
  })

  it('an Owner who holds SKIP_CHANGE_REQUEST in production (given by an admin) passes it on there, not in every environment', async () => {
    const { owner, P } = await ownedGuardedProject()
    const productionSkip = await createRole([{ name: 'SKIP_CHANGE_REQUEST', environment: 'production' }])
    const everywhereSkip = await createRole([{ name: 'SKIP_CHANGE_REQUEST' }])
    const developmentSkip = await createRole([{ name: 'SKIP_CHANGE_REQUEST', environment: 'development' }])
    await ok(t, 'POST', `${P}/access`, { roles: [productionSkip], users: [owner.id] })
    const target = await user()
    expect((await owner.call('POST', `${P}/access`, { body: { roles: [productionSkip], users: [target.id] } })).status).toBe(200)
    expectRefused(await owner.call('POST', `${P}/access`, { body: { roles: [everywhereSkip], users: [target.id] } }), 'every environment')
    expectRefused(await owner.call('POST', `${P}/access`, { body: { roles: [developmentSkip], users: [target.id] } }), 'another environment')
  })

  it('what an Owner holds in one project gives nothing in another they own', async () => {
    const first = await ownedGuardedProject()
    const second = await createProject(t)
    await addToProject(t, second, first.owner.id, 'Owner')
    const skip = await createRole([{ name: 'SKIP_CHANGE_REQUEST', environment: 'production' }])
    await ok(t, 'POST', `${first.P}/access`, { roles: [skip], users: [first.owner.id] })
    expectRefused(await first.owner.call('POST', `/api/admin/projects/${second}/access`, { body: { roles: [skip], users: [first.owner.id] } }), 'the other project')
  })

  it('an admin gives any project role', async () => {
    const { project, P } = await ownedGuardedProject()
    const skipper = await createRole([{ name: 'SKIP_CHANGE_REQUEST' }])
    const target = await user()
    await ok(t, 'POST', `${P}/access`, { roles: [skipper], users: [target.id] })
    expect((await rolesOf(project)).users).toContainEqual([target.id, [skipper]])
  })
})

describe('the routes that grant instance-wide are the admin’s alone', () => {
  it('refuse a project Owner: roles, groups and their members, users’ root roles, service accounts, invite links, action sets', async () => {
    const { owner, project, P } = await ownedGuardedProject()
    const role = await createRole([{ name: 'SKIP_CHANGE_REQUEST' }])
    const group = await createGroup()
    await ok(t, 'POST', `${P}/access`, { roles: [role], users: [], groups: [group] })
    const attempts: [string, string, unknown][] = [
      ['POST', '/api/admin/roles', { name: fresh('role'), type: 'custom', permissions: [{ name: 'SKIP_CHANGE_REQUEST' }] }],
      ['PUT', `/api/admin/roles/${role}`, { name: fresh('role'), type: 'custom', permissions: [{ name: 'SKIP_CHANGE_REQUEST' }, { name: 'UPDATE_PROJECT' }] }],
      ['POST', '/api/admin/groups', { name: fresh('team'), users: [{ user: { id: owner.id } }] }],
      ['PUT', `/api/admin/groups/${group}`, { name: fresh('team'), users: [{ user: { id: owner.id } }] }],
      ['PUT', `/api/admin/user-admin/${owner.id}`, { rootRole: 'Admin' }],
      ['POST', '/api/admin/user-admin', { username: fresh('u'), rootRole: 'Admin' }],
      ['POST', '/api/admin/service-account', { username: fresh('sa'), name: 'robot', rootRole: 1 }],
      ['POST', '/api/admin/invite-link/tokens', { name: fresh('link'), expiresAt: '2099-01-01T00:00:00Z', rootRole: 1 }],
      ['POST', `/api/admin/projects/${project}/actions`, { name: fresh('set'), enabled: true, match: { source: 'signal-endpoint', sourceId: 1, payload: {} }, actorId: owner.id, actions: [] }],
    ]
    for (const [method, path, body] of attempts) {
      const res = await owner.call(method, path, { body })
      expectRefused(res, `${method} ${path}`)
      expect(res.body.message).toContain('permission=ADMIN')
    }
    const members = (await ok(t, 'GET', `/api/admin/groups/${group}`)).body.users
    expect(members).toEqual([])
  })
})

describe('change requests stay on unless the Owner may skip them', () => {
  it('an Owner turning change requests off in production is refused (SKIP_CHANGE_REQUEST there), and switching production then too', async () => {
    const { owner, flag, P } = await ownedGuardedProject()
    const off = await owner.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: false } })
    expectRefused(off, 'turning change requests off')
    expect(off.body.message).toContain('SKIP_CHANGE_REQUEST')
    expect((await owner.call('POST', `${P}/features/${flag}/environments/production/on`)).status).toBe(403)
  })
})
