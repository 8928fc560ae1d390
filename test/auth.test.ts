import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { fresh, ok } from './helpers/factories.js'
import { asCookie, PASSWORD, sessionCookieOf, signIn } from './helpers/users.js'
import { PASSWORD_ITERATIONS } from '../src/users/passwords.js'

let t: TestApp
let now = new Date('2026-06-01T12:00:00Z')
beforeAll(async () => {
  t = await createTestApp({ now: () => now })
})
afterAll(() => t.close())

/** A fresh Editor, Sam, with a password and a mixed-case e-mail (Sam-n@Example.com). */
async function createSam() {
  const username = fresh('sam')
  const res = await ok(t, 'POST', '/api/admin/user-admin', { username, email: `${username.replace('sam', 'Sam')}@Example.com`, password: PASSWORD, rootRole: 'Editor' })
  return { userId: res.body.id as number, username, email: `${username}@example.com` }
}

const login = (username: string, password: string, url = '/auth/simple/login') => t.call('POST', url, { token: null, body: { username, password } })
const attempts = async (userId: number) => (await t.query<{ login_attempts: number }>('select login_attempts from users where id = $1', [userId]))[0]!.login_attempts

describe('POST /auth/simple/login', () => {
  it('signs in with the username and sets an HttpOnly, SameSite=Lax, expiring session cookie', async () => {
    const { userId, username, email } = await createSam()
    const res = await login(username, PASSWORD)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ id: userId, username, email, seenAt: now.toISOString(), loginAttempts: 0 })
    const cookie = res.headers.get('set-cookie')!
    expect(cookie).toMatch(/^flagpost-session=[0-9a-f]{64}; /)
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Lax')
    expect(cookie).toContain('Path=/')
    expect(cookie).toContain('Max-Age=172800')
    expect(cookie).not.toContain('Expires') // Max-Age is relative: the app's clock never names a browser date
    expect(cookie).not.toContain('Secure')
  })

  it('signs in when the app\'s clock is years from the real time (a cookie date is never taken from it)', async () => {
    const { username } = await createSam()
    const before = now
    now = new Date('2031-03-01T12:00:00Z')
    try {
      const res = await login(username, PASSWORD)
      expect(res.status, res.text).toBe(200)
      expect(res.headers.get('set-cookie')).toContain('Max-Age=172800')
    } finally {
      now = before
    }
  })

  it('marks the cookie Secure on https', async () => {
    const { username } = await createSam()
    const res = await t.app.request('https://flags.example.com/auth/simple/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: PASSWORD }),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('set-cookie')).toContain('Secure')
  })

  it('signs in with the e-mail in any case', async () => {
    const { username } = await createSam()
    expect((await login(`${username.toUpperCase()}@example.com`, PASSWORD)).status).toBe(200)
  })

  it('stores only a hash of the session id', async () => {
    const { username } = await createSam()
    const cookie = await signIn(t, username)
    const id = cookie.split('=')[1]!
    expect(JSON.stringify(await t.query('select * from sessions'))).not.toContain(id)
  })

  it('answers 401 with one message for a wrong password and an unknown user, and writes no event', async () => {
    const { username } = await createSam()
    const before = await t.query('select count(*)::int as n from events')
    const wrong = await login(username, 'not the password')
    const unknown = await login('nobody', 'not the password')
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(wrong.body.name).toBe('AuthenticationRequired')
    expect(wrong.body.message).toBe(unknown.body.message)
    expect(wrong.headers.get('set-cookie')).toBeNull()
    expect(await t.query('select count(*)::int as n from events')).toEqual(before)
  })

  it('runs one PBKDF2 of the same cost whether or not the user exists', async () => {
    const { username } = await createSam()
    const derive = vi.spyOn(crypto.subtle, 'deriveBits')
    try {
      await login('nobody-at-all', 'whatever-password')
      await login(username, 'whatever-password')
      expect(derive).toHaveBeenCalledTimes(2)
      for (const [params] of derive.mock.calls) expect(params).toMatchObject({ name: 'PBKDF2', hash: 'SHA-256', iterations: PASSWORD_ITERATIONS })
    } finally {
      derive.mockRestore()
    }
  })

  it('answers 400 for a body without username or password, 415 for one that is not JSON', async () => {
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username: 'sam' } })).status).toBe(400)
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: 'username=sam', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(415)
  })
})

describe('failed sign-ins', () => {
  it('count up in loginAttempts and a success resets them', async () => {
    const { userId, username } = await createSam()
    await login(username, PASSWORD)
    expect(await attempts(userId)).toBe(0)
    await login(username, 'wrong')
    await login(username, 'wrong')
    expect(await attempts(userId)).toBe(2)
    await login(username, PASSWORD)
    expect(await attempts(userId)).toBe(0)
  })

  it('pause sign-in after 10 in a row, and an admin setting a new password ends the pause before its delay', async () => {
    const { userId, username } = await createSam()
    for (let i = 0; i < 10; i++) expect((await login(username, `wrong ${i}`)).status).toBe(401)
    expect(await attempts(userId)).toBe(10)
    const locked = await login(username, PASSWORD)
    expect(locked.status).toBe(401)
    expect(locked.body.message).toContain('try again later')
    // A refused attempt is not counted: the pause does not grow from attempts it refused.
    expect((await t.call('GET', `/api/admin/user-admin/${userId}`)).body.loginAttempts).toBe(10)

    const reset = await t.call('POST', `/api/admin/user-admin/${userId}/change-password`, { body: { password: 'a brand new password' } })
    expect(reset.status, reset.text).toBe(200)
    expect(await attempts(userId)).toBe(0)
    expect((await login(username, PASSWORD)).status).toBe(401)
    expect((await login(username, 'a brand new password')).status).toBe(200)
    const events = await t.query<{ data: any }>("select data from events where type = 'user-updated' order by id desc limit 1")
    expect(events[0]!.data).toMatchObject({ id: userId, passwordChanged: true, loginAttempts: 0 })
    expect(JSON.stringify(events)).not.toContain('a brand new password')
  })

  it('answers 400 for a new password under 8 characters, 404 for an unknown user', async () => {
    const { userId } = await createSam()
    expect((await t.call('POST', `/api/admin/user-admin/${userId}/change-password`, { body: { password: 'short' } })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/user-admin/999999/change-password', { body: { password: 'long enough' } })).status).toBe(404)
  })
})

describe('the session cookie', () => {
  it('is accepted by /api/admin routes like a token, acting as the user', async () => {
    const { userId, username, email } = await createSam()
    const as = asCookie(t, await signIn(t, username))
    const sams = fresh('sams')
    const res = await as('POST', '/api/admin/projects', { body: { id: sams, name: 'Sam' } })
    expect(res.status, res.text).toBe(201)
    const [event] = await t.query<{ created_by: string; created_by_user_id: number }>("select created_by, created_by_user_id from events where type = 'project-created' and project = $1", [sams])
    expect(event).toEqual({ created_by: email, created_by_user_id: userId })
    expect((await as('GET', '/api/admin/user')).body.user.id).toBe(userId)
  })

  it('does not count when an Authorization header is given: the header decides', async () => {
    const { username } = await createSam()
    const cookie = await signIn(t, username)
    const res = await t.call('GET', '/api/admin/projects', { token: '*:*.not-a-token', headers: { cookie } })
    expect(res.status).toBe(401)
  })

  it('answers 401 for an unknown session id', async () => {
    expect((await asCookie(t, 'flagpost-session=abc')('GET', '/api/admin/projects')).status).toBe(401)
  })

  it('ends at logout: the session is deleted and the cookie cleared', async () => {
    const { username } = await createSam()
    const cookie = await signIn(t, username)
    const as = asCookie(t, cookie)
    expect((await as('GET', '/api/admin/projects')).status).toBe(200)
    const res = await as('POST', '/logout')
    expect(res.status).toBe(200)
    expect(res.headers.get('set-cookie')).toMatch(/^flagpost-session=; /)
    expect((await as('GET', '/api/admin/projects')).status).toBe(401)
    expect((await t.call('POST', '/logout', { token: null })).status).toBe(200)
  })

  it('expires after 48 hours', async () => {
    const { username } = await createSam()
    const as = asCookie(t, await signIn(t, username))
    const saved = now
    try {
      now = new Date(saved.getTime() + 48 * 3_600_000 - 1000)
      expect((await as('GET', '/api/admin/projects')).status).toBe(200)
      now = new Date(saved.getTime() + 48 * 3_600_000 + 1000)
      expect((await as('GET', '/api/admin/projects')).status).toBe(401)
    } finally {
      now = saved
    }
  })

  it('stops working when the password is changed', async () => {
    const { userId, username } = await createSam()
    const as = asCookie(t, await signIn(t, username))
    await t.call('POST', `/api/admin/user-admin/${userId}/change-password`, { body: { password: PASSWORD } })
    expect((await as('GET', '/api/admin/projects')).status).toBe(401)
  })

  it('is the cookie login sets', async () => {
    const { username } = await createSam()
    const res = await login(username, PASSWORD)
    expect((await asCookie(t, sessionCookieOf(res))('GET', '/api/admin/projects')).status).toBe(200)
  })
})
