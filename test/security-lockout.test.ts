import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LOCKOUT_MINUTES, MAX_LOGIN_ATTEMPTS } from '../src/auth/login.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser, PASSWORD, type TestUser } from './helpers/users.js'

let t: TestApp
let now = new Date('2026-06-01T12:00:00Z')
beforeAll(async () => {
  t = await createTestApp({ now: () => now })
})
afterAll(() => t.close())

const MINUTE = 60_000
const later = (ms: number) => void (now = new Date(now.getTime() + ms))
const login = (username: string, password: string) => t.call('POST', '/auth/simple/login', { token: null, body: { username, password } })
const stateOf = async (id: number) =>
  (await t.query<{ login_attempts: number; locked_until: string | null }>('select login_attempts, locked_until from users where id = $1', [id]))[0]!
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
