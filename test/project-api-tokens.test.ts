import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addToProject, createFlag, createProject, createToken, createUser, enableFlag, fresh, ok } from './helpers/factories.js'

/*
 * A project's API tokens (`/api/admin/projects/{projectId}/api-tokens`): client and frontend tokens for exactly that
 * project, under the project permissions READ/CREATE/DELETE_PROJECT_API_TOKEN (held by the built-in Owner and Member,
 * as in Unleash), secrets shown once, events as the instance routes write them.
 */

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const tokens = (project: string) => `/api/admin/projects/${project}/api-tokens`

async function eventsOf(type: string, project: string) {
  return t.query<{ type: string; project: string | null; environment: string | null; data: any; pre_data: any; created_by: string }>(
    'select type, project, environment, data, pre_data, created_by from events where type = $1 and project = $2 order by id',
    [type, project],
  )
}

describe('creating, listing and deleting', () => {
  it('creates a backend token for exactly the project, shows its secret once, and lists it masked', async () => {
    const project = await createProject(t)
    const created = await t.call('POST', tokens(project), { body: { tokenName: 'svc', type: 'Backend', environment: 'production' } })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({ tokenName: 'svc', type: 'client', environment: 'production', project, projects: [project], expiresAt: null })
    expect(created.body.secret).toMatch(new RegExp(`^${project}:production\\.[0-9a-f]{64}$`))
    expect(created.headers.get('location')).not.toContain(created.body.secret)

    const listed = await ok(t, 'GET', tokens(project))
    expect(listed.body.tokens).toHaveLength(1)
    expect(listed.body.tokens[0]).toMatchObject({ tokenName: 'svc', type: 'client', projects: [project] })
    expect(listed.body.tokens[0].secret).not.toBe(created.body.secret)
    expect(listed.text).not.toContain(created.body.secret.split('.')[1])

    const [event] = await eventsOf('api-token-created', project)
    expect(event).toMatchObject({ environment: 'production', data: { tokenName: 'svc', type: 'client', projects: [project], environment: 'production' } })
    expect(JSON.stringify(event)).not.toContain(created.body.secret.split('.')[1])
  })

  it('the token serves the SDK the project’s flags only', async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name as string
    await enableFlag(t, flag, 'development', project)
    const elsewhere = (await createFlag(t)).name as string
    const { secret } = (await ok(t, 'POST', tokens(project), { tokenName: 'sdk', type: 'client' })).body
    const served = await t.call('GET', '/api/client/features', { token: secret })
    expect(served.status).toBe(200)
    const names = served.body.features.map((f: { name: string }) => f.name)
    expect(names).toContain(flag)
    expect(names).not.toContain(elsewhere)
  })

  it('defaults to development; frontend tokens too; admin tokens and unknown environments are refused', async () => {
    const project = await createProject(t)
    expect((await ok(t, 'POST', tokens(project), { tokenName: 'web', type: 'FRONTEND' })).body).toMatchObject({ type: 'frontend', environment: 'development' })
    const admin = await t.call('POST', tokens(project), { body: { tokenName: 'x', type: 'admin' } })
    expect(admin.status).toBe(400)
    expect(admin.body.name).toBe('ValidationError')
    const env = await t.call('POST', tokens(project), { body: { tokenName: 'x', type: 'client', environment: 'nowhere' } })
    expect(env.status, env.text).toBe(400)
    expect(env.body.message).toContain('nowhere')
    const past = await t.call('POST', tokens(project), { body: { tokenName: 'x', type: 'client', expiresAt: '2000-01-01T00:00:00Z' } })
    expect(past.status).toBe(400)
    expect((await ok(t, 'GET', tokens(project))).body.tokens).toHaveLength(1)
  })

  it('an unknown project is a 404 to every route, an archived one takes no new token', async () => {
    for (const [method, path] of [['GET', tokens('no-such')], ['POST', tokens('no-such')], ['DELETE', `${tokens('no-such')}/x`]] as const) {
      const res = await t.call(method, path, { body: method === 'POST' ? { tokenName: 'x', type: 'client' } : undefined })
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(404)
    }
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
    const refused = await t.call('POST', tokens(project), { body: { tokenName: 'x', type: 'client' } })
    expect(refused.status, refused.text).toBe(404)
    expect(await t.query('select 1 from api_tokens where $1 = any(projects)', [project])).toEqual([])
  })

  it('lists tokens naming the project among others, but deletes only those for it alone', async () => {
    const [a, b] = [await createProject(t), await createProject(t)]
    const shared = await createToken(t, { type: 'client', environment: 'development', projects: [a, b] })
    const own = (await ok(t, 'POST', tokens(a), { tokenName: 'own', type: 'client' })).body
    const ofB = (await ok(t, 'POST', tokens(b), { tokenName: 'b', type: 'client' })).body
    await createToken(t, { type: 'client', environment: 'development' })
    const listed = (await ok(t, 'GET', tokens(a))).body.tokens.map((x: { tokenName: string }) => x.tokenName)
    expect(listed.sort()).toEqual([own.tokenName, shared.tokenName].sort())

    const sharedRefused = await t.call('DELETE', `${tokens(a)}/${encodeURIComponent(shared.secret)}`)
    expect(sharedRefused.status, sharedRefused.text).toBe(400)
    const otherProjects = await t.call('DELETE', `${tokens(a)}/${encodeURIComponent(ofB.secret)}`)
    expect(otherProjects.status, otherProjects.text).toBe(404)
    expect(await t.query('select 1 from api_tokens where token_name = $1', [ofB.tokenName])).toHaveLength(1)

    // By the masked secret the listing shows.
    const masked = (await ok(t, 'GET', tokens(a))).body.tokens.find((x: { tokenName: string }) => x.tokenName === 'own').secret
    await ok(t, 'DELETE', `${tokens(a)}/${encodeURIComponent(masked)}`)
    expect((await t.call('GET', '/api/client/features', { token: own.secret })).status).toBe(401)
    const [deleted] = await eventsOf('api-token-deleted', a)
    expect(deleted).toMatchObject({ data: null, pre_data: { tokenName: 'own', projects: [a] } })
    expect((await t.call('DELETE', `${tokens(a)}/${encodeURIComponent(own.secret)}`)).status).toBe(404)
  })

  it("leaves out of a project's list a token that also names a private project the caller may not read, and never names that project", async () => {
    const open = await createProject(t)
    const secret = await createProject(t, { mode: 'private' })
    const shared = await createToken(t, { type: 'client', environment: 'development', projects: [open, secret] })
    const own = (await ok(t, 'POST', tokens(open), { tokenName: fresh('own'), type: 'client' })).body
    const owner = await createUser(t, 'Viewer')
    await addToProject(t, open, owner.id, 'Owner')
    const listed = await ok(owner, 'GET', tokens(open))
    expect(listed.body.tokens.map((x: { tokenName: string }) => x.tokenName)).toEqual([own.tokenName])
    expect(listed.text).not.toContain(secret)
    // Those who may read both projects see it.
    const names = (await ok(t, 'GET', tokens(open))).body.tokens.map((x: { tokenName: string }) => x.tokenName)
    expect(names.sort()).toEqual([own.tokenName, shared.tokenName].sort())
    // Deleting it through the project is refused without naming the other projects.
    const refused = await owner.call('DELETE', `${tokens(open)}/${encodeURIComponent(shared.secret)}`)
    expect(refused.status, refused.text).toBe(400)
    expect(refused.text).not.toContain(secret)
  })

  it('deleting the project deletes its tokens, with their events', async () => {
    const project = await createProject(t)
    const { secret } = (await ok(t, 'POST', tokens(project), { tokenName: 'gone', type: 'client' })).body
    await ok(t, 'DELETE', `/api/admin/projects/${project}`)
    expect((await t.call('GET', '/api/client/features', { token: secret })).status).toBe(401)
    expect(await eventsOf('api-token-deleted', project)).toHaveLength(1)
  })
})

describe('who may', () => {
  it('the project’s Owner and Member may list, create and delete; another project’s Owner and a Viewer may not', async () => {
    const project = await createProject(t)
    const [owner, member, stranger, viewer] = [await createUser(t, 'Viewer'), await createUser(t, 'Viewer'), await createUser(t, 'Viewer'), await createUser(t, 'Viewer')]
    await addToProject(t, project, owner.id, 'Owner')
    await addToProject(t, project, member.id, 'Member')
    const other = await createProject(t)
    await addToProject(t, other, stranger.id, 'Owner')

    for (const [who, name] of [[owner, 'by-owner'], [member, 'by-member']] as const) {
      const created = await who.call('POST', tokens(project), { body: { tokenName: name, type: 'client' } })
      expect(created.status, created.text).toBe(201)
      expect((await who.call('GET', tokens(project))).status).toBe(200)
      expect((await who.call('DELETE', `${tokens(project)}/${encodeURIComponent(created.body.secret)}`)).status).toBe(200)
    }
    const { secret } = (await ok(t, 'POST', tokens(project), { tokenName: 'kept', type: 'client' })).body
    for (const who of [stranger, viewer]) {
      for (const [method, path, permission] of [
        ['GET', tokens(project), 'READ_PROJECT_API_TOKEN'],
        ['POST', tokens(project), 'CREATE_PROJECT_API_TOKEN'],
        ['DELETE', `${tokens(project)}/${encodeURIComponent(secret)}`, 'DELETE_PROJECT_API_TOKEN'],
      ] as const) {
        const res = await who.call(method, path, { body: method === 'POST' ? { tokenName: 'x', type: 'client' } : undefined })
        expect(res.status, `${method} ${path}`).toBe(403)
        expect(res.body.message).toContain(permission)
      }
    }
    // The stranger owns their own project, and manages its tokens there.
    expect((await stranger.call('POST', tokens(other), { body: { tokenName: 'theirs', type: 'client' } })).status).toBe(201)
  })

  it('a custom project role holding only READ_PROJECT_API_TOKEN may list, not create or delete', async () => {
    const role = await ok(t, 'POST', '/api/admin/roles', { name: fresh('token-reader'), type: 'custom', permissions: [{ name: 'READ_PROJECT_API_TOKEN' }] })
    const project = await createProject(t)
    const reader = await createUser(t, 'Viewer')
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [role.body.roles.id], users: [reader.id] })
    const { secret } = (await ok(t, 'POST', tokens(project), { tokenName: 'read-me', type: 'frontend' })).body
    const listed = await reader.call('GET', tokens(project))
    expect(listed.status).toBe(200)
    expect(listed.body.tokens.map((x: { tokenName: string }) => x.tokenName)).toEqual(['read-me'])
    expect((await reader.call('POST', tokens(project), { body: { tokenName: 'x', type: 'client' } })).status).toBe(403)
    expect((await reader.call('DELETE', `${tokens(project)}/${encodeURIComponent(secret)}`)).status).toBe(403)
    // Elsewhere the role is not held.
    expect((await reader.call('GET', tokens(await createProject(t)))).status).toBe(403)
  })

  it('the permissions are project permissions in the permission list, held by Owner and Member', async () => {
    const list = (await ok(t, 'GET', '/api/admin/permissions')).body.permissions
    const names = (ps: { name: string }[]) => ps.map((p) => p.name)
    expect(names(list.project)).toEqual(expect.arrayContaining(['READ_PROJECT_API_TOKEN', 'CREATE_PROJECT_API_TOKEN', 'DELETE_PROJECT_API_TOKEN']))
    expect(names(list.root)).not.toContain('READ_PROJECT_API_TOKEN')
    const roles = (await ok(t, 'GET', '/api/admin/roles')).body.roles as { id: number; name: string; type: string }[]
    for (const name of ['Owner', 'Member']) {
      const role = roles.find((r) => r.name === name && r.type === 'project')!
      expect(names((await ok(t, 'GET', `/api/admin/roles/${role.id}`)).body.permissions)).toEqual(expect.arrayContaining(['READ_PROJECT_API_TOKEN', 'CREATE_PROJECT_API_TOKEN', 'DELETE_PROJECT_API_TOKEN']))
    }
  })

  it('a private project is a 404 to a Viewer who is not its member, and readable by its members', async () => {
    const project = await createProject(t, { mode: 'private' })
    const viewer = await createUser(t, 'Viewer')
    for (const [method, path] of [['GET', tokens(project)], ['POST', tokens(project)], ['DELETE', `${tokens(project)}/x`]] as const) {
      const res = await viewer.call(method, path, { body: method === 'POST' ? { tokenName: 'x', type: 'client' } : undefined })
      expect(res.status, `${method} ${path}`).toBe(404)
    }
    await addToProject(t, project, viewer.id, 'Member')
    expect((await viewer.call('GET', tokens(project))).status).toBe(200)
  })
})
