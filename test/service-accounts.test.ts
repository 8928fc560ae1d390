import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createProject, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, PASSWORD } from './helpers/users.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const SA = '/api/admin/service-account'
const inAMonth = () => new Date(Date.now() + 30 * 86_400_000).toISOString()
const ROLE = { Admin: 1, Editor: 2, Viewer: 3 } as const

/** A fresh service account (Viewer unless told) through the API. */
async function createAccount(rootRole: number | string = ROLE.Viewer) {
  const username = fresh('bot')
  const res = await ok(t, 'POST', SA, { username, name: `Bot ${username}`, rootRole })
  return res.body as { id: number; username: string; name: string; rootRole: number }
}

/** A token of the account: the answer to creating it (its secret is there only). */
async function tokenOf(id: number, description = 'ci') {
  return (await ok(t, 'POST', `${SA}/${id}/token`, { description, expiresAt: inAMonth() })).body as { id: number; secret: string; description: string; userId: number }
}

const lastEvent = async (type: string) =>
  (await t.query<{ data: any; pre_data: any; created_by: string; created_by_user_id: number }>('select data, pre_data, created_by, created_by_user_id from events where type = $1 order by id desc limit 1', [type]))[0]

describe('service accounts', () => {
  it('are created with a name, a username and a root role, and listed with the root roles', async () => {
    const username = fresh('deploy-bot')
    const res = await t.call('POST', SA, { body: { username, name: 'Deploy bot', rootRole: ROLE.Editor } })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ id: expect.any(Number), username, name: 'Deploy bot', rootRole: ROLE.Editor, seenAt: null, tokens: [] })
    expect(res.headers.get('location')).toBe(`${SA}/${res.body.id}`)
    expect((await lastEvent('service-account-created'))).toMatchObject({ data: { id: res.body.id, username, name: 'Deploy bot', rootRole: ROLE.Editor }, created_by: 'test-admin' })
    const listed = await t.call('GET', SA)
    expect(listed.status).toBe(200)
    expect(listed.body.serviceAccounts).toContainEqual(expect.objectContaining({ id: res.body.id, username, rootRole: ROLE.Editor }))
    expect(listed.body.rootRoles.map((r: { name: string }) => r.name)).toEqual(['Admin', 'Editor', 'Viewer'])
  })

  it('take a root role by name too, and refuse an unknown one, a taken username and bad input with 4xx, writing nothing', async () => {
    const byName = await t.call('POST', SA, { body: { username: fresh('named'), name: 'Named', rootRole: 'Viewer' } })
    expect(byName.status, byName.text).toBe(201)
    expect(byName.body.rootRole).toBe(ROLE.Viewer)
    const before = (await t.query<{ n: number }>('select count(*)::int as n from users'))[0]!.n
    const unknownRole = await t.call('POST', SA, { body: { username: fresh('x'), name: 'X', rootRole: 999 } })
    expect(unknownRole.status).toBe(400)
    expect(unknownRole.body.name).toBe('ValidationError')
    const taken = await t.call('POST', SA, { body: { username: byName.body.username, name: 'Again', rootRole: ROLE.Viewer } })
    expect(taken.status).toBe(409)
    expect(taken.body.name).toBe('NameExistsError')
    const user = await createSignedInUser(t, fresh('person'), 'Viewer')
    expect((await t.call('POST', SA, { body: { username: user.username, name: 'Clash', rootRole: ROLE.Viewer } })).status).toBe(409)
    for (const body of [{ name: 'No username', rootRole: 3 }, { username: '', name: 'X', rootRole: 3 }, { username: fresh('y'), name: 'Y' }, { username: fresh('z'), name: '', rootRole: 3 }]) {
      const res = await t.call('POST', SA, { body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    expect((await t.call('POST', SA, { body: 'not json', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
    // The one person created above is the only new row.
    expect((await t.query<{ n: number }>('select count(*)::int as n from users'))[0]!.n).toBe(before + 1)
  })

  it('are updated (name, root role), not their username; an unknown id or a user’s is a 404', async () => {
    const account = await createAccount()
    const res = await t.call('PUT', `${SA}/${account.id}`, { body: { name: 'Renamed', rootRole: 'Editor' } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ id: account.id, name: 'Renamed', username: account.username, rootRole: ROLE.Editor })
    expect(await lastEvent('service-account-updated')).toMatchObject({ data: { name: 'Renamed', rootRole: ROLE.Editor }, pre_data: { name: account.name, rootRole: ROLE.Viewer } })
    expect((await t.call('PUT', `${SA}/999999`, { body: { name: 'x' } })).status).toBe(404)
    const user = await createSignedInUser(t, fresh('person'), 'Viewer')
    expect((await t.call('PUT', `${SA}/${user.id}`, { body: { name: 'x' } })).status).toBe(404)
    expect((await t.call('DELETE', `${SA}/${user.id}`)).status).toBe(404)
    expect((await t.call('GET', `${SA}/${user.id}/token`)).status).toBe(404)
  })

  it('cannot sign in: the sign-in fails as for an unknown user', async () => {
    const account = await createAccount(ROLE.Admin)
    const asAccount = await t.call('POST', '/auth/simple/login', { token: null, body: { username: account.username, password: PASSWORD } })
    const unknown = await t.call('POST', '/auth/simple/login', { token: null, body: { username: fresh('nobody'), password: PASSWORD } })
    expect(asAccount.status).toBe(401)
    expect(asAccount.body.message).toBe(unknown.body.message)
    expect(asAccount.headers.get('set-cookie')).toBeNull()
    expect(await t.query('select login_attempts from users where id = $1', [account.id])).toEqual([{ login_attempts: 0 }])
  })

  it('are left out of the users’ listing and routes, and out of the admins of the personal dashboard', async () => {
    const account = await createAccount(ROLE.Admin)
    const users = await t.call('GET', '/api/admin/user-admin')
    expect(users.body.users.map((u: { id: number }) => u.id)).not.toContain(account.id)
    expect((await t.call('GET', `/api/admin/user-admin/${account.id}`)).status).toBe(404)
    expect((await t.call('PUT', `/api/admin/user-admin/${account.id}`, { body: { name: 'x' } })).status).toBe(404)
    expect((await t.call('POST', `/api/admin/user-admin/${account.id}/change-password`, { body: { password: 'a long password' } })).status).toBe(404)
    expect((await t.call('DELETE', `/api/admin/user-admin/${account.id}`)).status).toBe(404)
    const admin = await createSignedInUser(t, fresh('admin'), 'Admin')
    const dashboard = await admin.call('GET', '/api/admin/personal-dashboard')
    expect(dashboard.body.admins.map((a: { id: number }) => a.id)).not.toContain(account.id)
    expect(await t.query('select password_hash, deleted_at from users where id = $1', [account.id])).toEqual([{ password_hash: null, deleted_at: null }])
  })
})

describe('service accounts among who may be given roles', () => {
  it('are listed by GET /api/admin/user-admin/access, as service accounts (as in Unleash)', async () => {
    const account = await createAccount()
    const person = await createSignedInUser(t, fresh('person'), 'Viewer')
    const { body } = await ok(t, 'GET', '/api/admin/user-admin/access')
    expect(body.users).toContainEqual(expect.objectContaining({ id: account.id, username: account.username, accountType: 'Service Account' }))
    expect(body.users).toContainEqual(expect.objectContaining({ id: person.id, accountType: 'User' }))
  })
})

describe('service account tokens', () => {
  it('show the secret once: the listing, the account listing and the event never hold it', async () => {
    const account = await createAccount()
    const res = await t.call('POST', `${SA}/${account.id}/token`, { body: { description: 'deploys', expiresAt: inAMonth() } })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ id: expect.any(Number), secret: expect.stringMatching(/^user:[0-9a-f]{64}$/), description: 'deploys', userId: account.id, seenAt: null })
    const secretPart = res.body.secret.slice(5)
    const tokens = await t.call('GET', `${SA}/${account.id}/token`)
    expect(tokens.body.pats).toEqual([expect.objectContaining({ id: res.body.id, description: 'deploys', userId: account.id })])
    const accounts = await t.call('GET', SA)
    expect(accounts.body.serviceAccounts.find((a: { id: number }) => a.id === account.id).tokens).toEqual([expect.objectContaining({ id: res.body.id })])
    for (const text of [tokens.text, accounts.text, JSON.stringify(await t.query('select * from events')), JSON.stringify(await t.query('select * from api_tokens'))]) {
      expect(text).not.toContain(secretPart)
    }
    expect(await lastEvent('pat-created')).toMatchObject({ data: { id: res.body.id, description: 'deploys', userId: account.id }, created_by: 'test-admin' })
    expect((await t.call('GET', '/api/admin/api-tokens')).body.tokens.map((x: { tokenName: string }) => x.tokenName)).not.toContain('deploys')
  })

  it('act as the account, with its root role’s permissions, as it changes', async () => {
    const account = await createAccount(ROLE.Viewer)
    const { secret } = await tokenOf(account.id)
    const me = await t.call('GET', '/api/admin/user', { token: secret })
    expect(me.status, me.text).toBe(200)
    expect(me.body.user).toMatchObject({ id: account.id, username: account.username, accountType: 'Service Account' })
    expect((await t.call('GET', '/api/admin/projects', { token: secret })).status).toBe(200)
    const refused = await t.call('POST', '/api/admin/projects', { token: secret, body: { id: fresh('p'), name: 'P' } })
    expect(refused.status).toBe(403)
    expect(refused.body.message).toContain('permission=CREATE_PROJECT')

    await ok(t, 'PUT', `${SA}/${account.id}`, { rootRole: ROLE.Editor })
    const id = fresh('by-bot')
    const created = await t.call('POST', '/api/admin/projects', { token: `Bearer ${secret}`, body: { id, name: 'By bot' } })
    expect(created.status, created.text).toBe(201)
    const [event] = await t.query<{ created_by: string; created_by_user_id: number }>("select created_by, created_by_user_id from events where type = 'project-created' and project = $1", [id])
    expect(event).toEqual({ created_by: account.username, created_by_user_id: account.id })
    // An Editor may not act as an admin.
    expect((await t.call('POST', SA, { token: secret, body: { username: fresh('x'), name: 'X', rootRole: ROLE.Admin } })).status).toBe(403)
    expect((await t.call('POST', '/api/admin/api-tokens', { token: secret, body: { tokenName: 'x', type: 'admin' } })).status).toBe(403)
  })

  it('take the project roles the account is given', async () => {
    const account = await createAccount(ROLE.Viewer)
    const { secret } = await tokenOf(account.id)
    const project = await createProject(t)
    const flag = { name: fresh('flag') }
    expect((await t.call('POST', `/api/admin/projects/${project}/features`, { token: secret, body: flag })).status).toBe(403)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [account.id] })
    expect((await t.call('POST', `/api/admin/projects/${project}/features`, { token: secret, body: flag })).status).toBe(201)
  })

  it('cannot manage tokens themselves: the users’ token routes refuse a service account', async () => {
    const account = await createAccount(ROLE.Admin)
    const { secret, id } = await tokenOf(account.id)
    const listed = await t.call('GET', '/api/admin/user/tokens', { token: secret })
    expect(listed.status).toBe(403)
    const created = await t.call('POST', '/api/admin/user/tokens', { token: secret, body: { description: 'more', expiresAt: inAMonth() } })
    expect(created.status).toBe(403)
    expect((await t.call('DELETE', `/api/admin/user/tokens/${id}`, { token: secret })).status).toBe(404)
    expect((await t.call('POST', '/api/admin/user/change-password', { token: secret, body: { password: 'a long password', oldPassword: 'anything at all' } })).status).toBe(400)
    expect(await t.query('select id from api_tokens where user_id = $1', [account.id])).toEqual([{ id }])
  })

  it('are deleted one by one, and only through their own account', async () => {
    const account = await createAccount()
    const other = await createAccount()
    const { secret, id } = await tokenOf(account.id)
    expect((await t.call('DELETE', `${SA}/${other.id}/token/${id}`)).status).toBe(404)
    expect((await t.call('GET', '/api/admin/user', { token: secret })).status).toBe(200)
    expect((await t.call('DELETE', `${SA}/${account.id}/token/${id}`)).status).toBe(200)
    expect(await lastEvent('pat-deleted')).toMatchObject({ pre_data: { id, userId: account.id } })
    expect((await t.call('GET', '/api/admin/user', { token: secret })).status).toBe(401)
    expect((await t.call('DELETE', `${SA}/${account.id}/token/${id}`)).status).toBe(404)
  })

  it('refuse an expiry in the past and an unknown account', async () => {
    const account = await createAccount()
    const past = await t.call('POST', `${SA}/${account.id}/token`, { body: { description: 'x', expiresAt: '2001-01-01T00:00:00Z' } })
    expect(past.status).toBe(400)
    expect((await t.call('POST', `${SA}/999999/token`, { body: { description: 'x', expiresAt: inAMonth() } })).status).toBe(404)
    expect(await t.query('select id from api_tokens where user_id = $1', [account.id])).toEqual([])
  })

  it('stop working when their account is deleted, whose username is then free', async () => {
    const account = await createAccount(ROLE.Editor)
    const project = await createProject(t)
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [account.id] })
    const { secret } = await tokenOf(account.id)
    expect((await t.call('GET', '/api/admin/projects', { token: secret })).status).toBe(200)
    const res = await t.call('DELETE', `${SA}/${account.id}`)
    expect(res.status, res.text).toBe(200)
    expect(await lastEvent('service-account-deleted')).toMatchObject({ pre_data: { id: account.id, username: account.username } })
    expect((await t.call('GET', '/api/admin/projects', { token: secret })).status).toBe(401)
    expect(await t.query('select id from api_tokens where user_id = $1', [account.id])).toEqual([])
    expect(await t.query('select project_id from project_members where user_id = $1', [account.id])).toEqual([])
    expect((await t.call('GET', SA)).body.serviceAccounts.map((a: { id: number }) => a.id)).not.toContain(account.id)
    expect((await t.call('DELETE', `${SA}/${account.id}`)).status).toBe(404)
    expect((await t.call('POST', SA, { body: { username: account.username, name: 'Again', rootRole: ROLE.Viewer } })).status).toBe(201)
  })
})
