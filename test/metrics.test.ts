import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Db } from '../src/db.js'
import { createTestApp, type TestApp } from './helpers/app.js'

/*
 * Registrations and metrics: the request stores one inbox row; the aggregation runs as background work,
 * which this suite holds back (a captured task) so it can check both sides of that line.
 */

let t: TestApp
let now = new Date('2026-03-01T10:30:00.000Z')
const pending: ((db: Db) => Promise<unknown>)[] = []
const tokens: Record<string, string> = {}

/** Runs the background work the requests handed over, like the detached runner on Node or waitUntil on Workers. */
async function flush() {
  while (pending.length > 0) await pending.shift()!(t.db)
}

async function token(tokenName: string, type: string, environment: string, projects: string[]) {
  const res = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName, type, environment, projects } })
  expect(res.status, res.text).toBe(201)
  return res.body.secret as string
}

const register = (secret: string, body: Record<string, unknown>) =>
  t.call('POST', '/api/client/register', { token: secret, body: { strategies: ['default', 'flexibleRollout'], interval: 15000, started: now.toISOString(), ...body } })

const bucket = (toggles: Record<string, unknown>, start = '2026-03-01T10:00:05.000Z') => ({ start, stop: '2026-03-01T10:29:59.000Z', toggles })
const sendMetrics = (secret: string, body: Record<string, unknown>) => t.call('POST', '/api/client/metrics', { token: secret, body })

beforeAll(async () => {
  t = await createTestApp({ now: () => now, background: (_c, task) => pending.push(task) })
  expect((await t.call('POST', '/api/admin/projects', { body: { id: 'shop', name: 'Shop' } })).status).toBe(201)
  for (const name of ['checkout', 'banner']) expect((await t.call('POST', '/api/admin/projects/default/features', { body: { name } })).status).toBe(201)
  expect((await t.call('POST', '/api/admin/projects/shop/features', { body: { name: 'cart' } })).status).toBe(201)
  tokens.dev = await token('checkout-service', 'client', 'development', ['*'])
  tokens.defaultProd = await token('prod-service', 'client', 'production', ['default'])
  tokens.frontend = await token('web', 'frontend', 'development', ['*'])
})
afterAll(() => t.close())

describe('POST /api/client/register', () => {
  it('answers 202 having stored one row, and records the application, its instance and application-created afterwards', async () => {
    const res = await register(tokens.dev!, { appName: 'checkout-service', instanceId: 'pod-1', sdkVersion: 'unleash-node-sdk:6.12.1', yggdrasilVersion: null })
    expect(res.status, res.text).toBe(202)
    expect(res.text).toBe('')
    expect(await t.query('select app_name, kind, environment, token_name from client_metrics_inbox')).toEqual([
      { app_name: 'checkout-service', kind: 'register', environment: 'development', token_name: 'checkout-service' },
    ])
    expect(await t.query('select * from client_applications')).toEqual([])

    await flush()
    expect(await t.query('select count(*)::int as n from client_metrics_inbox')).toEqual([{ n: 0 }])
    expect(await t.query('select app_name, sdk_version, strategies, created_by from client_applications')).toEqual([
      { app_name: 'checkout-service', sdk_version: 'unleash-node-sdk:6.12.1', strategies: ['default', 'flexibleRollout'], created_by: 'checkout-service' },
    ])
    expect(await t.query('select app_name, instance_id, environment, sdk_version from client_instances')).toEqual([
      { app_name: 'checkout-service', instance_id: 'pod-1', environment: 'development', sdk_version: 'unleash-node-sdk:6.12.1' },
    ])
    const events = await t.query<{ type: string; created_by: string; environment: string; data: any; summary: string }>(`select * from events where type = 'application-created'`)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ created_by: 'checkout-service', environment: 'development', data: { appName: 'checkout-service' } })
    expect(events[0]!.summary).toMatch(/^\*\*checkout-service\*\* /)
  })

  it('writes application-created only the first time an application is seen', async () => {
    expect((await register(tokens.dev!, { appName: 'checkout-service', instanceId: 'pod-2' })).status).toBe(202)
    expect((await register(tokens.dev!, { appName: 'checkout-service', instanceId: 'pod-2' })).status).toBe(202)
    await flush()
    expect(await t.query(`select count(*)::int as n from events where type = 'application-created'`)).toEqual([{ n: 1 }])
    expect(await t.query(`select instance_id from client_instances order by instance_id`)).toEqual([{ instance_id: 'pod-1' }, { instance_id: 'pod-2' }])
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
    const res = await sendMetrics(tokens.dev!, {
      appName: 'checkout-service',
      instanceId: 'pod-1',
      bucket: bucket({ checkout: { yes: 10, no: 2, variants: { blue: 6, disabled: 4 } }, banner: { yes: 0, no: 5 }, cart: { yes: 1, no: 0 }, 'no-such-flag': { yes: 3, no: 3 } }),
    })
    expect(res.status, res.text).toBe(202)
    expect(await t.query('select kind, app_name from client_metrics_inbox')).toEqual([{ kind: 'metrics', app_name: 'checkout-service' }])
    expect(await t.query('select count(*)::int as n from client_metrics_hourly')).toEqual([{ n: 0 }])
  })

  it('folds buckets into hourly counts per flag, application and environment, ignoring unknown flags', async () => {
    expect((await sendMetrics(tokens.dev!, { appName: 'checkout-service', instanceId: 'pod-2', bucket: bucket({ checkout: { yes: 1, no: 1, variants: { blue: 1 } } }) })).status).toBe(202)
    await flush()
    expect(await t.query('select feature_name, app_name, environment, timestamp, yes::int, no::int from client_metrics_hourly order by feature_name')).toEqual([
      { feature_name: 'banner', app_name: 'checkout-service', environment: 'development', timestamp: new Date('2026-03-01T10:00:00Z'), yes: 0, no: 5 },
      { feature_name: 'cart', app_name: 'checkout-service', environment: 'development', timestamp: new Date('2026-03-01T10:00:00Z'), yes: 1, no: 0 },
      { feature_name: 'checkout', app_name: 'checkout-service', environment: 'development', timestamp: new Date('2026-03-01T10:00:00Z'), yes: 11, no: 3 },
    ])
    expect(await t.query('select variant, count::int from client_metrics_variants_hourly order by variant')).toEqual([
      { variant: 'blue', count: 7 },
      { variant: 'disabled', count: 4 },
    ])
    expect(await t.query('select count(*)::int as n from client_metrics_inbox')).toEqual([{ n: 0 }])
  })

  it("sets lastSeenAt of the flags in the token's environment, to when the report arrived", async () => {
    const seen = await t.query<{ feature_name: string; environment: string; last_seen_at: Date | null }>(
      `select feature_name, environment, last_seen_at from feature_environments where feature_name in ('checkout', 'banner', 'cart') order by 1, 2`,
    )
    expect(seen).toEqual([
      { feature_name: 'banner', environment: 'development', last_seen_at: now },
      { feature_name: 'banner', environment: 'production', last_seen_at: null },
      { feature_name: 'cart', environment: 'development', last_seen_at: now },
      { feature_name: 'cart', environment: 'production', last_seen_at: null },
      { feature_name: 'checkout', environment: 'development', last_seen_at: now },
      { feature_name: 'checkout', environment: 'production', last_seen_at: null },
    ])
    const flag = await t.call('GET', '/api/admin/projects/default/features/checkout')
    expect(flag.body.lastSeenAt).toBe(now.toISOString())
  })

  it("counts only flags in the token's projects, in the token's environment", async () => {
    now = new Date('2026-03-01T11:10:00.000Z')
    expect((await sendMetrics(tokens.defaultProd!, { appName: 'prod-service', environment: 'development', bucket: bucket({ checkout: { yes: 2, no: 0 }, cart: { yes: 9, no: 9 } }, '2026-03-01T11:00:00Z') })).status).toBe(202)
    await flush()
    expect(await t.query(`select feature_name, environment, yes::int from client_metrics_hourly where app_name = 'prod-service'`)).toEqual([{ feature_name: 'checkout', environment: 'production', yes: 2 }])
    expect(await t.query(`select environment, last_seen_at from feature_environments where feature_name = 'cart' and last_seen_at > '2026-03-01T11:00:00Z'`)).toEqual([])
    // A report that arrives for the first time through metrics creates the application too.
    expect(await t.query(`select created_by from events where type = 'application-created' and data->>'appName' = 'prod-service'`)).toEqual([{ created_by: 'prod-service' }])
  })

  it('puts a bucket whose start lies ahead of the server clock in the hour the report arrived', async () => {
    expect((await sendMetrics(tokens.dev!, { appName: 'skewed', bucket: bucket({ banner: { yes: 1, no: 0 } }, '2026-03-01T15:00:00Z') })).status).toBe(202)
    await flush()
    expect(await t.query(`select timestamp from client_metrics_hourly where app_name = 'skewed'`)).toEqual([{ timestamp: new Date('2026-03-01T11:00:00Z') }])
  })

  it('answers 400 to payloads that do not match the schema', async () => {
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
    expect(await t.query('select count(*)::int as n from client_metrics_inbox')).toEqual([{ n: 0 }])
  })

  it('accepts a report with no bucket, and UNIX timestamps', async () => {
    expect((await sendMetrics(tokens.dev!, { appName: 'checkout-service', bucket: null })).status).toBe(202)
    expect((await sendMetrics(tokens.dev!, { appName: 'checkout-service', bucket: { start: 1772359200, stop: 1772359260, toggles: { banner: { yes: 1, no: 0 } } } })).status).toBe(202)
    await flush()
    expect(await t.query(`select timestamp, yes::int from client_metrics_hourly where app_name = 'checkout-service' and feature_name = 'banner' order by timestamp`)).toEqual([
      { timestamp: new Date('2026-03-01T10:00:00Z'), yes: 1 },
    ])
  })

  it('sets aside a report that cannot be folded, and folds the others', async () => {
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      // Nothing the API accepts does this; a row written by hand stands in for whatever could.
      await t.query(
        `insert into client_metrics_inbox (received_at, kind, app_name, environment, projects, token_name, payload)
         values ($1, 'metrics', 'broken', 'development', '{*}', 'x', '{"bucket": {"start": "2026-03-01T11:00:00Z", "stop": "2026-03-01T11:00:00Z", "toggles": {"banner": {"yes": "many", "no": 0}}}}')`,
        [now],
      )
      expect((await sendMetrics(tokens.dev!, { appName: 'after-broken', bucket: bucket({ banner: { yes: 4, no: 0 } }, '2026-03-01T11:00:00Z') })).status).toBe(202)
      await flush()
    } finally {
      quiet.mockRestore()
    }
    expect(await t.query('select count(*)::int as n from client_metrics_inbox')).toEqual([{ n: 0 }])
    expect(await t.query(`select yes::int from client_metrics_hourly where app_name = 'after-broken'`)).toEqual([{ yes: 4 }])
    expect(await t.query(`select count(*)::int as n from client_applications where app_name = 'broken'`)).toEqual([{ n: 0 }])
  })

  it('answers 401 without a token and 403 to a frontend token', async () => {
    expect((await t.call('POST', '/api/client/metrics', { token: null, body: { appName: 'x' } })).status).toBe(401)
    expect((await t.call('POST', '/api/client/register', { token: tokens.frontend!, body: { appName: 'x' } })).status).toBe(403)
  })
})

describe('what was recorded, on the admin API', () => {
  it('lists applications with their usage, filtered, sorted and paged', async () => {
    const res = await t.call('GET', '/api/admin/metrics/applications')
    expect(res.status, res.text).toBe(200)
    expect(res.body.total).toBe(4)
    expect(res.body.applications.map((a: { appName: string }) => a.appName)).toEqual(['after-broken', 'checkout-service', 'prod-service', 'skewed'])
    expect(res.body.applications[1]).toMatchObject({
      appName: 'checkout-service',
      sdkVersion: 'unleash-node-sdk:6.12.1',
      strategies: ['default', 'flexibleRollout'],
      usage: [
        { project: 'default', environments: ['development'] },
        { project: 'shop', environments: ['development'] },
      ],
    })
    expect(res.body.applications[2].usage).toEqual([{ project: 'default', environments: ['production'] }])
    const filtered = await t.call('GET', '/api/admin/metrics/applications?query=PROD')
    expect(filtered.body).toMatchObject({ total: 1, applications: [{ appName: 'prod-service' }] })
    const page = await t.call('GET', '/api/admin/metrics/applications?sortOrder=desc&limit=1&offset=1')
    expect(page.body.total).toBe(4)
    expect(page.body.applications.map((a: { appName: string }) => a.appName)).toEqual(['prod-service'])
    expect((await t.call('GET', '/api/admin/metrics/applications?sortBy=color')).status).toBe(400)
    expect((await t.call('GET', '/api/admin/metrics/applications', { token: tokens.dev! })).status).toBe(403)
  })

  it("summarizes a flag's usage: the last hour per environment, the totals and the applications that saw it", async () => {
    const res = await t.call('GET', '/api/admin/client-metrics/features/checkout')
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({
      version: 1,
      maturity: 'stable',
      featureName: 'checkout',
      lastHourUsage: [
        { featureName: 'checkout', environment: 'development', timestamp: '2026-03-01T10:00:00.000Z', yes: 11, no: 3, variants: { blue: 7, disabled: 4 } },
        { featureName: 'checkout', environment: 'production', timestamp: '2026-03-01T11:00:00.000Z', yes: 2, no: 0, variants: {} },
      ],
      totalUsage: [
        { environment: 'development', yes: 11, no: 3 },
        { environment: 'production', yes: 2, no: 0 },
      ],
      seenApplications: ['checkout-service', 'prod-service'],
    })
    expect((await t.call('GET', '/api/admin/client-metrics/features/nope')).status).toBe(404)
  })

  it('serves the hourly rows of a flag', async () => {
    const res = await t.call('GET', '/api/admin/client-metrics/features/checkout/raw?hoursBack=2')
    expect(res.status, res.text).toBe(200)
    expect(res.body.data).toEqual([
      { featureName: 'checkout', appName: 'checkout-service', environment: 'development', timestamp: '2026-03-01T10:00:00.000Z', yes: 11, no: 3, variants: { blue: 7, disabled: 4 } },
      { featureName: 'checkout', appName: 'prod-service', environment: 'production', timestamp: '2026-03-01T11:00:00.000Z', yes: 2, no: 0, variants: {} },
    ])
    expect((await t.call('GET', '/api/admin/client-metrics/features/checkout/raw')).body.data).toHaveLength(2)
    expect((await t.call('GET', '/api/admin/client-metrics/features/checkout/raw?hoursBack=0')).status).toBe(400)
  })

  it('drops hourly rows older than 48 hours when it aggregates', async () => {
    now = new Date('2026-03-03T11:30:00.000Z')
    expect((await sendMetrics(tokens.dev!, { appName: 'checkout-service', bucket: bucket({ banner: { yes: 1, no: 0 } }, '2026-03-03T11:00:00Z') })).status).toBe(202)
    await flush()
    expect(await t.query(`select feature_name, timestamp from client_metrics_hourly order by timestamp`)).toEqual([{ feature_name: 'banner', timestamp: new Date('2026-03-03T11:00:00Z') }])
    expect(await t.query(`select count(*)::int as n from client_metrics_variants_hourly`)).toEqual([{ n: 0 }])
  })
})
