import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LOCKOUT_MINUTES, MAX_LOGIN_ATTEMPTS } from '../src/auth/login.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser, PASSWORD, type TestUser } from './helpers/users.js'

let t: TestApp
let now = new Date('2026-06-01T12:00:00Z')
beforeAll(async () => {
  // The client's address is what the test says (x-test-peer); none: unknown, as app.request's. No per-address rate
  // limit, so only the lockout answers.
  t = await createTestApp({ now: () => now, signIn: { perMinute: 0 }, clientAddress: (c) => c.req.header('x-test-peer') })
})
afterAll(() => t.close())

const MINUTE = 60_000
const later = (ms: number) => void (now = new Date(now.getTime() + ms))
const login = (username: string, password: string, peer?: string) =>
  t.call('POST', '/auth/simple/login', { token: null, body: { username, password }, ...(peer ? { headers: { 'x-test-peer': peer } } : {}) })
/** The user's login_attempts and the lockout of one address (its limit key; '' for an unknown address). */
const stateOf = async (id: number, address = '') =>
  (
    await t.query<{ login_attempts: number; locked_until: string | null }>(
      'select u.login_attempts, f.locked_until from users u left join sign_in_failures f on f.user_id = u.id and f.address = $2 where u.id = $1',
      [id, address],
    )
  )[0]!
const failTimes = async (user: TestUser, n: number) => {
  for (let i = 0; i < n; i++) expect((await login(user.username, `wrong ${i}`)).status).toBe(401)
}

describe('the sign-in lockout', () => {
  it('is temporary: the right password is refused during the first minute, as a wrong one is, then signs in and forgets the failures', async () => {
    const user = await createSignedInUser(t, 'locked-for-a-minute', 'Viewer')
    await failTimes(user, MAX_LOGIN_ATTEMPTS)
    const wrong = await login(user.username, 'still wrong')
    const right = await login(user.username, PASSWORD)
    // Nothing tells the right password from a wrong one while the lockout lasts.
    expect(right.status).toBe(401)
    expect({ name: right.body.name, message: right.body.message }).toEqual({ name: wrong.body.name, message: wrong.body.message })
    expect(right.headers.get('set-cookie')).toBeNull()
    later(59_000)
    expect((await login(user.username, PASSWORD)).status).toBe(401)
    later(2_000)
    const signedIn = await login(user.username, PASSWORD)
    expect(signedIn.status, signedIn.text).toBe(200)
    expect(await stateOf(user.id)).toEqual({ login_attempts: 0, locked_until: null })
  })

  it('grows with each failure after a delay (1, 5, 15, 60 minutes), stays capped at 60 minutes, and is never permanent', async () => {
    const user = await createSignedInUser(t, 'locked-growing', 'Viewer')
    await failTimes(user, MAX_LOGIN_ATTEMPTS)
    const delays = [...LOCKOUT_MINUTES, 60, 60]
    expect(delays).toEqual([1, 5, 15, 60, 60, 60])
    for (const [i, minutes] of delays.entries()) {
      const state = await stateOf(user.id)
      expect(new Date(state.locked_until!).getTime() - now.getTime(), `delay ${i}`).toBe(minutes * MINUTE)
      expect(state.login_attempts).toBe(MAX_LOGIN_ATTEMPTS + i)
      // A refused attempt during the delay is not counted and does not make the delay longer.
      later(minutes * MINUTE - 1_000)
      expect((await login(user.username, PASSWORD)).status).toBe(401)
      expect((await stateOf(user.id)).login_attempts).toBe(MAX_LOGIN_ATTEMPTS + i)
      later(1_000)
      // After the delay one attempt is checked: a wrong one starts the next delay.
      if (i < delays.length - 1) expect((await login(user.username, 'wrong again')).status).toBe(401)
    }
    expect((await login(user.username, PASSWORD)).status).toBe(200)
    expect(await stateOf(user.id)).toEqual({ login_attempts: 0, locked_until: null })
  })

  it('checks one attempt per delay when attempts after it arrive at once', async () => {
    const user = await createSignedInUser(t, 'locked-concurrent', 'Viewer')
    await failTimes(user, MAX_LOGIN_ATTEMPTS)
    later(MINUTE)
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => login(user.username, `wrong ${i}`)))
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(401))
    expect((await stateOf(user.id)).login_attempts).toBe(MAX_LOGIN_ATTEMPTS + 1)
  })
})

describe('the sign-in lockout is per client address', () => {
  const ATTACKER = '203.0.113.66'
  const OWNER = '198.51.100.10'

  it('never keeps the owner out: a stranger polling wrong passwords from one address delays only that address', async () => {
    const user = await createSignedInUser(t, 'locked-by-a-stranger', 'Viewer')
    // The stranger hits the first moment after each delay, for hours: the delays grow, and their address stays locked.
    for (let round = 0; round < 8; round++) {
      for (let i = 0; i < (round === 0 ? MAX_LOGIN_ATTEMPTS : 1); i++) expect((await login(user.username, `guess ${round}.${i}`, ATTACKER)).status).toBe(401)
      // The owner, from their own address, signs in at once, whatever the stranger does.
      const owner = await login(user.username, PASSWORD, OWNER)
      expect(owner.status, `round ${round}: ${owner.text}`).toBe(200)
      expect((await stateOf(user.id, ATTACKER)).locked_until, `round ${round}`).not.toBeNull()
      // The stranger's address is still delayed: even the right password fails there.
      expect((await login(user.username, PASSWORD, ATTACKER)).status).toBe(401)
      later(60 * MINUTE)
    }
    // The owner's success did not forget the stranger's failures; the owner's own address has none.
    expect((await t.query<{ failures: number }>('select failures from sign_in_failures where user_id = $1 and address = $2', [user.id, ATTACKER]))[0]?.failures).toBe(MAX_LOGIN_ATTEMPTS + 7)
    expect(await t.query('select 1 from sign_in_failures where user_id = $1 and address = $2', [user.id, OWNER])).toEqual([])
  })

  it("counts an IPv6 client by its /64, and an admin's new password ends every address's lockout", async () => {
    const user = await createSignedInUser(t, 'locked-ipv6', 'Viewer')
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS; i++) expect((await login(user.username, `wrong ${i}`, `2001:db8:5:6::${i + 1}`)).status).toBe(401)
    // Another address in the same /64 is delayed too.
    expect((await login(user.username, PASSWORD, '2001:db8:5:6::ffff')).status).toBe(401)
    expect((await stateOf(user.id, '2001:db8:5:6::/64')).locked_until).not.toBeNull()
    const admin = await createSignedInUser(t, 'lockout-admin', 'Admin')
    expect((await admin.call('POST', `/api/admin/user-admin/${user.id}/change-password`, { body: { password: 'set by an admin 123' } })).status).toBe(200)
    expect(await t.query('select 1 from sign_in_failures where user_id = $1', [user.id])).toEqual([])
    expect((await login(user.username, 'set by an admin 123', '2001:db8:5:6::ffff')).status).toBe(200)
  })

  it('forgets failures not added to for a day, and removes such rows whenever a failure is written', async () => {
    const user = await createSignedInUser(t, 'failures-forgotten', 'Viewer')
    await failTimes(user, MAX_LOGIN_ATTEMPTS - 1)
    expect((await login(user.username, 'one', '192.0.2.200')).status).toBe(401)
    later(24 * 60 * MINUTE + 1_000)
    // A day later the count starts again: one more failure does not lock.
    expect((await login(user.username, 'again')).status).toBe(401)
    expect((await stateOf(user.id)).locked_until).toBeNull()
    expect((await t.query<{ failures: number }>("select failures from sign_in_failures where user_id = $1 and address = ''", [user.id]))[0]?.failures).toBe(1)
    // The other address's day-old row was removed on the way.
    expect(await t.query('select 1 from sign_in_failures where address = $1', ['192.0.2.200'])).toEqual([])
  })
})

describe("change-password's old password", () => {
  const changeOwn = (user: TestUser, oldPassword: string, password = 'a brand new passphrase') =>
    user.call('POST', '/api/admin/user/change-password', { body: { oldPassword, password, confirmPassword: password } })

  it('is checked under the same lockout: a right old password during the delay gets the wrong one\'s answer, and works after it', async () => {
    const user = await createSignedInUser(t, 'locked-old-password', 'Viewer')
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS; i++) expect((await changeOwn(user, `wrong ${i}`)).status).toBe(400)
    const wrong = await changeOwn(user, 'still wrong')
    const right = await changeOwn(user, PASSWORD)
    expect(right.status).toBe(400)
    expect({ name: right.body.name, message: right.body.message }).toEqual({ name: wrong.body.name, message: wrong.body.message })
    // The same count as sign-in: the sign-in is paused too.
    expect((await login(user.username, PASSWORD)).status).toBe(401)
    later(MINUTE)
    const changed = await changeOwn(user, PASSWORD)
    expect(changed.status, changed.text).toBe(200)
    expect(await stateOf(user.id)).toEqual({ login_attempts: 0, locked_until: null })
    expect((await login(user.username, 'a brand new passphrase')).status).toBe(200)
  })
})
