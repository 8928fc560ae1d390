import { expect } from 'vitest'
import type { TestApp } from './app.js'

export const PASSWORD = 'correct horse battery'

/** A signed-in user: their id, session cookie, and `call` acting as them. */
export interface TestUser {
  id: number
  username: string
  cookie: string
  call: (method: string, path: string, options?: { body?: unknown; headers?: Record<string, string> }) => ReturnType<TestApp['call']>
}

/** The `name=value` of the session cookie a response set. */
export function sessionCookieOf(res: { headers: Headers }): string {
  const setCookie = res.headers.get('set-cookie') ?? ''
  const match = /flagpost-session=([^;]*)/.exec(setCookie)
  expect(match, `no session cookie in: ${setCookie}`).toBeTruthy()
  return `flagpost-session=${match![1]}`
}

export const asCookie = (t: TestApp, cookie: string): TestUser['call'] => (method, path, options = {}) =>
  t.call(method, path, { ...options, token: null, headers: { ...(options.headers ?? {}), cookie } })

export async function signIn(t: TestApp, username: string, password = PASSWORD): Promise<string> {
  const res = await t.call('POST', '/auth/simple/login', { token: null, body: { username, password } })
  expect(res.status, res.text).toBe(200)
  return sessionCookieOf(res)
}

/** Creates a user through the admin API (with the admin token) and signs them in. */
export async function createSignedInUser(t: TestApp, username: string, rootRole: string | number, extra: Record<string, unknown> = {}): Promise<TestUser> {
  const res = await t.call('POST', '/api/admin/user-admin', { body: { username, password: PASSWORD, rootRole, sendEmail: false, ...extra } })
  expect(res.status, res.text).toBe(201)
  const cookie = await signIn(t, username)
  return { id: res.body.id, username, cookie, call: asCookie(t, cookie) }
}

/** A personal access token of a signed-in user. */
export async function createPat(user: TestUser, description = 'test'): Promise<string> {
  const res = await user.call('POST', '/api/admin/user/tokens', { body: { description, expiresAt: new Date(Date.now() + 86_400_000 * 30).toISOString() } })
  expect(res.status, res.text).toBe(201)
  return res.body.secret
}
