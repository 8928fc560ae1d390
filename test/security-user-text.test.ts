import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'

/*
 * Every path a user or an e-mail address enters by refuses control and format characters (zero-width, bidirectional
 * overrides), which make one account look like another in a list, and letters that fold into ASCII when lower-cased
 * (the Kelvin sign), which single sign-on refuses too: one function (isEmail) on every path.
 */
let t: TestApp
let secret: string
const inDays = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString()
const signUp = (body: Record<string, unknown>) => t.call('POST', `/invite/${secret}/signup`, { token: null, body: { name: 'Zed', password: 'a long enough password', ...body } })

beforeAll(async () => {
  t = await createTestApp({ publicUrl: 'https://flags.example.com' })
  const link = await t.call('POST', '/api/admin/invite-link/tokens', { body: { name: 'open', expiresAt: inDays(7) } })
  expect(link.status, link.text).toBe(201)
  secret = link.body.secret
})
afterAll(() => t.close())

const tricky = [
  'z3@corp.example\u200b',
  'adm\u202enim@corp.example',
  'ki\u212Am@corp.example',
  'a\u0000b@corp.example',
  '\u2066x@corp.example',
  // Look-alikes: a Hangul filler, a combining grapheme joiner, a variation selector, Braille's blank, full-width letters,
  // a Cyrillic "а" in a Latin local part and in a domain label.
  'adm\u3164in@corp.example',
  'adm\u034Fin@corp.example',
  'admin\uFE0F@corp.example',
  'adm\u2800in@corp.example',
  '\uFF41dmin@corp.example',
  '\u0430dmin@corp.example',
  'admin@c\u043Erp.example',
]

describe('e-mail addresses and names', () => {
  it.each(tricky)('the admin route refuses %j with 400, creating nobody', async (email) => {
    const res = await t.call('POST', '/api/admin/user-admin', { body: { email, rootRole: 'Viewer' } })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError' })
    expect(await t.query('select id from users where email = $1 or email = lower($1)', [email.replace('\u0000', '')])).toEqual([])
  })

  it.each(tricky)('invite sign-up refuses %j with 400 (the Kelvin sign is not folded into k)', async (email) => {
    const res = await signUp({ email })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError' })
  })

  it('refuses invisible characters in names and usernames, on both paths; a plain address is still taken', async () => {
    expect((await t.call('POST', '/api/admin/user-admin', { body: { email: 'n1@corp.example', name: 'Ad\u200bmin', rootRole: 'Viewer' } })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/user-admin', { body: { username: 'ad\u202emin', rootRole: 'Viewer' } })).status).toBe(400)
    expect((await signUp({ email: 'n2@corp.example', name: 'Ad\u2060min' })).status).toBe(400)
    expect((await signUp({ email: 'n3@corp.example', username: 'a\u200dmin' })).status).toBe(400)
    expect(await t.query("select id from users where email like 'n_@corp.example'")).toEqual([])
    expect((await signUp({ email: 'KIM@corp.example' })).status).toBe(200)
    // Addresses in one script other than Latin, and international domains, are still taken.
    expect((await signUp({ email: 'иван@почта.example' })).status).toBe(200)
    expect((await signUp({ email: 'jürgen@straße.example' })).status).toBe(200)
    expect(await t.query("select email from users where email = 'kim@corp.example'")).toEqual([{ email: 'kim@corp.example' }])
  })
})
