// The writes of tokens, users, sign-in and change requests at the edge: each makes at most two database round
// trips before its response (a read, then one checked statement or batch) and opens no WebSocket; and a checked
// write that finds its read out of date is made again from a fresh read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { racing } from './helpers/racing.js'
import { createFlag, createProject, fresh } from './helpers/factories.js'
import { createToken as storeCreateToken } from '../src/api-tokens/store.js'
import { createPat as storeCreatePat } from '../src/api-tokens/personal-access-tokens.js'
import { changeUserPassword, updateUser } from '../src/users/store.js'
import { approve, changeState } from '../src/change-requests/store.js'
import { callerOf, SYSTEM_ACTOR, type Principal } from '../src/core/principal.js'

const PASSWORD = 'correct horse battery'

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
})
afterAll(() => t.close())

const roundTrips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })

/**
 * A write through the app forgets the remembered principals: a read first, with the credential the measured
 * request uses, so its count is the route's own.
 */
async function measured(method: string, path: string, options: { body?: unknown; token?: string | null } = {}) {
  if (options.token !== null) expect((await t.call('GET', '/api/admin/user', { token: options.token })).status).toBe(200)
  return t.call(method, path, options)
}

async function lastEvent(type: string) {
  const [event] = await t.query<{ type: string; data: any; pre_data: any; created_by: string; project: string | null; environment: string | null }>(
    'select type, data, pre_data, created_by, project, environment from events where type = $1 order by id desc limit 1',
    [type],
  )
  return event
}

/** An admin token made directly in the database (another reviewer), and its principal. */
async function adminToken(name = fresh('reviewer')) {
  const secret = (await storeCreateToken(t.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: name, type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
  const id = (await t.query<{ id: number }>('select id from api_tokens where token_name = $1', [name]))[0]!.id
  return { secret, principal: { kind: 'admin-token', tokenId: id, name, rootRole: 'Admin' } as Principal }
}

async function createUser(extra: Record<string, unknown> = {}) {
  const username = fresh('user')
  const res = await t.call('POST', '/api/admin/user-admin', { body: { username, password: PASSWORD, rootRole: 'Editor', sendEmail: false, ...extra } })
  expect(res.status, res.text).toBe(201)
  return { id: res.body.id as number, username, inviteLink: res.body.inviteLink as string }
}

describe('API tokens', () => {
  it('creates a token in two round trips: the scope, then the token and its event', async () => {
    const res = await measured('POST', '/api/admin/api-tokens', { body: { tokenName: 'edge-client', type: 'client', environment: 'development', projects: ['default'] } })
    expect(res.status, res.text).toBe(201)
    expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
    const listed = (await t.call('GET', '/api/admin/api-tokens')).body.tokens.find((tk: any) => tk.tokenName === 'edge-client')
    expect(listed).toMatchObject({ type: 'client', environment: 'development', projects: ['default'] })
    expect(listed.secret).not.toBe(res.body.secret)
    const event = await lastEvent('api-token-created')
    expect(event).toMatchObject({ project: 'default', environment: 'development', data: { tokenName: 'edge-client', type: 'client', projects: ['default'] } })
    expect(JSON.stringify(event)).not.toContain(res.body.secret)
  })

  it('refuses a secret that exists, writing nothing', async () => {
    const now = new Date()
    const token = { tokenName: fresh('twice'), type: 'admin' as const, projects: ['*'], environment: '*', expiresAt: null }
    await storeCreateToken(t.db, { actor: SYSTEM_ACTOR, now }, token, 'a-secret-given-twice')
    await expect(storeCreateToken(t.db, { actor: SYSTEM_ACTOR, now }, token, 'a-secret-given-twice')).rejects.toMatchObject({ name: 'NameExistsError', message: 'A token with that secret already exists' })
    expect(await t.query('select id from api_tokens where token_name = $1', [token.tokenName])).toHaveLength(1)
  })

  it('deletes a token in two round trips: the token, then the deletion and its event', async () => {
    const secret = (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'edge-doomed', type: 'frontend', environment: 'development', projects: ['default'] } })).body.secret
    const res = await measured('DELETE', `/api/admin/api-tokens/${encodeURIComponent(secret)}`)
    expect(res.status, res.text).toBe(200)
    expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(await t.query('select id from api_tokens where token_name = $1', ['edge-doomed'])).toEqual([])
    expect(await lastEvent('api-token-deleted')).toMatchObject({ pre_data: { tokenName: 'edge-doomed', type: 'frontend' } })
    expect((await t.call('DELETE', `/api/admin/api-tokens/${encodeURIComponent(secret)}`)).status).toBe(404)
  })

  it('sets a token’s expiry in two round trips; the isolate refuses it from the next request, though it remembered it', async () => {
    const use = { admin: (secret: string) => t.call('GET', '/api/admin/projects', { token: secret }), client: (secret: string) => t.call('GET', '/api/client/features', { token: secret }), frontend: (secret: string) => t.call('POST', '/api/frontend', { token: secret, body: {} }) }
    for (const type of ['admin', 'client', 'frontend'] as const) {
      const secret = (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: fresh(`edge-${type}`), type, ...(type === 'admin' ? {} : { environment: 'development' }) } })).body.secret as string
      expect((await use[type](secret)).status, type).toBe(200)
      const res = await measured('PUT', `/api/admin/api-tokens/${encodeURIComponent(secret)}`, { body: { expiresAt: '2020-01-01T00:00:00Z' } })
      expect(res.status, res.text).toBe(200)
      expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
      expect((await use[type](secret)).status, type).toBe(401)
    }
    expect(await lastEvent('api-token-updated')).toMatchObject({ data: { type: 'frontend', expiresAt: '2020-01-01T00:00:00.000Z' }, pre_data: { expiresAt: null } })
  })

  it('refuses a remembered token once its time has come', async () => {
    const use = { admin: (secret: string) => t.call('GET', '/api/admin/projects', { token: secret }), client: (secret: string) => t.call('GET', '/api/client/features', { token: secret }), frontend: (secret: string) => t.call('POST', '/api/frontend', { token: secret, body: {} }) }
    const expiresAt = new Date(Date.now() + 1_500).toISOString()
    const tokens = await Promise.all(
      (['admin', 'client', 'frontend'] as const).map(async (type) => ({ type, secret: (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: fresh(`brief-${type}`), type, expiresAt, ...(type === 'admin' ? {} : { environment: 'development' }) } })).body.secret as string })),
    )
    for (const { type, secret } of tokens) expect((await use[type](secret)).status, type).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 50))
    for (const { type, secret } of tokens) expect((await use[type](secret)).status, type).toBe(401)
  })

  it('deletes a token once when two requests delete it at the same time', async () => {
    const secret = (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'edge-raced', type: 'client', environment: 'development', projects: ['default'] } })).body.secret
    const answers = await Promise.all([1, 2].map(() => t.call('DELETE', `/api/admin/api-tokens/${encodeURIComponent(secret)}`)))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404])
    expect(answers.every((a) => a.webSocket === 0)).toBe(true)
    expect(await t.query("select id from events where type = 'api-token-deleted' and pre_data->>'tokenName' = 'edge-raced'")).toHaveLength(1)
  })
})

describe('personal access tokens', () => {
  it('are created and deleted in two round trips each', async () => {
    const user = await createUser()
    const own = (await storeCreatePat(t.db, { actor: SYSTEM_ACTOR, now: new Date() }, { userId: user.id, kind: 'user' }, { description: 'mine', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).secret
    const created = await measured('POST', '/api/admin/user/tokens', { token: own, body: { description: 'edge pat', expiresAt: new Date(Date.now() + 86_400_000).toISOString() } })
    expect(created.status, created.text).toBe(201)
    expect(roundTrips(created)).toEqual({ http: 2, webSocket: 0 })
    expect(created.body).toMatchObject({ description: 'edge pat', userId: user.id })
    expect((await t.call('GET', '/api/admin/user', { token: created.body.secret })).body.user.id).toBe(user.id)
    expect(await lastEvent('pat-created')).toMatchObject({ data: { id: created.body.id, description: 'edge pat', userId: user.id } })

    const deleted = await measured('DELETE', `/api/admin/user/tokens/${created.body.id}`, { token: own })
    expect(deleted.status, deleted.text).toBe(200)
    expect(roundTrips(deleted)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', '/api/admin/user', { token: created.body.secret })).status).toBe(401)
    expect(await lastEvent('pat-deleted')).toMatchObject({ pre_data: { id: created.body.id, description: 'edge pat', userId: user.id } })
  })
})

describe('service accounts', () => {
  it('are created, given a token, updated and deleted in two round trips each; the token stops working with the account', async () => {
    const username = fresh('edge-bot')
    const created = await measured('POST', '/api/admin/service-account', { body: { username, name: 'Edge bot', rootRole: 'Editor' } })
    expect(created.status, created.text).toBe(201)
    expect(roundTrips(created)).toEqual({ http: 2, webSocket: 0 })
    const id = created.body.id as number
    expect(await lastEvent('service-account-created')).toMatchObject({ data: { id, username, rootRole: 2 } })

    const token = await measured('POST', `/api/admin/service-account/${id}/token`, { body: { description: 'edge', expiresAt: new Date(Date.now() + 86_400_000).toISOString() } })
    expect(token.status, token.text).toBe(201)
    expect(roundTrips(token)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', '/api/admin/user', { token: token.body.secret })).body.user).toMatchObject({ id, accountType: 'Service Account' })

    const updated = await measured('PUT', `/api/admin/service-account/${id}`, { body: { rootRole: 'Viewer' } })
    expect(updated.status, updated.text).toBe(200)
    expect(roundTrips(updated)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('POST', '/api/admin/projects', { token: token.body.secret, body: { id: fresh('p'), name: 'P' } })).status).toBe(403)

    const deleted = await measured('DELETE', `/api/admin/service-account/${id}`)
    expect(deleted.status, deleted.text).toBe(200)
    expect(roundTrips(deleted)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', '/api/admin/user', { token: token.body.secret })).status).toBe(401)
    expect(await lastEvent('service-account-deleted')).toMatchObject({ pre_data: { id, username, rootRole: 3 } })
  })
})

describe('users', () => {
  it('creates a user in two round trips: the role with the new id, then the user, the invite link and the event', async () => {
    const username = fresh('edge-user')
    const res = await measured('POST', '/api/admin/user-admin', { body: { username, email: `${username}@Example.com`, rootRole: 'Viewer', sendEmail: false } })
    expect(res.status, res.text).toBe(201)
    expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', `/api/admin/user-admin/${res.body.id}`)).body).toMatchObject({ username, email: `${username}@example.com`, rootRole: 3 })
    expect(await lastEvent('user-created')).toMatchObject({ data: { id: res.body.id, username, email: `${username}@example.com`, rootRole: 3 } })
    const link = new URL(res.body.inviteLink).searchParams.get('token')!
    expect((await t.call('GET', `/auth/reset/validate?token=${link}`, { token: null })).body).toMatchObject({ id: res.body.id })
    const again = await t.call('POST', '/api/admin/user-admin', { body: { username, rootRole: 'Viewer', sendEmail: false } })
    expect(again.status).toBe(400)
    expect(again.body.message).toBe('User already exists')
  })

  it('updates a user in two round trips', async () => {
    const user = await createUser()
    const res = await measured('PUT', `/api/admin/user-admin/${user.id}`, { body: { name: 'Edge Name', rootRole: 'Viewer' } })
    expect(res.status, res.text).toBe(200)
    expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(res.body).toMatchObject({ id: user.id, name: 'Edge Name', rootRole: 3 })
    expect(await lastEvent('user-updated')).toMatchObject({ data: { id: user.id, name: 'Edge Name', rootRole: 3 }, pre_data: { id: user.id, name: null, rootRole: 2 } })
  })

  it('keeps the events of two updates at the same time in order: each one’s preData is what the other wrote', async () => {
    const user = await createUser()
    const answers = await Promise.all(['First', 'Second'].map((name) => t.call('PUT', `/api/admin/user-admin/${user.id}`, { body: { name } })))
    expect(answers.map((a) => a.status)).toEqual([200, 200])
    const events = await t.query<{ data: any; pre_data: any }>("select data, pre_data from events where type = 'user-updated' and (data->>'id')::int = $1 order by id", [user.id])
    expect(events).toHaveLength(2)
    expect(events[0]!.pre_data.name).toBeNull()
    expect(events[1]!.pre_data.name).toBe(events[0]!.data.name)
    const [stored] = await t.query<{ name: string }>('select name from users where id = $1', [user.id])
    expect(stored!.name).toBe(events[1]!.data.name)
  })

  it('changes a password in two round trips: sessions end, failed sign-ins are forgotten', async () => {
    const user = await createUser()
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username: user.username, password: PASSWORD } })).status).toBe(200)
    await t.query('update users set login_attempts = 4 where id = $1', [user.id])
    const res = await measured('POST', `/api/admin/user-admin/${user.id}/change-password`, { body: { password: 'a new password' } })
    expect(res.status, res.text).toBe(200)
    expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(await t.query('select session_hash from sessions where user_id = $1', [user.id])).toEqual([])
    expect(await t.query('select login_attempts from users where id = $1', [user.id])).toEqual([{ login_attempts: 0 }])
    expect(await t.query('select token_hash from reset_tokens where user_id = $1 and used_at is null', [user.id])).toEqual([])
    expect(await lastEvent('user-updated')).toMatchObject({ data: { id: user.id, passwordChanged: true, loginAttempts: 0 }, pre_data: { id: user.id, loginAttempts: 4 } })
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username: user.username, password: 'a new password' } })).status).toBe(200)
  })

  it('deletes a user in two round trips: sessions, tokens and project roles go', async () => {
    const user = await createUser({ email: `${fresh('doomed')}@example.com` })
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username: user.username, password: PASSWORD } })).status).toBe(200)
    const pat = (await storeCreatePat(t.db, { actor: SYSTEM_ACTOR, now: new Date() }, { userId: user.id, kind: 'user' }, { description: 'x', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).secret
    const res = await measured('DELETE', `/api/admin/user-admin/${user.id}`)
    expect(res.status, res.text).toBe(200)
    expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(await t.query('select email, username, password_hash from users where id = $1 and deleted_at is not null', [user.id])).toEqual([{ email: null, username: null, password_hash: null }])
    expect(await t.query('select 1 from sessions where user_id = $1 union all select 1 from api_tokens where user_id = $1', [user.id])).toEqual([])
    expect((await t.call('GET', '/api/admin/user', { token: pat })).status).toBe(401)
    expect(await lastEvent('user-deleted')).toMatchObject({ pre_data: { id: user.id, username: user.username } })
    expect((await t.call('DELETE', `/api/admin/user-admin/${user.id}`)).status).toBe(404)
  })
})

describe('sign-in and links', () => {
  it('signs in in two round trips: the attempt counted, then the session', async () => {
    const user = await createUser()
    const res = await t.call('POST', '/auth/simple/login', { token: null, body: { username: user.username, password: PASSWORD } })
    expect(res.status, res.text).toBe(200)
    expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(res.headers.get('set-cookie')).toContain('flagpost-session=')
    expect(await t.query('select login_attempts, seen_at is not null as seen from users where id = $1', [user.id])).toEqual([{ login_attempts: 0, seen: true }])
    expect(await t.query('select 1 from sessions where user_id = $1', [user.id])).toHaveLength(1)
  })

  it('sets a password with an invite link in two round trips, once', async () => {
    const user = await createUser()
    const link = new URL(user.inviteLink).searchParams.get('token')!
    const res = await t.call('POST', '/auth/reset/password', { token: null, body: { token: link, password: 'set by link' } })
    expect(res.status, res.text).toBe(200)
    expect(roundTrips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(await lastEvent('user-updated')).toMatchObject({ created_by: user.username, data: { id: user.id, passwordChanged: true } })
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username: user.username, password: 'set by link' } })).status).toBe(200)
    expect((await t.call('POST', '/auth/reset/password', { token: null, body: { token: link, password: 'set by link again' } })).status).toBe(401)
  })

  it('uses a link once when it is sent twice at the same time', async () => {
    const user = await createUser()
    const link = new URL(user.inviteLink).searchParams.get('token')!
    const answers = await Promise.all(['first password', 'second password'].map((password) => t.call('POST', '/auth/reset/password', { token: null, body: { token: link, password } })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401])
    expect(await t.query("select 1 from events where type = 'user-updated' and (data->>'id')::int = $1", [user.id])).toHaveLength(1)
    const won = ['first password', 'second password'][answers.findIndex((a) => a.status === 200)]!
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username: user.username, password: won } })).status).toBe(200)
  })
})

describe('change requests', () => {
  async function protectedProject(requiredApprovals = 1) {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name as string
    const P = `/api/admin/projects/${project}`
    const config = await measured('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals } })
    expect(config.status, config.text).toBe(200)
    return { project, flag, P, CR: `${P}/environments/production/change-requests`, config }
  }
  const enable = (flag: string, enabled = true) => ({ feature: flag, action: 'updateEnabled', payload: { enabled } })

  it('sets the project environment’s settings in two round trips and answers those in force', async () => {
    const { project, config } = await protectedProject(2)
    expect(roundTrips(config)).toEqual({ http: 2, webSocket: 0 })
    expect(config.body.find((e: any) => e.environment === 'production')).toMatchObject({ changeRequestsEnabled: true, requiredApprovals: 2 })
    expect(await lastEvent('change-request-configuration-updated')).toMatchObject({
      project,
      environment: 'production',
      data: { changeRequestsEnabled: true, requiredApprovals: 2 },
      pre_data: { changeRequestsEnabled: false, requiredApprovals: 1 },
    })
    const unchanged = await measured('PUT', `/api/admin/projects/${project}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true } })
    expect(roundTrips(unchanged)).toEqual({ http: 1, webSocket: 0 })
  })

  it('adds changes in two round trips, to a new draft and then to it', async () => {
    const { flag, CR } = await protectedProject()
    const first = await measured('POST', CR, { body: enable(flag) })
    expect(first.status, first.text).toBe(200)
    expect(roundTrips(first)).toEqual({ http: 2, webSocket: 0 })
    const more = await measured('POST', CR, { body: [enable(flag, false), { feature: flag, action: 'archiveFeature' }] })
    expect(roundTrips(more)).toEqual({ http: 2, webSocket: 0 })
    expect(more.body).toMatchObject({ id: first.body.id, state: 'Draft' })
    const changes = more.body.features[0].changes
    expect(changes.map((c: any) => c.action)).toEqual(['updateEnabled', 'updateEnabled', 'archiveFeature'])
    const events = await t.query<{ type: string; data: any }>("select type, data from events where type in ('change-request-created', 'change-added') and (data->>'changeRequestId')::int = $1 order by id", [first.body.id])
    expect(events.map((e) => e.type)).toEqual(['change-request-created', 'change-added', 'change-added', 'change-added'])
    expect(events.slice(1).map((e) => e.data.change.id)).toEqual(changes.map((c: any) => c.id))
  })

  it('puts a caller’s changes sent at the same time into one draft', async () => {
    const { project, flag, CR } = await protectedProject()
    const answers = await Promise.all([true, false, true].map((enabled) => t.call('POST', CR, { body: enable(flag, enabled) })))
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200])
    const drafts = await t.query<{ id: number }>("select id from change_requests where project = $1 and state = 'Draft'", [project])
    expect(drafts).toHaveLength(1)
    expect(await t.query('select id from change_request_changes where change_request_id = $1', [drafts[0]!.id])).toHaveLength(3)
    const events = await t.query<{ type: string }>("select type from events where project = $1 and type in ('change-request-created', 'change-added') order by id", [project])
    expect(events.map((e) => e.type)).toEqual(['change-request-created', 'change-added', 'change-added', 'change-added'])
  })

  it('sends to review, approves and rejects in two round trips each, answering the change request', async () => {
    const { flag, P, CR } = await protectedProject()
    const id = (await t.call('POST', CR, { body: enable(flag) })).body.id
    const submitted = await measured('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'In review' } })
    expect(submitted.status, submitted.text).toBe(200)
    expect(roundTrips(submitted)).toEqual({ http: 2, webSocket: 0 })
    expect(submitted.body).toMatchObject({ id, state: 'In review' })
    expect(await lastEvent('change-request-sent-to-review')).toMatchObject({ data: { changeRequestId: id, state: 'In review' }, pre_data: { state: 'Draft' } })

    const reviewer = await adminToken()
    const approved = await measured('POST', `${P}/change-requests/${id}/approve`, { token: reviewer.secret })
    expect(approved.status, approved.text).toBe(200)
    expect(roundTrips(approved)).toEqual({ http: 2, webSocket: 0 })
    expect(approved.body).toMatchObject({ id, state: 'Approved', approvals: [{ createdBy: { username: reviewer.principal.name } }] })
    expect(await lastEvent('change-request-approved')).toMatchObject({ data: { changeRequestId: id, state: 'Approved', approvals: 1, minApprovals: 1 }, pre_data: { state: 'In review' } })

    const rejected = await measured('PUT', `${P}/change-requests/${id}/state`, { token: reviewer.secret, body: { state: 'Rejected', comment: 'not now' } })
    expect(rejected.status, rejected.text).toBe(200)
    expect(roundTrips(rejected)).toEqual({ http: 2, webSocket: 0 })
    expect(await lastEvent('change-request-rejected')).toMatchObject({ data: { changeRequestId: id, state: 'Rejected', comment: 'not now' }, pre_data: { state: 'Approved' } })
  })

  it('cancels in two round trips', async () => {
    const { flag, P, CR } = await protectedProject()
    const id = (await t.call('POST', CR, { body: enable(flag) })).body.id
    const cancelled = await measured('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Cancelled' } })
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(roundTrips(cancelled)).toEqual({ http: 2, webSocket: 0 })
    expect(cancelled.body).toMatchObject({ id, state: 'Cancelled' })
    expect(await lastEvent('change-request-cancelled')).toMatchObject({ data: { changeRequestId: id, state: 'Cancelled' }, pre_data: { state: 'Draft' } })
  })

  it('counts two approvals given at the same time: one is added, the other approves', async () => {
    const { flag, P, CR } = await protectedProject(2)
    const id = (await t.call('POST', CR, { body: enable(flag) })).body.id
    expect((await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'In review' } })).status).toBe(200)
    const reviewers = [await adminToken(), await adminToken()]
    const answers = await Promise.all(reviewers.map((r) => t.call('POST', `${P}/change-requests/${id}/approve`, { token: r.secret })))
    expect(answers.map((a) => a.status)).toEqual([200, 200])
    const events = await t.query<{ type: string; data: any }>(
      "select type, data from events where type in ('change-request-approval-added', 'change-request-approved') and (data->>'changeRequestId')::int = $1 order by id",
      [id],
    )
    expect(events).toEqual([
      { type: 'change-request-approval-added', data: { changeRequestId: id, approvals: 1, minApprovals: 2 } },
      { type: 'change-request-approved', data: { changeRequestId: id, state: 'Approved', approvals: 2, minApprovals: 2 } },
    ])
    expect((await t.call('GET', `${P}/change-requests/${id}`)).body).toMatchObject({ state: 'Approved', approvals: [{}, {}] })
  })
})

describe('a checked write whose read is out of date', () => {
  it('sets a password again from a fresh read when the user changed in between', async () => {
    const user = await createUser()
    const now = new Date()
    const admin = callerOf((await adminToken()).principal, now)
    const raced = racing(t.db, () => updateUser(t.db, admin, user.id, { name: 'Renamed meanwhile' }))
    await changeUserPassword(raced.db, admin, user.id, 'changed after a race')
    expect(raced.state.raced).toBe(true)
    const events = await t.query<{ data: any; pre_data: any }>("select data, pre_data from events where type = 'user-updated' and (data->>'id')::int = $1 order by id", [user.id])
    expect(events).toHaveLength(2)
    expect(events[0]!.data.name).toBe('Renamed meanwhile')
    expect(events[1]).toMatchObject({ data: { name: 'Renamed meanwhile', passwordChanged: true }, pre_data: { name: 'Renamed meanwhile' } })
  })

  it('approves from a fresh read when another approval came in between', async () => {
    const project = await createProject(t)
    const flagName = (await createFlag(t, {}, project)).name as string
    const P = `/api/admin/projects/${project}`
    await t.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 2 } })
    const id = String((await t.call('POST', `${P}/environments/production/change-requests`, { body: { feature: flagName, action: 'updateEnabled', payload: { enabled: true } } })).body.id)
    await t.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'In review' } })
    const [first, second] = [callerOf((await adminToken()).principal, new Date()), callerOf((await adminToken()).principal, new Date())]
    const allow = () => undefined
    const raced = racing(t.db, () => approve(t.db, first, { projectId: project, id }, allow))
    const view = await approve(raced.db, second, { projectId: project, id }, allow)
    expect(raced.state.raced).toBe(true)
    expect(view).toMatchObject({ state: 'Approved' })
    expect(view.approvals).toHaveLength(2)
    const events = await t.query<{ type: string; data: any }>(
      "select type, data from events where type in ('change-request-approval-added', 'change-request-approved') and (data->>'changeRequestId')::int = $1 order by id",
      [Number(id)],
    )
    expect(events.map((e) => [e.type, e.data.approvals])).toEqual([
      ['change-request-approval-added', 1],
      ['change-request-approved', 2],
    ])
  })

  it('cancels from a fresh read when the change request was sent to review in between', async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name as string
    const P = `/api/admin/projects/${project}`
    await t.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true } })
    const id = String((await t.call('POST', `${P}/environments/production/change-requests`, { body: { feature: flag, action: 'updateEnabled', payload: { enabled: true } } })).body.id)
    const allow = () => undefined
    const author = callerOf((await adminToken()).principal, new Date())
    const raced = racing(t.db, () => changeState(t.db, author, { projectId: project, id, state: 'In review' }, allow))
    const view = await changeState(raced.db, author, { projectId: project, id, state: 'Cancelled' }, allow)
    expect(raced.state.raced).toBe(true)
    expect(view).toMatchObject({ state: 'Cancelled' })
    expect(await lastEvent('change-request-cancelled')).toMatchObject({ data: { state: 'Cancelled' }, pre_data: { state: 'In review' } })
  })
})
