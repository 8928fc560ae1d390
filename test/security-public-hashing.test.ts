import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createApp } from '../src/app.js'
import { createTestApp, type TestApp } from './helpers/app.js'

// Counts the PBKDF2 hashes of new passwords (the real hash still runs).
const hashed = vi.hoisted(() => ({ count: 0 }))
vi.mock('../src/users/passwords.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/users/passwords.js')>()
  return {
    ...real,
    hashPassword: async (password: string) => {
      hashed.count++
      return real.hashPassword(password)
    },
  }
})

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const fromSocket = (remoteAddress: string) => ({ incoming: { socket: { remoteAddress } } })
const MADE_UP = 'f'.repeat(64)

describe('public routes that set a password hash it only for a link that works', () => {
  it('POST /auth/reset/password with a made-up link: 401, no PBKDF2', async () => {
    hashed.count = 0
    const res = await t.call('POST', '/auth/reset/password', { token: null, body: { token: MADE_UP, password: 'a long enough password' } })
    expect(res.status, res.text).toBe(401)
    expect(res.body).toMatchObject({ name: 'AuthenticationRequired' })
    expect(hashed.count).toBe(0)
  })

  it('POST /invite/{token}/signup with a made-up link: 400, no PBKDF2', async () => {
    hashed.count = 0
    const res = await t.call('POST', `/invite/${MADE_UP}/signup`, { token: null, body: { email: 'nobody@example.com', name: 'Nobody', password: 'a long enough password' } })
    expect(res.status, res.text).toBe(400)
    expect(hashed.count).toBe(0)
  })

  it('a working reset link still sets the password (hashed once)', async () => {
    const created = await t.call('POST', '/api/admin/user-admin', { body: { email: 'reset-once@example.com', rootRole: 'Viewer', sendEmail: false } })
    expect(created.status, created.text).toBe(201)
    const token = new URL(created.body.inviteLink).searchParams.get('token')!
    hashed.count = 0
    const res = await t.call('POST', '/auth/reset/password', { token: null, body: { token, password: 'a long enough password' } })
    expect(res.status, res.text).toBe(200)
    expect(hashed.count).toBe(1)
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username: 'reset-once@example.com', password: 'a long enough password' } })).status).toBe(200)
  })
})

describe('/auth/reset/* is limited per client address as sign-in is', () => {
  it('POST /auth/reset/password and GET /auth/reset/validate answer 429 past the limit, with Retry-After; another address has its own count', async () => {
    const app = createApp({ db: () => t.db, background: () => {}, signIn: { perMinute: 2 } })
    const reset = (peer: string) =>
      app.request('/auth/reset/password', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: MADE_UP, password: 'a long enough password' }) }, fromSocket(peer))
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await reset('198.51.100.40')).status)
    expect(statuses).toEqual([401, 401, 429])
    const limited = await reset('198.51.100.40')
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await limited.json()).toMatchObject({ name: 'TooManyRequestsError', message: expect.any(String), id: expect.any(String) })
    expect((await reset('198.51.100.41')).status).toBe(401)
    const validate = () => app.request(`/auth/reset/validate?token=${MADE_UP}`, {}, fromSocket('198.51.100.42'))
    expect([(await validate()).status, (await validate()).status, (await validate()).status]).toEqual([401, 401, 429])
  })
})
