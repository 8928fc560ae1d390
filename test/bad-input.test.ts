import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { requirePermission, rootRoleGrants } from '../src/core/permissions.js'
import type { ApiError } from '../src/core/errors.js'
import { statusOf } from '../src/http/errors.js'
import { createTestApp, type TestApp } from './helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const countRows = async () => (await t.query<{ p: number; e: number }>('select (select count(*)::int from projects) as p, (select count(*)::int from events) as e'))[0]
const expectError = (res: { status: number; body: any }, status: number, name: string) => {
  expect(res.status).toBe(status)
  expect(res.body).toMatchObject({ name })
  expect(typeof res.body.id).toBe('string')
  expect(typeof res.body.message).toBe('string')
}

describe('bad input never reaches the database and always gets a 4xx error body', () => {
  const post = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    t.call('POST', '/api/admin/projects', { body, headers })

  it('malformed JSON → 400', async () => {
    const before = await countRows()
    expectError(await post('{"name": "x",'), 400, 'ValidationError')
    expect(await countRows()).toEqual(before)
  })

  it('a JSON content type with an empty body → 400', async () => {
    expectError(await t.call('POST', '/api/admin/projects', { headers: { 'content-type': 'application/json' } }), 400, 'ValidationError')
  })

  it('a non-JSON content type → 415 ContentTypeerror', async () => {
    expectError(await post('name=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'ContentTypeerror')
    expectError(await post('{"name":"x"}', { 'content-type': 'text/plain' }), 415, 'ContentTypeerror')
  })

  it('accepts a JSON content type with parameters', async () => {
    const res = await post('{"name":"charset"}', { 'content-type': 'application/json; charset=utf-8' })
    expect(res.status).toBe(201)
  })

  it('a body over 1 MB → 413', async () => {
    const before = await countRows()
    const res = await post(JSON.stringify({ name: 'big', description: 'x'.repeat(1024 * 1024 + 10) }))
    expectError(res, 413, 'PayloadTooLargeError')
    expect(await countRows()).toEqual(before)
  })

  it('deeply nested JSON → 400', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    expectError(await post(`{"name":"x","environments":${deep}}`), 400, 'ValidationError')
  })

  it('NUL bytes in strings → 400', async () => {
    const before = await countRows()
    expectError(await post(JSON.stringify({ name: 'nul\u0000name' })), 400, 'ValidationError')
    expectError(await post(JSON.stringify({ ['ke\u0000y']: 1, name: 'x' })), 400, 'ValidationError')
    expect(await countRows()).toEqual(before)
  })

  it('lone surrogates in strings → 400', async () => {
    expectError(await post('{"name":"\\ud800 alone"}'), 400, 'ValidationError')
    expectError(await post('{"name":"x","description":"\\udc00"}'), 400, 'ValidationError')
  })

  it('numbers out of range → 400', async () => {
    expectError(await post('{"name":"x","changeRequestEnvironments":[{"name":"production","requiredApprovals":1e400}]}'), 400, 'ValidationError')
    expectError(await post('{"name":"x","changeRequestEnvironments":[{"name":"production","requiredApprovals":1e30}]}'), 400, 'ValidationError')
    expectError(await t.call('POST', '/api/admin/environments', { body: { name: 'e1', type: 't', sortOrder: 2 ** 31 } }), 400, 'ValidationError')
  })

  it('wrong types → 400 with details naming the field', async () => {
    const res = await post(JSON.stringify({ name: 'x', mode: 7 }))
    expectError(res, 400, 'ValidationError')
    expect(res.body.details).toEqual([expect.objectContaining({ path: 'body.mode' })])
  })

  it('malformed percent-encoding in the path → 400', async () => {
    expectError(await t.call('POST', '/api/admin/projects/%E0%A4%A/environments', { body: { environment: 'development' } }), 400, 'ValidationError')
    expectError(await t.call('GET', '/api/admin/projects?x=%ZZ'), 400, 'ValidationError')
  })

  it('an encoded NUL in the path → 400', async () => {
    expectError(await t.call('POST', '/api/admin/projects/a%00b/environments', { body: { environment: 'development' } }), 400, 'ValidationError')
  })

  it('an unknown route → 404 NotFoundError', async () => {
    expectError(await t.call('GET', '/api/admin/no-such-thing'), 404, 'NotFoundError')
    expectError(await t.call('GET', '/nowhere', { token: null }), 404, 'NotFoundError')
  })
})

describe('unexpected failures', () => {
  it('answer 500 with a generic body: no stack trace, no SQL, no driver message', async () => {
    const app = createApp({
      db: () => {
        throw new Error('connect ECONNREFUSED select * from secret_table')
      },
    })
    const res = await app.request('/api/admin/projects', { headers: { authorization: t.adminToken } })
    expect(res.status).toBe(500)
    const body = await res.json()
    expect(body).toMatchObject({ name: 'InternalError' })
    expect(JSON.stringify(body)).not.toMatch(/secret_table|ECONNREFUSED|at /)
  })

  it('make /health answer 500 BAD when the database cannot be queried', async () => {
    const broken = { execute: async () => Promise.reject(new Error('down')) }
    const app = createApp({ db: () => broken as never })
    const res = await app.request('/health')
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ health: 'BAD' })
  })
})

describe('permissions', () => {
  const as = (rootRole: string) => ({ kind: 'user', userId: 7, name: 'vera', rootRole, grants: rootRoleGrants(rootRole) }) as const
  const viewer = as('Viewer')

  it('name the missing permission and the environment in a 403 NoAccessError', () => {
    const missing = (() => {
      try {
        requirePermission(viewer, 'UPDATE_FEATURE_ENVIRONMENT', { project: 'default', environment: 'production' })
      } catch (error) {
        return error as ApiError
      }
    })()
    expect(missing).toMatchObject({ name: 'NoAccessError', message: expect.stringMatching(/permission=UPDATE_FEATURE_ENVIRONMENT.*environment=production/) })
    // The error knows nothing of HTTP; the HTTP layer's one map makes it a 403.
    expect(statusOf(missing!)).toBe(403)
  })

  it('let Admin do anything and Editor create projects', () => {
    expect(() => requirePermission(as('Admin'), 'DELETE_PROJECT')).not.toThrow()
    expect(() => requirePermission(as('Editor'), 'CREATE_PROJECT')).not.toThrow()
    expect(() => requirePermission(as('Editor'), 'ADMIN')).toThrow()
  })
})
