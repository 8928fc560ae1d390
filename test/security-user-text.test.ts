import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { PASSWORD, signIn } from './helpers/users.js'

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
  // Mixed across a dot of the local part, a whole part in another script that looks Latin, scripts of limited use made to
  // pass for Latin letters (Lisu, Canadian Syllabics, Tifinagh), phonetic Latin letters, punctuation from outside ASCII.
  '\u0458.doe@corp.example',
  'alice@corp.\u0441\u043E',
  '\u0430\u0440\u0435@corp.example',
  '\uA4D1aypal@corp.example',
  '\u146Daypal@corp.example',
  'ad\u2D4Fin@corp.example',
  'p\u0251ypal@corp.example',
  '\u1D18aypal@corp.example',
  'first\u2010last@corp.example',
  'Ꮪupport@corp.example',
  // A second attack: a click letter for "l", Han's zero and "one" beside Latin, a combining mark left after composition,
  // dotless "ı", Greek "χ", Cyrillic "ꙇ", Katakana beside Latin letters it looks like, Hangul mixed with kana.
  'a\u01C0ice@corp.example',
  'b\u3007b@corp.example',
  'john\u4E00smith@corp.example',
  'bjo\u0338rn@corp.example',
  'adm\u0131n@corp.example',
  '\u03C7\u03BF\u03C7\u03BF@corp.example',
  '\uA647\uA647@corp.example',
  'al\u30A8x@corp.example',
  'a\uAC00\u30A8@corp.example',
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

describe('e-mail addresses: one form per address, and sign-in by address', () => {
  it('takes a decomposed "é" as the composed one: stored composed, and the same address on every path', async () => {
    const decomposed = 'rene\u0301@corp.example'
    const res = await t.call('POST', '/api/admin/user-admin', { body: { email: decomposed, rootRole: 'Viewer', password: PASSWORD } })
    expect(res.status, res.text).toBe(201)
    expect(await t.query('select email from users where id = $1', [res.body.id])).toEqual([{ email: 'ren\u00e9@corp.example' }])
    // The composed address is the same user: taken, and it signs in with either form.
    const again = await t.call('POST', '/api/admin/user-admin', { body: { email: 'RENÉ@corp.example', rootRole: 'Viewer' } })
    expect(again.status, again.text).toBe(400)
    expect(again.body.message).toBe('User already exists')
    await signIn(t, 'ren\u00e9@corp.example')
    await signIn(t, decomposed)
  })

  it('still signs in by e-mail an account whose address was stored before the rules that refuse it now', async () => {
    const res = await t.call('POST', '/api/admin/user-admin', { body: { email: 'legacy-77@corp.example', rootRole: 'Viewer', password: PASSWORD } })
    expect(res.status, res.text).toBe(201)
    const legacy = 'legacy-\u0430@corp.example'
    await t.query('update users set email = $1 where id = $2', [legacy, res.body.id])
    await signIn(t, legacy)
  })

  it('takes Japanese and Chinese mixed with Latin, and a Greek address that does not pass for a Latin one', async () => {
    for (const email of ['taro.やまだ@corp.example', '王wang@corp.example', 'ελένη@corp.example', 'bjørn@corp.example', 'マイケル・ジャクソン@corp.example', 'ștefan@corp.example']) {
      expect((await t.call('POST', '/api/admin/user-admin', { body: { email, rootRole: 'Viewer' } })).status, email).toBe(201)
    }
  })
})
