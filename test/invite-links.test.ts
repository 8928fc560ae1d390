// Public invite links: admins make and manage them (/api/admin/invite-link/tokens), anyone with one signs up
// (/invite/{token}/validate, /invite/{token}/signup) and is signed in with the link's root role.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { fresh, ok } from './helpers/factories.js'
import { asCookie, createSignedInUser, sessionCookieOf } from './helpers/users.js'

let t: TestApp
let clockAhead = 0
const DAY = 24 * 60 * 60_000
const inDays = (days: number) => new Date(Date.now() + days * DAY).toISOString()
const LINKS = '/api/admin/invite-link/tokens'

beforeAll(async () => {
  t = await createTestApp({ now: () => new Date(Date.now() + clockAhead), publicUrl: 'https://flags.example.com' })
})
afterAll(() => t.close())

async function createLink(body: Record<string, unknown> = {}) {
  const res = await t.call('POST', LINKS, { body: { name: fresh('invite'), expiresAt: inDays(7), ...body } })
  expect(res.status, res.text).toBe(201)
  return res.body as { secret: string; url: string; name: string; role: { id: number; name: string }; expiresAt: string; createdAt: string; enabled: boolean }
}
const signUp = (secret: string, body: Record<string, unknown>) => t.call('POST', `/invite/${secret}/signup`, { token: null, body })
const person = (extra: Record<string, unknown> = {}): { email: string; name: string; password: string; username?: string } => {
  const name = fresh('person')
  return { email: `${name}@example.com`, name: `Person ${name}`, password: 'a long enough password', ...extra }
}

describe('making invite links', () => {
  it('creates a link for Viewers by default, answering its secret and URL once', async () => {
    const link = await createLink()
    expect(link.secret).toMatch(/^[0-9a-f]{32}$/)
    expect(link.url).toBe(`https://flags.example.com/sign-up?invite=${link.secret}`)
    expect(link).toMatchObject({ enabled: true, role: { id: 3, name: 'Viewer' }, users: [], createdBy: 'test-admin' })
    const listed = (await ok(t, 'GET', LINKS)).body.tokens.find((l: { name: string }) => l.name === link.name)
    expect(listed).toMatchObject({ secret: `${link.secret.slice(0, 6)}…`, url: null, enabled: true })
    const [event] = await t.query<{ data: any; created_by: string }>(`select data, created_by from events where type = 'public-signup-token-created' and data->>'name' = $1`, [link.name])
    expect(event).toEqual({ created_by: 'test-admin', data: { name: link.name, secret: `${link.secret.slice(0, 6)}…`, enabled: true, expiresAt: link.expiresAt, createdAt: link.createdAt, role: link.role, createdBy: 'test-admin' } })
    expect(JSON.stringify(await t.query('select data, pre_data from events'))).not.toContain(link.secret)
    expect(await t.query(`select count(*)::int as n from public_signup_tokens where secret_hash = $1 or display_secret = $1`, [link.secret])).toEqual([{ n: 0 }])
  })

  it('takes a root role by name or id, and caps the expiry at a month (as Unleash)', async () => {
    expect((await createLink({ role: 'Editor' })).role.name).toBe('Editor')
    expect((await createLink({ role: 1 })).role.name).toBe('Admin')
    const far = await createLink({ expiresAt: inDays(365) })
    expect(new Date(far.expiresAt).getTime()).toBeLessThanOrEqual(Date.now() + 31 * DAY + 60_000)
  })

  it('takes a custom root role, whose permissions the people who sign up then hold', async () => {
    const role = (await ok(t, 'POST', '/api/admin/roles', { name: fresh('Segment keeper'), type: 'root-custom', permissions: [{ name: 'CREATE_SEGMENT' }] })).body.roles
    const link = await createLink({ role: role.name })
    expect(link.role).toMatchObject({ id: role.id, name: role.name })
    const res = await signUp(link.secret, person())
    expect(res.status, res.text).toBe(200)
    const me = await asCookie(t, sessionCookieOf(res))('GET', '/api/admin/user')
    expect(me.body.permissions).toContainEqual(expect.objectContaining({ permission: 'CREATE_SEGMENT' }))
  })

  it.each([
    ['an unknown role', { role: 'Overlord' }],
    ['a project role', { role: 'Owner' }],
    ['a past expiry', { expiresAt: new Date(Date.now() - 60_000).toISOString() }],
    ['an expiry that is no date', { expiresAt: 'tomorrow' }],
    ['an empty name', { name: '' }],
    ['an unknown field', { secret: 'mine' }],
  ])('refuses %s with 400', async (_what, patch) => {
    const res = await t.call('POST', LINKS, { body: { name: fresh('bad'), expiresAt: inDays(3), ...patch } })
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
  })

  it('reads one link by its full secret or by what listings show, and 404s an unknown one', async () => {
    const link = await createLink()
    expect((await ok(t, 'GET', `${LINKS}/${link.secret}`)).body.name).toBe(link.name)
    expect((await ok(t, 'GET', `${LINKS}/${encodeURIComponent(`${link.secret.slice(0, 6)}…`)}`)).body.name).toBe(link.name)
    expect((await t.call('GET', `${LINKS}/0123456789abcdef0123456789abcdef`)).status).toBe(404)
  })

  it('updates enabled and the expiry, recording the link as it was', async () => {
    const link = await createLink()
    const off = await t.call('PUT', `${LINKS}/${link.secret}`, { body: { enabled: false } })
    expect(off.status, off.text).toBe(200)
    expect(off.body.enabled).toBe(false)
    expect((await t.call('GET', `/invite/${link.secret}/validate`, { token: null })).status).toBe(400)
    const later = inDays(20)
    const on = await ok(t, 'PUT', `${LINKS}/${link.secret}`, { enabled: true, expiresAt: later })
    expect(on.body).toMatchObject({ enabled: true, expiresAt: later })
    const events = await t.query<{ data: any; pre_data: any }>(`select data, pre_data from events where type = 'public-signup-token-updated' and data->>'name' = $1 order by id`, [link.name])
    expect(events.map((e) => [e.pre_data.enabled, e.data.enabled])).toEqual([[true, false], [false, true]])
    expect(events[1]!.data.expiresAt).toBe(later)
    // The same again changes nothing and records nothing.
    await ok(t, 'PUT', `${LINKS}/${link.secret}`, { enabled: true })
    expect(await t.query(`select count(*)::int as n from events where type = 'public-signup-token-updated' and data->>'name' = $1`, [link.name])).toEqual([{ n: 2 }])
  })

  it('refuses an update with nothing to change, a past expiry, or an unknown link', async () => {
    const link = await createLink()
    expect((await t.call('PUT', `${LINKS}/${link.secret}`, { body: {} })).status).toBe(400)
    expect((await t.call('PUT', `${LINKS}/${link.secret}`, { body: { expiresAt: new Date(Date.now() - DAY).toISOString() } })).status).toBe(400)
    expect((await t.call('PUT', `${LINKS}/ffffffffffffffffffffffffffffffff`, { body: { enabled: false } })).status).toBe(404)
  })
})

describe('signing up with an invite link', () => {
  it('validates a working link and refuses an unknown one', async () => {
    const link = await createLink()
    expect((await t.call('GET', `/invite/${link.secret}/validate`, { token: null })).status).toBe(200)
    const unknown = await t.call('GET', '/invite/0123456789abcdef0123456789abcdef/validate', { token: null })
    expect(unknown.status).toBe(400)
    expect(unknown.body.name).toBe('ValidationError')
    // The masked form names a link only for admins.
    expect((await t.call('GET', `/invite/${encodeURIComponent(`${link.secret.slice(0, 6)}…`)}/validate`, { token: null })).status).toBe(400)
  })

  it("creates the user with the link's role, signs them in, and records both events by the new user", async () => {
    const link = await createLink({ role: 'Editor' })
    const who = person({ username: fresh('user') })
    const res = await signUp(link.secret, who)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ email: who.email, name: who.name, username: who.username, rootRole: 2 })
    const me = await asCookie(t, sessionCookieOf(res))('GET', '/api/admin/user')
    expect(me.status, me.text).toBe(200)
    expect(me.body.user.id).toBe(res.body.id)
    expect(me.body.permissions).toContainEqual(expect.objectContaining({ permission: 'CREATE_PROJECT' }))
    // They can sign in with the password later.
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username: who.email, password: who.password } })).status).toBe(200)
    const events = await t.query<{ type: string; created_by: string; data: any }>(`select type, created_by, data from events where created_by = $1 order by id`, [who.email])
    expect(events.map((e) => e.type)).toEqual(['user-created', 'public-signup-token-user-added'])
    expect(events[1]!.data).toEqual({ secret: `${link.secret.slice(0, 6)}…`, name: link.name, userId: res.body.id, email: who.email, role: 'Editor' })
    expect(JSON.stringify(events)).not.toContain(who.password)
    const listed = (await ok(t, 'GET', `${LINKS}/${link.secret}`)).body
    expect(listed.users).toEqual([expect.objectContaining({ id: res.body.id, email: who.email })])
  })

  it('refuses a taken e-mail or username with 409, writing nothing', async () => {
    const link = await createLink()
    const who = person({ username: fresh('taken') })
    expect((await signUp(link.secret, who)).status).toBe(200)
    const again = await signUp(link.secret, { ...person(), email: who.email.toUpperCase() })
    expect(again.status, again.text).toBe(409)
    expect(again.body.name).toBe('NameExistsError')
    expect((await signUp(link.secret, person({ username: who.username }))).status).toBe(409)
    expect(await t.query(`select count(*)::int as n from public_signup_token_users tu join public_signup_tokens t on t.id = tu.token_id where t.name = $1`, [link.name])).toEqual([{ n: 1 }])
  })

  it('refuses disabled and expired links with 400, creating no user', async () => {
    const disabled = await createLink()
    await ok(t, 'PUT', `${LINKS}/${disabled.secret}`, { enabled: false })
    const who = person()
    const res = await signUp(disabled.secret, who)
    expect(res.status, res.text).toBe(400)
    expect(res.body.message).toMatch(/does not work/)
    const expiring = await createLink({ expiresAt: inDays(1) })
    clockAhead = 2 * DAY
    try {
      expect((await signUp(expiring.secret, who)).status).toBe(400)
      expect((await t.call('GET', `/invite/${expiring.secret}/validate`, { token: null })).status).toBe(400)
      expect((await ok(t, 'GET', `${LINKS}/${expiring.secret}`)).body.enabled).toBe(false)
    } finally {
      clockAhead = 0
    }
    expect(await t.query(`select id from users where email = $1`, [who.email])).toEqual([])
  })

  it.each([
    ['a short password', { password: 'short' }],
    ['no e-mail', { email: undefined }],
    ['a malformed e-mail', { email: 'not-an-email' }],
    ['no name', { name: undefined }],
    ['an unknown field', { rootRole: 'Admin' }],
  ])('refuses %s with 400', async (_what, patch) => {
    const link = await createLink()
    const res = await signUp(link.secret, person(patch))
    expect(res.status, res.text).toBe(400)
  })

  it('limits checking and signing up per client address, as sign-in', async () => {
    const limited = await createTestApp({ clientAddress: () => '203.0.113.9', signIn: { perMinute: 2 } })
    try {
      const statuses: number[] = []
      for (let i = 0; i < 3; i++) statuses.push((await limited.call('GET', '/invite/0123456789abcdef0123456789abcdef/validate', { token: null })).status)
      expect(statuses).toEqual([400, 400, 429])
    } finally {
      await limited.close()
    }
  })
})

describe('who may manage invite links', () => {
  it('is the Admin root role only', async () => {
    const editor = await createSignedInUser(t, fresh('ed'), 'Editor')
    expect((await editor.call('GET', LINKS)).status).toBe(403)
    expect((await editor.call('POST', LINKS, { body: { name: 'x', expiresAt: inDays(2) } })).status).toBe(403)
  })
})
