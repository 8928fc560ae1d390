import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import type { Email } from '../src/users/email.js'
import type { RunInBackground } from '../src/http/background.js'
import { createUser, createUserWithEmail, fresh } from './helpers/factories.js'
import { signIn } from './helpers/users.js'

const PUBLIC_URL = 'https://flags.example.com'
let now = new Date('2026-03-01T10:00:00Z')
let t: TestApp
const sent: Email[] = []
const pending: Promise<unknown>[] = []
const background: RunInBackground = (c, task) => void pending.push(task(c.var.db))
const settle = async () => void (await Promise.all(pending.splice(0)))

beforeAll(async () => {
  t = await createTestApp({ now: () => now, publicUrl: PUBLIC_URL, email: { send: async (e) => void sent.push(e) }, background, signIn: { perMinute: 0 } })
})
afterAll(() => t.close())

const askReset = (email: string, headers: Record<string, string> = {}) => t.call('POST', '/auth/reset/password-email', { token: null, body: { email }, headers })
const linkIn = (mail: Email) => /https?:\/\/\S+/.exec(mail.text)![0]
const tokenOf = (link: string) => new URL(link).searchParams.get('token')!
async function mailsTo(email: string) {
  await settle()
  return sent.filter((m) => m.to === email)
}
const later = (ms: number) => (now = new Date(now.getTime() + ms))

describe('POST /auth/reset/password-email', () => {
  it('e-mails a single-use link to the configured public URL; setting the password ends the user\'s sessions', async () => {
    const user = await createUserWithEmail(t)
    expect((await user.call('GET', '/api/admin/user')).status).toBe(200)
    const res = await askReset(user.email.toUpperCase())
    expect(res.status, res.text).toBe(200)
    const [mail] = await mailsTo(user.email)
    const link = linkIn(mail!)
    expect(link.startsWith(`${PUBLIC_URL}/new-user?token=`)).toBe(true)
    const token = tokenOf(link)
    const check = await t.call('GET', `/auth/reset/validate?token=${token}`, { token: null })
    expect(check.status, check.text).toBe(200)
    expect(check.body).toMatchObject({ id: user.id, email: user.email })
    expect((await t.call('POST', '/auth/reset/password', { token: null, body: { token, password: 'a brand new secret' } })).status).toBe(200)
    // The old session is over; the new password signs in; the link is used up.
    expect((await user.call('GET', '/api/admin/user')).status).toBe(401)
    await signIn(t, user.username, 'a brand new secret')
    const again = await t.call('POST', '/auth/reset/password', { token: null, body: { token, password: 'another new secret' } })
    expect(again.status).toBe(401)
    expect(again.body).toMatchObject({ name: 'AuthenticationRequired' })
  })

  it('answers an unknown address exactly as a known one, and sends nothing (no account enumeration)', async () => {
    const user = await createUserWithEmail(t)
    const known = await askReset(user.email)
    const unknown = await askReset(`${fresh('nobody')}@example.com`)
    expect(unknown.status).toBe(known.status)
    expect(unknown.text).toBe(known.text)
    await settle()
    expect(sent.some((m) => m.to.startsWith('nobody'))).toBe(false)
  })

  it('never builds the link from the request\'s Host or forwarding headers (link origin poisoning)', async () => {
    const user = await createUserWithEmail(t)
    expect((await askReset(user.email, { host: 'evil.example', 'x-forwarded-host': 'evil.example' })).status).toBe(200)
    const [mail] = await mailsTo(user.email)
    expect(new URL(linkIn(mail!)).origin).toBe(PUBLIC_URL)
    expect(mail!.text).not.toContain('evil.example')
  })

  it('sends no e-mail at all when the deployment has no public URL', async () => {
    const mails: Email[] = []
    const jobs: Promise<unknown>[] = []
    const bare = await createTestApp({ email: { send: async (e) => void mails.push(e) }, background: (c, task) => void jobs.push(task(c.var.db)), signIn: { perMinute: 0 } })
    try {
      const res = await bare.call('POST', '/api/admin/user-admin', { body: { username: 'ola', email: 'ola@example.com', password: 'password-1', rootRole: 'Viewer', sendEmail: false } })
      expect(res.status, res.text).toBe(201)
      const asked = await bare.call('POST', 'http://evil.example/auth/reset/password-email', { token: null, body: { email: 'ola@example.com' } })
      expect(asked.status).toBe(200)
      await Promise.all(jobs)
      expect(mails).toEqual([])
      expect(await bare.query('select * from reset_tokens where created_by = $1', ['password-reset-email'])).toEqual([])
    } finally {
      await bare.close()
    }
  })

  it('e-mails no admin-made reset link or welcome link without a public URL: never one built from a forged Host header', async () => {
    const mails: Email[] = []
    const bare = await createTestApp({ email: { send: async (e) => void mails.push(e) }, signIn: { perMinute: 0 } })
    try {
      const made = await bare.call('POST', 'http://evil.example/api/admin/user-admin', { body: { username: 'kari', email: 'kari@example.com', rootRole: 'Viewer', sendEmail: true }, headers: { host: 'evil.example' } })
      expect(made.status, made.text).toBe(201)
      expect(made.body.emailSent).toBe(false)
      const reset = await bare.call('POST', 'http://evil.example/api/admin/user-admin/reset-password', { body: { id: 'kari@example.com' }, headers: { host: 'evil.example' } })
      expect(reset.status, reset.text).toBe(200)
      expect(mails).toEqual([])
    } finally {
      await bare.close()
    }
  })

  it('claims the once-a-minute e-mail on the account\'s one row: concurrent asks send one link', async () => {
    const user = await createUserWithEmail(t)
    await Promise.all([askReset(user.email), askReset(user.email), askReset(user.email)])
    expect(await mailsTo(user.email)).toHaveLength(1)
    expect(await t.query('select * from reset_email_claims where user_id = $1', [user.id])).toHaveLength(1)
    expect(await t.query('select * from reset_tokens where user_id = $1 and created_by = $2', [user.id, 'password-reset-email'])).toHaveLength(1)
  })

  it('stores only the link\'s hash, and a guessed token is refused', async () => {
    const user = await createUserWithEmail(t)
    await askReset(user.email)
    const [mail] = await mailsTo(user.email)
    const token = tokenOf(linkIn(mail!))
    expect(token).toMatch(/^[0-9a-f]{64}$/)
    const rows = await t.query<{ token_hash: string }>('select token_hash from reset_tokens where user_id = $1', [user.id])
    expect(rows.some((r) => r.token_hash === token)).toBe(false)
    const guess = await t.call('GET', `/auth/reset/validate?token=${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`, { token: null })
    expect(guess.status).toBe(401)
  })

  it('expires the link after 24 hours', async () => {
    const user = await createUserWithEmail(t)
    await askReset(user.email)
    const [mail] = await mailsTo(user.email)
    later(24 * 60 * 60_000 + 1000)
    const res = await t.call('GET', `/auth/reset/validate?token=${tokenOf(linkIn(mail!))}`, { token: null })
    expect(res.status).toBe(401)
  })

  it('sends one link per account per minute, whoever asks', async () => {
    const user = await createUserWithEmail(t)
    await askReset(user.email)
    await askReset(user.email)
    await askReset(user.email)
    expect(await mailsTo(user.email)).toHaveLength(1)
    later(61_000)
    await askReset(user.email)
    expect(await mailsTo(user.email)).toHaveLength(2)
  })

  it('is limited per client address as sign-in is (429 with Retry-After)', async () => {
    const limited = await createTestApp({ signIn: { perMinute: 3 }, clientAddress: (c) => c.req.header('x-test-peer'), background: (c, task) => void task(c.var.db) })
    try {
      const ask = (peer: string) => limited.call('POST', '/auth/reset/password-email', { token: null, body: { email: 'x@example.com' }, headers: { 'x-test-peer': peer } })
      for (let i = 0; i < 3; i++) expect((await ask('203.0.113.9')).status).toBe(200)
      const refused = await ask('203.0.113.9')
      expect(refused.status).toBe(429)
      expect(refused.body).toMatchObject({ name: 'TooManyRequestsError' })
      expect(refused.headers.get('retry-after')).toBeTruthy()
      expect((await ask('203.0.113.10')).status).toBe(200)
    } finally {
      await limited.close()
    }
  })

  it('sends nothing while password sign-in is switched off', async () => {
    const user = await createUserWithEmail(t)
    await t.query(`insert into settings (name, content) values ('simple', '{"disabled": true}'), ('oidc', '{"enabled": true}') on conflict (name) do update set content = excluded.content`)
    try {
      expect((await askReset(user.email)).status).toBe(200)
      expect(await mailsTo(user.email)).toEqual([])
    } finally {
      await t.query(`delete from settings where name in ('simple', 'oidc')`)
    }
  })

  it('refuses a body without an e-mail (400) and one that is not JSON (415)', async () => {
    expect((await t.call('POST', '/auth/reset/password-email', { token: null, body: {} })).body).toMatchObject({ name: 'ValidationError' })
    const res = await t.call('POST', '/auth/reset/password-email', { token: null, body: 'email=x', headers: { 'content-type': 'text/plain' } })
    expect(res.status).toBe(415)
  })
})

describe('POST /auth/reset/validate-password and /api/admin/user-admin/validate-password', () => {
  it('takes a password every route that sets one takes, and refuses a short one with a 400', async () => {
    expect((await t.call('POST', '/auth/reset/validate-password', { token: null, body: { password: 'long enough' } })).status).toBe(200)
    const short = await t.call('POST', '/auth/reset/validate-password', { token: null, body: { password: 'short' } })
    expect(short.status).toBe(400)
    expect(short.body).toMatchObject({ name: 'ValidationError' })
    const viewer = await createUser(t, 'Viewer')
    expect((await viewer.call('POST', '/api/admin/user-admin/validate-password', { body: { password: 'long enough' } })).status).toBe(200)
    expect((await viewer.call('POST', '/api/admin/user-admin/validate-password', { body: { password: 'short' } })).status).toBe(400)
    expect((await viewer.call('POST', '/api/admin/user-admin/validate-password', { body: { password: 'long enough', confirmPassword: 'other one!' } })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/user-admin/validate-password', { token: null, body: { password: 'long enough' } })).status).toBe(401)
  })
})

describe('POST /api/admin/user-admin/reset-password', () => {
  it('gives an admin a working single-use link for a user, by e-mail or id, and e-mails it to them', async () => {
    const user = await createUserWithEmail(t)
    const res = await t.call('POST', '/api/admin/user-admin/reset-password', { body: { id: user.email } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.resetPasswordUrl.startsWith(`${PUBLIC_URL}/new-user?token=`)).toBe(true)
    expect((await mailsTo(user.email)).map(linkIn)).toContain(res.body.resetPasswordUrl)
    const token = tokenOf(res.body.resetPasswordUrl)
    expect((await t.call('POST', '/auth/reset/password', { token: null, body: { token, password: 'set by link 1' } })).status).toBe(200)
    await signIn(t, user.username, 'set by link 1')
    const byId = await t.call('POST', '/api/admin/user-admin/reset-password', { body: { id: String(user.id) } })
    expect(byId.status).toBe(200)
  })

  it('is for admins only, 404 for an unknown user, 403 while password sign-in is off', async () => {
    const editor = await createUser(t, 'Editor')
    const target = await createUserWithEmail(t)
    const denied = await editor.call('POST', '/api/admin/user-admin/reset-password', { body: { id: target.email } })
    expect(denied.status).toBe(403)
    expect(denied.body).toMatchObject({ name: 'NoAccessError' })
    expect((await t.call('POST', '/api/admin/user-admin/reset-password', { body: { id: 'nobody@example.com' } })).body).toMatchObject({ name: 'NotFoundError' })
    expect((await t.call('POST', '/api/admin/user-admin/reset-password', { body: {} })).status).toBe(400)
    await t.query(`insert into settings (name, content) values ('simple', '{"disabled": true}'), ('oidc', '{"enabled": true}') on conflict (name) do update set content = excluded.content`)
    try {
      expect((await t.call('POST', '/api/admin/user-admin/reset-password', { body: { id: target.email } })).status).toBe(403)
    } finally {
      await t.query(`delete from settings where name in ('simple', 'oidc')`)
    }
  })
})
