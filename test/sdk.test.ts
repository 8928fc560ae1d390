// The official SDKs, unchanged but for the URL and token, against the Node server on a free port.
import { once } from 'node:events'
import { rm } from 'node:fs/promises'
import { InMemStorageProvider, Unleash, UnleashEvents, type Context } from 'unleash-client'
import { UnleashClient } from 'unleash-proxy-client'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { readConfig, startServer } from '../src/server.js'
import { fresh } from './helpers/factories.js'
import { adminCaller } from './helpers/server.js'
import { migratedDataDir } from './helpers/data-dir.js'

const ADMIN = '*:*.sdk-test-admin-secret'
let dataDir: string
let server: Awaited<ReturnType<typeof startServer>>
let clientToken: string
let frontendToken: string
/** The SDKs a test started: stopped after it. */
const running: (() => void)[] = []

const admin = adminCaller(() => server.url, ADMIN)

const F = '/api/admin/projects/default/features'
const dev = (flag: string) => `${F}/${flag}/environments/development`

interface PlaygroundFeature {
  name: string
  isEnabled: boolean
  variant: { name: string; enabled: boolean; payload?: { type: string; value: string } }
}

/** What the admin playground says for a context, by flag. */
async function playground(context: Record<string, unknown>): Promise<Map<string, PlaygroundFeature>> {
  const res = await admin('POST', '/api/admin/playground', { environment: 'development', projects: ['default'], context: { appName: 'sdk-test', ...context } })
  return new Map((res.features as PlaygroundFeature[]).map((f) => [f.name, f]))
}

const FLAGS = ['simple-on', 'off', 'nordic-rollout', 'colors', 'gold-users', 'child', 'child-of-blue', 'picky', 'only-disabled']

/** Contexts that cover every strategy, constraint and variant above, with stickiness (userId or sessionId) so nothing is random. */
const contexts: (Context & { userId: string; properties: Record<string, string> })[] = Array.from({ length: 36 }, (_, i) => ({
  userId: String(i % 12 === 0 ? 42 : i),
  sessionId: `session-${i}`,
  remoteAddress: `10.0.0.${i}`,
  properties: {
    country: ['NO', 'SE', 'US'][i % 3]!,
    plan: i % 4 === 0 ? 'pro' : 'free',
    appVersion: i % 5 === 0 ? '1.9.0' : '2.3.1',
    email: i % 2 === 0 ? `User${i}@Example.com` : `user${i}@other.org`,
  },
}))

beforeAll(async () => {
  dataDir = await migratedDataDir('flagpost-sdk-')
  server = await startServer({ ...readConfig({}), port: 0, host: '127.0.0.1', dataDir, initAdminTokens: [ADMIN] })

  const segment = await admin('POST', '/api/admin/segments', { name: 'paying', constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro', 'enterprise'] }] })
  for (const name of FLAGS) await admin('POST', F, { name })

  await admin('POST', `${dev('simple-on')}/on`)
  await admin('POST', `${dev('nordic-rollout')}/strategies`, {
    name: 'flexibleRollout',
    parameters: { rollout: '50', stickiness: 'userId', groupId: 'nordic-rollout' },
    constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE'] }],
  })
  await admin('POST', `${dev('nordic-rollout')}/strategies`, { name: 'default', segments: [segment.id] })
  await admin('POST', `${dev('nordic-rollout')}/on`)
  await admin('POST', `${dev('colors')}/on`)
  await admin('PUT', `${dev('colors')}/variants`, [
    { name: 'red', weightType: 'variable', stickiness: 'userId', payload: { type: 'string', value: 'Red' } },
    { name: 'blue', weightType: 'variable', stickiness: 'userId', payload: { type: 'json', value: '{"hex":"#00f"}' }, overrides: [{ contextName: 'userId', values: ['42'] }] },
  ])
  await admin('POST', `${dev('gold-users')}/strategies`, {
    name: 'userWithId',
    parameters: { userIds: '1,2,3,42' },
    variants: [{ name: 'gold', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'number', value: '24' } }],
  })
  await admin('POST', `${dev('gold-users')}/strategies`, {
    name: 'flexibleRollout',
    parameters: { rollout: '30', stickiness: 'sessionId', groupId: 'gold-users' },
    constraints: [{ contextName: 'appVersion', operator: 'SEMVER_GT', value: '1.9.9' }],
  })
  await admin('POST', `${dev('gold-users')}/on`)
  await admin('POST', `${F}/child/dependencies`, { feature: 'nordic-rollout' })
  await admin('POST', `${dev('child')}/on`)
  await admin('POST', `${F}/child-of-blue/dependencies`, { feature: 'colors', variants: ['blue'] })
  await admin('POST', `${dev('child-of-blue')}/on`)
  await admin('POST', `${dev('picky')}/strategies`, {
    name: 'default',
    constraints: [
      { contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@example.com'], caseInsensitive: true },
      { contextName: 'userId', operator: 'IN', values: ['6', '8'], inverted: true },
      { contextName: 'email', operator: 'REGEX', value: '^user[0-9]+@' , caseInsensitive: true },
    ],
  })
  await admin('POST', `${dev('picky')}/on`)
  await admin('POST', `${dev('only-disabled')}/on`)
  const [onlyStrategy] = await admin('GET', `${dev('only-disabled')}/strategies`)
  await admin('PUT', `${dev('only-disabled')}/strategies/${onlyStrategy.id}`, { ...onlyStrategy, disabled: true })

  clientToken = (await admin('POST', '/api/admin/api-tokens', { tokenName: 'sdk-test', type: 'client', environment: 'development', projects: ['default'] })).secret
  frontendToken = (await admin('POST', '/api/admin/api-tokens', { tokenName: 'browser-test', type: 'frontend', environment: 'development', projects: ['default'] })).secret
}, 60_000)

afterEach(() => {
  for (const stop of running.splice(0)) stop()
})
afterAll(async () => {
  await server?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

/** A Node SDK polling with the token (the default project's unless given), once it has synced. */
async function nodeSdk({ token = clientToken, appName = 'sdk-test' } = {}) {
  const sdk = new Unleash({
    url: `${server.url}/api/`,
    appName,
    instanceId: fresh('sdk-test'),
    customHeaders: { Authorization: token },
    refreshInterval: 250,
    metricsInterval: 500,
    disableMetrics: false,
    storageProvider: new InMemStorageProvider(),
  })
  running.push(() => sdk.destroy())
  sdk.on('error', () => {})
  await once(sdk, UnleashEvents.Synchronized)
  return sdk
}

/** A fresh project with a fresh flag (on in development if asked), and a client token of the project. */
async function ownProject({ on = false } = {}) {
  const project = (await admin('POST', '/api/admin/projects', { id: fresh('sdk-project'), name: 'SDK' })).id as string
  const flag = fresh('flag')
  await admin('POST', `/api/admin/projects/${project}/features`, { name: flag })
  if (on) await admin('POST', `/api/admin/projects/${project}/features/${flag}/environments/development/on`)
  const token = (await admin('POST', '/api/admin/api-tokens', { tokenName: fresh('sdk'), type: 'client', environment: 'development', projects: [project] })).secret as string
  return { project, flag, token }
}

describe('the Node SDK (unleash-client)', () => {
  it('syncs, and answers isEnabled and getVariant as the playground does for every context', async () => {
    const sdk = await nodeSdk()
    expect(sdk.getFeatureToggleDefinitions().map((f) => f.name).sort()).toEqual([...FLAGS].sort())

    for (const context of contexts) {
      const expected = await playground(context)
      for (const name of FLAGS) {
        const what = `${name} for ${JSON.stringify(context)}`
        expect(sdk.isEnabled(name, context), what).toBe(expected.get(name)!.isEnabled)
        const variant = sdk.getVariant(name, context)
        expect({ name: variant.name, enabled: variant.enabled, payload: variant.payload }, what).toEqual({
          name: expected.get(name)!.variant.name,
          enabled: expected.get(name)!.variant.enabled,
          payload: expected.get(name)!.variant.payload,
        })
      }
    }
  })

  it('agrees with hand-computed answers where they are certain', async () => {
    const sdk = await nodeSdk()
    const user = (userId: string, properties: Record<string, string> = {}) => ({ userId, sessionId: 'x', properties })
    expect(sdk.isEnabled('simple-on', user('1'))).toBe(true)
    expect(sdk.isEnabled('off', user('1'))).toBe(false)
    // Disabled strategies are never served, and an environment left with no enabled strategy is served off
    // (an SDK would read an empty list as on for everyone).
    expect(sdk.isEnabled('only-disabled', user('1'))).toBe(false)
    expect(sdk.isEnabled('nordic-rollout', user('1', { country: 'US', plan: 'free' }))).toBe(false)
    expect(sdk.isEnabled('nordic-rollout', user('1', { country: 'US', plan: 'pro' }))).toBe(true)
    expect(sdk.getVariant('colors', user('42')).name).toBe('blue')
    expect(sdk.isEnabled('child-of-blue', user('42'))).toBe(true)
    expect(sdk.getVariant('gold-users', user('2', { appVersion: '1.0.0' }))).toMatchObject({ name: 'gold', payload: { type: 'number', value: '24' } })
    expect(sdk.isEnabled('picky', user('7', { email: 'user7@EXAMPLE.com' }))).toBe(true)
    expect(sdk.isEnabled('picky', user('6', { email: 'user6@example.com' }))).toBe(false)
  })

  it('gets a change made through the admin API on its next poll, and 304 on polls that change nothing', async () => {
    const { project, flag: off, token } = await ownProject()
    const sdk = await nodeSdk({ token })
    const unchanged = once(sdk, UnleashEvents.Unchanged)
    await unchanged
    expect(sdk.isEnabled(off, { userId: '1' })).toBe(false)
    const changed = once(sdk, UnleashEvents.Changed)
    await admin('POST', `/api/admin/projects/${project}/features/${off}/environments/development/on`)
    await changed
    expect(sdk.isEnabled(off, { userId: '1' })).toBe(true)
    await once(sdk, UnleashEvents.Unchanged)
  })

  it('sends metrics that arrive: counts per flag and lastSeenAt, and registers the application', async () => {
    const { project, flag: simpleOn, token } = await ownProject({ on: true })
    const appName = fresh('sdk-test')
    const sdk = await nodeSdk({ token, appName })
    for (let i = 0; i < 5; i++) sdk.isEnabled(simpleOn, { userId: String(i) })
    await once(sdk, UnleashEvents.Sent)
    await vi.waitFor(
      async () => {
        const flag = await admin('GET', `/api/admin/projects/${project}/features/${simpleOn}`)
        expect(flag.environments.find((e: { name: string }) => e.name === 'development').lastSeenAt).not.toBeNull()
        const usage = await admin('GET', `/api/admin/client-metrics/features/${simpleOn}`)
        expect(usage.seenApplications).toEqual([appName])
        expect(usage.lastHourUsage[0].yes).toBeGreaterThanOrEqual(5)
      },
      { timeout: 10_000, interval: 100 },
    )
    const apps = await admin('GET', '/api/admin/metrics/applications')
    expect(apps.applications.find((a: { appName: string }) => a.appName === appName)).toMatchObject({
      sdkVersion: expect.stringContaining('unleash-node-sdk'),
      strategies: expect.arrayContaining(['default', 'flexibleRollout']),
    })
    const events = await admin('GET', '/api/admin/search/events?type=IS:application-created&limit=1000')
    expect(JSON.stringify(events)).toContain(appName)
  })
})

describe('the browser SDK (unleash-proxy-client, run in Node with its fetch)', () => {
  /** A browser SDK of the default project, once it has started. */
  async function browserSdk(appName = 'sdk-test') {
    const browser = new UnleashClient({
      url: `${server.url}/api/frontend`,
      clientKey: frontendToken,
      appName,
      refreshInterval: 60,
      metricsInterval: 1,
      metricsIntervalInitial: 0,
      context: { sessionId: 'browser-session' },
    })
    running.push(() => browser.stop())
    browser.on('error', () => {})
    await browser.start()
    return browser
  }

  it('gets the same answers from /api/frontend as the playground gives', async () => {
    const browser = await browserSdk()
    for (const context of contexts.slice(0, 12)) {
      await browser.updateContext({ userId: context.userId, properties: context.properties })
      // The browser SDK sends no remoteAddress: the server takes the caller's.
      const expected = await playground({ userId: context.userId, sessionId: 'browser-session', remoteAddress: '127.0.0.1', properties: context.properties })
      for (const name of FLAGS) {
        const what = `${name} for ${JSON.stringify(context)}`
        expect(browser.isEnabled(name), what).toBe(expected.get(name)!.isEnabled)
        const variant = browser.getVariant(name)
        expect({ name: variant.name, enabled: variant.enabled, payload: variant.payload }, what).toEqual({
          name: expected.get(name)!.variant.name,
          enabled: expected.get(name)!.variant.enabled,
          payload: expected.get(name)!.variant.payload,
        })
      }
    }
  })

  it('sends its metrics to /api/frontend/client/metrics', async () => {
    const appName = fresh('browser-test')
    const browser = await browserSdk(appName)
    browser.isEnabled('simple-on')
    const sent = new Promise((resolve) => browser.once('sent', resolve))
    await browser.sendMetrics()
    await sent
    await vi.waitFor(async () => expect((await admin('GET', '/api/admin/client-metrics/features/simple-on')).seenApplications).toContain(appName), { timeout: 10_000 })
  })
})
