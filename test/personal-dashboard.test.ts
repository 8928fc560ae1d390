import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addToProject, createProject, fresh } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let now = new Date('2026-06-01T12:00:00Z')
let alice: TestUser // Editor: owns "alpha" and the private "secret"
let bob: TestUser // Viewer: Member of "alpha", favorites "beta"
let admin: TestUser
let carol: TestUser // Editor: owns the private "hidden"

const tick = () => (now = new Date(now.getTime() + 60_000))

beforeAll(async () => {
  t = await createTestApp({ now: () => now })
  admin = await createSignedInUser(t, 'root', 'Admin', { email: 'Root@Example.com', name: 'Root' })
  alice = await createSignedInUser(t, 'alice', 'Editor', { email: 'alice@example.com', name: 'Alice' })
  bob = await createSignedInUser(t, 'bob', 'Viewer')
  const succeeded = (res: { status: number; text: string }) => expect(res.status, res.text).toBeLessThan(300)
  succeeded(await alice.call('POST', '/api/admin/projects', { body: { id: 'alpha', name: 'Alpha' } }))
  succeeded(await alice.call('POST', '/api/admin/projects', { body: { id: 'secret', name: 'Secret', mode: 'private' } }))
  succeeded(await admin.call('POST', '/api/admin/projects', { body: { id: 'beta', name: 'Beta' } }))
  succeeded(await alice.call('POST', '/api/admin/projects/alpha/access', { body: { roles: [5], users: [bob.id] } }))
  for (const name of ['a-one', 'a-two', 'a-old']) {
    tick()
    succeeded(await alice.call('POST', '/api/admin/projects/alpha/features', { body: { name } }))
  }
  succeeded(await alice.call('PATCH', '/api/admin/projects/alpha/features/a-two', { body: [{ op: 'replace', path: '/stale', value: true }] }))
  tick()
  succeeded(await bob.call('POST', '/api/admin/projects/alpha/features', { body: { name: 'b-mine', type: 'experiment' } }))
  tick()
  succeeded(await t.call('POST', '/api/admin/projects/beta/features', { body: { name: 'beta-flag', type: 'kill-switch' } }))
  succeeded(await bob.call('POST', '/api/admin/projects/beta/favorites'))
  succeeded(await bob.call('POST', '/api/admin/projects/beta/features/beta-flag/favorites'))
  tick()
  succeeded(await bob.call('POST', '/api/admin/projects/alpha/features', { body: { name: 'b-archived' } }))
  succeeded(await bob.call('DELETE', '/api/admin/projects/alpha/features/b-archived'))
  carol = await createSignedInUser(t, 'carol', 'Editor')
  succeeded(await carol.call('POST', '/api/admin/projects', { body: { id: 'hidden', name: 'Hidden', mode: 'private' } }))
})
// The fixture above is only read: no test adds a project owner or an admin who stays.
afterAll(() => t.close())

const dashboard = (user: TestUser) => user.call('GET', '/api/admin/personal-dashboard')

describe('GET /api/admin/personal-dashboard (operation 11)', () => {
  it('lists the active admins with their image', async () => {
    const extra = await createSignedInUser(t, fresh('gone'), 'Admin')
    await t.call('DELETE', `/api/admin/user-admin/${extra.id}`)
    const res = await dashboard(bob)
    expect(res.status, res.text).toBe(200)
    expect(res.body.admins).toEqual([
      { id: admin.id, name: 'Root', username: 'root', email: 'root@example.com', imageUrl: expect.stringMatching(/^https:\/\/gravatar\.com\/avatar\/[0-9a-f]{64}/) },
    ])
  })

  it('gives a user the projects they have a role in or favorited, with health, members and flags', async () => {
    const res = await dashboard(bob)
    expect(res.body.projects).toEqual([
      { id: 'alpha', name: 'Alpha', health: 75, memberCount: 2, featureCount: 4, favorite: false },
      { id: 'beta', name: 'Beta', health: 100, memberCount: 1, featureCount: 1, favorite: true },
    ])
    const overview = await t.call('GET', '/api/admin/projects/alpha')
    expect(overview.body.health).toBe(res.body.projects[0].health)
  })

  it('gives a user the live flags they created or favorited, newest first, saying which are favorites', async () => {
    expect((await dashboard(bob)).body.flags).toEqual([
      { name: 'beta-flag', project: 'beta', type: 'kill-switch', favorite: true },
      { name: 'b-mine', project: 'alpha', type: 'experiment', favorite: false },
    ])
    expect((await dashboard(alice)).body.flags.map((f: { name: string }) => f.name)).toEqual(['a-old', 'a-two', 'a-one'])
  })

  it('names each owner once, of the projects the caller can see', async () => {
    const owners = (await dashboard(bob)).body.projectOwners
    expect(owners).toEqual([
      { ownerType: 'user', name: 'Root', email: 'root@example.com', imageUrl: expect.any(String) },
      { ownerType: 'user', name: 'Alice', email: 'alice@example.com', imageUrl: expect.any(String) },
    ])
    const names = (user: TestUser) => dashboard(user).then((r) => r.body.projectOwners.map((o: { name: string }) => o.name))
    expect(await names(bob)).not.toContain('carol')
    expect(await names(admin)).toContain('carol')
    expect(await names(carol)).toContain('carol')
  })

  it('gives an admin token the admins and owners, and no projects or flags', async () => {
    const res = await t.call('GET', '/api/admin/personal-dashboard')
    expect(res.status).toBe(200)
    expect(res.body.admins.map((a: { id: number }) => a.id)).toEqual([admin.id])
    expect(res.body.projectOwners.map((o: { name: string }) => o.name)).toEqual(['Root', 'Alice', 'carol'])
    expect(res.body.projects).toEqual([])
    expect(res.body.flags).toEqual([])
  })

  it('caps the flags at 100', async () => {
    const user = await createSignedInUser(t, fresh('busy'), 'Editor')
    // Made by the admin token, the busy user a Member: an owner would be listed by the other tests.
    const many = await createProject(t, { name: 'Many' })
    await addToProject(t, many, user.id)
    for (let i = 0; i < 102; i++) {
      tick()
      await user.call('POST', `/api/admin/projects/${many}/features`, { body: { name: `${many}-${String(i).padStart(3, '0')}` } })
    }
    const flags = (await dashboard(user)).body.flags
    expect(flags).toHaveLength(100)
    expect(flags[0].name).toBe(`${many}-101`)
    expect((await dashboard(user)).body.projects).toEqual([{ id: many, name: 'Many', health: 100, memberCount: 1, featureCount: 102, favorite: false }])
  })

  it('names the members of a group holding Owner as owners, each once, as users; none of a project archived', async () => {
    const gail = await createSignedInUser(t, fresh('gail'), 'Viewer', { name: 'Gail Group' })
    const group = (await t.call('POST', '/api/admin/groups', { body: { name: fresh('owners'), users: [{ user: { id: gail.id } }, { user: { id: alice.id } }] } })).body.id as number
    // Made by the admin token, so no user holds Owner in it: only the group does.
    const owned = await createProject(t, { name: 'Owned by a group' })
    const given = await t.call('POST', `/api/admin/projects/${owned}/access`, { body: { roles: [4], users: [], groups: [group] } })
    expect(given.status, given.text).toBe(200)
    const owners = async (user: TestUser) => (await dashboard(user)).body.projectOwners
    const mine = await owners(bob)
    expect(mine).toContainEqual({ ownerType: 'user', name: 'Gail Group', email: null, imageUrl: expect.any(String) })
    // Alice owns projects herself too: once.
    expect(mine.filter((o: { name: string }) => o.name === 'Alice')).toHaveLength(1)
    expect((await t.call('POST', `/api/admin/projects/archive/${owned}`)).status).toBe(200)
    expect((await owners(bob)).map((o: { name: string }) => o.name)).not.toContain('Gail Group')
  })

  it('answers 401 without credentials', async () => {
    expect((await t.call('GET', '/api/admin/personal-dashboard', { token: null })).status).toBe(401)
  })
})
