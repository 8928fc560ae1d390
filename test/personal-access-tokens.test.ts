import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createUserWithEmail, fresh } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let now = new Date('2026-06-01T12:00:00Z')
let editor: TestUser
beforeAll(async () => {
  t = await createTestApp({ now: () => now })
  editor = await createSignedInUser(t, 'eve', 'Editor', { email: 'eve@example.com' })
})
afterAll(() => t.close())

const inAMonth = () => new Date(now.getTime() + 30 * 86_400_000).toISOString()
const create = (user: TestUser, body: unknown) => user.call('POST', '/api/admin/user/tokens', { body })
/** A fresh Editor with one personal access token, `ci`: the answer to creating it. */
async function editorWithPat() {
  const user = await createUserWithEmail(t, 'Editor')
  const res = await create(user, { description: 'ci', expiresAt: inAMonth() })
  expect(res.status, res.text).toBe(201)
  return { user, res, pat: res.body as { id: number; secret: string } }
}

describe('personal access tokens', () => {
  it('are created for the signed-in user, shown once as user:<secret>, stored hashed', async () => {
    const user = await createUserWithEmail(t, 'Editor')
    const expiresAt = inAMonth()
    const res = await create(user, { description: 'ci', expiresAt })
    expect(res.status, res.text).toBe(201)
    const pat = res.body
    expect(res.body).toEqual({ id: expect.any(Number), secret: expect.stringMatching(/^user:[0-9a-f]{64}$/), description: 'ci', expiresAt, createdAt: now.toISOString(), seenAt: null, userId: user.id })
    expect(res.headers.get('location')).toBe(`/api/admin/user/tokens/${pat.id}`)
    const rows = await t.query('select * from api_tokens where id = $1', [pat.id])
    expect(rows[0]).toMatchObject({ type: 'pat', user_id: user.id })
    expect(JSON.stringify(rows)).not.toContain(pat.secret.slice(5))
  })

  it('are listed for their user only, without secrets', async () => {
    const { user, pat } = await editorWithPat()
    const res = await user.call('GET', '/api/admin/user/tokens')
    expect(res.status).toBe(200)
    expect(res.body.pats).toEqual([expect.objectContaining({ id: pat.id, description: 'ci', userId: user.id })])
    expect(JSON.stringify(res.body)).not.toContain(pat.secret.slice(5))
    const viewer = await createUserWithEmail(t, 'Viewer')
    expect((await viewer.call('GET', '/api/admin/user/tokens')).body.pats).toEqual([])
    const apiTokens = await t.call('GET', '/api/admin/api-tokens')
    expect(apiTokens.body.tokens.map((x: { tokenName: string }) => x.tokenName)).not.toContain('ci')
  })

  it('act as their user, with that user’s permissions', async () => {
    const { user, pat } = await editorWithPat()
    const me = await t.call('GET', '/api/admin/user', { token: pat.secret })
    expect(me.body.user).toMatchObject({ id: user.id, username: user.username })
    const id = fresh('eves')
    const project = await t.call('POST', '/api/admin/projects', { token: `Bearer ${pat.secret}`, body: { id, name: 'Eve' } })
    expect(project.status, project.text).toBe(201)
    const [event] = await t.query<{ created_by: string; created_by_user_id: number }>("select created_by, created_by_user_id from events where type = 'project-created' and project = $1", [id])
    expect(event).toEqual({ created_by: user.email, created_by_user_id: user.id })
    expect((await t.query('select seen_at from api_tokens where id = $1', [pat.id]))[0]).toEqual({ seen_at: now })

    const viewer = await createUserWithEmail(t, 'Viewer')
    const viewerPat = (await create(viewer, { description: 'read', expiresAt: inAMonth() })).body.secret
    const denied = await t.call('POST', '/api/admin/projects', { token: viewerPat, body: { name: 'Nope' } })
    expect(denied.status).toBe(403)
    expect(denied.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining('permission=CREATE_PROJECT') })
    expect((await t.call('GET', '/api/admin/projects', { token: viewerPat })).status).toBe(200)
  })

  it('follow their user: a new root role applies at once, a deleted user’s tokens stop working', async () => {
    const user = await createSignedInUser(t, fresh('temp'), 'Viewer')
    const secret = (await create(user, { description: 'temp', expiresAt: inAMonth() })).body.secret
    expect((await t.call('POST', '/api/admin/projects', { token: secret, body: { name: 'Temp' } })).status).toBe(403)
    await t.call('PUT', `/api/admin/user-admin/${user.id}`, { body: { rootRole: 'Editor' } })
    expect((await t.call('POST', '/api/admin/projects', { token: secret, body: { name: 'Temp' } })).status).toBe(201)
    await t.call('DELETE', `/api/admin/user-admin/${user.id}`)
    expect((await t.call('GET', '/api/admin/projects', { token: secret })).status).toBe(401)
  })

  it('expire', async () => {
    const user = await createUserWithEmail(t, 'Editor')
    const res = await create(user, { description: 'short', expiresAt: new Date(now.getTime() + 3_600_000).toISOString() })
    expect((await t.call('GET', '/api/admin/projects', { token: res.body.secret })).status).toBe(200)
    const saved = now
    try {
      now = new Date(saved.getTime() + 3_600_001)
      expect((await t.call('GET', '/api/admin/projects', { token: res.body.secret })).status).toBe(401)
    } finally {
      now = saved
    }
  })

  it.each([
    ['no description', { expiresAt: '2027-01-01T00:00:00Z' }],
    ['an empty description', { description: ' ', expiresAt: '2027-01-01T00:00:00Z' }],
    ['no expiresAt', { description: 'x' }],
    ['an expiresAt in the past', { description: 'x', expiresAt: '2020-01-01T00:00:00Z' }],
    ['an expiresAt that is not a date', { description: 'x', expiresAt: 'tomorrow' }],
  ])('answer 400 for %s', async (_, body) => {
    const res = await create(editor, body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
  })

  it('record pat-created and pat-deleted, never with the secret', async () => {
    const { user, pat } = await editorWithPat()
    expect((await user.call('DELETE', `/api/admin/user/tokens/${pat.id}`)).status).toBe(200)
    const events = await t.query<{ type: string; data: any; created_by: string }>("select type, data, created_by from events where type in ('pat-created', 'pat-deleted') order by id")
    const own = await t.query<{ type: string; data: any; created_by: string }>(
      "select type, data, created_by from events where type in ('pat-created', 'pat-deleted') and coalesce(data, pre_data)->>'id' = $1 order by id",
      [String(pat.id)],
    )
    expect(own.map((e) => e.type)).toEqual(['pat-created', 'pat-deleted'])
    expect(own[0]).toMatchObject({ type: 'pat-created', created_by: user.email, data: { id: pat.id, description: 'ci', userId: user.id } })
    expect(JSON.stringify(events)).not.toContain(pat.secret.slice(5))
  })

  it('are deleted by their user only; a deleted token stops working', async () => {
    const { user, pat } = await editorWithPat()
    expect((await editor.call('DELETE', `/api/admin/user/tokens/${pat.id}`)).status).toBe(404)
    expect((await t.call('DELETE', `/api/admin/api-tokens/${encodeURIComponent(pat.secret)}`)).status).toBe(404)
    const res = await user.call('DELETE', `/api/admin/user/tokens/${pat.id}`)
    expect(res.status).toBe(200)
    const [event] = await t.query<{ pre_data: any }>("select pre_data from events where type = 'pat-deleted' order by id desc limit 1")
    expect(event!.pre_data).toMatchObject({ id: pat.id, userId: user.id })
    expect((await t.call('GET', '/api/admin/projects', { token: pat.secret })).status).toBe(401)
    expect((await user.call('DELETE', `/api/admin/user/tokens/${pat.id}`)).status).toBe(404)
  })

  it('answer 400 for a token id that is not a number', async () => {
    expect((await editor.call('DELETE', '/api/admin/user/tokens/abc')).status).toBe(400)
  })

  it('belong to users: 403 for an admin token, 401 without credentials', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/admin/user/tokens', undefined],
      ['POST', '/api/admin/user/tokens', { description: 'x', expiresAt: inAMonth() }],
      ['DELETE', '/api/admin/user/tokens/1', undefined],
    ] as const) {
      const res = await t.call(method, path, { body })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body.name).toBe('NoAccessError')
      expect((await t.call(method, path, { body, token: null })).status).toBe(401)
    }
  })
})
