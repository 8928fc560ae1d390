import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Db } from '../src/db.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, createToken, fresh } from './helpers/factories.js'

/*
 * Registrations and metrics: the request stores one inbox row; the aggregation runs as background work,
 * which this suite holds back (a captured task) so it can check both sides of that line.
 */

let t: TestApp
const START = new Date('2026-03-01T10:30:00.000Z')
let now = START
const pending: ((db: Db) => Promise<unknown>)[] = []
const tokens: Record<string, string> = {}

/** Runs the background work the requests handed over, like the detached runner on Node or waitUntil on Workers. */
async function flush() {
  while (pending.length > 0) await pending.shift()!(t.db)
}

/** A fresh token; its name is what the applications it creates are created by. */
async function token(type: string, environment: string, projects: string[]) {
  const created = await createToken(t, { tokenName: fresh('sdk'), type, environment, projects })
  return { secret: created.secret as string, name: created.tokenName as string }
}

const register = (secret: string, body: Record<string, unknown>) =>
  t.call('POST', '/api/client/register', { token: secret, body: { strategies: ['default', 'flexibleRollout'], interval: 15000, started: now.toISOString(), ...body } })

const bucket = (toggles: Record<string, unknown>, start = '2026-03-01T10:00:05.000Z') => ({ start, stop: '2026-03-01T10:29:59.000Z', toggles })
const sendMetrics = (secret: string, body: Record<string, unknown>) => t.call('POST', '/api/client/metrics', { token: secret, body })

/** Flags named like a shop's: `checkout` and `banner` in the default project, `cart` in a fresh one. */
async function shopFlags() {
  const shop = await createProject(t, { name: 'Shop' })
  return {
    shop,
    checkout: (await createFlag(t, { name: fresh('checkout') })).name as string,
    banner: (await createFlag(t, { name: fresh('banner') })).name as string,
    cart: (await createFlag(t, { name: fresh('cart') }, shop)).name as string,
  }
}

/**
 * A development application reporting on the flags at 10:00 (two reports, by pod-1 and pod-2), and a production
 * application of the default project reporting on checkout (and cart, which it does not see) at 11:00, folded.
 */
async function reportedFlags(prefix = '') {
  const flags = await shopFlags()
  const { checkout, banner, cart } = flags
  const dev = await token('client', 'development', ['*'])
  const prod = await token('client', 'production', ['default'])
  const devApp = fresh(`${prefix}checkout-service`)
  const prodApp = fresh(`${prefix}prod-service`)
  expect((await register(dev.secret, { appName: devApp, instanceId: 'pod-1', sdkVersion: 'unleash-node-sdk:6.12.1', yggdrasilVersion: null })).status).toBe(202)
  expect(
    (await sendMetrics(dev.secret, { appName: devApp, instanceId: 'pod-1', bucket: bucket({ [checkout]: { yes: 10, no: 2, variants: { blue: 6, disabled: 4 } }, [banner]: { yes: 0, no: 5 }, [cart]: { yes: 1, no: 0 }, 'no-such-flag': { yes: 3, no: 3 } }) }))
      .status,
  ).toBe(202)
  expect((await sendMetrics(dev.secret, { appName: devApp, instanceId: 'pod-2', bucket: bucket({ [checkout]: { yes: 1, no: 1, variants: { blue: 1 } } }) })).status).toBe(202)
  await flush()
  now = new Date('2026-03-01T11:10:00.000Z')
  expect((await sendMetrics(prod.secret, { appName: prodApp, environment: 'development', bucket: bucket({ [checkout]: { yes: 2, no: 0 }, [cart]: { yes: 9, no: 9 } }, '2026-03-01T11:00:00Z') })).status).toBe(202)
  await flush()
  return { ...flags, dev, prod, devApp, prodApp }
}

beforeAll(async () => {
  t = await createTestApp({ now: () => now, background: (_c, task) => pending.push(task) })
  tokens.dev = (await token('client', 'development', ['*'])).secret
  tokens.frontend = (await token('frontend', 'development', ['*'])).secret
})
afterAll(() => t.close())
beforeEach(() => {
  now = START
})
// Work a test handed over and did not run is run before the next test, as the background runner would.
afterEach(flush)

describe('POST /api/client/register', () => {
  it('answers 202 having stored one row, and records the application, its instance and application-created afterwards', async () => {
    const dev = await token('client', 'development', ['*'])
    const appName = fresh('checkout-service')
    const res = await register(dev.secret, { appName, instanceId: 'pod-1', sdkVersion: 'unleash-node-sdk:6.12.1', yggdrasilVersion: null })
    expect(res.status, res.text).toBe(202)
    expect(res.text).toBe('')
    expect(await t.query('select app_name, kind, environment, token_name from client_metrics_inbox where app_name = $1', [appName])).toEqual([
      { app_name: appName, kind: 'register', environment: 'development', token_name: dev.name },
    ])
    expect(await t.query('select * from client_applications where app_name = $1', [appName])).toEqual([])

    await flush()
    expect(await t.query('select count(*)::int as n from client_metrics_inbox')).toEqual([{ n: 0 }])
    expect(await t.query('select app_name, sdk_version, strategies, created_by from client_applications where app_name = $1', [appName])).toEqual([
      { app_name: appName, sdk_version: 'unleash-node-sdk:6.12.1', strategies: ['default', 'flexibleRollout'], created_by: dev.name },
    ])
    expect(await t.query('select app_name, instance_id, environment, sdk_version from client_instances where app_name = $1', [appName])).toEqual([
      { app_name: appName, instance_id: 'pod-1', environment: 'development', sdk_version: 'unleash-node-sdk:6.12.1' },
    ])
    const events = await t.query<{ type: string; created_by: string; environment: string; data: any; summary: string }>(`select * from events where type = 'application-created' and data->>'appName' = $1`, [appName])
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ created_by: dev.name, environment: 'development', data: { appName } })
    expect(events[0]!.summary).toMatch(new RegExp(`^\\*\\*${dev.name}\\*\\* `))
  })

  it('writes application-created only the first time an application is seen', async () => {
    const appName = fresh('checkout-service')
    expect((await register(tokens.dev!, { appName, instanceId: 'pod-1' })).status).toBe(202)
    await flush()
    expect((await register(tokens.dev!, { appName, instanceId: 'pod-2' })).status).toBe(202)
    expect((await register(tokens.dev!, { appName, instanceId: 'pod-2' })).status).toBe(202)
    await flush()
    expect(await t.query(`select count(*)::int as n from events where type = 'application-created' and data->>'appName' = $1`, [appName])).toEqual([{ n: 1 }])
    expect(await t.query(`select instance_id from client_instances where app_name = $1 order by instance_id`, [appName])).toEqual([{ instance_id: 'pod-1' }, { instance_id: 'pod-2' }])
  })

  it('answers 400 to a registration that does not match the schema', async () => {
    for (const body of [{ appName: '' }, { appName: 'x', strategies: 'default' }, { appName: 'x', interval: -1 }, { appName: 'x', started: 'yesterday' }]) {
      const res = await register(tokens.dev!, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    expect((await t.call('POST', '/api/client/register', { token: tokens.dev!, body: { appName: 'x' } })).status).toBe(400)
  })
})

describe('POST /api/client/metrics', () => {
  it('answers 202 having stored the bucket in one row, whatever the number of flags', async () => {
    const { checkout, banner, cart } = await shopFlags()
    const appName = fresh('checkout-service')
    const res = await sendMetrics(tokens.dev!, {
      appName,
      instanceId: 'pod-1',
      bucket: bucket({ [checkout]: { yes: 10, no: 2, variants: { blue: 6, disabled: 4 } }, [banner]: { yes: 0, no: 5 }, [cart]: { yes: 1, no: 0 }, 'no-such-flag': { yes: 3, no: 3 } }),
    })
    expect(res.status, res.text).toBe(202)
    expect(await t.query('select kind, app_name from client_metrics_inbox where app_name = $1', [appName])).toEqual([{ kind: 'metrics', app_name: appName }])
    expect(await t.query('select count(*)::int as n from client_metrics_hourly where app_name = $1', [appName])).toEqual([{ n: 0 }])
  })

  it('folds buckets into hourly counts per flag, application and environment, ignoring unknown flags', async () => {
    const { checkout, banner, cart, devApp } = await reportedFlags()
    expect(await t.query('select feature_name, app_name, environment, timestamp, yes::int, no::int from client_metrics_hourly where app_name = $1 order by feature_name', [devApp])).toEqual([
      { feature_name: banner, app_name: devApp, environment: 'development', timestamp: new Date('2026-03-01T10:00:00Z'), yes: 0, no: 5 },
      { feature_name: cart, app_name: devApp, environment: 'development', timestamp: new Date('2026-03-01T10:00:00Z'), yes: 1, no: 0 },
      { feature_name: checkout, app_name: devApp, environment: 'development', timestamp: new Date('2026-03-01T10:00:00Z'), yes: 11, no: 3 },
    ])
    expect(await t.query('select variant, count::int from client_metrics_variants_hourly where app_name = $1 order by variant', [devApp])).toEqual([
      { variant: 'blue', count: 7 },
      { variant: 'disabled', count: 4 },
    ])
    expect(await t.query('select count(*)::int as n from client_metrics_inbox')).toEqual([{ n: 0 }])
  })

  it("sets lastSeenAt of the flags in the token's environment, to when the report arrived", async () => {
    const { checkout, banner, cart } = await shopFlags()
    expect((await sendMetrics(tokens.dev!, { appName: fresh('checkout-service'), bucket: bucket({ [checkout]: { yes: 1, no: 0 }, [banner]: { yes: 0, no: 5 }, [cart]: { yes: 1, no: 0 } }) })).status).toBe(202)
    await flush()
    const seen = await t.query<{ feature_name: string; environment: string; last_seen_at: Date | null }>(
      `select feature_name, environment, last_seen_at from feature_environments where feature_name in ($1, $2, $3) order by 1, 2`,
      [checkout, banner, cart],
    )
    expect(seen).toEqual([
      { feature_name: banner, environment: 'development', last_seen_at: now },
      { feature_name: banner, environment: 'production', last_seen_at: null },
      { feature_name: cart, environment: 'development', last_seen_at: now },
      { feature_name: cart, environment: 'production', last_seen_at: null },
      { feature_name: checkout, environment: 'development', last_seen_at: now },
      { feature_name: checkout, environment: 'production', last_seen_at: null },
    ])
    const flag = await t.call('GET', `/api/admin/projects/default/features/${checkout}`)
    expect(flag.body.lastSeenAt).toBe(now.toISOString())
  })

  it("counts only flags in the token's projects, in the token's environment", async () => {
    const { checkout, cart } = await shopFlags()
    const prod = await token('client', 'production', ['default'])
    const prodApp = fresh('prod-service')
    now = new Date('2026-03-01T11:10:00.000Z')
    expect((await sendMetrics(prod.secret, { appName: prodApp, environment: 'development', bucket: bucket({ [checkout]: { yes: 2, no: 0 }, [cart]: { yes: 9, no: 9 } }, '2026-03-01T11:00:00Z') })).status).toBe(202)
    await flush()
    expect(await t.query(`select feature_name, environment, yes::int from client_metrics_hourly where app_name = $1`, [prodApp])).toEqual([{ feature_name: checkout, environment: 'production', yes: 2 }])
    expect(await t.query(`select environment, last_seen_at from feature_environments where feature_name = $1 and last_seen_at > '2026-03-01T11:00:00Z'`, [cart])).toEqual([])
    // A report that arrives for the first time through metrics creates the application too.
    expect(await t.query(`select created_by from events where type = 'application-created' and data->>'appName' = $1`, [prodApp])).toEqual([{ created_by: prod.name }])
  })

  it('puts a bucket whose start lies ahead of the server clock in the hour the report arrived', async () => {
    const { banner } = await shopFlags()
    const skewed = fresh('skewed')
    now = new Date('2026-03-01T11:10:00.000Z')
    expect((await sendMetrics(tokens.dev!, { appName: skewed, bucket: bucket({ [banner]: { yes: 1, no: 0 } }, '2026-03-01T15:00:00Z') })).status).toBe(202)
    await flush()
    expect(await t.query(`select timestamp from client_metrics_hourly where app_name = $1`, [skewed])).toEqual([{ timestamp: new Date('2026-03-01T11:00:00Z') }])
  })

  it('answers 400 to payloads that do not match the schema', async () => {
    const inbox = async () => t.query('select count(*)::int as n from client_metrics_inbox')
    const before = await inbox()
    const bad = [
      {},
      { appName: 'x', bucket: { start: 'soon', stop: '2026-03-01T10:00:00Z', toggles: {} } },
      { appName: 'x', bucket: bucket({ checkout: { yes: -1, no: 0 } }) },
      { appName: 'x', bucket: bucket({ checkout: { yes: 1.5, no: 0 } }) },
      { appName: 'x', bucket: bucket({ checkout: { yes: 1, no: 0, variants: { a: 'many' } } }) },
      { appName: 'x', bucket: { start: '2026-03-01T10:00:00Z', stop: '2026-03-01T10:00:00Z', toggles: [] } },
    ]
    for (const body of bad) {
      const res = await sendMetrics(tokens.dev!, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    expect((await t.call('POST', '/api/client/metrics', { token: tokens.dev!, body: 'appName=x', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
    expect(await inbox()).toEqual(before)
  })

  it('accepts a report with no bucket, and UNIX timestamps', async () => {
    const { banner } = await shopFlags()
    const appName = fresh('checkout-service')
    now = new Date('2026-03-01T11:10:00.000Z')
    expect((await sendMetrics(tokens.dev!, { appName, bucket: null })).status).toBe(202)
    expect((await sendMetrics(tokens.dev!, { appName, bucket: { start: 1772359200, stop: 1772359260, toggles: { [banner]: { yes: 1, no: 0 } } } })).status).toBe(202)
    await flush()
    expect(await t.query(`select timestamp, yes::int from client_metrics_hourly where app_name = $1 and feature_name = $2 order by timestamp`, [appName, banner])).toEqual([
      { timestamp: new Date('2026-03-01T10:00:00Z'), yes: 1 },
    ])
  })

  it('sets aside a report that cannot be folded, and folds the others', async () => {
    const { banner } = await shopFlags()
    const [broken, afterBroken] = [fresh('broken'), fresh('after-broken')]
    now = new Date('2026-03-01T11:10:00.000Z')
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      // Nothing the API accepts does this; a row written by hand stands in for whatever could.
      await t.query(
        `insert into client_metrics_inbox (received_at, kind, app_name, environment, projects, token_name, payload)
         values ($1, 'metrics', $2, 'development', '{*}', 'x', $3)`,
        [now, broken, JSON.stringify({ bucket: { start: '2026-03-01T11:00:00Z', stop: '2026-03-01T11:00:00Z', toggles: { [banner]: { yes: 'many', no: 0 } } } })],
      )
      expect((await sendMetrics(tokens.dev!, { appName: afterBroken, bucket: bucket({ [banner]: { yes: 4, no: 0 } }, '2026-03-01T11:00:00Z') })).status).toBe(202)
      await flush()
    } finally {
      quiet.mockRestore()
    }
    expect(await t.query('select count(*)::int as n from client_metrics_inbox')).toEqual([{ n: 0 }])
    expect(await t.query(`select yes::int from client_metrics_hourly where app_name = $1`, [afterBroken])).toEqual([{ yes: 4 }])
    expect(await t.query(`select count(*)::int as n from client_applications where app_name = $1`, [broken])).toEqual([{ n: 0 }])
  })

  it('answers 401 without a token and 403 to a frontend token', async () => {
    expect((await t.call('POST', '/api/client/metrics', { token: null, body: { appName: 'x' } })).status).toBe(401)
    expect((await t.call('POST', '/api/client/register', { token: tokens.frontend!, body: { appName: 'x' } })).status).toBe(403)
  })
})

describe('what was recorded, on the admin API', () => {
  it('lists applications with their usage, filtered, sorted and paged', async () => {
    // Four applications whose names share a fresh prefix, which the query finds them by.
    const prefix = `${fresh('apps')}-`
    const { shop, banner, devApp, prodApp } = await reportedFlags(prefix)
    for (const appName of [fresh(`${prefix}after-broken`), fresh(`${prefix}skewed`)]) {
      expect((await sendMetrics(tokens.dev!, { appName, bucket: bucket({ [banner]: { yes: 1, no: 0 } }, '2026-03-01T11:00:00Z') })).status).toBe(202)
    }
    await flush()
    const ours = `query=${prefix}`
    const res = await t.call('GET', `/api/admin/metrics/applications?${ours}`)
    expect(res.status, res.text).toBe(200)
    expect(res.body.total).toBe(4)
    expect(res.body.applications.map((a: { appName: string }) => a.appName.slice(prefix.length).replace(/-\d+$/, ''))).toEqual(['after-broken', 'checkout-service', 'prod-service', 'skewed'])
    expect(res.body.applications[1]).toMatchObject({
      appName: devApp,
      sdkVersion: 'unleash-node-sdk:6.12.1',
      strategies: ['default', 'flexibleRollout'],
      usage: [
        { project: 'default', environments: ['development'] },
        { project: shop, environments: ['development'] },
      ],
    })
    expect(res.body.applications[2].usage).toEqual([{ project: 'default', environments: ['production'] }])
    const filtered = await t.call('GET', `/api/admin/metrics/applications?query=${prefix.toUpperCase()}PROD`)
    expect(filtered.body).toMatchObject({ total: 1, applications: [{ appName: prodApp }] })
    const page = await t.call('GET', `/api/admin/metrics/applications?${ours}&sortOrder=desc&limit=1&offset=1`)
    expect(page.body.total).toBe(4)
    expect(page.body.applications.map((a: { appName: string }) => a.appName)).toEqual([prodApp])
    expect((await t.call('GET', '/api/admin/metrics/applications?sortBy=color')).status).toBe(400)
    expect((await t.call('GET', '/api/admin/metrics/applications', { token: tokens.dev! })).status).toBe(403)
  })

  it("summarizes a flag's usage: the last hour per environment, the totals and the applications that saw it", async () => {
    const { checkout, devApp, prodApp } = await reportedFlags()
    const res = await t.call('GET', `/api/admin/client-metrics/features/${checkout}`)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({
      version: 1,
      maturity: 'stable',
      featureName: checkout,
      lastHourUsage: [
        { featureName: checkout, environment: 'development', timestamp: '2026-03-01T10:00:00.000Z', yes: 11, no: 3, variants: { blue: 7, disabled: 4 } },
        { featureName: checkout, environment: 'production', timestamp: '2026-03-01T11:00:00.000Z', yes: 2, no: 0, variants: {} },
      ],
      totalUsage: [
        { environment: 'development', yes: 11, no: 3 },
        { environment: 'production', yes: 2, no: 0 },
      ],
      seenApplications: [devApp, prodApp],
    })
    expect((await t.call('GET', '/api/admin/client-metrics/features/nope')).status).toBe(404)
  })

  it('serves the hourly rows of a flag', async () => {
    const { checkout, devApp, prodApp } = await reportedFlags()
    const res = await t.call('GET', `/api/admin/client-metrics/features/${checkout}/raw?hoursBack=2`)
    expect(res.status, res.text).toBe(200)
    expect(res.body.data).toEqual([
      { featureName: checkout, appName: devApp, environment: 'development', timestamp: '2026-03-01T10:00:00.000Z', yes: 11, no: 3, variants: { blue: 7, disabled: 4 } },
      { featureName: checkout, appName: prodApp, environment: 'production', timestamp: '2026-03-01T11:00:00.000Z', yes: 2, no: 0, variants: {} },
    ])
    expect((await t.call('GET', `/api/admin/client-metrics/features/${checkout}/raw`)).body.data).toHaveLength(2)
    expect((await t.call('GET', `/api/admin/client-metrics/features/${checkout}/raw?hoursBack=0`)).status).toBe(400)
  })

  it('drops hourly rows older than 48 hours when it aggregates', async () => {
    const { checkout, banner } = await reportedFlags()
    now = new Date('2026-03-03T11:30:00.000Z')
    expect((await sendMetrics(tokens.dev!, { appName: fresh('checkout-service'), bucket: bucket({ [banner]: { yes: 1, no: 0 } }, '2026-03-03T11:00:00Z') })).status).toBe(202)
    await flush()
    expect(await t.query(`select feature_name, timestamp from client_metrics_hourly where feature_name in ($1, $2) order by timestamp`, [checkout, banner])).toEqual([
      { feature_name: banner, timestamp: new Date('2026-03-03T11:00:00Z') },
    ])
    expect(await t.query(`select count(*)::int as n from client_metrics_variants_hourly where feature_name = $1`, [checkout])).toEqual([{ n: 0 }])
    // Nobody's rows older than 48 hours are left.
    const cutoff = new Date(now.getTime() - 48 * 3_600_000)
    expect(await t.query(`select count(*)::int as n from client_metrics_hourly where timestamp < $1`, [cutoff])).toEqual([{ n: 0 }])
    expect(await t.query(`select count(*)::int as n from client_metrics_variants_hourly where timestamp < $1`, [cutoff])).toEqual([{ n: 0 }])
  })

  it('adds pruned hourly rows to their day and serves daily rows beyond 48 hours back', async () => {
    const { checkout, devApp, prodApp } = await reportedFlags()
    // Three days later: the 10:00 and 11:00 rows of March 1st are past the hourly retention; a new hour of March 4th is reported.
    now = new Date('2026-03-04T09:30:00.000Z')
    expect((await sendMetrics(tokens.dev!, { appName: devApp, instanceId: 'pod-1', bucket: bucket({ [checkout]: { yes: 4, no: 1, variants: { blue: 3 } } }, '2026-03-04T09:00:00Z') })).status).toBe(202)
    await flush()
    expect(await t.query(`select count(*)::int as n from client_metrics_hourly where feature_name = $1 and timestamp < '2026-03-02'`, [checkout])).toEqual([{ n: 0 }])
    expect(await t.query(`select app_name, environment, date, yes::int, no::int from client_metrics_daily where feature_name = $1 order by environment`, [checkout])).toEqual([
      { app_name: devApp, environment: 'development', date: new Date('2026-03-01T00:00:00Z'), yes: 11, no: 3 },
      { app_name: prodApp, environment: 'production', date: new Date('2026-03-01T00:00:00Z'), yes: 2, no: 0 },
    ])
    // Within 48 hours: hourly rows only (the rolled-up day is not among them).
    const hourly = await t.call('GET', `/api/admin/client-metrics/features/${checkout}/raw?hoursBack=48`)
    expect(hourly.body.data).toEqual([{ featureName: checkout, appName: devApp, environment: 'development', timestamp: '2026-03-04T09:00:00.000Z', yes: 4, no: 1, variants: { blue: 3 } }])
    // 30 days back: one row per day, the rolled-up day and today's hours.
    const daily = await t.call('GET', `/api/admin/client-metrics/features/${checkout}/raw?hoursBack=720`)
    expect(daily.status, daily.text).toBe(200)
    expect(daily.body.data).toEqual([
      { featureName: checkout, appName: devApp, environment: 'development', timestamp: '2026-03-01T00:00:00.000Z', yes: 11, no: 3, variants: { blue: 7, disabled: 4 } },
      { featureName: checkout, appName: prodApp, environment: 'production', timestamp: '2026-03-01T00:00:00.000Z', yes: 2, no: 0, variants: {} },
      { featureName: checkout, appName: devApp, environment: 'development', timestamp: '2026-03-04T00:00:00.000Z', yes: 4, no: 1, variants: { blue: 3 } },
    ])
    // A second pruning adds nothing twice.
    now = new Date('2026-03-04T10:30:00.000Z')
    expect((await sendMetrics(tokens.dev!, { appName: devApp, bucket: bucket({ [checkout]: { yes: 1, no: 0 } }, '2026-03-04T10:00:00Z') })).status).toBe(202)
    await flush()
    expect((await t.call('GET', `/api/admin/client-metrics/features/${checkout}/raw?hoursBack=720`)).body.data[0]).toMatchObject({ yes: 11, no: 3 })
    expect((await t.call('GET', `/api/admin/client-metrics/features/${checkout}/raw?hoursBack=2184`)).status).toBe(200)
    const tooFar = await t.call('GET', `/api/admin/client-metrics/features/${checkout}/raw?hoursBack=2185`)
    expect(tooFar.status).toBe(400)
    expect(tooFar.body).toMatchObject({ name: 'ValidationError' })
  })
})
