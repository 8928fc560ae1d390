import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { MAX_LOGIN_ATTEMPTS } from '../src/auth/login.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser, PASSWORD, type TestUser } from './helpers/users.js'

let t: TestApp
let editor: TestUser
beforeAll(async () => {
  t = await createTestApp()
  editor = await createSignedInUser(t, 'cookie-editor', 'Editor')
})
afterAll(() => t.close())

const login = (username: string, password: string, headers: Record<string, string> = {}) =>
  t.call('POST', '/auth/simple/login', { token: null, body: { username, password }, headers })

describe('the lockout after failed sign-ins', () => {
  it('holds against concurrent attempts: the right password after 15 wrong ones, all at once, does not get in', async () => {
    const user = await createSignedInUser(t, 'raced', 'Viewer')
    const attempts = [...Array.from({ length: 15 }, (_, i) => login(user.username, `wrong ${i}`)), login(user.username, PASSWORD)]
    const answers = await Promise.all(attempts)
    expect(answers.map((a) => a.status)).toEqual(Array(16).fill(401))
    const [row] = await t.query<{ login_attempts: number }>('select login_attempts from users where id = $1', [user.id])
    // The attempts past the limit were refused unchecked, during the first lockout delay.
    expect(row!.login_attempts).toBe(MAX_LOGIN_ATTEMPTS)
    // Locked: the right password alone no longer signs in.
    expect((await login(user.username, PASSWORD)).status).toBe(401)
  })

  it('lets concurrent attempts within the limit through: the right password among 5 wrong ones signs in', async () => {
    const user = await createSignedInUser(t, 'few-wrong', 'Viewer')
    const answers = await Promise.all([...Array.from({ length: 5 }, (_, i) => login(user.username, `wrong ${i}`)), login(user.username, PASSWORD)])
    expect(answers.at(-1)!.status).toBe(200)
  })
})

describe('the sign-in rate limit per client address', () => {
  it('answers 429 TooManyRequestsError with Retry-After past 10 attempts a minute from one address, and counts addresses apart', async () => {
    let now = new Date('2026-06-01T12:00:00Z')
    const app = createApp({ db: () => t.db, clock: () => now, background: () => {}, clientAddress: (c) => c.req.header('x-test-address') })
    const attempt = (address: string) =>
      app.request('/auth/simple/login', { method: 'POST', headers: { 'content-type': 'application/json', 'x-test-address': address }, body: JSON.stringify({ username: 'nobody', password: 'guess' }) })
    for (let i = 0; i < 10; i++) expect((await attempt('203.0.113.7')).status).toBe(401)
    const limited = await attempt('203.0.113.7')
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('60')
    expect(await limited.json()).toMatchObject({ name: 'TooManyRequestsError' })
    expect((await attempt('198.51.100.1')).status).toBe(401)
    now = new Date(now.getTime() + 61_000)
    expect((await attempt('203.0.113.7')).status).toBe(401)
  })
})

describe('cross-site writes with the session cookie', () => {
  const flags = '/api/admin/projects/default/features'
  const formPost = (headers: Record<string, string>) =>
    t.call('POST', flags, { token: null, body: 'name=csrf-flag', headers: { cookie: editor.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers } })

  it('refuses a form posted from another site (Origin or Sec-Fetch-Site) with 403, before anything is written', async () => {
    for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site', origin: 'https://sibling.localhost' }, { origin: 'null' }] as Record<string, string>[]) {
      const res = await formPost(headers)
      expect(res.status, JSON.stringify(headers)).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError' })
    }
    const json = await editor.call('POST', flags, { body: { name: 'csrf-json' }, headers: { origin: 'https://evil.example' } })
    expect(json.status).toBe(403)
    expect((await editor.call('DELETE', '/api/admin/projects/default/features/nothing', { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(403)
    expect(await t.query("select name from features where name like 'csrf-%'")).toEqual([])
  })

  it('refuses signing in from another site', async () => {
    expect((await login('cookie-editor', PASSWORD, { origin: 'https://evil.example' })).status).toBe(403)
  })

  it('accepts the same origin, requests that name no site (scripts), and tokens from anywhere', async () => {
    expect((await editor.call('POST', flags, { body: { name: 'same-origin' }, headers: { origin: 'http://localhost', 'sec-fetch-site': 'same-origin' } })).status).toBe(201)
    expect((await editor.call('POST', flags, { body: { name: 'no-origin' } })).status).toBe(201)
    expect((await t.call('POST', flags, { body: { name: 'token-anywhere' }, headers: { origin: 'https://elsewhere.example', 'sec-fetch-site': 'cross-site' } })).status).toBe(201)
  })
})

describe('API token secrets', () => {
  it('never travel in a header: Location names the token by its masked secret', async () => {
    const res = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'no-leak', type: 'client', environment: 'development', projects: ['*'] } })
    expect(res.status, res.text).toBe(201)
    const secret: string = res.body.secret
    const random = secret.slice(secret.indexOf('.') + 1)
    for (const [name, value] of res.headers) expect(value, name).not.toContain(random)
    expect(res.headers.get('location')).toMatch(/^\/api\/admin\/api-tokens\//)
  })
})
