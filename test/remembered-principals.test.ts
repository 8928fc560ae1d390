// An app remembers the admin principal of a token or session for a short while (principalTtlMs), so a burst of
// requests costs one look-up; writes through that app forget them all at once. Two apps on one database stand for
// two Workers isolates (or two Node processes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp, type App } from '../src/app.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createPat, signIn } from './helpers/users.js'
import { addToProject, createProject, createToken, createUser, fresh, ok } from './helpers/factories.js'

let t: TestApp
const others: App[] = []

beforeAll(async () => {
  t = await createTestApp()
})
afterAll(async () => {
  for (const app of others) await app.idle()
  await t?.close()
})

/** Another app on the same database, remembering principals for `principalTtlMs`. */
function otherApp(principalTtlMs: number) {
  const app = createApp({ db: () => t.db, principalTtlMs })
  others.push(app)
  return async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await app.request(path, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
    await res.text()
    return res.status
  }
}

describe('remembered principals', () => {
  it('a token deleted through another app acts there until that app forgets it (a write through it that may change who may do what, or its time); the deleting app refuses it at once', async () => {
    const other = otherApp(60_000)
    const { secret } = await createToken(t, { type: 'admin' })
    expect(await other('GET', '/api/admin/projects', { authorization: secret })).toBe(200)

    await ok(t, 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(secret)}`)
    expect((await t.call('GET', '/api/admin/projects', { token: secret })).status).toBe(401)
    // Remembered by the other app, which has not seen the deletion.
    expect(await other('GET', '/api/admin/projects', { authorization: secret })).toBe(200)

    // Writes of flags, segments, environments or integrations change no principal: they stay remembered.
    expect(await other('POST', '/api/admin/projects/default/features', { authorization: t.adminToken }, { name: fresh('flag') })).toBe(201)
    expect(await other('POST', '/api/admin/segments', { authorization: t.adminToken }, { name: fresh('segment'), constraints: [] })).toBe(201)
    expect(await other('POST', '/api/admin/environments', { authorization: t.adminToken }, { name: fresh('env'), type: 'test' })).toBe(201)
    expect(await other('GET', '/api/admin/projects', { authorization: secret })).toBe(200)
    // Any other write through the other app forgets every principal it remembered.
    expect(await other('POST', '/api/admin/projects', { authorization: t.adminToken }, { id: fresh('project'), name: 'Forgets' })).toBe(201)
    expect(await other('GET', '/api/admin/projects', { authorization: secret })).toBe(401)
  })

  it('with a time of 0 nothing is remembered: a token deleted through another app is refused on its next request', async () => {
    const other = otherApp(0)
    const { secret } = await createToken(t, { type: 'admin' })
    expect(await other('GET', '/api/admin/projects', { authorization: secret })).toBe(200)
    await ok(t, 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(secret)}`)
    expect(await other('GET', '/api/admin/projects', { authorization: secret })).toBe(401)
  })

  it('a session signed out through the app is refused at once, though it was remembered', async () => {
    const user = await createUser(t, 'Editor')
    expect((await user.call('GET', '/api/admin/projects')).status).toBe(200)
    expect((await user.call('POST', '/logout')).status).toBe(200)
    expect((await user.call('GET', '/api/admin/projects')).status).toBe(401)
  })

  it("a personal access token acts with its user's roles as changed through the app, at once", async () => {
    const user = await createUser(t, 'Editor')
    const pat = await createPat(user)
    const project = await createProject(t)
    const path = `/api/admin/projects/${project}/features`
    expect((await t.call('POST', path, { token: pat, body: { name: fresh('flag') } })).status).toBe(201)
    await ok(t, 'PUT', `/api/admin/user-admin/${user.id}`, { rootRole: 'Viewer' })
    expect((await t.call('POST', path, { token: pat, body: { name: fresh('flag') } })).status).toBe(403)
  })

  it("a personal access token acts with a project role given through the app, at once", async () => {
    const user = await createUser(t, 'Viewer')
    const pat = await createPat(user)
    const project = await createProject(t)
    const path = `/api/admin/projects/${project}/features`
    expect((await t.call('POST', path, { token: pat, body: { name: fresh('flag') } })).status).toBe(403)
    await addToProject(t, project, user.id, 'Member')
    expect((await t.call('POST', path, { token: pat, body: { name: fresh('flag') } })).status).toBe(201)
  })

  it("sees a private project's flags only as a member: visibility is read with the credential of a session, and again on each request", async () => {
    const viewer = await createUser(t, 'Viewer')
    const project = await createProject(t, { mode: 'private' })
    // A fresh sign-in: the session's first request reads the private projects with the session.
    const cookie = await signIn(t, viewer.username)
    const asViewer = (path: string) => t.call('GET', path, { token: null, headers: { cookie } })
    expect((await asViewer(`/api/admin/projects/${project}`)).status).toBe(404)
    // Made public through another app: the remembered session still sees it at once (visibility is never remembered).
    expect(await otherApp(60_000)('PUT', `/api/admin/projects/${project}`, { authorization: t.adminToken }, { name: project, mode: 'open' })).toBe(200)
    expect((await asViewer(`/api/admin/projects/${project}`)).status).toBe(200)
  })
})
