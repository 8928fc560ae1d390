import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'

/**
 * The playground's limit on evaluations (15,000 by default, as Unleash) counts the context's
 * combinations before any is built, also when the projects hold no flags: 17 fields of "a,b" are
 * 131,072 combinations, 25 exhaust the process's memory, 33 overflowed into a 500.
 */
let t: TestApp
let changeRequestId: number

/** A context of `n` custom fields, each with two comma-separated values (2^n combinations). */
const fields = (n: number, where: 'top' | 'properties' = 'top') => {
  const many = Object.fromEntries(Array.from({ length: n }, (_, i) => [`field${i}`, 'a,b']))
  return where === 'top' ? { appName: 'web', ...many } : { appName: 'web', properties: many }
}

beforeAll(async () => {
  t = await createTestApp()
  expect((await t.call('POST', '/api/admin/projects', { body: { id: 'empty', name: 'Empty', environments: ['development'] } })).status).toBe(201)
  // A change request whose project ends up with no live flag: cancelled (no pending change), then its flag archived.
  expect((await t.call('POST', '/api/admin/projects', { body: { id: 'guarded', name: 'Guarded', environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] } })).status).toBe(201)
  expect((await t.call('POST', '/api/admin/projects/guarded/features', { body: { name: 'only' } })).status).toBe(201)
  const created = await t.call('POST', '/api/admin/projects/guarded/environments/production/change-requests', { body: { feature: 'only', action: 'updateEnabled', payload: { enabled: true } } })
  expect(created.status, created.text).toBe(200)
  changeRequestId = created.body.id
  expect((await t.call('PUT', `/api/admin/projects/guarded/change-requests/${changeRequestId}/state`, { body: { state: 'Cancelled' } })).status).toBe(200)
  expect((await t.call('DELETE', '/api/admin/projects/guarded/features/only')).status).toBe(202)
})
afterAll(() => t.close())

const advanced = (context: unknown, projects = ['empty']) => t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], projects, context } })

describe('playground combination limit', () => {
  it.each([
    [17, '131072'],
    [25, '33554432'],
    [33, '8589934592'],
  ])('the advanced playground refuses %i fields of "a,b" on a project with no flags with 400, naming the limit and the %s combinations asked for', async (n, count) => {
    const res = await advanced(fields(n))
    expect(res.status, res.text.slice(0, 300)).toBe(400)
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'ValidationError',
      message: `Rejecting evaluation as it would generate ${count} combinations exceeding 15000 limit. Please reduce the number of selected environments (1), features (0) or context field combinations (${count}).`,
    })
  })

  it('counts comma-separated properties like top-level fields', async () => {
    const res = await advanced(fields(20, 'properties'))
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('1048576 combinations exceeding 15000 limit')
  })

  it('refuses a context whose combinations a double cannot count (2,000 fields) with 400, not a 500', async () => {
    const res = await advanced(fields(2_000))
    expect(res.status, res.text.slice(0, 300)).toBe(400)
    expect(res.body.message).toContain(`would generate more than ${Number.MAX_SAFE_INTEGER} combinations exceeding 15000 limit`)
  })

  it('still evaluates up to the limit on a project with no flags (13 fields: 8,192 combinations)', async () => {
    const res = await advanced(fields(13))
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expect(res.body.features).toEqual([])
  })

  it('the change-request playground refuses 17, 25 and 33 fields of "a,b" with 400 when its project has no live flag', async () => {
    const small = await t.call('POST', `/api/admin/playground/change-request/${changeRequestId}`, { body: { context: fields(2) } })
    expect(small.status, small.text.slice(0, 300)).toBe(200)
    expect(small.body.features).toEqual([])
    for (const [n, count] of [[17, '131072'], [25, '33554432'], [33, '8589934592']] as const) {
      const res = await t.call('POST', `/api/admin/playground/change-request/${changeRequestId}`, { body: { context: fields(n) } })
      expect(res.status, res.text.slice(0, 300)).toBe(400)
      expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining(`would generate ${count} combinations exceeding 15000 limit`) })
    }
  })
})
