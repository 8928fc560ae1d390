// What Unleash Edge calls upstream (token validation, bulk metrics), called over HTTP as Edge calls them, and the
// impact metrics SDKs report (kept per application, shown by GET /api/admin/metrics/applications/{appName}/impact-metrics).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, createToken, createUserWithEmail, enableFlag, flagOnWithClientToken, fresh } from './helpers/factories.js'

let t: TestApp

beforeAll(async () => {
  t = await createTestApp()
})
afterAll(async () => {
  await t?.close()
})

/** As Edge sends it: JSON, no Authorization header, Edge's identifying headers. */
const validate = (tokens: unknown, headers: Record<string, string> = {}) =>
  t.call('POST', '/edge/validate', { token: null, body: { tokens }, headers: { 'unleash-appname': 'unleash-edge', 'unleash-instanceid': 'edge-1', ...headers } })

const bulk = (token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.call('POST', '/api/client/metrics/bulk', { token, body: { applications: [], metrics: [], ...body }, headers: { 'unleash-appname': 'edge-pod', ...headers } })

const impactOf = async (appName: string) => {
  const res = await t.call('GET', `/api/admin/metrics/applications/${encodeURIComponent(appName)}/impact-metrics`)
  expect(res.status, res.text).toBe(200)
  return res.body.impactMetrics as Record<string, unknown>[]
}

describe('POST /edge/validate (Unleash Edge’s token validation)', () => {
  it('answers the valid tokens with their type, projects and environment, in the order sent, with no token of its own', async () => {
    const project = await createProject(t)
    const client = (await createToken(t, { type: 'client', environment: 'development', projects: [project] })).secret as string
    const frontend = (await createToken(t, { type: 'frontend', environment: 'production', projects: ['default', project] })).secret as string
    const everything = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    const res = await validate([frontend, client, everything, t.adminToken])
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({
      tokens: [
        { token: frontend, type: 'frontend', projects: expect.arrayContaining(['default', project]), environment: 'production' },
        { token: client, type: 'client', projects: [project], environment: 'development' },
        { token: everything, type: 'client', projects: ['*'], environment: 'development' },
        { token: t.adminToken, type: 'admin', projects: ['*'], environment: '*' },
      ],
    })
  })

  it('leaves out unknown, deleted and expired tokens and personal access tokens (still 200), and each token once', async () => {
    const live = (await createToken(t, { type: 'client', environment: 'development', projects: ['default'] })).secret as string
    const deleted = await createToken(t, { type: 'client', environment: 'development', projects: ['default'] })
    const deletedSecret = deleted.secret as string
    const listed = (await t.call('GET', '/api/admin/api-tokens')).body.tokens as { tokenName: string; id?: number }[]
    expect(listed.some((l) => l.tokenName === deleted.tokenName)).toBe(true)
    await t.query('delete from api_tokens where token_name = $1', [deleted.tokenName])
    const expiring = await createToken(t, { type: 'frontend', environment: 'development', projects: ['default'] })
    await t.query(`update api_tokens set expires_at = now() - interval '1 minute' where token_name = $1`, [expiring.tokenName])
    const user = await createUserWithEmail(t, 'Admin')
    const pat = (await user.call('POST', '/api/admin/user/tokens', { body: { description: 'edge', expiresAt: new Date(Date.now() + 86_400_000).toISOString() } })).body.secret as string

    const res = await validate(['default:development.not-a-real-secret', deletedSecret, expiring.secret, pat, live, live, ''])
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ tokens: [{ token: live, type: 'client', projects: ['default'], environment: 'development' }] })
    expect((await validate([])).body).toEqual({ tokens: [] })
  })

  it('refuses what is not a list of tokens with a 400, a body that is not JSON with a 415, and more than 1000 tokens', async () => {
    const notList = await t.call('POST', '/edge/validate', { token: null, body: { tokens: 'abc' } })
    expect(notList.status).toBe(400)
    expect(notList.body).toMatchObject({ name: 'ValidationError' })
    expect((await t.call('POST', '/edge/validate', { token: null, body: {} })).status).toBe(400)
    const text = await t.call('POST', '/edge/validate', { token: null, body: 'tokens=abc', headers: { 'content-type': 'text/plain' } })
    expect(text.status).toBe(415)
    expect(text.body).toMatchObject({ name: 'ContentTypeerror' })
    const many = await validate(Array.from({ length: 1001 }, (_, i) => `default:development.${i}`))
    expect(many.status).toBe(400)
  })
})

describe('POST /api/client/metrics/bulk (what Edge forwards for the SDKs behind it)', () => {
  it('registers the applications and keeps the metrics of the token’s environment and projects, as the single-report routes do', async () => {
    const project = await createProject(t)
    const mine = (await createFlag(t, {}, project)).name as string
    const other = (await createFlag(t, {})).name as string
    const token = (await createToken(t, { type: 'client', environment: 'development', projects: [project] })).secret as string
    const appName = fresh('behind-edge')
    const hour = new Date()
    hour.setUTCMinutes(0, 0, 0)
    const res = await bulk(token, {
      applications: [
        {
          appName,
          instanceId: 'pod-1',
          environment: 'development',
          connectVia: [{ appName: 'unleash-edge', instanceId: 'edge-1' }],
          interval: 15000,
          started: hour.toISOString(),
          strategies: ['default', 'flexibleRollout'],
          projects: [project],
          sdkVersion: 'unleash-client-java:9.2.0',
          sdkType: 'backend',
          yggdrasilVersion: null,
          platformName: null,
          connectionId: null,
        },
      ],
      metrics: [
        { featureName: mine, appName, environment: 'development', timestamp: hour.toISOString(), yes: 7, no: 2, variants: { blue: 5, disabled: 2 }, sdkVersion: 'unleash-client-java:9.2.0' },
        { featureName: mine, appName, environment: 'development', timestamp: Math.floor(hour.getTime() / 1000) + 60, yes: 3, no: 0, variants: {} },
        // Another environment than the token's, and a flag outside its projects: dropped.
        { featureName: mine, appName, environment: 'production', timestamp: hour.toISOString(), yes: 100, no: 100, variants: {} },
        { featureName: other, appName, environment: 'development', timestamp: hour.toISOString(), yes: 9, no: 9, variants: {} },
      ],
    })
    expect(res.status, res.text).toBe(202)
    await t.app.idle()

    const usage = (await t.call('GET', `/api/admin/client-metrics/features/${mine}`)).body
    expect(usage.seenApplications).toEqual([appName])
    expect(usage.lastHourUsage).toEqual([expect.objectContaining({ environment: 'development', yes: 10, no: 2, variants: { blue: 5, disabled: 2 } })])
    expect((await t.call('GET', `/api/admin/client-metrics/features/${other}`)).body.seenApplications).toEqual([])
    const apps = (await t.call('GET', `/api/admin/metrics/applications?query=${appName}`)).body.applications
    expect(apps).toEqual([expect.objectContaining({ appName, sdkVersion: 'unleash-client-java:9.2.0', strategies: ['default', 'flexibleRollout'], usage: [{ project, environments: ['development'] }] })])
    const [instance] = await t.query<{ environment: string; instance_id: string }>('select environment, instance_id from client_instances where app_name = $1', [appName])
    expect(instance).toEqual({ environment: 'development', instance_id: 'pod-1' })
  })

  it('marks the tokens Edge saw in use as seen', async () => {
    const edge = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    const seen = await createToken(t, { type: 'frontend', environment: 'development', projects: ['default'] })
    const seenAt = async () => (await t.query<{ seen_at: Date | null }>('select seen_at from api_tokens where token_name = $1', [seen.tokenName]))[0]!.seen_at
    expect(await seenAt()).toBeNull()
    expect((await bulk(edge, { seenTokens: [seen.secret, 'default:development.unknown'] })).status).toBe(202)
    expect(await seenAt()).toBeInstanceOf(Date)
  })

  it('with an admin token, keeps each metric for the environment it names', async () => {
    const flag = (await createFlag(t, {})).name as string
    const appName = fresh('admin-edge')
    const res = await bulk(t.adminToken, {
      applications: [{ appName, instanceId: 'i', environment: 'production' }],
      metrics: [
        { featureName: flag, appName, environment: 'production', yes: 1, no: 0 },
        { featureName: flag, appName, environment: 'development', yes: 2, no: 0 },
      ],
    })
    expect(res.status, res.text).toBe(202)
    await t.app.idle()
    const usage = (await t.call('GET', `/api/admin/client-metrics/features/${flag}`)).body.lastHourUsage as { environment: string; yes: number }[]
    expect(usage.map((u) => [u.environment, u.yes]).sort()).toEqual([['development', 2], ['production', 1]])
  })

  it("refuses a client token's report naming more than 100 distinct applications, storing none of it; an admin token is not capped", async () => {
    const client = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    const before = (await t.query<{ n: number }>('select count(*)::int as n from client_metrics_inbox'))[0]!.n
    const prefix = fresh('flood')
    const apps = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ appName: `${prefix}-${from + i}`, instanceId: 'i', environment: 'development' }))
    const metrics = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ featureName: 'x', appName: `${prefix}-${from + i}`, environment: 'development', yes: 1, no: 0, timestamp: new Date().toISOString() }))
    const over = await bulk(client, { applications: apps(60), metrics: metrics(41, 60) })
    expect(over.status).toBe(400)
    expect(over.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining('101 applications, more than the 100') })
    expect((await t.query<{ n: number }>('select count(*)::int as n from client_metrics_inbox'))[0]!.n).toBe(before)
    // 100 distinct names (the same names in both lists count once) are accepted, and more from an admin token.
    expect((await bulk(client, { applications: apps(100), metrics: metrics(100) })).status).toBe(202)
    expect((await t.call('POST', '/api/client/metrics/bulk', { body: { applications: apps(150), metrics: [] } })).status).toBe(202)
    // Impact metrics name applications in their samples' appName labels: counted with the rest.
    const impact = [0, 1].map((m) => ({ name: `clicks${m}`, help: 'Clicks', type: 'counter', samples: Array.from({ length: 60 }, (_, i) => ({ value: 1, labels: { appName: `${prefix}-impact-${m * 60 + i}` } })) }))
    const labelled = await bulk(client, { applications: [], metrics: [], impactMetrics: impact })
    expect(labelled.status, labelled.text).toBe(400)
    expect(labelled.body.message).toContain('120 applications, more than the 100')
  })

  it('takes client and admin tokens only, and refuses bodies that are not Unleash’s bulkMetricsSchema without storing any of it', async () => {
    const frontend = (await createToken(t, { type: 'frontend', environment: 'development', projects: ['*'] })).secret as string
    expect((await bulk(frontend, {})).status).toBe(403)
    expect((await t.call('POST', '/api/client/metrics/bulk', { token: null, body: { applications: [], metrics: [] } })).status).toBe(401)
    const client = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    const before = (await t.query<{ n: number }>('select count(*)::int as n from client_metrics_inbox'))[0]!.n
    const missing = await t.call('POST', '/api/client/metrics/bulk', { token: client, body: { applications: [] } })
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ name: 'ValidationError' })
    const halfBad = await bulk(client, { applications: [{ appName: fresh('ok'), instanceId: 'i', environment: 'development' }], metrics: [{ featureName: 'x', appName: 'a', environment: 'development', yes: -1, no: 0 }] })
    expect(halfBad.status).toBe(400)
    expect((await bulk(client, { applications: [{ appName: '', instanceId: 'i', environment: 'development' }] })).status).toBe(400)
    expect((await t.query<{ n: number }>('select count(*)::int as n from client_metrics_inbox'))[0]!.n).toBe(before)
  })

  it('keeps impact metrics for the application their samples name, in the token’s environment', async () => {
    const token = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    const appName = fresh('impact-behind-edge')
    const res = await bulk(token, {
      applications: [{ appName, instanceId: 'i', environment: 'development' }],
      impactMetrics: [
        { name: 'orders', help: 'Orders placed', type: 'counter', samples: [{ value: 4, labels: { appName, environment: 'development' } }] },
        // Another environment than the token's: dropped.
        { name: 'orders', help: 'Orders placed', type: 'counter', samples: [{ value: 50, labels: { appName, environment: 'production' } }] },
        { name: 'queue_depth', help: 'Jobs waiting', type: 'gauge', samples: [{ value: 3 }] },
      ],
    })
    expect(res.status, res.text).toBe(202)
    await t.app.idle()
    expect(await impactOf(appName)).toEqual([
      { name: 'orders', help: 'Orders placed', type: 'counter', environment: 'development', labels: { appName, environment: 'development' }, value: 4, updatedAt: expect.any(String) },
    ])
    // A sample that names no application counts for the Edge that sent it (its Unleash-AppName).
    expect(await impactOf('edge-pod')).toEqual([expect.objectContaining({ name: 'queue_depth', type: 'gauge', environment: 'development', labels: {}, value: 3 })])
  })
})

describe('Edge’s other calls upstream, as Edge (its Rust types) sends them', () => {
  /** chrono's RFC 3339 form: nanoseconds. */
  const chronoNow = () => new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1456789Z')
  const edgeHeaders = { 'unleash-appname': 'unleash-edge', 'unleash-instanceid': '01JEDGEINSTANCE', 'unleash-connection-id': '01JEDGECONNECTION', 'unleash-client-spec': '5.2.0' }

  it('registers Edge itself and polls the flags of its client token, with 304 once unchanged', async () => {
    const { flag, token, project } = await flagOnWithClientToken(t)
    const register = await t.call('POST', '/api/client/register', {
      token,
      headers: edgeHeaders,
      body: {
        appName: 'unleash-edge',
        connectVia: null,
        environment: 'development',
        projects: [project],
        instanceId: '01JEDGEINSTANCE',
        connectionId: '01JEDGECONNECTION',
        interval: 15,
        started: chronoNow(),
        strategies: [],
        platformName: null,
        platformVersion: null,
        sdkVersion: 'unleash-edge:20.1.0',
        sdkType: 'backend',
        yggdrasilVersion: null,
        sdkFlavor: null,
        sdkFlavorVersion: null,
      },
    })
    expect(register.status, register.text).toBe(202)
    const first = await t.call('GET', '/api/client/features', { token, headers: { ...edgeHeaders, 'unleash-interval': '15000' } })
    expect(first.status).toBe(200)
    expect(first.body.features.map((f: { name: string }) => f.name)).toEqual([flag])
    const again = await t.call('GET', '/api/client/features', { token, headers: { ...edgeHeaders, 'if-none-match': first.headers.get('etag')! } })
    expect(again.status).toBe(304)
  })

  it('answers 404 to Edge’s instance data (an enterprise call), which Edge reads as an upstream without it and backs off', async () => {
    const { token } = await flagOnWithClientToken(t)
    const res = await t.call('POST', '/api/client/metrics/edge', { token, headers: edgeHeaders, body: { identifier: 'edge-1', appName: 'unleash-edge' } })
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ name: 'NotFoundError' })
  })

  it('takes a bulk with chrono’s timestamps and the metadata fields Edge flattens into each entry (nulls included)', async () => {
    const { flag, token } = await flagOnWithClientToken(t)
    const appName = fresh('rust-app')
    const res = await bulk(token, {
      applications: [{ appName, connectVia: [{ appName: 'unleash-edge', instanceId: '01JEDGEINSTANCE' }], environment: 'development', projects: null, instanceId: 'rust-1', connectionId: null, interval: 15, started: chronoNow(), strategies: ['default'], sdkVersion: 'unleash-rust-client:0.11.0', sdkType: null, yggdrasilVersion: '0.17.0', platformName: 'rustc', platformVersion: '1.85.0' }],
      metrics: [{ featureName: flag, appName, environment: 'development', timestamp: chronoNow(), yes: 2, no: 1, variants: {}, sdkVersion: null, sdkType: null, yggdrasilVersion: null, platformName: null, platformVersion: null }],
    })
    expect(res.status, res.text).toBe(202)
    await t.app.idle()
    expect((await t.call('GET', `/api/admin/client-metrics/features/${flag}`)).body.lastHourUsage).toEqual([expect.objectContaining({ yes: 2, no: 1 })])
  })
})

describe('impact metrics in POST /api/client/metrics (unleash-client 6.10+)', () => {
  const send = (token: string, appName: string, impactMetrics: unknown[], bucket: unknown = null) => t.call('POST', '/api/client/metrics', { token, body: { appName, instanceId: 'pod-1', bucket, impactMetrics } })

  it('adds up counters and histograms report after report, keeps a gauge’s last value, each per set of labels', async () => {
    const token = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    const flag = (await createFlag(t, {})).name as string
    await enableFlag(t, flag, 'development')
    const appName = fresh('checkout')
    const labels = { appName, environment: 'development' }
    const histogram = (count: number, sum: number, small: number) => ({
      name: 'latency',
      help: 'Request latency',
      type: 'histogram',
      samples: [{ labels, count, sum, buckets: [{ le: 0.1, count: small }, { le: 1, count }, { le: '+Inf', count }] }],
    })
    const first = await send(token, appName, [
      { name: 'orders', help: 'Orders placed', type: 'counter', samples: [{ labels: { ...labels, featureName: flag }, value: 2 }, { labels, value: 1 }] },
      { name: 'cart_size', help: 'Items in carts', type: 'gauge', samples: [{ labels, value: 7 }] },
      histogram(4, 1.2, 3),
    ], { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: { [flag]: { yes: 1, no: 0 } } })
    expect(first.status, first.text).toBe(202)
    await t.app.idle()
    expect((await send(token, appName, [
      { name: 'orders', help: 'Orders placed', type: 'counter', samples: [{ labels: { ...labels, featureName: flag }, value: 3 }] },
      { name: 'cart_size', help: 'Items in carts', type: 'gauge', samples: [{ labels, value: 2 }] },
      histogram(2, 0.5, 1),
    ])).status).toBe(202)
    await t.app.idle()

    const byName = (await impactOf(appName)).map(({ updatedAt, ...rest }) => rest)
    expect(byName).toEqual([
      { name: 'cart_size', help: 'Items in carts', type: 'gauge', environment: 'development', labels, value: 2 },
      { name: 'latency', help: 'Request latency', type: 'histogram', environment: 'development', labels, count: 6, sum: 1.7, buckets: [{ le: 0.1, count: 4 }, { le: 1, count: 6 }, { le: '+Inf', count: 6 }] },
      { name: 'orders', help: 'Orders placed', type: 'counter', environment: 'development', labels, value: 1 },
      { name: 'orders', help: 'Orders placed', type: 'counter', environment: 'development', labels: { ...labels, featureName: flag }, value: 5 },
    ])
    // The flag counts of the same report were kept too.
    expect((await t.call('GET', `/api/admin/client-metrics/features/${flag}`)).body.lastHourUsage).toEqual([expect.objectContaining({ yes: 1 })])
  })

  it('keeps at most 1000 series per application and environment, and refuses reports beyond the per-report bounds', async () => {
    const token = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    const appName = fresh('chatty')
    const metrics = Array.from({ length: 11 }, (_, m) => ({
      name: `metric_${String(m).padStart(2, '0')}`,
      help: 'h',
      type: 'counter',
      samples: Array.from({ length: 100 }, (_, s) => ({ value: 1, labels: { shard: String(s).padStart(3, '0') } })),
    }))
    expect((await send(token, appName, metrics)).status).toBe(202)
    await t.app.idle()
    const kept = await impactOf(appName)
    expect(kept).toHaveLength(1000)
    expect(kept.some((m) => m.name === 'metric_10')).toBe(false)
    // Known series still add up; new ones stay out.
    expect((await send(token, appName, [{ name: 'metric_00', help: 'h', type: 'counter', samples: [{ value: 2, labels: { shard: '000' } }] }, { name: 'brand_new', help: 'h', type: 'counter', samples: [{ value: 1 }] }])).status).toBe(202)
    await t.app.idle()
    const after = await impactOf(appName)
    expect(after).toHaveLength(1000)
    expect(after.find((m) => m.name === 'metric_00' && (m.labels as Record<string, string>).shard === '000')?.value).toBe(3)

    const tooManyLabels = { name: 'x', help: 'h', type: 'counter', samples: [{ value: 1, labels: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`l${i}`, 'v'])) }] }
    expect((await send(token, appName, [tooManyLabels])).status).toBe(400)
    expect((await send(token, appName, [{ name: 'x', help: 'h', type: 'summary', samples: [] }])).status).toBe(400)
    expect((await send(token, appName, Array.from({ length: 101 }, (_, i) => ({ name: `m${i}`, help: 'h', type: 'gauge', samples: [] })))).status).toBe(400)
  })

  it('deletes series nobody reported for 7 days when it folds reports', async () => {
    const token = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    const appName = fresh('fading')
    expect((await send(token, appName, [{ name: 'old_gauge', help: 'h', type: 'gauge', samples: [{ value: 1 }] }, { name: 'recent_gauge', help: 'h', type: 'gauge', samples: [{ value: 1 }] }])).status).toBe(202)
    await t.app.idle()
    await t.query(`update client_impact_metrics set updated_at = now() - interval '7 days 1 minute' where app_name = $1 and name = 'old_gauge'`, [appName])
    await t.query(`update client_impact_metrics set updated_at = now() - interval '6 days' where app_name = $1 and name = 'recent_gauge'`, [appName])
    expect((await send(token, fresh('other'), [{ name: 'g', help: 'h', type: 'gauge', samples: [{ value: 1 }] }])).status).toBe(202)
    await t.app.idle()
    expect((await impactOf(appName)).map((m) => m.name)).toEqual(['recent_gauge'])
  })

  it('answers 404 for an application that never reported', async () => {
    const res = await t.call('GET', `/api/admin/metrics/applications/${fresh('nobody')}/impact-metrics`)
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ name: 'NotFoundError' })
  })
})
