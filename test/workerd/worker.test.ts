// The deployable worker bundle, run in workerd (Miniflare) with Neon's driver talking to a real Postgres (PGlite).
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalPostgres, type LocalPostgres } from '../../dev/local-postgres.js'
import { createApp } from '../../src/app.js'
import { createToken } from '../../src/api-tokens/store.js'
import { SYSTEM_ACTOR } from '../../src/core/principal.js'
import { assetsOptions, builtWorker, readWranglerConfig, type WranglerConfig, workerModuleOptions } from './build.js'
import { answerOf } from '../helpers/app.js'
import { migratedTemplate } from '../helpers/data-dir.js'

let tempDir: string | undefined
let postgres: LocalPostgres | undefined
let mf: Miniflare | undefined
let adminToken: string
let config: WranglerConfig
let scriptPath: string

beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), 'flagpost-workerd-'))
  config = await readWranglerConfig()
  // The build and the database start are independent: overlap them (and keep the database to close if the build fails).
  const [built, started] = await Promise.allSettled([builtWorker(), migratedTemplate().then((loadDataDir) => startLocalPostgres({ loadDataDir, migrate: true }))])
  if (started.status === 'fulfilled') postgres = started.value
  if (built.status === 'rejected') throw built.reason
  if (started.status === 'rejected') throw started.reason
  scriptPath = built.value
  const pg = started.value
  adminToken = (
    await createToken(pg.database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'workerd-admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })
  ).secret

  mf = new Miniflare({
    ...workerModuleOptions(scriptPath, config),
    // The web console, served from static assets in front of the worker as on Cloudflare.
    ...assetsOptions(config),
    // Principals are remembered for a minute here; a counted request uses a token resolved just before it (freshAdminToken).
    bindings: { DATABASE_URL: pg.databaseUrl, NEON_WS_PROXY: pg.wsProxy, NEON_FETCH_ENDPOINT: pg.fetchEndpoint, FLAGPOST_PRINCIPAL_TTL_SECONDS: '60' },
  })
  await mf.ready
})

afterAll(async () => {
  await mf?.dispose()
  await postgres?.close()
  if (tempDir) await rm(tempDir, { recursive: true, force: true })
})

/** Sends a request to the worker; `token: null` sends none. */
async function call(method: string, path: string, options: { body?: unknown; token?: string | null } = {}) {
  const headers: Record<string, string> = {}
  const token = options.token === undefined ? adminToken : options.token
  if (token !== null) headers.authorization = token
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const response = await mf!.dispatchFetch(`http://flagpost.test${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  })
  return answerOf(response as unknown as Response)
}

const query = async <T = Record<string, unknown>>(sqlText: string, params: unknown[] = []) => (await postgres!.database.client.query<T>(sqlText, params)).rows

/**
 * Waits until the database has answered nothing for a moment (200 ms) and no WebSocket is open: the request's work after
 * its response is done. (100 ms let an earlier request's late round trip be counted to the next one once in CI, under load.)
 */
async function settled() {
  let last = postgres!.roundTrips()
  // 400 ms without a round trip: on a loaded machine the background work of the request before can start late.
  for (let quiet = 0; quiet < 10; ) {
    await new Promise((r) => setTimeout(r, 40))
    const now = postgres!.roundTrips()
    quiet = now.http === last.http && now.webSocket === last.webSocket && postgres!.relayConnections().open === 0 ? quiet + 1 : 0
    last = now
  }
}

/**
 * An admin token made in the database and resolved once through the worker just now: the request counted with it
 * finds its principal remembered (for a minute), however long the file has run. (With the file's one token, resolved
 * at its start, a counted request that met the minute's end took one more round trip, under CI's load.)
 */
async function freshAdminToken(): Promise<string> {
  const { secret } = await createToken(postgres!.database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: `counted-${Date.now()}-${Math.random()}`, type: 'admin', projects: ['*'], environment: '*', expiresAt: null })
  const warm = await call('GET', '/api/admin/projects', { token: secret })
  expect(warm.status, warm.text).toBe(200)
  return secret
}

/** The database round trips of a request, its background work included, by path (HTTP requests, WebSocket flights). */
async function counted(method: string, path: string, options: { body?: unknown; token?: string | null } = {}) {
  if (options.token === undefined) options = { ...options, token: await freshAdminToken() }
  await settled()
  const before = postgres!.roundTrips()
  const opened = postgres!.relayConnections().total
  const res = await call(method, path, options)
  await settled()
  const after = postgres!.roundTrips()
  return { res, http: after.http - before.http, webSocket: after.webSocket - before.webSocket, pools: postgres!.relayConnections().total - opened }
}

/**
 * A project whose development environment's default strategy names a segment. Switching a flag with no strategy
 * on there adds that strategy under the flag's lock (segments are checked there, to name an unknown one): the
 * write that still takes an interactive transaction, over the WebSocket pool.
 */
async function projectWithSegmentDefault(id: string) {
  expect((await call('POST', '/api/admin/projects', { body: { id, name: id } })).status).toBe(201)
  const segment = await call('POST', '/api/admin/segments', { body: { name: `${id}-segment`, constraints: [] } })
  expect(segment.status, segment.text).toBe(201)
  const strategy = { name: 'flexibleRollout', parameters: { rollout: '100' }, constraints: [], segments: [segment.body.id] }
  const set = await call('PUT', `/api/admin/projects/${id}/environments/development/default-strategy`, { body: strategy })
  expect(set.status, set.text).toBe(200)
  return { F: `/api/admin/projects/${id}/features`, segmentId: segment.body.id as number }
}

/** Waits until every WebSocket the worker opened to the database is closed (pools end in `waitUntil`). */
async function relayDrained(timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs
  while (postgres!.relayConnections().open > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
  return postgres!.relayConnections().open
}

describe('worker bundle in workerd', () => {
  it('answers health GOOD with one query over Neon\'s SQL over HTTP, opening no WebSocket', async () => {
    const before = postgres!.roundTrips()
    const res = await call('GET', '/health', { token: null })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ health: 'GOOD' })
    // The query really went to Postgres, over HTTP.
    expect(postgres!.roundTrips()).toEqual({ http: before.http + 1, webSocket: before.webSocket })
  })

  it('creates a project in the database, with its event', async () => {
    const res = await call('POST', '/api/admin/projects', { body: { id: 'workerd-project', name: 'Workerd Project', description: 'made in workerd' } })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ id: 'workerd-project', name: 'Workerd Project', description: 'made in workerd' })

    expect(await query('select id, name, description from projects where id = $1', ['workerd-project'])).toEqual([
      { id: 'workerd-project', name: 'Workerd Project', description: 'made in workerd' },
    ])
    const events = await query<{ created_by: string; data: { id: string } }>(
      `select created_by, data from events where type = 'project-created' and project = $1`,
      ['workerd-project'],
    )
    expect(events).toHaveLength(1)
    expect(events[0]!.created_by).toBe('workerd-admin')
    expect(events[0]!.data.id).toBe('workerd-project')
  })

  it('refuses admin writes with 503 in maintenance mode, stored in the database, until an admin switches it off', async () => {
    expect((await call('POST', '/api/admin/maintenance', { body: { enabled: true } })).status).toBe(204)
    expect(await query(`select content from settings where name = 'maintenance'`)).toEqual([{ content: { enabled: true } }])
    const refused = await call('POST', '/api/admin/projects', { body: { id: 'workerd-maintenance', name: 'Refused' } })
    expect(refused.status, refused.text).toBe(503)
    expect(refused.body.name).toBe('ServiceUnavailableError')
    expect((await call('GET', '/api/admin/projects')).status).toBe(200)
    expect((await call('POST', '/api/admin/maintenance', { body: { enabled: false } })).status).toBe(204)
    expect(await query('select id from projects where id = $1', ['workerd-maintenance'])).toEqual([])
  })

  it('lists the created project', async () => {
    const res = await call('GET', '/api/admin/projects')
    expect(res.status, res.text).toBe(200)
    expect(res.body.version).toBe(1)
    expect(res.body.projects.map((p: { id: string }) => p.id)).toContain('workerd-project')
  })

  it('answers 401 AuthenticationRequired without a token', async () => {
    const res = await call('GET', '/api/admin/projects', { token: null })
    expect(res.status).toBe(401)
    // With no credential at all, it says how a browser signs in (as Unleash's): a password, and no single sign-on yet.
    expect(res.body).toEqual({ id: expect.any(String), name: 'AuthenticationRequired', message: expect.any(String), type: 'password', path: '/auth/simple/login', defaultHidden: false, options: [] })
  })

  it('answers 400 ValidationError, with the field, for a body its schema refuses (zod parses without its JIT here)', async () => {
    const res = await call('POST', '/api/admin/projects/default/features', { body: { name: 'bad-type', type: 'no-such-type' } })
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', details: [expect.objectContaining({ path: expect.stringContaining('type') })] })
  })

  it("serves the OpenAPI document the build made, byte for byte the Node server's (the bundle has no generator)", async () => {
    const res = await call('GET', '/docs/openapi.json', { token: null })
    expect(res.status, res.text).toBe(200)
    expect(res.body.paths['/api/admin/projects/{projectId}/features']).toBeDefined()
    const node = await createApp({ db: () => postgres!.database.db }).request('/docs/openapi.json')
    expect(res.headers.get('content-type')).toBe(node.headers.get('content-type'))
    expect(res.text).toBe(await node.text())
  })

  it('answers 500 InternalError, not the console, when the static assets lack the OpenAPI document', async () => {
    // Assets of the console alone: a path they do not hold is answered with its index.html.
    const consoleOnly = join(tempDir!, 'console-only')
    await mkdir(consoleOnly)
    await copyFile(join(config.assets!.directory, 'index.html'), join(consoleOnly, 'index.html'))
    const other = new Miniflare({
      ...workerModuleOptions(scriptPath, config),
      ...assetsOptions({ ...config, assets: { ...config.assets!, directory: consoleOnly } }),
      bindings: { DATABASE_URL: postgres!.databaseUrl, NEON_WS_PROXY: postgres!.wsProxy, NEON_FETCH_ENDPOINT: postgres!.fetchEndpoint },
    })
    try {
      expect((await other.dispatchFetch('http://flagpost.test/health')).status).toBe(200)
      const res = await other.dispatchFetch('http://flagpost.test/docs/openapi.json')
      expect(res.status).toBe(500)
      expect(await res.json()).toMatchObject({ name: 'InternalError' })
    } finally {
      await other.dispose()
    }
  })

  it('answers the migration from Unleash with 400 (served by the Node server only), and 401 without a token, reaching nothing', async () => {
    const body = { url: 'https://unleash.example.com', token: '*:*.unleash-admin-secret-in-workerd', dryRun: true }
    const res = await call('POST', '/api/admin/migrate/unleash', { body })
    expect(res.status, res.text).toBe(400)
    expect(res.body).toEqual({ id: expect.any(String), name: 'ValidationError', message: 'Served by the Node server only: use npm run migrate:unleash' })
    expect(res.text).not.toContain('unleash-admin-secret-in-workerd')
    expect((await call('POST', '/api/admin/migrate/unleash', { body, token: null })).status).toBe(401)
  })

  it('answers 404 NotFoundError for an unknown route', async () => {
    // Under /api: any other unknown GET is the web console's (its index.html; see below).
    const res = await call('GET', '/api/no-such-route', { token: null })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ id: expect.any(String), name: 'NotFoundError', message: expect.any(String) })
  })

  it('opens and closes a pool per request that makes a transaction, over many sequential requests', async () => {
    const { F } = await projectWithSegmentDefault('sequential')
    const names = [0, 1, 2, 3, 4, 5].map((i) => `sequential-${i}`)
    for (const name of names) expect((await call('POST', F, { body: { name } })).status).toBe(201)
    expect(await relayDrained()).toBe(0)
    const before = postgres!.relayConnections().total
    for (const name of names) {
      const res = await call('POST', `${F}/${name}/environments/development/on`)
      expect(res.status, res.text).toBe(200)
    }
    const listed = await call('GET', '/api/admin/projects')
    expect(listed.status, listed.text).toBe(200)

    // Each switch on (an interactive transaction) opened its own pool, the list none, and every pool was ended after its response.
    expect(postgres!.relayConnections().total - before).toBe(6)
    expect(await relayDrained()).toBe(0)
    expect(await query(`select count(*)::int as n from events where type = 'feature-environment-enabled' and feature_name like 'sequential-%'`)).toEqual([{ n: 6 }])
  })

  it('creates a user, signs them in (PBKDF2 through crypto.subtle) and accepts the session cookie', async () => {
    const created = await call('POST', '/api/admin/user-admin', { body: { username: 'edge', password: 'edge-password', rootRole: 'Viewer' } })
    expect(created.status, created.text).toBe(201)
    expect((await query<{ password_hash: string }>('select password_hash from users where username = $1', ['edge']))[0]!.password_hash).toMatch(/^pbkdf2-sha256\$100000\$/)
    const login = await mf!.dispatchFetch('http://flagpost.test/auth/simple/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'edge', password: 'edge-password' }),
    })
    expect(login.status, await login.clone().text()).toBe(200)
    const cookie = /flagpost-session=[0-9a-f]+/.exec(login.headers.get('set-cookie') ?? '')![0]
    const me = await mf!.dispatchFetch('http://flagpost.test/api/admin/user', { headers: { cookie } })
    expect(me.status).toBe(200)
    expect(((await me.json()) as { user: { username: string } }).user.username).toBe('edge')
    const wrong = await mf!.dispatchFetch('http://flagpost.test/auth/simple/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'edge', password: 'not-it' }),
    })
    expect(wrong.status).toBe(401)
    await wrong.text()
  })

  it('serves concurrent requests, each with its own transaction', async () => {
    const { F } = await projectWithSegmentDefault('concurrent')
    const names = [0, 1, 2, 3].map((i) => `concurrent-${i}`)
    for (const name of names) expect((await call('POST', F, { body: { name } })).status).toBe(201)
    const results = await Promise.all(names.map((name) => call('POST', `${F}/${name}/environments/development/on`)))
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200])
    expect(await query(`select count(*)::int as n from feature_environments where feature_name like 'concurrent-%' and environment = 'development' and enabled`)).toEqual([{ n: 4 }])
    expect(await relayDrained()).toBe(0)
  })
})

describe('the web console at the edge (Workers static assets)', () => {
  it("answers / and the console's own routes (the pages links lead to among them) with its index.html, revalidated on every load", async () => {
    const index = await readFile(join(config.assets!.directory, 'index.html'), 'utf8')
    for (const path of ['/', '/projects/checkout', '/projects/checkout/flags/new-checkout', '/events', '/sign-up?invite=abc', '/new-user?token=x']) {
      const page = await call('GET', path, { token: null })
      expect([path, page.status, page.headers.get('content-type'), page.text]).toEqual([path, 200, expect.stringMatching(/^text\/html/), index])
    }
    const script = index.match(/src="(\/assets\/[^"]+\.js)"/)![1]!
    const asset = await call('GET', script, { token: null })
    expect([asset.status, asset.headers.get('content-type')]).toEqual([200, expect.stringMatching(/javascript/)])
  })

  it("still sends the app's paths to the worker: the API, its 404, the health check, the docs and the invite link's checks", async () => {
    expect((await call('GET', '/api/admin/projects')).body).toMatchObject({ projects: expect.any(Array) })
    expect((await call('GET', '/api/admin/no-such-route')).body).toMatchObject({ name: 'NotFoundError' })
    expect((await call('GET', '/health', { token: null })).body).toEqual({ health: 'GOOD' })
    expect((await call('GET', '/ready', { token: null })).body).toEqual({ health: 'GOOD' })
    expect((await call('GET', '/docs/openapi.json', { token: null })).body).toMatchObject({ openapi: '3.1.0' })
    // The pages links lead to are the console's (above); the routes they call are the worker's.
    expect((await call('GET', '/auth/reset/validate?token=x', { token: null })).body).toMatchObject({ name: 'AuthenticationRequired' })
    expect((await call('GET', '/invite/0123456789abcdef0123456789abcdef/validate', { token: null })).body).toMatchObject({ name: 'ValidationError' })
    const signOn = await mf!.dispatchFetch('http://flagpost.test/auth/oidc/login', { redirect: 'manual' })
    expect([signOn.status, signOn.headers.get('location')]).toEqual([302, expect.stringMatching(/^\/sign-in\?errorMsg=/)])
  })
})

describe('the API reference at the edge', () => {
  it("serves /docs from the worker under the console's CSP, and the files it loads from static assets (not the worker's bundle)", async () => {
    const page = await call('GET', '/docs', { token: null })
    expect([page.status, page.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^text\/html/)])
    expect(page.headers.get('content-security-policy')).toMatch(/(^|; )script-src 'self'(;|$)/)
    const files = [...page.text.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
    expect(files.length).toBeGreaterThan(1)
    for (const path of files) {
      expect(path, 'a file of another origin').toMatch(/^\/[^/]/)
      const file = await call('GET', path, { token: null })
      expect([path, file.status, file.headers.get('content-type')]).toEqual([path, 200, expect.stringMatching(/javascript|text\/css/)])
      expect(file.text).toBe(await readFile(join(config.assets!.directory, path), 'utf8'))
      expect(file.headers.get('content-security-policy'), path).toMatch(/(^|; )script-src 'self'(;|$)/)
    }
  })
})

describe('SDK routes in workerd', () => {
  it('serves the client payload with an ETag and 304, and folds metrics after the response (waitUntil)', async () => {
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name: 'edge-flag' } })).status).toBe(201)
    expect((await call('POST', '/api/admin/projects/default/features/edge-flag/environments/development/on')).status).toBe(200)
    const created = await call('POST', '/api/admin/api-tokens', { body: { tokenName: 'edge-sdk', type: 'client', environment: 'development' } })
    expect(created.status, created.text).toBe(201)
    const headers = { authorization: created.body.secret as string, 'unleash-client-spec': '5.2.0' }

    const first = await mf!.dispatchFetch('http://flagpost.test/api/client/features', { headers })
    expect(first.status).toBe(200)
    const etag = first.headers.get('etag')!
    const payload = (await first.json()) as { features: { name: string; enabled: boolean }[] }
    expect(payload.features.find((f) => f.name === 'edge-flag')?.enabled).toBe(true)
    const unchanged = await mf!.dispatchFetch('http://flagpost.test/api/client/features', { headers: { ...headers, 'if-none-match': etag } })
    expect(unchanged.status).toBe(304)
    await unchanged.text()

    const now = new Date().toISOString()
    const metrics = await mf!.dispatchFetch('http://flagpost.test/api/client/metrics', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ appName: 'edge-app', instanceId: 'edge-1', bucket: { start: now, stop: now, toggles: { 'edge-flag': { yes: 2, no: 1 } } } }),
    })
    expect(metrics.status).toBe(202)
    await metrics.text()
    // The test reads PGlite directly, beside the worker's connection: it can see the aggregation's
    // transaction half done, so wait for its end state rather than for the inbox to empty.
    const folded = async () =>
      (await query(`select (select count(*) from client_metrics_inbox) = 0 and (select last_seen_at is not null from feature_environments where feature_name = 'edge-flag' and environment = 'development') as done`))[0]!.done
    const deadline = Date.now() + 5_000
    while (!(await folded()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(await query(`select app_name from client_applications where app_name = 'edge-app'`)).toEqual([{ app_name: 'edge-app' }])
    expect(await query(`select last_seen_at is not null as seen from feature_environments where feature_name = 'edge-flag' and environment = 'development'`)).toEqual([{ seen: true }])
    expect(await relayDrained()).toBe(0)
  })
})

describe('Unleash Edge’s upstream calls and the frontend API’s ETags in workerd', () => {
  it('validates tokens for Edge with one query over HTTP and no token of its own, leaving out the unknown ones', async () => {
    const created = await call('POST', '/api/admin/api-tokens', { body: { tokenName: 'edge-validated', type: 'frontend', environment: 'development' } })
    expect(created.status, created.text).toBe(201)
    const secret = created.body.secret as string
    const { res, http, webSocket } = await counted('POST', '/edge/validate', { token: null, body: { tokens: [secret, 'default:development.unknown'] } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ tokens: [{ token: secret, type: 'frontend', projects: ['*'], environment: 'development' }] })
    expect({ http, webSocket }).toEqual({ http: 1, webSocket: 0 })
  })

  it('stores Edge’s bulk of reports and folds it after the response (waitUntil): the application, the counts and the impact metrics', async () => {
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name: 'bulk-flag' } })).status).toBe(201)
    const created = await call('POST', '/api/admin/api-tokens', { body: { tokenName: 'edge-upstream', type: 'client', environment: 'development' } })
    const now = new Date().toISOString()
    const res = await call('POST', '/api/client/metrics/bulk', {
      token: created.body.secret as string,
      body: {
        applications: [{ appName: 'bulk-app', instanceId: 'pod-1', environment: 'development', interval: 15000, started: now, strategies: ['default'] }],
        metrics: [{ featureName: 'bulk-flag', appName: 'bulk-app', environment: 'development', timestamp: now, yes: 4, no: 1, variants: {} }],
        impactMetrics: [{ name: 'orders', help: 'Orders', type: 'counter', samples: [{ value: 2, labels: { appName: 'bulk-app', environment: 'development' } }] }],
      },
    })
    expect(res.status, res.text).toBe(202)
    const folded = async () => (await query(`select count(*)::int as n from client_impact_metrics where app_name = 'bulk-app'`))[0]!.n === 1
    const deadline = Date.now() + 5_000
    while (!(await folded()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    const usage = await call('GET', '/api/admin/client-metrics/features/bulk-flag')
    expect(usage.body.seenApplications).toEqual(['bulk-app'])
    expect(usage.body.lastHourUsage).toEqual([expect.objectContaining({ environment: 'development', yes: 4, no: 1 })])
    const impact = await call('GET', '/api/admin/metrics/applications/bulk-app/impact-metrics')
    expect(impact.body.impactMetrics).toEqual([expect.objectContaining({ name: 'orders', type: 'counter', value: 2, environment: 'development' })])
    expect(await relayDrained()).toBe(0)
  })

  it('answers GET /api/frontend with an ETag of the answer and 304 on If-None-Match', async () => {
    const created = await call('POST', '/api/admin/api-tokens', { body: { tokenName: 'edge-browser', type: 'frontend', environment: 'development' } })
    const headers = { authorization: created.body.secret as string }
    const first = await mf!.dispatchFetch('http://flagpost.test/api/frontend?userId=1&sessionId=s', { headers })
    expect(first.status).toBe(200)
    await first.text()
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/)
    const again = await mf!.dispatchFetch('http://flagpost.test/api/frontend?userId=1&sessionId=s', { headers: { ...headers, 'if-none-match': etag } })
    expect(again.status).toBe(304)
    await again.text()
  })
})

describe('the two database paths in workerd', () => {
  const F = '/api/admin/projects/default/features'

  it('reads a flag with one statement over HTTP, opening no WebSocket', async () => {
    const name = 'http-read'
    expect((await call('POST', F, { body: { name } })).status).toBe(201)
    expect((await call('GET', `${F}/${name}`)).status).toBe(200)
    const { res, http, webSocket } = await counted('GET', `${F}/${name}`)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ name, project: 'default', enabled: false })
    expect({ http, webSocket }).toEqual({ http: 1, webSocket: 0 })
  })

  it('switches a flag it knows with one statement over HTTP (no integration listens: nothing to claim after the response)', async () => {
    const name = 'http-switch'
    expect((await call('POST', F, { body: { name } })).status).toBe(201)
    expect((await call('POST', `${F}/${name}/environments/development/strategies`, { body: { name: 'default' } })).status).toBe(200)
    // The first switch on moves the flag's lifecycle on too: written under the flag's lock.
    expect((await call('POST', `${F}/${name}/environments/development/on`)).status).toBe(200)
    expect((await call('POST', `${F}/${name}/environments/development/off`)).status).toBe(200)
    const { res, http, webSocket } = await counted('POST', `${F}/${name}/environments/development/on`)
    expect(res.status, res.text).toBe(200)
    expect(res.body.environments.find((e: { name: string }) => e.name === 'development').enabled).toBe(true)
    expect({ http, webSocket }).toEqual({ http: 1, webSocket: 0 })
    expect(await query(`select type from events where feature_name = $1 order by id desc limit 1`, [name])).toEqual([{ type: 'feature-environment-enabled' }])
  })

  it('opens the WebSocket pool for an interactive transaction only, and ends it after the response', async () => {
    const { F: inProject, segmentId } = await projectWithSegmentDefault('pool')
    expect((await call('POST', inProject, { body: { name: 'pool-flag' } })).status).toBe(201)
    const { res, webSocket, pools } = await counted('POST', `${inProject}/pool-flag/environments/development/on`)
    expect(res.status, res.text).toBe(200)
    expect(res.body.environments.find((e: { name: string }) => e.name === 'development')).toMatchObject({ enabled: true, strategies: [expect.objectContaining({ segments: [segmentId] })] })
    expect(pools).toBe(1)
    expect(webSocket).toBeGreaterThan(0)
    expect(postgres!.relayConnections().open).toBe(0)
    expect(await query(`select type from events where feature_name = 'pool-flag' order by id`)).toEqual([{ type: 'feature-created' }, { type: 'feature-strategy-add' }, { type: 'feature-environment-enabled' }])
  })

  it('creates a project with a read and one statement over HTTP, opening no WebSocket', async () => {
    const { res, webSocket, pools } = await counted('POST', '/api/admin/projects', { body: { id: 'http-project', name: 'HTTP' } })
    expect(res.status, res.text).toBe(201)
    expect({ webSocket, pools }).toEqual({ webSocket: 0, pools: 0 })
    expect(await query(`select count(*)::int as n from events where type = 'project-created' and project = 'http-project'`)).toEqual([{ n: 1 }])
  })

  it('creates a flag with a read and a batch over HTTP (two round trips), opening no WebSocket', async () => {
    // The admin token remembered (a write other than a flag's, by an earlier test, forgets it).
    expect((await call('GET', '/api/admin/projects')).status).toBe(200)
    const { res, http, webSocket } = await counted('POST', F, { body: { name: 'batch-create', tags: [{ type: 'simple', value: 'edge' }] } })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ name: 'batch-create', tags: [{ type: 'simple', value: 'edge' }], lifecycle: { stage: 'initial' } })
    // The read and the batch (no integration listens: nothing to claim after the response).
    expect({ http, webSocket }).toEqual({ http: 2, webSocket: 0 })
    expect(await query(`select type from events where feature_name = 'batch-create'`)).toEqual([{ type: 'feature-created' }])
  })

  it('answers 409 for a flag name taken, and writes nothing', async () => {
    expect((await call('POST', F, { body: { name: 'taken-edge' } })).status).toBe(201)
    const again = await call('POST', F, { body: { name: 'taken-edge', description: 'second' } })
    expect(again.status, again.text).toBe(409)
    expect(again.body).toMatchObject({ name: 'NameExistsError' })
    expect(await query(`select description from features where name = 'taken-edge'`)).toEqual([{ description: null }])
    expect(await query(`select count(*)::int as n from events where feature_name = 'taken-edge'`)).toEqual([{ n: 1 }])
  })

  it('answers 400 for a patch that cannot apply, and changes nothing', async () => {
    const name = 'bad-patch'
    expect((await call('POST', F, { body: { name } })).status).toBe(201)
    const [before] = await query<{ version: number }>(`select version from features where name = $1`, [name])
    const res = await call('PATCH', `${F}/${name}`, { body: [{ op: 'replace', path: '/type', value: 'no-such-type' }] })
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError' })
    expect(await query(`select version, type from features where name = $1`, [name])).toEqual([{ version: before!.version, type: 'release' }])
    expect(await query(`select count(*)::int as n from events where feature_name = $1`, [name])).toEqual([{ n: 1 }])
  })

  it('rolls back a transaction that fails under the lock: nothing of it is left, not even the lock\'s version', async () => {
    const { F: inProject } = await projectWithSegmentDefault('rolled-back')
    // A default strategy naming a segment that does not exist: a state the API refuses to make.
    await query(`update project_environments set default_strategy = jsonb_set(default_strategy, '{segments}', '[987654]') where project_id = 'rolled-back' and environment_name = 'development'`)
    const name = 'rolled-back-flag'
    expect((await call('POST', inProject, { body: { name } })).status).toBe(201)
    const [before] = await query<{ version: number }>(`select version from features where name = $1`, [name])
    // Switching on adds the default strategy under the flag's lock (over the pool), and fails on its segment.
    const { res, pools } = await counted('POST', `${inProject}/${name}/environments/development/on`)
    expect(res.status, res.text).toBe(400)
    expect(pools).toBe(1)
    expect(await query(`select version from features where name = $1`, [name])).toEqual([{ version: before!.version }])
    expect(await query(`select enabled from feature_environments where feature_name = $1 and environment = 'development'`, [name])).toEqual([{ enabled: false }])
    expect(await query(`select count(*)::int as n from feature_strategies where feature_name = $1`, [name])).toEqual([{ n: 0 }])
    expect(await query(`select count(*)::int as n from events where feature_name = $1`, [name])).toEqual([{ n: 1 }])
    expect(await relayDrained()).toBe(0)
  })
})

describe('the cron trigger in workerd', () => {
  it('marks flags past their type\'s lifetime potentially stale, once, with their event', async () => {
    const name = `cron-ops-${Date.now()}`
    expect((await call('POST', '/api/admin/projects/default/features', { body: { name, type: 'operational' } })).status).toBe(201)
    // A flag made 30 days ago: the API makes flags now.
    await query(`update features set created_at = now() - interval '30 days' where name = $1`, [name])
    const worker = await mf!.getWorker()
    for (let run = 0; run < 2; run++) {
      await (worker as unknown as { scheduled(options: { cron: string }): Promise<unknown> }).scheduled({ cron: '*/5 * * * *' })
      await settled()
    }
    expect(await query(`select potentially_stale from features where name = $1`, [name])).toEqual([{ potentially_stale: true }])
    expect(await query(`select type, created_by from events where feature_name = $1 and type = 'feature-potentially-stale-on'`, [name])).toEqual([
      { type: 'feature-potentially-stale-on', created_by: 'system' },
    ])
    expect((await call('GET', `/api/admin/projects/default/features/${name}`)).body.potentiallyStale).toBe(true)
  })

  it('applies a due scheduled change request, once, with its events', async () => {
    const project = `cron-cr-${Date.now()}`
    expect((await call('POST', '/api/admin/projects', { body: { id: project, name: project, environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] } })).status).toBe(201)
    const name = `${project}-flag`
    expect((await call('POST', `/api/admin/projects/${project}/features`, { body: { name } })).status).toBe(201)
    const author = (await call('POST', '/api/admin/api-tokens', { body: { tokenName: `${project}-author`, type: 'admin' } })).body.secret as string
    const draft = await call('POST', `/api/admin/projects/${project}/environments/production/change-requests`, { token: author, body: { feature: name, action: 'updateEnabled', payload: { enabled: true } } })
    expect(draft.status, draft.text).toBe(200)
    const path = `/api/admin/projects/${project}/change-requests/${draft.body.id}`
    expect((await call('PUT', `${path}/state`, { token: author, body: { state: 'In review' } })).status).toBe(200)
    expect((await call('POST', `${path}/approve`)).status).toBe(200)
    const scheduled = await call('PUT', `${path}/state`, { body: { state: 'Scheduled', scheduledAt: new Date(Date.now() + 3_600_000).toISOString() } })
    expect(scheduled.status, scheduled.text).toBe(200)
    // The worker's clock is the real one: the schedule is moved into the past, as an hour passing would.
    await query(`update change_request_schedules set scheduled_at = now() - interval '1 minute' where change_request_id = $1`, [draft.body.id])
    const worker = await mf!.getWorker()
    for (let run = 0; run < 2; run++) {
      await (worker as unknown as { scheduled(options: { cron: string }): Promise<unknown> }).scheduled({ cron: '*/5 * * * *' })
      await settled()
    }
    expect((await call('GET', path)).body.state).toBe('Applied')
    expect(await query(`select enabled from feature_environments where feature_name = $1 and environment = 'production'`, [name])).toEqual([{ enabled: true }])
    expect(await query(`select type from events where type like 'change-request-%applied%' or type like 'change-request-scheduled-%' order by id`)).toEqual([
      { type: 'change-request-applied' },
      { type: 'change-request-scheduled-application-success' },
    ])
  })
})

describe('signals and action sets in workerd', () => {
  /** A project with a flag off, a signal endpoint with a token, a service account and an action set switching the flag on. */
  async function killSwitch(prefix: string) {
    const project = `${prefix}-${Date.now()}`
    const ok = async (method: string, path: string, body?: unknown) => {
      const res = await call(method, path, { body })
      expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300)
      return res.body
    }
    await ok('POST', '/api/admin/projects', { id: project, name: project })
    const flag = (await ok('POST', `/api/admin/projects/${project}/features`, { name: `${project}-flag` })).name as string
    const endpoint = await ok('POST', '/api/admin/signal-endpoints', { name: `${project}-alerts` })
    const token = (await ok('POST', `/api/admin/signal-endpoints/${endpoint.id}/tokens`, { name: 'grafana' })).token as string
    const actor = await ok('POST', '/api/admin/service-account', { username: `${project}-bot`, name: 'Bot', rootRole: 'Editor' })
    const step = { action: 'TOGGLE_FEATURE_ON', sortOrder: 1, executionParams: { environment: 'development', featureName: flag } }
    const set = await ok('POST', `/api/admin/projects/${project}/actions`, { name: 'kill', actorId: actor.id, match: { source: 'signal-endpoint', sourceId: endpoint.id, payload: {} }, actions: [step] })
    return { project, flag, endpoint, token, actor, setId: set.id as number }
  }
  const enabledIn = async (flag: string) => (await query<{ enabled: boolean }>(`select enabled from feature_environments where feature_name = $1 and environment = 'development'`, [flag]))[0]?.enabled

  it('stores a signal with the endpoint’s token only, and runs the matching action set after the response (waitUntil)', async () => {
    const { project, flag, endpoint, token, actor, setId } = await killSwitch('signal')
    expect((await call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: adminToken, body: {} })).status).toBe(401)
    expect((await call('GET', '/api/admin/projects', { token: `Bearer ${token}` })).status).toBe(401)
    const { res, webSocket } = await counted('POST', `/api/signal-endpoint/${endpoint.name}`, { token: `Bearer ${token}`, body: { alert: 'checkout errors' } })
    expect(res.status, res.text).toBe(200)
    expect(webSocket).toBe(0)
    expect(await enabledIn(flag)).toBe(true)
    expect(await query(`select created_by from events where type = 'feature-environment-enabled' and feature_name = $1`, [flag])).toEqual([{ created_by: actor.username }])
    const runs = (await call('GET', `/api/admin/projects/${project}/actions/${setId}/events`)).body.actionSetEvents
    expect(runs).toMatchObject([{ state: 'success', signal: { payload: { alert: 'checkout errors' } }, actionSet: { actions: [{ state: 'success' }] } }])
  })

  it('finishes, on its cron trigger, a run a stopped isolate left claimed', async () => {
    const { project, flag, endpoint, setId } = await killSwitch('sweep')
    // Nothing routes can make: a run claimed long ago by an isolate that stopped before making it.
    const [signal] = await query<{ id: string }>(`insert into signals (source_id, payload, created_by_source_token_id) values ($1, '{}', null) returning id`, [endpoint.id])
    const set = (await call('GET', `/api/admin/projects/${project}/actions`)).body.actions[0]
    const snapshot = { ...set, actions: set.actions.map((a: object) => ({ ...a, state: 'not started' })) }
    await query(
      `insert into action_set_events (action_set_id, signal_id, state, signal, action_set, claimed_at) values ($1, $2, 'started', $3, $4, now() - interval '10 minutes')`,
      [setId, signal!.id, JSON.stringify({ id: Number(signal!.id), source: 'signal-endpoint', sourceId: endpoint.id, createdAt: new Date().toISOString(), createdBySourceTokenId: null, payload: {} }), JSON.stringify(snapshot)],
    )
    const worker = await mf!.getWorker()
    await (worker as unknown as { scheduled(options: { cron: string }): Promise<unknown> }).scheduled({ cron: '*/5 * * * *' })
    await settled()
    expect(await enabledIn(flag)).toBe(true)
    expect((await call('GET', `/api/admin/projects/${project}/actions/${setId}/events`)).body.actionSetEvents).toMatchObject([{ state: 'success' }])
  })
})

describe('routes whose code the worker loads when first used (modules of their own in the bundle)', () => {
  it('exports and imports the instance state, and exports, validates and imports flags', async () => {
    expect((await call('POST', '/api/admin/projects', { body: { id: 'lazy-a', name: 'lazy-a' } })).status).toBe(201)
    expect((await call('POST', '/api/admin/projects/lazy-a/features', { body: { name: 'lazy-flag' } })).status).toBe(201)
    const state = await call('GET', '/api/admin/state/export?download=false')
    expect(state.status, state.text).toBe(200)
    expect(state.body.features.map((f: { name: string }) => f.name)).toContain('lazy-flag')
    const document = { version: 4, features: [{ name: 'lazy-state-flag', project: 'lazy-a', type: 'release', enabled: false, strategies: [] }] }
    const imported = await call('POST', '/api/admin/state/import', { body: document })
    expect(imported.status, imported.text).toBe(202)
    expect((await call('GET', '/api/admin/projects/lazy-a/features/lazy-state-flag')).status).toBe(200)
    // A document the import's checks refuse: the 400 comes from the lazily loaded code.
    const refused = await call('POST', '/api/admin/state/import', { body: { version: 4, features: [{ name: 'lazy-orphan', project: 'no-such-project', strategies: [] }] } })
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.message).toContain('cannot be imported')

    const exported = await call('POST', '/api/admin/features-batch/export', { body: { environment: 'development', project: 'lazy-a' } })
    expect(exported.status, exported.text).toBe(200)
    expect(exported.body.features.map((f: { name: string }) => f.name).sort()).toEqual(['lazy-flag', 'lazy-state-flag'])
    const data = { ...exported.body, features: exported.body.features.map((f: Record<string, unknown>) => ({ ...f, name: `${f.name}-copy` })), featureEnvironments: [], featureStrategies: [], featureTags: [], dependencies: [] }
    expect((await call('POST', '/api/admin/projects', { body: { id: 'lazy-b', name: 'lazy-b' } })).status).toBe(201)
    const validated = await call('POST', '/api/admin/features-batch/validate', { body: { project: 'lazy-b', environment: 'development', data } })
    expect(validated.status, validated.text).toBe(200)
    expect(validated.body.errors).toEqual([])
    const done = await call('POST', '/api/admin/features-batch/import', { body: { project: 'lazy-b', environment: 'development', data } })
    expect(done.status, done.text).toBe(200)
    expect((await call('GET', '/api/admin/projects/lazy-b/features/lazy-flag-copy')).status).toBe(200)
  })
})
