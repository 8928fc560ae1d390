// The operator's metrics at /internal-backstage/prometheus (Node server): off without FLAGPOST_METRICS_TOKEN, behind
// `Authorization: Bearer <token>` with it, in the Prometheus text format, labelled by route templates only.
import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readConfig, startServer } from '../src/server.js'
import { migratedDataDir } from './helpers/data-dir.js'

const TOKEN = 'scrape-token-0123456789'
const ADMIN = '*:*.prometheus-test-admin-token'
let server: Awaited<ReturnType<typeof startServer>>
let off: Awaited<ReturnType<typeof startServer>>
const dirs: string[] = []

async function start(env: Record<string, string>) {
  const dataDir = await migratedDataDir('flagpost-prometheus-')
  dirs.push(dataDir)
  return startServer({ ...readConfig({ INIT_ADMIN_API_TOKENS: ADMIN, ...env }), port: 0, host: '127.0.0.1', dataDir })
}

beforeAll(async () => {
  server = await start({ FLAGPOST_METRICS_TOKEN: TOKEN })
  off = await start({})
})
afterAll(async () => {
  await server.close()
  await off.close()
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

/** A small reader of the text exposition format: every sample line `name{labels} value` (NaN and Inf in any case, as Prometheus reads them), each family's TYPE. */
function parse(text: string) {
  const types = new Map<string, string>()
  const samples: { name: string; labels: Record<string, string>; value: number }[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ')) continue
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type) {
      types.set(type[1]!, type[2]!)
      continue
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.eE+-]+|[Nn][Aa][Nn]|[+-][Ii]nf)$/.exec(line)
    if (!sample) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const m of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) })
  }
  return { types, samples }
}

const scrape = async (token: string | null = TOKEN, base = server.url) => fetch(`${base}/internal-backstage/prometheus`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } })

describe('/internal-backstage/prometheus', () => {
  it('is not served without FLAGPOST_METRICS_TOKEN, and refuses a scrape without the token', async () => {
    expect((await scrape(TOKEN, off.url)).status).toBe(404)
    expect((await scrape(null)).status).toBe(401)
    expect((await scrape('scrape-token-0123456788')).status).toBe(401)
    expect((await scrape(`${TOKEN}x`)).status).toBe(401)
    // An admin API token is no scrape token.
    expect((await fetch(`${server.url}/internal-backstage/prometheus`, { headers: { authorization: ADMIN } })).status).toBe(401)
  })

  it('counts requests by route template, method and status, SDK polls, and reads the instance totals', async () => {
    const admin = { authorization: ADMIN, 'content-type': 'application/json' }
    expect((await fetch(`${server.url}/api/admin/projects/default`, { headers: admin })).status).toBe(200)
    expect((await fetch(`${server.url}/api/admin/projects/default/features`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'scraped-flag' }) })).status).toBe(201)
    const client = ((await (await fetch(`${server.url}/api/admin/api-tokens`, { method: "POST", headers: admin, body: JSON.stringify({ tokenName: "sdk", type: "client", environment: "development" }) })).json()) as { secret: string }).secret
    const first = await fetch(`${server.url}/api/client/features`, { headers: { authorization: client } })
    expect(first.status).toBe(200)
    expect((await fetch(`${server.url}/api/client/features`, { headers: { authorization: client, 'if-none-match': first.headers.get('etag')! } })).status).toBe(304)
    const res = await scrape()
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/plain')
    const { types, samples } = parse(await res.text())
    expect(types.get('flagpost_http_requests_total')).toBe('counter')
    expect(types.get('flagpost_http_request_duration_seconds')).toBe('histogram')
    const count = (labels: Record<string, string>) => samples.find((s) => s.name === 'flagpost_http_requests_total' && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
    expect(count({ route: '/api/admin/projects/:projectId', method: 'GET', status: '200' })).toBe(1)
    expect(count({ route: '/api/admin/projects/:projectId/features', method: 'POST', status: '201' })).toBe(1)
    const polls = (status: string) => samples.find((s) => s.name === 'flagpost_sdk_polls_total' && s.labels.status === status)?.value
    expect(polls('200')).toBe(1)
    expect(polls('304')).toBe(1)
    expect(samples.find((s) => s.name === 'flagpost_flags' && s.labels.state === 'live')?.value).toBeGreaterThanOrEqual(1)
    expect(samples.find((s) => s.name === 'flagpost_events_total')?.value).toBeGreaterThanOrEqual(2)
    expect(samples.find((s) => s.name === 'flagpost_queue_depth' && s.labels.queue === 'metrics_inbox')).toBeDefined()
    expect(samples.find((s) => s.name === 'flagpost_database_up')?.value).toBe(1)
    expect(samples.find((s) => s.name === 'flagpost_streams_open' && s.labels.kind === 'sdk')?.value).toBe(0)
    expect(samples.some((s) => s.name === 'flagpost_nodejs_eventloop_lag_seconds')).toBe(true)
    expect(samples.some((s) => s.name === 'flagpost_process_resident_memory_bytes')).toBe(true)
  })

  it('exports SDK payload sizes by route, database query time, the pool, every queue and its oldest item, and open streams', async () => {
    const admin = { authorization: ADMIN, 'content-type': 'application/json' }
    const token = async (type: string) =>
      ((await (await fetch(`${server.url}/api/admin/api-tokens`, { method: 'POST', headers: admin, body: JSON.stringify({ tokenName: `sizes-${type}`, type, environment: 'development' }) })).json()) as { secret: string }).secret
    const [client, frontend] = [await token('client'), await token('frontend')]
    const sized = async (path: string, headers: Record<string, string>) => {
      const res = await fetch(`${server.url}${path}`, { headers })
      expect(res.status, path).toBe(200)
      return (await res.arrayBuffer()).byteLength
    }
    const before = parse(await (await scrape()).text()).samples
    const sent = {
      '/api/client/features': await sized('/api/client/features', { authorization: client }),
      '/api/client/delta': await sized('/api/client/delta', { authorization: client }),
      '/api/frontend': await sized('/api/frontend?userId=1', { authorization: frontend }),
    }
    // A stream open and past its first message while the scrape reads.
    const stream = await fetch(`${server.url}/api/client/streaming`, { headers: { authorization: client, 'unleash-client-spec': '5.2.0' } })
    expect(stream.status).toBe(200)
    const reader = stream.body!.getReader()
    const first = await reader.read()
    expect(first.done).toBe(false)
    try {
      const res = await scrape()
      const { types, samples } = parse(await res.text())
      const value = (list: typeof samples, name: string, labels: Record<string, string> = {}) =>
        list.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0
      expect(types.get('flagpost_sdk_payload_bytes')).toBe('histogram')
      // Each route's sum grew by exactly the bytes answered (before compression: fetch here asks for none).
      for (const [route, bytes] of Object.entries(sent)) {
        expect(value(samples, 'flagpost_sdk_payload_bytes_count', { route }) - value(before, 'flagpost_sdk_payload_bytes_count', { route }), route).toBe(1)
        expect(value(samples, 'flagpost_sdk_payload_bytes_sum', { route }) - value(before, 'flagpost_sdk_payload_bytes_sum', { route }), route).toBe(bytes)
      }
      expect(value(samples, 'flagpost_sdk_payload_bytes_sum', { route: '/api/client/streaming' }) - value(before, 'flagpost_sdk_payload_bytes_sum', { route: '/api/client/streaming' })).toBe(first.value!.byteLength)
      expect(value(samples, 'flagpost_sdk_payload_bytes_bucket', { route: '/api/client/features', le: '+Inf' })).toBe(value(samples, 'flagpost_sdk_payload_bytes_count', { route: '/api/client/features' }))
      expect(types.get('flagpost_database_query_duration_seconds')).toBe('histogram')
      expect(value(samples, 'flagpost_database_query_duration_seconds_count')).toBeGreaterThan(value(before, 'flagpost_database_query_duration_seconds_count'))
      expect(value(samples, 'flagpost_database_query_duration_seconds_sum')).toBeGreaterThan(0)
      // The embedded database: one connection, idle when the scrape started, nothing waiting.
      expect(value(samples, 'flagpost_database_pool_connections')).toBe(1)
      expect(value(samples, 'flagpost_database_pool_idle')).toBe(1)
      expect(samples.find((s) => s.name === 'flagpost_database_pool_waiting')?.value).toBe(0)
      for (const queue of ['metrics_inbox', 'integration_deliveries', 'action_runs', 'scheduled_change_requests']) {
        expect(samples.find((s) => s.name === 'flagpost_queue_depth' && s.labels.queue === queue), queue).toBeDefined()
        expect(samples.find((s) => s.name === 'flagpost_queue_oldest_seconds' && s.labels.queue === queue), queue).toBeDefined()
      }
      expect(value(samples, 'flagpost_streams_open', { kind: 'sdk' })).toBe(1)
    } finally {
      await reader.cancel()
    }
  })

  it('makes no series of what a client chooses: random paths, unknown methods and secrets in URLs', async () => {
    const before = parse(await (await scrape()).text()).samples.filter((s) => s.name === 'flagpost_http_requests_total').length
    for (let i = 0; i < 20; i++) await fetch(`${server.url}/api/admin/no-such-${i}-${crypto.randomUUID()}?token=secret-${i}`, { headers: { authorization: ADMIN } })
    for (let i = 0; i < 5; i++) await fetch(`${server.url}/api/admin/projects/p-${crypto.randomUUID()}`, { headers: { authorization: ADMIN } })
    await fetch(`${server.url}/api/admin/projects`, { method: 'PURGE', headers: { authorization: ADMIN } })
    const text = await (await scrape()).text()
    const after = parse(text).samples.filter((s) => s.name === 'flagpost_http_requests_total')
    // At most: unmatched 404, the project route's 404, and PURGE as OTHER.
    expect(after.length - before).toBeLessThanOrEqual(3)
    expect(text).not.toContain('no-such-')
    expect(text).not.toContain('secret-')
    expect(text).not.toContain('PURGE')
  })
})
