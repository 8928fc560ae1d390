// The unchanged SDK poll answered before Hono's dispatch (src/client-api/fast-poll.ts): over real HTTP it is the routed
// 304 byte for byte (status, header lines, log line, metrics), and whatever is unusual about a poll takes the routed way.
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { rawRequest } from './helpers/server.js'
import { createEnvironment, createFlag, createProject, createToken, enableFlag, ok } from './helpers/factories.js'
import { withCompression } from '../src/compression-node.js'
import { readConfig, startServer } from '../src/server.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

let t: TestApp
let fast = 0
let now = new Date()
const lines: string[] = []
const observed: { route: string; method: string; status: number; seconds: number }[] = []
let server: ReturnType<typeof serve>
let base: string
const SPEC = { 'unleash-client-spec': '5.2.0' }

beforeAll(async () => {
  t = await createTestApp({
    now: () => now,
    sdk: { onFastPoll: () => fast++ },
    log: { format: 'json', level: 'info', write: (line) => lines.push(line) },
    observe: (r) => observed.push(r),
  })
  // As the Node server serves it (src/server.ts): node-server writes the answer, the compression wraps the app.
  server = serve({ fetch: withCompression(t.app.fetch), port: 0, hostname: '127.0.0.1' })
  await new Promise((resolve) => server.once('listening', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
  await t.close()
})

const raw = (path: string, headers: Record<string, string> | string[], method = 'GET', at = base) => rawRequest(at, path, { headers, method })

const poll = (token: string, headers: Record<string, string> = {}, path = '/api/client/features') => t.call('GET', path, { token, headers: { ...SPEC, ...headers } })

/** Runs `send` and says whether the poll was answered before the router. */
async function answered<T>(send: () => Promise<T>): Promise<{ fast: boolean; res: T }> {
  const before = fast
  const res = await send()
  return { fast: fast > before, res }
}

/** A project with one flag on in development, a client token of it, and the ETag of its first (routed) poll. */
async function polled(environment = 'development') {
  const project = await createProject(t)
  const flag = (await createFlag(t, {}, project)).name as string
  await enableFlag(t, flag, environment, project)
  const token = (await createToken(t, { type: 'client', environment, projects: [project] })).secret as string
  const first = await poll(token)
  expect(first.status, first.text).toBe(200)
  return { project, flag, token, etag: first.headers.get('etag')! }
}

const lastLog = () => {
  const { time, durationMs, ...rest } = JSON.parse(lines.at(-1)!)
  expect(typeof time).toBe('string')
  expect(typeof durationMs).toBe('number')
  return rest
}

describe('an unchanged SDK poll answered before the router', () => {
  it('is the routed 304 over HTTP: same status, same header lines in the same order, no body, same log line and metrics', async () => {
    const { token, etag } = await polled()
    const headers = { authorization: token, ...SPEC, 'if-none-match': etag, 'x-request-id': 'poll-identical-1' }
    // A write through the app moves the memo's generation on: the next poll is routed (and loads the same payload again).
    await createToken(t, { type: 'client', environment: 'development', projects: ['default'] })
    const routed = await answered(() => raw('/api/client/features', headers))
    const routedLog = lastLog()
    const routedMetric = observed.at(-1)!
    const fastOne = await answered(() => raw('/api/client/features', headers))
    const fastLog = lastLog()
    const fastMetric = observed.at(-1)!
    expect([routed.fast, fastOne.fast]).toEqual([false, true])
    expect([routed.res.status, fastOne.res.status]).toEqual([304, 304])
    expect([routed.res.body, fastOne.res.body]).toEqual(['', ''])
    // node-server's Date may tick between the two: its value aside, every line is the same.
    const lines = (h: string[]) => h.map((v, i) => (i % 2 === 1 && h[i - 1]!.toLowerCase() === 'date' ? '<date>' : v))
    expect(lines(fastOne.res.rawHeaders)).toEqual(lines(routed.res.rawHeaders))
    expect(routed.res.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase())).toEqual(['etag', 'x-request-id', 'date', 'connection', 'keep-alive'])
    expect(fastOne.res.rawHeaders[1]).toBe(etag)
    expect(fastLog).toEqual(routedLog)
    expect(fastLog).toMatchObject({ level: 'info', msg: 'request', requestId: 'poll-identical-1', method: 'GET', route: '/api/client/features', status: 304, principal: 'client-token' })
    expect(typeof fastLog.principalId).toBe('number')
    expect({ ...fastMetric, seconds: 0 }).toEqual({ ...routedMetric, seconds: 0 })
    expect(fastMetric).toMatchObject({ route: '/api/client/features', method: 'GET', status: 304 })
    // Without the client's id, each answer gets a new one, as routed.
    const a = await answered(() => raw('/api/client/features', { ...headers, 'x-request-id': 'bad id with spaces' }))
    expect(a.fast).toBe(true)
    expect(a.res.rawHeaders[3]).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('takes every unusual poll the routed way', async () => {
    const { token, etag } = await polled()
    const sdk = { 'if-none-match': etag }
    expect((await answered(() => poll(token, sdk))).fast).toBe(true)
    // `Bearer ` is read as routed.
    expect((await answered(() => poll(`Bearer ${token}`, sdk))).fast).toBe(true)
    const routed: [string, () => Promise<{ status: number }>, number][] = [
      ['no If-None-Match', () => poll(token), 200],
      ['another ETag', () => poll(token, { 'if-none-match': '"0123"' }), 200],
      ['a query', () => poll(token, sdk, '/api/client/features?namePrefix=flag'), 200],
      ['an empty query', () => poll(token, sdk, '/api/client/features?'), 304],
      ['a trailing slash', () => poll(token, sdk, '/api/client/features/'), 404],
      ['percent-encoding (decoded by the router: the same route)', () => poll(token, sdk, '/api/client/%66eatures'), 304],
      ['HEAD', () => t.call('HEAD', '/api/client/features', { token, headers: { ...SPEC, ...sdk } }), 304],
      ['POST', () => t.call('POST', '/api/client/features', { token, headers: { ...SPEC, ...sdk } }), 404],
      ['no token', () => t.call('GET', '/api/client/features', { token: null, headers: { ...SPEC, ...sdk } }), 401],
      ['an unknown token', () => poll(`${token}x`, sdk), 401],
      ['an admin token', () => poll(t.adminToken, sdk), 200],
    ]
    for (const [what, send, status] of routed) {
      const { fast: wasFast, res } = await answered(send)
      expect([what, wasFast, res.status]).toEqual([what, false, status])
    }
    // An SDK without segments is a scope of its own: routed until its payload is held, then answered before the router.
    const old = await answered(() => t.call('GET', '/api/client/features', { token, headers: { 'if-none-match': etag } }))
    expect([old.fast, old.res.status]).toEqual([false, 200])
    const oldEtag = old.res.headers.get('etag')!
    expect((await answered(() => t.call('GET', '/api/client/features', { token, headers: { 'if-none-match': oldEtag } }))).fast).toBe(true)
    // A frontend token is refused on the client API, as routed.
    const frontend = (await createToken(t, { type: 'frontend', environment: 'development', projects: ['*'] })).secret as string
    await t.call('GET', '/api/frontend', { token: frontend })
    const refused = await answered(() => poll(frontend, sdk))
    expect([refused.fast, refused.res.status]).toEqual([false, 403])
  })

  it('refuses a deleted token at once, and a token past its expiry', async () => {
    const { token, etag } = await polled()
    expect((await answered(() => poll(token, { 'if-none-match': etag }))).fast).toBe(true)
    await ok(t, 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(token)}`)
    const gone = await answered(() => poll(token, { 'if-none-match': etag }))
    expect([gone.fast, gone.res.status]).toEqual([false, 401])
    const project = await createProject(t)
    const expiring = (await createToken(t, { type: 'client', environment: 'development', projects: [project], expiresAt: new Date(now.getTime() + 60_000).toISOString() })).secret as string
    const tag = (await poll(expiring)).headers.get('etag')!
    expect((await answered(() => poll(expiring, { 'if-none-match': tag }))).fast).toBe(true)
    now = new Date(now.getTime() + 61_000)
    try {
      const expired = await answered(() => poll(expiring, { 'if-none-match': tag }))
      expect([expired.fast, expired.res.status]).toEqual([false, 401])
    } finally {
      now = new Date()
    }
  })

  it('answers a changed flag with the new payload, and a token of another environment with its own', async () => {
    const { project, flag, token, etag } = await polled()
    expect((await answered(() => poll(token, { 'if-none-match': etag }))).fast).toBe(true)
    await ok(t, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/off`)
    const changed = await answered(() => poll(token, { 'if-none-match': etag }))
    expect([changed.fast, changed.res.status, changed.res.body.features[0].enabled]).toEqual([false, 200, false])
    expect(changed.res.headers.get('etag')).not.toBe(etag)
    // A production token of the same project: its own scope, so the development ETag is not its answer.
    const production = (await createToken(t, { type: 'client', environment: 'production', projects: [project] })).secret as string
    const other = (await poll(production)).headers.get('etag')!
    expect(other).not.toBe(changed.res.headers.get('etag'))
    expect((await answered(() => poll(production, { 'if-none-match': other }))).fast).toBe(true)
    const mixed = await answered(() => poll(production, { 'if-none-match': changed.res.headers.get('etag')! }))
    expect([mixed.fast, mixed.res.status, mixed.res.headers.get('etag')]).toEqual([false, 200, other])
    // A token of all projects in an environment of its own sees that environment only.
    const env = (await createEnvironment(t)).name as string
    const wide = (await createToken(t, { type: 'client', environment: env, projects: ['*'] })).secret as string
    const wideEtag = (await poll(wide)).headers.get('etag')!
    const wrong = await answered(() => poll(wide, { 'if-none-match': other }))
    expect([wrong.fast, wrong.res.status, wrong.res.headers.get('etag')]).toEqual([false, 200, wideEtag])
  })

  it('goes on in maintenance mode as the routed poll does', async () => {
    const { token, etag } = await polled()
    await ok(t, 'POST', '/api/admin/maintenance', { enabled: true })
    try {
      const routed = await answered(() => poll(token, { 'if-none-match': etag }))
      const fastOne = await answered(() => poll(token, { 'if-none-match': etag }))
      expect([routed.fast, routed.res.status, fastOne.fast, fastOne.res.status]).toEqual([false, 304, true, 304])
    } finally {
      await ok(t, 'POST', '/api/admin/maintenance', { enabled: false })
    }
  })
})

describe('with fastPolls off', () => {
  it('routes every poll', async () => {
    let count = 0
    const off = await createTestApp({ sdk: { fastPolls: false, onFastPoll: () => count++ } })
    try {
      const token = (await createToken(off, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
      const etag = (await off.call('GET', '/api/client/features', { token, headers: SPEC })).headers.get('etag')!
      for (let i = 0; i < 3; i++) expect((await off.call('GET', '/api/client/features', { token, headers: { ...SPEC, 'if-none-match': etag } })).status).toBe(304)
      expect(count).toBe(0)
    } finally {
      await off.close()
    }
  })
})

describe('on the Node server (src/fast-poll-node.ts answers from Node’s request, before node-server and the wrappers)', () => {
  it('answers from Node’s request the routed 304’s header lines and log line, routes whatever Node could read differently, and counts every poll in the Prometheus metrics', async () => {
    const METRICS = 'fast-poll-scrape-token-0123'
    const ADMIN = '*:*.fast-poll-server-admin-0123456789'
    const CLIENT = 'default:development.fast-poll-server-client-0123456789'
    const dataDir = await mkdtemp(join(tmpdir(), 'flagpost-fast-poll-'))
    const logged: string[] = []
    let nodeFast = 0
    const node = await startServer(
      { ...readConfig({ INIT_CLIENT_API_TOKENS: CLIENT, FLAGPOST_METRICS_TOKEN: METRICS }), port: 0, host: '127.0.0.1', dataDir, initAdminTokens: [ADMIN], log: { format: 'json', level: 'info', write: (line) => logged.push(line) } },
      { onFastPoll: () => nodeFast++ },
    )
    try {
      const first = await fetch(`${node.url}/api/client/features`, { headers: { authorization: CLIENT, ...SPEC } })
      expect(first.status).toBe(200)
      const etag = first.headers.get('etag')!
      const lastLine = () => {
        const { time, durationMs, ...rest } = JSON.parse(logged.at(-1)!)
        return rest
      }
      // Routed once more (a write moved the memo's generation on), then answered from Node's request: the same lines.
      const write = await fetch(`${node.url}/api/admin/api-tokens`, { method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: JSON.stringify({ tokenName: 'moves-the-generation', type: 'frontend', projects: ['*'], environment: 'development' }) })
      expect(write.status).toBe(201)
      const routed = await raw('/api/client/features', { authorization: CLIENT, ...SPEC, 'if-none-match': etag, 'x-request-id': 'node-routed' }, 'GET', node.url)
      const routedLine = lastLine()
      expect([routed.status, nodeFast]).toEqual([304, 0])
      for (let i = 0; i < 5; i++) {
        const res = await raw('/api/client/features', { authorization: CLIENT, ...SPEC, 'if-none-match': etag, 'x-request-id': `node-${i}` }, 'GET', node.url)
        expect(res.status).toBe(304)
        expect(res.rawHeaders.filter((_, j) => j % 2 === 0).map((n) => n.toLowerCase())).toEqual(['etag', 'x-request-id', 'date', 'connection', 'keep-alive'])
        expect([res.rawHeaders[1], res.rawHeaders[3], res.body]).toEqual([etag, `node-${i}`, ''])
        expect(lastLine()).toEqual({ ...routedLine, requestId: `node-${i}` })
      }
      expect(nodeFast).toBe(5)
      expect(lastLine()).toMatchObject({ level: 'info', msg: 'request', method: 'GET', route: '/api/client/features', status: 304, principal: 'client-token' })
      // Whatever the Node request's own reading could take differently from the app's goes the routed way: a repeated
      // Authorization (Node keeps the first, the app's Headers join them: no such token), a query (even empty), HEAD.
      const repeated = await raw('/api/client/features', ['host', new URL(node.url).host, 'authorization', CLIENT, 'authorization', CLIENT, 'unleash-client-spec', '5.2.0', 'if-none-match', etag], 'GET', node.url)
      expect(repeated.status).toBe(401)
      const query = await raw('/api/client/features?', { authorization: CLIENT, ...SPEC, 'if-none-match': etag }, 'GET', node.url)
      const head = await raw('/api/client/features', { authorization: CLIENT, ...SPEC, 'if-none-match': etag }, 'HEAD', node.url)
      expect([query.status, head.status]).toEqual([304, 304])
      expect(nodeFast).toBe(5)
      // A token deleted through the app is refused at once, not answered from memory.
      const other = (await (await fetch(`${node.url}/api/admin/api-tokens`, { method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: JSON.stringify({ tokenName: 'gone', type: 'client', projects: ['*'], environment: 'development' }) })).json()) as { secret: string }
      const otherEtag = (await fetch(`${node.url}/api/client/features`, { headers: { authorization: other.secret, ...SPEC } })).headers.get('etag')!
      expect((await raw('/api/client/features', { authorization: other.secret, ...SPEC, 'if-none-match': otherEtag }, 'GET', node.url)).status).toBe(304)
      expect(nodeFast).toBe(6)
      expect((await fetch(`${node.url}/api/admin/api-tokens/${encodeURIComponent(other.secret)}`, { method: 'DELETE', headers: { authorization: ADMIN } })).status).toBeLessThan(300)
      expect((await raw('/api/client/features', { authorization: other.secret, ...SPEC, 'if-none-match': otherEtag }, 'GET', node.url)).status).toBe(401)
      expect(nodeFast).toBe(6)
      const polls = 5 + 1 + 1
      const text = await (await fetch(`${node.url}/internal-backstage/prometheus`, { headers: { authorization: `Bearer ${METRICS}` } })).text()
      const value = (line: RegExp) => Number(text.split('\n').find((l) => line.test(l))?.split(' ').at(-1))
      // Every 304 poll answered (routed, from Node's request, the query's): the HEAD is not a poll.
      expect(value(/^flagpost_sdk_polls_total\{.*status="304"/)).toBe(polls + 1)
      expect(value(/^flagpost_http_requests_total\{route="\/api\/client\/features",method="GET",status="304"\}/)).toBe(polls + 1)
      expect(value(/^flagpost_http_request_duration_seconds_count\{route="\/api\/client\/features",method="GET",status="304"\}/)).toBe(polls + 1)
    } finally {
      await node.close()
      await rm(dataDir, { recursive: true, force: true })
    }
    // A server of its own: start-up migrates a fresh database (slow on a loaded machine).
  }, 120_000)
})
