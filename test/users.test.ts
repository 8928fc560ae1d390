import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { fresh } from './helpers/factories.js'
import { createSignedInUser, PASSWORD, signIn, type TestUser } from './helpers/users.js'
import { webhookEmailTransport, type Email, type EmailTransport } from '../src/users/email.js'

let t: TestApp
let now = new Date('2026-06-01T12:00:00Z')
let viewer: TestUser
beforeAll(async () => {
  t = await createTestApp({ now: () => now })
  viewer = await createSignedInUser(t, 'vera', 'Viewer')
})
afterAll(() => t.close())

const createUser = (body: unknown, token?: string | null) => t.call('POST', '/api/admin/user-admin', { body, token })
const eventsOf = (type: string) => t.query<{ data: any; pre_data: any; created_by: string }>('select data, pre_data, created_by from events where type = $1 order by id', [type])
const tokenOf = (inviteLink: string) => new URL(inviteLink).searchParams.get('token')!

/** A fresh Editor with a mixed-case e-mail (Ann.Lee-n@Example.COM) and a password; the answer to creating her. */
async function createAnn() {
  const res = await createUser({ email: `${fresh('Ann.Lee')}@Example.COM`, name: 'Ann Lee', password: 'hunter2hunter2', rootRole: 'Editor' })
  expect(res.status, res.text).toBe(201)
  return res
}

describe('POST /api/admin/user-admin (operation 10)', () => {
  it('creates a user: 201, the User record, a Location header, the e-mail stored lower-case', async () => {
    const res = await createAnn()
    const ann = res.body
    expect(res.headers.get('location')).toBe(`/api/admin/user-admin/${ann.id}`)
    expect(ann.email).toMatch(/^ann\.lee-\d+@example\.com$/)
    expect(ann).toMatchObject({
      id: expect.any(Number),
      name: 'Ann Lee',
      email: ann.email,
      username: null,
      loginAttempts: 0,
      rootRole: 'Editor',
      seenAt: null,
      createdAt: now.toISOString(),
      accountType: 'User',
      isAPI: false,
      emailSent: false,
    })
    expect((await t.query('select email, root_role_id from users where id = $1', [ann.id]))[0]).toEqual({ email: ann.email, root_role_id: 2 })
  })

  it('gives rootRole back as the id when an id was sent', async () => {
    const bob = fresh('bob')
    const res = await createUser({ username: bob, rootRole: 3 })
    expect(res.status, res.text).toBe(201)
    expect(res.body.rootRole).toBe(3)
    expect(res.body.username).toBe(bob)
    expect(res.body).not.toHaveProperty('email')
  })

  it.each(['Admin', 'Editor', 'Viewer', 'Owner', 'Member'])('accepts the role name %s', async (role) => {
    const res = await createUser({ username: `role-${role}`, rootRole: role })
    expect(res.status, res.text).toBe(201)
    expect(res.body.rootRole).toBe(role)
  })

  it('has a stable gravatar-style imageUrl computed from the e-mail', async () => {
    const ann = (await createAnn()).body
    expect(ann.imageUrl).toMatch(/^https:\/\/gravatar\.com\/avatar\/[0-9a-f]{64}\?s=42&d=retro$/)
    const again = await t.call('GET', `/api/admin/user-admin/${ann.id}`)
    expect(again.body.imageUrl).toBe(ann.imageUrl)
  })

  it('answers 400 `You must specify username or email` when neither is given', async () => {
    for (const body of [{ rootRole: 'Viewer' }, { name: 'Nobody', rootRole: 'Viewer' }, { username: '', email: '  ', rootRole: 'Viewer' }]) {
      const res = await createUser(body)
      expect(res.status, res.text).toBe(400)
      expect(res.body).toMatchObject({ name: 'ValidationError', message: 'You must specify username or email' })
    }
  })

  it.each([
    ['an invalid e-mail', { email: 'not-an-email', rootRole: 'Viewer' }],
    ['an unknown role name', { username: 'x1', rootRole: 'Superuser' }],
    ['an unknown role id', { username: 'x2', rootRole: 99 }],
    ['no rootRole', { username: 'x3' }],
    ['a password under 8 characters', { username: 'x4', rootRole: 'Viewer', password: 'short' }],
    ['sendEmail that is not a boolean', { username: 'x5', rootRole: 'Viewer', sendEmail: 'yes' }],
    ['a rootRole that is neither id nor name', { username: 'x6', rootRole: { id: 1 } }],
  ])('answers 400 for %s and creates nothing', async (_, body) => {
    const before = await t.query('select count(*)::int as n from users')
    const res = await createUser(body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(await t.query('select count(*)::int as n from users')).toEqual(before)
  })

  it('answers 400 `User already exists` for an e-mail in another case or a taken username', async () => {
    const ann = (await createAnn()).body
    const bob = (await createUser({ username: fresh('bob'), rootRole: 3 })).body
    for (const body of [{ email: ann.email.toUpperCase(), rootRole: 'Viewer' }, { username: bob.username, rootRole: 'Viewer' }]) {
      const res = await createUser(body)
      expect(res.status, res.text).toBe(400)
      expect(res.body).toMatchObject({ name: 'ValidationError', message: 'User already exists' })
    }
  })

  it('stores the password as a salted PBKDF2-SHA256 hash, never in a response or an event', async () => {
    const ann = (await createAnn()).body
    const rows = await t.query<{ password_hash: string }>('select password_hash from users where id = $1', [ann.id])
    expect(rows[0]!.password_hash).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/)
    const other = await createUser({ username: fresh('same-password'), password: 'hunter2hunter2', rootRole: 'Viewer' })
    const otherHash = (await t.query<{ password_hash: string }>('select password_hash from users where id = $1', [other.body.id]))[0]!.password_hash
    expect(otherHash).not.toBe(rows[0]!.password_hash)
    const everything = JSON.stringify([ann, other.body, await t.query('select * from events')])
    expect(everything).not.toContain('hunter2hunter2')
    expect(everything).not.toContain('pbkdf2')
    expect(everything).not.toContain('passwordHash')
  })

  it('records user-created with the user and without secrets', async () => {
    const ann = (await createAnn()).body
    const [event] = (await eventsOf('user-created')).filter((e) => e.data.id === ann.id)
    expect(event!.created_by).toBe('test-admin')
    expect(event!.data).toEqual({ id: ann.id, name: 'Ann Lee', username: null, email: ann.email, rootRole: 2, createdAt: now.toISOString() })
  })

  it('refuses callers without ADMIN: 401 without credentials, 403 NoAccessError for a Viewer and an Editor', async () => {
    expect((await createUser({ username: 'z', rootRole: 'Viewer' }, null)).status).toBe(401)
    const res = await viewer.call('POST', '/api/admin/user-admin', { body: { username: 'z', rootRole: 'Viewer' } })
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining('permission=ADMIN') })
    const editor = await createSignedInUser(t, fresh('eddie'), 'Editor')
    expect((await editor.call('POST', '/api/admin/user-admin', { body: { username: 'z', rootRole: 'Viewer' } })).status).toBe(403)
  })

  it('answers 403 before judging the body of a caller without ADMIN, and 415 for a body that is not JSON', async () => {
    expect((await viewer.call('POST', '/api/admin/user-admin', { body: { bogus: true } })).status).toBe(403)
    const res = await t.call('POST', '/api/admin/user-admin', { body: 'username=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(res.status).toBe(415)
    expect(res.body.name).toBe('ContentTypeerror')
  })
})

describe('invite links', () => {
  /** A fresh Viewer invited by e-mail, without a password: their e-mail and invite link. */
  const invite = async () => {
    const email = `${fresh('invitee')}@example.com`
    const res = await createUser({ email, rootRole: 'Viewer' })
    expect(res.status, res.text).toBe(201)
    return { email, link: res.body.inviteLink as string }
  }

  it("gives each new user a single-use link to the web console's page where they set a password, stored only hashed", async () => {
    const { link } = await invite()
    expect(link).toMatch(/^http:\/\/localhost\/new-user\?token=[0-9a-f]{64}$/)
    // The console's page (its home serves it: test/server.test.ts, test/workerd), not the app's.
    expect((await t.call('GET', new URL(link).pathname + new URL(link).search, { token: null })).status).toBe(404)
    expect(JSON.stringify(await t.query('select * from reset_tokens'))).not.toContain(tokenOf(link))
  })

  it('validates the link and names its user (their username too, when they have one, to sign in with)', async () => {
    const { email, link } = await invite()
    const res = await t.call('GET', `/auth/reset/validate?token=${tokenOf(link)}`, { token: null })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ email, createdBy: 'test-admin', role: { id: 3, name: 'Viewer' } })
    expect(res.body).not.toHaveProperty('username')
    const username = fresh('invited')
    const named = await createUser({ username, rootRole: 'Viewer' })
    const byName = await t.call('GET', `/auth/reset/validate?token=${tokenOf(named.body.inviteLink)}`, { token: null })
    expect(byName.body).toMatchObject({ username, email: '' })
    expect((await t.call('GET', '/auth/reset/validate?token=0000', { token: null })).status).toBe(401)
    expect((await t.call('GET', '/auth/reset/validate', { token: null })).status).toBe(400)
  })

  it('sets the password once: the user can sign in, the link stops working', async () => {
    const { email, link } = await invite()
    expect((await t.call('POST', '/auth/reset/password', { token: null, body: { token: tokenOf(link), password: 'short' } })).status).toBe(400)
    const res = await t.call('POST', '/auth/reset/password', { token: null, body: { token: tokenOf(link), password: 'a new password' } })
    expect(res.status, res.text).toBe(200)
    await signIn(t, email, 'a new password')
    const again = await t.call('POST', '/auth/reset/password', { token: null, body: { token: tokenOf(link), password: 'another password' } })
    expect(again.status).toBe(401)
    expect(again.body.name).toBe('AuthenticationRequired')
    expect((await t.call('GET', `/auth/reset/validate?token=${tokenOf(link)}`, { token: null })).status).toBe(401)
    const [event] = (await eventsOf('user-updated')).filter((e) => e.data.email === email)
    expect(event).toMatchObject({ created_by: email, data: { passwordChanged: true } })
    expect(JSON.stringify(await t.query('select * from events'))).not.toContain('a new password')
  })

  it('expires after 7 days', async () => {
    const token = tokenOf((await invite()).link)
    const saved = now
    now = new Date(saved.getTime() + 7 * 86_400_000 + 1000)
    try {
      expect((await t.call('GET', `/auth/reset/validate?token=${token}`, { token: null })).status).toBe(401)
      expect((await t.call('POST', '/auth/reset/password', { token: null, body: { token, password: 'long enough' } })).status).toBe(401)
    } finally {
      now = saved
    }
  })

  it('points to the configured public URL', async () => {
    const app = await createTestApp({ publicUrl: 'https://flags.example.com/' })
    try {
      const res = await app.call('POST', '/api/admin/user-admin', { body: { username: 'p', rootRole: 'Viewer' } })
      expect(res.body.inviteLink).toMatch(/^https:\/\/flags\.example\.com\/new-user\?token=[0-9a-f]{64}$/)
    } finally {
      await app.close()
    }
  })
})

describe('welcome e-mail', () => {
  it('is not sent, and emailSent is false, when no e-mail transport is configured', async () => {
    const res = await createUser({ email: `${fresh('nomail')}@example.com`, rootRole: 'Viewer', sendEmail: true })
    expect(res.body.emailSent).toBe(false)
  })

  it('is handed to a configured transport, with the invite link; emailSent is true only then', async () => {
    const sent: Email[] = []
    let failing = false
    const transport: EmailTransport = {
      async send(email) {
        if (failing) throw new Error('relay down')
        sent.push(email)
      },
    }
    const app = await createTestApp({ email: transport, publicUrl: 'https://flags.example.com' })
    try {
      const res = await app.call('POST', '/api/admin/user-admin', { body: { email: 'mailed@example.com', name: 'Mae', rootRole: 'Viewer' } })
      expect(res.body.emailSent).toBe(true)
      expect(sent).toEqual([expect.objectContaining({ to: 'mailed@example.com', text: expect.stringContaining(res.body.inviteLink) })])
      const notAsked = await app.call('POST', '/api/admin/user-admin', { body: { email: 'quiet@example.com', rootRole: 'Viewer', sendEmail: false } })
      expect(notAsked.body.emailSent).toBe(false)
      const noAddress = await app.call('POST', '/api/admin/user-admin', { body: { username: 'noaddress', rootRole: 'Viewer' } })
      expect(noAddress.body.emailSent).toBe(false)
      failing = true
      const failed = await app.call('POST', '/api/admin/user-admin', { body: { email: 'bounced@example.com', rootRole: 'Viewer' } })
      expect(failed.status).toBe(201)
      expect(failed.body.emailSent).toBe(false)
      expect(sent).toHaveLength(1)
    } finally {
      await app.close()
    }
  })
})

describe('the e-mail webhook transport', () => {
  it('posts the mail as JSON and counts only a 2xx answer as sent', async () => {
    const fetchSpy = vi.spyOn(globalThis, 'fetch')
    const app = await createTestApp({ email: webhookEmailTransport('https://mail.example.com/send'), publicUrl: 'https://flags.example.com' })
    try {
      fetchSpy.mockResolvedValueOnce(new Response(null, { status: 202 }))
      const sent = await app.call('POST', '/api/admin/user-admin', { body: { email: 'hooked@example.com', rootRole: 'Viewer' } })
      expect(sent.body.emailSent).toBe(true)
      const [url, init] = fetchSpy.mock.calls[0]!
      expect(String(url)).toBe('https://mail.example.com/send')
      expect(init).toMatchObject({ method: 'POST', headers: { 'content-type': 'application/json' } })
      expect(JSON.parse(init!.body as string)).toMatchObject({ to: 'hooked@example.com', subject: expect.any(String), text: expect.stringContaining(sent.body.inviteLink) })
      fetchSpy.mockResolvedValueOnce(new Response('no', { status: 500 }))
      expect((await app.call('POST', '/api/admin/user-admin', { body: { email: 'refused@example.com', rootRole: 'Viewer' } })).body.emailSent).toBe(false)
      fetchSpy.mockRejectedValueOnce(new TypeError('network down'))
      expect((await app.call('POST', '/api/admin/user-admin', { body: { email: 'offline@example.com', rootRole: 'Viewer' } })).body.emailSent).toBe(false)
    } finally {
      fetchSpy.mockRestore()
      await app.close()
    }
  })
})

describe('GET, PUT, DELETE /api/admin/user-admin', () => {
  /** A fresh Viewer named Carol, with a username, an e-mail and a password. */
  const createCarol = async () => {
    const username = fresh('carol')
    const email = `${username}@example.com`
    const res = await createUser({ email, username, name: 'Carol', password: PASSWORD, rootRole: 'Viewer' })
    expect(res.status, res.text).toBe(201)
    return { id: res.body.id as number, username, email }
  }

  it('lists active users and the root roles', async () => {
    const carol = await createCarol()
    const res = await t.call('GET', '/api/admin/user-admin')
    expect(res.status).toBe(200)
    expect(res.body.users.map((u: { username: string | null }) => u.username)).toContain(carol.username)
    expect(res.body.rootRoles.map((r: { name: string }) => r.name)).toEqual(['Admin', 'Editor', 'Viewer'])
    expect(JSON.stringify(res.body)).not.toMatch(/pbkdf2|passwordHash|password_hash|hunter2hunter2/)
  })

  it('reads one user; 404 for an unknown one, 400 for an id that is not a number', async () => {
    const { id, username, email } = await createCarol()
    const res = await t.call('GET', `/api/admin/user-admin/${id}`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id, email, username, rootRole: 3 })
    expect((await t.call('GET', '/api/admin/user-admin/999999')).status).toBe(404)
    expect((await t.call('GET', '/api/admin/user-admin/carol')).status).toBe(400)
  })

  it('updates name, e-mail and root role, records user-updated, and the new role applies at once', async () => {
    const { id, username } = await createCarol()
    const carol = await signIn(t, username)
    expect((await t.call('POST', '/api/admin/projects', { token: null, headers: { cookie: carol }, body: { name: 'Carol project' } })).status).toBe(403)
    const res = await t.call('PUT', `/api/admin/user-admin/${id}`, { body: { name: 'Carol C', email: `${username}.C@Example.com`, rootRole: 'Editor' } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ id, name: 'Carol C', email: `${username}.c@example.com`, rootRole: 2 })
    const [event] = (await eventsOf('user-updated')).filter((e) => e.data.id === id)
    expect(event).toMatchObject({ data: { name: 'Carol C', rootRole: 2 }, pre_data: { name: 'Carol', rootRole: 3 } })
    expect((await t.call('POST', '/api/admin/projects', { token: null, headers: { cookie: carol }, body: { name: 'Carol project' } })).status).toBe(201)
  })

  it('answers 400 for a taken e-mail or an unknown role, 404 for an unknown user', async () => {
    const { id } = await createCarol()
    const ann = (await createAnn()).body
    expect((await t.call('PUT', `/api/admin/user-admin/${id}`, { body: { email: ann.email.toUpperCase() } })).body.message).toBe('User already exists')
    expect((await t.call('PUT', `/api/admin/user-admin/${id}`, { body: { rootRole: 'Root' } })).status).toBe(400)
    expect((await t.call('PUT', '/api/admin/user-admin/999999', { body: { name: 'x' } })).status).toBe(404)
  })

  it('deletes a user: user-deleted, their session stops working, their e-mail and username are free again', async () => {
    const { id, username, email } = await createCarol()
    const carol = await signIn(t, username)
    const res = await t.call('DELETE', `/api/admin/user-admin/${id}`)
    expect(res.status).toBe(200)
    expect((await eventsOf('user-deleted')).filter((e) => e.pre_data.id === id)).toEqual([expect.objectContaining({ pre_data: expect.objectContaining({ id, username }) })])
    expect((await t.call('GET', '/api/admin/projects', { token: null, headers: { cookie: carol } })).status).toBe(401)
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username, password: PASSWORD } })).status).toBe(401)
    expect((await t.call('GET', `/api/admin/user-admin/${id}`)).status).toBe(404)
    expect((await t.call('DELETE', `/api/admin/user-admin/${id}`)).status).toBe(404)
    expect((await createUser({ email, username, rootRole: 'Viewer' })).status).toBe(201)
  })

  it('is for admins only', async () => {
    const { id } = await createCarol()
    for (const [method, path] of [
      ['GET', '/api/admin/user-admin'],
      ['GET', `/api/admin/user-admin/${id}`],
      ['PUT', `/api/admin/user-admin/${id}`],
      ['DELETE', `/api/admin/user-admin/${id}`],
    ] as const) {
      const res = await viewer.call(method, path, method === 'PUT' ? { body: { name: 'x' } } : {})
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body.message).toContain('permission=ADMIN')
    }
  })
})

describe('GET /api/admin/user', () => {
  it('returns the signed-in caller with their permissions', async () => {
    const res = await viewer.call('GET', '/api/admin/user')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ user: { id: viewer.id, username: 'vera', rootRole: 3 }, permissions: [], feedback: [], splash: {} })
  })

  it('answers an admin token as a service account', async () => {
    const res = await t.call('GET', '/api/admin/user')
    expect(res.body).toMatchObject({ user: { id: -1337, name: 'test-admin', accountType: 'Service Account', rootRole: 1 }, permissions: [{ permission: 'ADMIN' }] })
  })
})

describe('POST /api/admin/user/change-password', () => {
  const PATH = '/api/admin/user/change-password'
  const NEW = 'a brand new passphrase'

  it('changes your own password when the old one is right: sessions end, the new one signs in, user-updated without it', async () => {
    const user = await createSignedInUser(t, fresh('self'), 'Viewer')
    const res = await user.call('POST', PATH, { body: { oldPassword: PASSWORD, password: NEW, confirmPassword: NEW } })
    expect(res.status, res.text).toBe(200)
    expect((await user.call('GET', '/api/admin/user')).status).toBe(401)
    expect((await t.call('POST', '/auth/simple/login', { body: { username: user.username, password: PASSWORD }, token: null })).status).toBe(401)
    await signIn(t, user.username, NEW)
    const [event] = await t.query<{ data: any; created_by: string }>("select data, created_by from events where type = 'user-updated' and (data->>'id')::int = $1 order by id desc limit 1", [user.id])
    expect(event!.data).toMatchObject({ passwordChanged: true })
    expect(event!.created_by).toBe(user.username)
    expect(JSON.stringify(event)).not.toContain(NEW)
  })

  it.each([
    ['no old password', { password: NEW }, 'body.oldPassword'],
    ['a wrong old password', { oldPassword: 'not my password', password: NEW }, 'body.oldPassword'],
    ['a confirmation that differs', { oldPassword: PASSWORD, password: NEW, confirmPassword: 'something else' }, 'body.confirmPassword'],
    ['a new password too short', { oldPassword: PASSWORD, password: 'short' }, 'body.password'],
  ])('answers 400 for %s, keeping the password and the session', async (_, body, path) => {
    const user = await createSignedInUser(t, fresh('keep'), 'Viewer')
    const res = await user.call('POST', PATH, { body })
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', details: [expect.objectContaining({ path })] })
    expect((await user.call('GET', '/api/admin/user')).status).toBe(200)
    await signIn(t, user.username, PASSWORD)
  })

  it('counts a wrong old password as a failed sign-in: after ten, the account is locked', async () => {
    const user = await createSignedInUser(t, fresh('guess'), 'Viewer')
    for (let i = 0; i < 10; i++) expect((await user.call('POST', PATH, { body: { oldPassword: `guess ${i} wrong`, password: NEW } })).status).toBe(400)
    expect((await user.call('POST', PATH, { body: { oldPassword: PASSWORD, password: NEW } })).status).toBe(400)
    expect((await t.call('POST', '/auth/simple/login', { body: { username: user.username, password: PASSWORD }, token: null })).status).toBe(401)
  })

  it('refuses an API token with 403 and no credentials with 401', async () => {
    const res = await t.call('POST', PATH, { body: { oldPassword: 'x', password: NEW } })
    expect(res.status, res.text).toBe(403)
    expect(res.body.name).toBe('NoAccessError')
    expect((await t.call('POST', PATH, { body: { oldPassword: 'x', password: NEW }, token: null })).status).toBe(401)
  })
})

describe('GET /api/admin/user-admin/search', () => {
  const search = (q: string, as: { call: TestUser['call'] } | undefined = undefined) => (as ? as.call('GET', `/api/admin/user-admin/search?q=${encodeURIComponent(q)}`) : t.call('GET', `/api/admin/user-admin/search?q=${encodeURIComponent(q)}`))

  it('finds users by name, username or e-mail, ignoring case, answering only what names them', async () => {
    const tag = fresh('zebra').replace('-', '')
    const created = await createUser({ username: `${tag}-rider`, name: `Zoe ${tag.toUpperCase()}`, email: `${tag}@stripes.example`, password: 'zebra passphrase', rootRole: 'Viewer' })
    expect(created.status, created.text).toBe(201)
    for (const q of [tag, tag.toUpperCase(), `${tag}-rid`, `${tag}@stripes`, `zoe ${tag}`]) {
      const res = await search(q)
      expect(res.status, res.text).toBe(200)
      expect(res.body, q).toEqual([{ id: created.body.id, name: `Zoe ${tag.toUpperCase()}`, username: `${tag}-rider`, email: `${tag}@stripes.example`, imageUrl: expect.stringMatching(/^https:\/\//) }])
    }
    // Never password data, sessions or sign-in records.
    expect(JSON.stringify((await search(tag)).body)).not.toMatch(/password|loginAttempts|seenAt|session|rootRole/i)
  })

  it('finds no one with fewer than 2 characters, takes % and _ literally, leaves deleted users out and answers at most 20', async () => {
    const tag = fresh('many').replace('-', '')
    const ids: number[] = []
    for (let i = 0; i < 22; i++) ids.push((await createUser({ username: `${tag}-${String(i).padStart(2, '0')}`, rootRole: 'Viewer', sendEmail: false })).body.id)
    const found = await search(tag)
    expect(found.body).toHaveLength(20)
    expect(found.body.map((u: { username: string }) => u.username)).toEqual(Array.from({ length: 20 }, (_, i) => `${tag}-${String(i).padStart(2, '0')}`))
    expect((await search('a')).body).toEqual([])
    expect((await search('')).body).toEqual([])
    expect((await search('%%')).body).toEqual([])
    expect((await search(`${tag}_0`)).body).toEqual([])
    expect((await t.call('DELETE', `/api/admin/user-admin/${ids[0]}`)).status).toBe(200)
    expect((await search(`${tag}-00`)).body).toEqual([])
    // Service accounts are no users to search for (as users' listings leave them out).
    expect((await t.call('POST', '/api/admin/service-account', { body: { username: `${tag}-bot`, name: 'Bot', rootRole: 'Viewer' } })).status).toBe(201)
    expect((await search(`${tag}-bot`)).body).toEqual([])
  })

  it('answers 400 for a query over 100 characters', async () => {
    const res = await search('x'.repeat(101))
    expect(res.status).toBe(400)
    expect(res.body.name).toBe('ValidationError')
  })

  it("answers a project's Owner who is no admin, and refuses a Viewer who owns no project, naming the permission", async () => {
    const owner = await createSignedInUser(t, fresh('owner'), 'Viewer')
    const project = fresh('owned')
    expect((await t.call('POST', '/api/admin/projects', { body: { id: project, name: project } })).status).toBe(201)
    expect((await viewer.call('GET', '/api/admin/user-admin/search?q=vera')).status).toBe(403)
    expect((await viewer.call('GET', '/api/admin/user-admin/search?q=vera')).body.message).toMatch(/permission=UPDATE_PROJECT in at least one project/)
    expect((await t.call('POST', `/api/admin/projects/${project}/access`, { body: { roles: [4], users: [owner.id] } })).status).toBe(200)
    // Their session's principal was forgotten by that write: the next request reads their new role.
    const res = await owner.call('GET', '/api/admin/user-admin/search?q=vera')
    expect(res.status, res.text).toBe(200)
    expect(res.body.map((u: { username: string }) => u.username)).toContain('vera')
  })
})
