import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger, readLogOptions, type LogLevel } from '../src/http/request-log.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser } from './helpers/users.js'

/*
 * Request ids and request log lines: every answer carries X-Request-Id (the client's when well formed, else a new one);
 * at LOG_LEVEL info each answered request is one line naming the route template, never the path or query, and the
 * principal by kind and id, never a secret or a cookie.
 */
const lines: { line: string; level: LogLevel }[] = []
let t: TestApp
let quiet: TestApp

beforeAll(async () => {
  t = await createTestApp({ log: { format: 'json', level: 'info', write: (line, level) => lines.push({ line, level }) } })
  quiet = await createTestApp({ log: { format: 'json', level: 'warn', write: (line, level) => lines.push({ line, level }) } })
})
afterAll(async () => {
  await t.close()
  await quiet.close()
})

const parsed = () => lines.map(({ line }) => JSON.parse(line) as Record<string, unknown>)

describe('X-Request-Id', () => {
  it('answers a new id, or the one the client sent when it is well formed', async () => {
    const made = await t.call('GET', '/api/admin/projects')
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const kept = await t.call('GET', '/api/admin/projects', { headers: { 'x-request-id': 'lb-7f3a.2:9' } })
    expect(kept.headers.get('x-request-id')).toBe('lb-7f3a.2:9')
    // Too long, or with characters that could break a log line or a header: replaced.
    for (const sent of ['x'.repeat(129), 'a b', 'a"b', 'a\\nb', '{"level":"error"}']) {
      const res = await t.call('GET', '/api/admin/projects', { headers: { 'x-request-id': sent } })
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    }
  })
})

describe('a line per request at LOG_LEVEL info', () => {
  it('names the route template, method, status, duration and principal, and no secret, path value or query value', async () => {
    lines.length = 0
    const secret = 'a-secret-flag-name-9f2'
    await t.call('POST', '/api/admin/projects/default/features', { body: { name: secret } })
    const res = await t.call('GET', `/api/admin/projects/default/features/${secret}?query-value-77=${secret}`, { headers: { cookie: 'flagpost-session=cookie-value-31', 'x-request-id': 'trace-1' } })
    expect(res.status).toBe(200)
    const line = parsed().find((l) => l.requestId === 'trace-1')!
    expect(line).toMatchObject({
      level: 'info',
      msg: 'request',
      method: 'GET',
      route: '/api/admin/projects/:projectId/features/:featureName',
      status: 200,
      principal: 'admin-token',
      principalId: expect.any(Number),
    })
    expect(typeof line.time).toBe('string')
    expect(typeof line.durationMs).toBe('number')
    const all = lines.map((l) => l.line).join('\n')
    for (const leak of [secret, 'query-value-77', 'cookie-value-31', t.adminToken]) expect(all).not.toContain(leak)
    // One line per request, each valid JSON.
    expect(lines.every((l) => !l.line.includes('\n'))).toBe(true)
  })

  it('logs a refused request with its status and no principal, and a route no one serves as unmatched', async () => {
    lines.length = 0
    await t.call('GET', '/api/admin/projects', { token: 'not-a-token', headers: { 'x-request-id': 'refused-1' } })
    await t.call('GET', '/api/admin/no-such-route/x', { headers: { 'x-request-id': 'unmatched-1' } })
    expect(parsed().find((l) => l.requestId === 'refused-1')).toMatchObject({ status: 401, route: '/api/admin/projects' })
    expect(parsed().find((l) => l.requestId === 'refused-1')).not.toHaveProperty('principal')
    expect(parsed().find((l) => l.requestId === 'unmatched-1')).toMatchObject({ status: 404, route: 'unmatched' })
  })

  it('logs nothing per request at the default level (warn), ids still answered', async () => {
    lines.length = 0
    const res = await quiet.call('GET', '/api/admin/projects')
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(lines).toEqual([])
  })
})

describe('LOG_FORMAT and LOG_LEVEL', () => {
  it('default to pretty and warn, and refuse anything else by name', () => {
    expect(readLogOptions({})).toEqual({ format: 'pretty', level: 'warn' })
    expect(readLogOptions({ LOG_FORMAT: 'JSON', LOG_LEVEL: 'Info' })).toEqual({ format: 'json', level: 'info' })
    expect(() => readLogOptions({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT/)
    expect(() => readLogOptions({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL/)
  })
})

describe('the admin API is never cached', () => {
  it('answers Cache-Control: no-store on reads and writes, including the statistics download and refusals', async () => {
    for (const path of ['/api/admin/projects', '/api/admin/api-tokens', '/api/admin/instance-admin/statistics/csv', '/api/admin/user-admin']) {
      const res = await t.call('GET', path)
      expect(res.status, path).toBe(200)
      expect(res.headers.get('cache-control'), path).toBe('no-store')
    }
    expect((await t.call('GET', '/api/admin/projects', { token: 'nope' })).headers.get('cache-control')).toBe('no-store')
    expect((await t.call('POST', '/api/admin/projects', { body: { id: 'cached-not', name: 'x' } })).headers.get('cache-control')).toBe('no-store')
  })
})

describe('POST /api/admin/record-ui-error: what a signed-in caller reports reaches the log as fields of one line', () => {
  it('cannot forge a log line with a newline, keeps the text bounded, and names the reporter by id, not e-mail', async () => {
    const viewer = await createSignedInUser(t, 'ui-error-reporter', 'Viewer', { email: 'reporter-77@example.com' })
    lines.length = 0
    const forged = `boom\n{"time":"2026-01-01T00:00:00.000Z","level":"error","msg":"admin password reset","user":"root"}\r\n\u001b[31mred`
    const res = await viewer.call('POST', '/api/admin/record-ui-error', { body: { errorMessage: forged, errorStack: `at x\n${'y'.repeat(9000)}` }, headers: { 'x-request-id': 'ui-error-1' } })
    expect(res.status).toBe(204)
    expect(lines.every((l) => !/[\n\r]/.test(l.line))).toBe(true)
    const line = parsed().find((l) => l.msg === 'console error reported')!
    expect(line).toMatchObject({ level: 'warn', requestId: 'ui-error-1', principal: 'user', principalId: viewer.id, errorMessage: forged })
    expect((line.errorStack as string).length).toBe(2000)
    expect(parsed().filter((l) => l.msg === 'admin password reset')).toEqual([])
    expect(lines.map((l) => l.line).join('\n')).not.toContain('reporter-77@example.com')
  })

  it('escapes line separators, C1 controls, DEL and bidirectional overrides, in both formats (the JSON still parses)', () => {
    const tricky = 'x\u2028\u2029{"level":"error"} \u009b31m \u202eRLO\u202c \u007f \u2066'
    for (const format of ['json', 'pretty'] as const) {
      const out: string[] = []
      createLogger({ format, level: 'warn', write: (line) => out.push(line) }).log('warn', 'console error reported', { errorMessage: tricky })
      expect(out[0]).not.toMatch(/[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/)
      if (format === 'json') expect(JSON.parse(out[0]!).errorMessage).toBe(tricky)
    }
  })

  it('keeps it one line in the pretty format too', () => {
    const out: string[] = []
    createLogger({ format: 'pretty', level: 'warn', write: (line) => out.push(line) }).log('warn', 'console error reported', { errorMessage: 'a\nFAKE ERROR line\r\n' })
    expect(out).toHaveLength(1)
    expect(out[0]).not.toMatch(/[\n\r]/)
  })
})
