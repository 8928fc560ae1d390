import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { streamHub } from '../src/client-api/streaming.js'
import { MAKING_PER_TOKEN, NARROWED_BYTES_PER_MINUTE } from '../src/client-api/service.js'
import { loggable } from '../src/core/errors.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createToken, flagOnWithClientToken, ok } from './helpers/factories.js'

/*
 * The charge of narrowed SDK payloads (project, namePrefix, tag) counts bytes once a payload is made: requests sent
 * together must not all pass before any is counted.
 */

let t: TestApp
let size = 0
const token = async (name: string) =>
  (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: name, type: 'client', environment: 'development', projects: ['*'] } })).body.secret as string
const poll = (secret: string, query: string) => t.call('GET', `/api/client/features${query}`, { token: secret })

beforeAll(async () => {
  t = await createTestApp()
  const write = async (method: string, path: string, body?: unknown) => {
    const res = await t.call(method, path, { body })
    expect(res.status, `${method} ${path}: ${res.text.slice(0, 300)}`).toBeLessThan(300)
    return res.body
  }
  await write('POST', '/api/admin/projects', { id: 'heavy', name: 'heavy', environments: ['development'] })
  await write('POST', '/api/admin/projects', { id: 'light', name: 'light', environments: ['development'] })
  await write('POST', '/api/admin/projects/heavy/features', { name: 'heavy-flag' })
  await write('POST', '/api/admin/projects/light/features', { name: 'light-flag' })
  const s = await write('POST', '/api/admin/projects/heavy/features/heavy-flag/environments/development/strategies', { name: 'default' })
  // About 3.4 MB of payload: 900 constraints of 250 values.
  const constraints = Array.from({ length: 900 }, (_, c) => ({ contextName: 'userId', operator: 'IN', inverted: false, caseInsensitive: false, values: Array.from({ length: 250 }, (_, v) => `member-${c}-${v}`) }))
  await t.query('update feature_strategies set constraints = $1 where id = $2', [JSON.stringify(constraints), s.id])
  await write('POST', '/api/admin/projects/heavy/features/heavy-flag/environments/development/on')
  size = (await poll(await token('sizer'), '?project=heavy')).text.length
  expect(size).toBeGreaterThan(3_000_000)
})
afterAll(() => t.close())

describe('the charge of narrowed SDK payloads', () => {
  it('holds requests sent together for made-up filters: at most a minute’s bytes and MAKING_PER_TOKEN payloads more', async () => {
    const burst = await token('burst')
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => poll(burst, `?project=heavy,made-up-${i}`)))
    const made = answers.filter((a) => a.status === 200).length
    expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true)
    expect(made).toBeLessThanOrEqual(Math.ceil(NARROWED_BYTES_PER_MINUTE / size) + MAKING_PER_TOKEN)
    expect(answers.find((a) => a.status === 429)?.body).toEqual({ id: expect.any(String), name: 'TooManyRequestsError', message: expect.any(String) })
  })
})

describe('SDK streams of a deleted token', () => {
  it('end at once, with no flag changed after the deletion (a token deletion moves the SDK revision)', async () => {
    const s = await createTestApp({ sdk: { revisionTtlMs: 0 }, streams: (sdk) => streamHub({ keepAliveMs: 15_000, pollMs: 100 })(sdk) })
    try {
      const { project } = await flagOnWithClientToken(s)
      const doomed = (await createToken(s, { type: 'client', environment: 'development', projects: [project] })).secret as string
      const response = await s.app.request('/api/client/streaming', { headers: { authorization: doomed, 'unleash-client-spec': '5.2.0' } })
      expect(response.status).toBe(200)
      const reader = response.body!.getReader()
      await reader.read()
      await ok(s, 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(doomed)}`)
      // Well within the 15 s keep-alive that would otherwise be the first chance to notice.
      const deadline = Date.now() + 5_000
      let ended = false
      while (!ended && Date.now() < deadline) {
        const chunk = await Promise.race([reader.read(), new Promise<'late'>((r) => setTimeout(() => r('late'), Math.max(1, deadline - Date.now())))])
        if (chunk === 'late') break
        ended = chunk.done
      }
      expect(ended).toBe(true)
    } finally {
      await s.close()
    }
  })
})

describe('a failed query in the log', () => {
  it('blanks a value holding quotes to its end, and keeps the names the error carries', () => {
    const error = (message: string, extra: object = {}) => Object.assign(new Error(message), { code: '22P02', severity: 'ERROR' }, extra)
    const logged = String(loggable(error('invalid input syntax for type integer: "12" OR secret-value"')))
    expect(logged).not.toContain('secret-value')
    expect(logged).toContain('"…"')
    expect(String(loggable(error('duplicate key value violates unique constraint "users_email_key"', { code: '23505', constraint: 'users_email_key' })))).toContain('"users_email_key"')
    // A system error with a five-letter code is not a database error.
    expect(loggable(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBeInstanceOf(Error)
  })
})
