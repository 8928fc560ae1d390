// Unleash's Node tools that sit between Flagpost and an app, unchanged but for the URL and token: the open-source
// Unleash Proxy (@unleash/proxy), which polls Flagpost's client API with a client token and sends its metrics upstream
// while a browser SDK (unleash-proxy-client) reads flags through it; and the Next.js SDK's server-side helpers.
import { once } from 'node:events'
import { rm } from 'node:fs/promises'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp as createProxy } from '@unleash/proxy'
import { evaluateFlags, flagsClient, getDefinitions } from '@unleash/nextjs'
import { Unleash } from 'unleash-client'
import { UnleashClient } from 'unleash-proxy-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readConfig, startServer } from '../src/server.js'
import { adminCaller, eventually } from './helpers/server.js'
import { migratedDataDir } from './helpers/data-dir.js'

const ADMIN = '*:*.unleash-proxy-test-admin-secret'
const CLIENT_KEY = 'proxy-client-key-for-browsers'
let dataDir: string
let server: Awaited<ReturnType<typeof startServer>>
let proxy: Server
let proxyUrl: string
let clientToken: string

const admin = adminCaller(() => server.url, ADMIN)

const F = '/api/admin/projects/default/features'
const dev = (flag: string) => `${F}/${flag}/environments/development`

beforeAll(async () => {
  dataDir = await migratedDataDir('flagpost-unleash-proxy-')
  server = await startServer({ ...readConfig({}), port: 0, host: '127.0.0.1', dataDir, initAdminTokens: [ADMIN] })
  await admin('POST', F, { name: 'proxied' })
  await admin('PUT', `${dev('proxied')}/variants`, [{ name: 'teal', weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'Teal' } }])
  clientToken = (await admin('POST', '/api/admin/api-tokens', { tokenName: 'unleash-proxy', type: 'client', environment: 'development', projects: ['default'] })).secret as string
  const app = createProxy({
    unleashUrl: `${server.url}/api/`,
    unleashApiToken: clientToken,
    unleashAppName: 'unleash-proxy-in-test',
    clientKeys: [CLIENT_KEY],
    refreshInterval: 200,
    metricsInterval: 300,
    metricsJitter: 0,
    // The proxy's LogLevel enum is not exported; its values are these names.
    logLevel: 'warn' as NonNullable<Parameters<typeof createProxy>[0]['logLevel']>,
  })
  proxy = app.listen(0, '127.0.0.1')
  await once(proxy, 'listening')
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
}, 60_000)

afterAll(async () => {
  if (proxy) await new Promise((resolve) => proxy.close(resolve))
  await server?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

describe('the Unleash Proxy in front of Flagpost', () => {
  it('serves what Flagpost’s admin API switches on to a browser SDK, and forwards the SDK’s metrics to Flagpost', async () => {
    const browser = new UnleashClient({ url: `${proxyUrl}/proxy`, clientKey: CLIENT_KEY, appName: 'proxied-browser', refreshInterval: 1, metricsInterval: 1, metricsIntervalInitial: 0, context: { userId: '7' } })
    browser.on('error', () => {})
    try {
      await browser.start()
      expect(browser.isEnabled('proxied')).toBe(false)
      await admin('POST', `${dev('proxied')}/on`)
      await eventually(async () => expect(browser.isEnabled('proxied')).toBe(true))
      expect(browser.getVariant('proxied')).toMatchObject({ name: 'teal', enabled: true, payload: { type: 'string', value: 'Teal' } })
      for (let i = 0; i < 4; i++) browser.isEnabled('proxied')

      // The proxy registered with Flagpost and its metrics (the browser's counts, sent on by the proxy) were kept.
      const usage = await eventually(async () => {
        const summary = await admin('GET', '/api/admin/client-metrics/features/proxied')
        expect(summary.seenApplications).toContain('unleash-proxy-in-test')
        expect(summary.lastHourUsage.find((u: { environment: string }) => u.environment === 'development')?.yes).toBeGreaterThanOrEqual(5)
        return summary
      })
      expect(usage.lastHourUsage[0].variants.teal).toBeGreaterThanOrEqual(1)
      const apps = await admin('GET', '/api/admin/metrics/applications?query=unleash-proxy-in-test')
      expect(apps.applications).toEqual([expect.objectContaining({ appName: 'unleash-proxy-in-test', usage: [{ project: 'default', environments: ['development'] }] })])
    } finally {
      browser.stop()
    }
  }, 30_000)
})

describe('the Next.js SDK’s server-side helpers (@unleash/nextjs) against Flagpost', () => {
  it('getDefinitions reads Flagpost’s flags with a client token, evaluateFlags and flagsClient evaluate them, and flagsClient’s metrics are kept', async () => {
    await admin('POST', F, { name: 'next-gated' })
    await admin('POST', `${dev('next-gated')}/strategies`, { name: 'default', constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice'] }] })
    await admin('POST', `${dev('next-gated')}/on`)
    await admin('POST', F, { name: 'next-off' })

    const definitions = await getDefinitions({ url: `${server.url}/api/client/features`, token: clientToken, appName: 'next-app' })
    expect(definitions.features.map((f) => f.name)).toEqual(expect.arrayContaining(['next-gated', 'next-off']))

    const forAlice = evaluateFlags(definitions, { userId: 'alice', environment: 'development' })
    const forBob = evaluateFlags(definitions, { userId: 'bob', environment: 'development' })
    const enabled = (toggles: { name: string; enabled: boolean }[]) => toggles.filter((t) => t.enabled).map((t) => t.name)
    expect(enabled(forAlice.toggles)).toContain('next-gated')
    expect(enabled(forBob.toggles)).not.toContain('next-gated')
    expect(enabled(forAlice.toggles)).not.toContain('next-off')
    // The same answers as Flagpost's own engine gives for those contexts.
    const playground = await admin('POST', '/api/admin/playground', { environment: 'development', projects: ['default'], context: { appName: 'next-app', userId: 'alice' } })
    expect(playground.features.find((f: { name: string }) => f.name === 'next-gated').isEnabled).toBe(true)

    // An unchanged poll: getDefinitions sends the ETag it kept and takes Flagpost's 304.
    const again = await getDefinitions({ url: `${server.url}/api/client/features`, token: clientToken, appName: 'next-app' })
    expect(again).toEqual(definitions)

    const flags = flagsClient(forAlice.toggles, { url: `${server.url}/api`, appName: 'next-app', clientKey: clientToken })
    expect(flags.isEnabled('next-gated')).toBe(true)
    expect(flags.isEnabled('next-off')).toBe(false)
    await flags.sendMetrics()
    await eventually(async () => {
      const summary = await admin('GET', '/api/admin/client-metrics/features/next-gated')
      expect(summary.seenApplications).toEqual(['next-app'])
      expect(summary.lastHourUsage).toEqual([expect.objectContaining({ environment: 'development', yes: 1, no: 0 })])
    })
  }, 30_000)
})

describe('newer SDKs’ reports and polls, straight against Flagpost', () => {
  it('the browser SDK (unleash-proxy-client 3.8.2) sends back the ETag of /api/frontend and takes its 304 while its answer is unchanged', async () => {
    const frontendToken = (await admin('POST', '/api/admin/api-tokens', { tokenName: 'browser-etag', type: 'frontend', environment: 'development', projects: ['default'] })).secret as string
    const polls: { status: number; ifNoneMatch: string | null }[] = []
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init)
      if (String(input).includes('/api/frontend?')) polls.push({ status: res.status, ifNoneMatch: new Headers(init?.headers).get('if-none-match') })
      return res
    }
    const browser = new UnleashClient({ url: `${server.url}/api/frontend`, clientKey: frontendToken, appName: 'etag-browser', refreshInterval: 1, disableMetrics: true, fetch: recording, context: { userId: '7', sessionId: 's' } })
    browser.on('error', () => {})
    try {
      await browser.start()
      await eventually(async () => expect(polls.filter((p) => p.status === 304).length).toBeGreaterThanOrEqual(1))
      expect(polls[0]).toEqual({ status: 200, ifNoneMatch: null })
      expect(polls.find((p) => p.status === 304)?.ifNoneMatch).toMatch(/^W\/"[0-9a-f]{32}"$/)
      await admin('POST', F, { name: 'etag-new' })
      await admin('POST', `${dev('etag-new')}/on`)
      await eventually(async () => expect(browser.isEnabled('etag-new')).toBe(true))
    } finally {
      browser.stop()
    }
  }, 30_000)

  it('the Node SDK (unleash-client 6.12.1) reports its impact metrics with its flag metrics, and they are kept for its application', async () => {
    const sdk = new Unleash({ url: `${server.url}/api/`, appName: 'impact-node-app', instanceId: 'impact-1', customHeaders: { Authorization: clientToken }, refreshInterval: 200, metricsInterval: 300, environment: 'development' })
    sdk.on('error', () => {})
    try {
      await once(sdk, 'synchronized')
      sdk.impactMetrics.defineCounter('purchases', 'Purchases made')
      sdk.impactMetrics.defineGauge('basket_items', 'Items in the basket')
      sdk.impactMetrics.defineHistogram('checkout_seconds', 'Time to check out', [0.5, 1, 5])
      sdk.impactMetrics.incrementCounter('purchases', 2)
      sdk.impactMetrics.incrementCounter('purchases')
      sdk.impactMetrics.updateGauge('basket_items', 4)
      sdk.impactMetrics.observeHistogram('checkout_seconds', 0.7)
      sdk.impactMetrics.observeHistogram('checkout_seconds', 3)
      sdk.isEnabled('proxied')
      const kept = await eventually(async () => {
        const res = await admin('GET', '/api/admin/metrics/applications/impact-node-app/impact-metrics')
        expect(res.impactMetrics.map((m: { name: string }) => m.name).sort()).toEqual(['basket_items', 'checkout_seconds', 'purchases'])
        return res.impactMetrics as { name: string; value?: number; count?: number; sum?: number; buckets?: unknown; labels: Record<string, string>; environment: string }[]
      })
      const byName = new Map(kept.map((m) => [m.name, m]))
      expect(byName.get('purchases')).toMatchObject({ type: 'counter', value: 3, environment: 'development', labels: expect.objectContaining({ appName: 'impact-node-app' }) })
      expect(byName.get('basket_items')).toMatchObject({ type: 'gauge', value: 4 })
      expect(byName.get('checkout_seconds')).toMatchObject({ type: 'histogram', count: 2, sum: 3.7, buckets: [{ le: 0.5, count: 0 }, { le: 1, count: 1 }, { le: 5, count: 2 }, { le: '+Inf', count: 2 }] })
    } finally {
      sdk.destroy()
    }
  }, 30_000)
})
