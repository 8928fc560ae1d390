// The Node SDK (unleash-client), unchanged, in its polling-delta and streaming modes against the Node server: a
// change through the admin API reaches it, archiving a flag removes it, and a stream survives a server restart.
import { once } from 'node:events'
import { rm } from 'node:fs/promises'
import { InMemStorageProvider, Unleash, UnleashEvents } from 'unleash-client'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { readConfig, startServer } from '../src/server.js'
import { fresh } from './helpers/factories.js'
import { adminCaller } from './helpers/server.js'
import { migratedDataDir } from './helpers/data-dir.js'

const ADMIN = '*:*.sdk-stream-test-admin-secret'
let dataDir: string
let server: Awaited<ReturnType<typeof startServer>>
let port: number
const running: (() => void)[] = []

// The hub's revision poll (its 1 s fallback for writes of other processes) is an hour away: a change the SDK gets can
// only have been pushed by the write itself (sdk.invalidate), which the streaming tests wait on instead of a clock.
const start = () => {
  const config = readConfig({})
  return startServer({ ...config, streaming: { ...config.streaming, pollMs: 3_600_000 }, port, host: '127.0.0.1', dataDir, initAdminTokens: [ADMIN] })
}

const admin = adminCaller(() => server.url, ADMIN)

beforeAll(async () => {
  dataDir = await migratedDataDir('flagpost-sdk-stream-')
  port = 0
  server = await start()
  port = Number(new URL(server.url).port)
}, 60_000)
afterEach(() => {
  for (const stop of running.splice(0)) stop()
})
afterAll(async () => {
  await server?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

/** A fresh project with two flags (the first on in development) and a client token of the project. */
async function ownProject() {
  const project = (await admin('POST', '/api/admin/projects', { id: fresh('stream-project'), name: 'Streams' })).id as string
  const on = fresh('on')
  const off = fresh('off')
  for (const name of [on, off]) await admin('POST', `/api/admin/projects/${project}/features`, { name })
  await admin('POST', `/api/admin/projects/${project}/features/${on}/environments/development/on`)
  const token = (await admin('POST', '/api/admin/api-tokens', { tokenName: fresh('sdk'), type: 'client', environment: 'development', projects: [project] })).secret as string
  const switchOn = (flag: string) => admin('POST', `/api/admin/projects/${project}/features/${flag}/environments/development/on`)
  const archive = (flag: string) => admin('DELETE', `/api/admin/projects/${project}/features/${flag}`)
  return { on, off, token, switchOn, archive }
}

async function nodeSdk(token: string, experimentalMode: { type: 'polling'; format: 'delta' } | { type: 'streaming' }) {
  const sdk = new Unleash({
    url: `${server.url}/api/`,
    appName: 'sdk-stream-test',
    instanceId: fresh('sdk-stream-test'),
    customHeaders: { Authorization: token },
    refreshInterval: 200,
    disableMetrics: true,
    storageProvider: new InMemStorageProvider(),
    experimentalMode,
  })
  running.push(() => sdk.destroy())
  const modes: unknown[] = []
  sdk.on(UnleashEvents.Mode, (change) => modes.push(change))
  sdk.on('error', () => {})
  sdk.on('warn', () => {})
  await once(sdk, UnleashEvents.Synchronized)
  return { sdk, modes }
}

/** The SDK's own EventSource (launchdarkly-eventsource): its frames and its reconnections. */
const eventSourceOf = (sdk: Unleash) =>
  (sdk as unknown as { repository: { fetcher: { streamingFetcher: { eventSource: NodeJS.EventEmitter & { addEventListener: (type: string, listener: (event: { data?: unknown }) => void) => void } } } } }).repository.fetcher
    .streamingFetcher.eventSource

/** Waits until the SDK answers `enabled` for the flag (its definition gone when `undefined`). */
const until = (sdk: Unleash, flag: string, enabled: boolean | undefined) =>
  vi.waitFor(() => expect(enabled === undefined ? sdk.getFeatureToggleDefinition(flag) : sdk.isEnabled(flag, { userId: '1' })).toBe(enabled), { timeout: 10_000, interval: 25 })

describe('the Node SDK in polling-delta mode (GET /api/client/delta)', () => {
  it('syncs, gets a change on its next poll and 304 on polls that change nothing, and drops an archived flag', async () => {
    const { on, off, token, switchOn, archive } = await ownProject()
    const { sdk } = await nodeSdk(token, { type: 'polling', format: 'delta' })
    expect(sdk.getFeatureToggleDefinitions().map((f) => f.name).sort()).toEqual([on, off].sort())
    expect(sdk.isEnabled(on, { userId: '1' })).toBe(true)
    expect(sdk.isEnabled(off, { userId: '1' })).toBe(false)
    await once(sdk, UnleashEvents.Unchanged)
    await switchOn(off)
    await until(sdk, off, true)
    await archive(on)
    await until(sdk, on, undefined)
    expect(sdk.getFeatureToggleDefinitions().map((f) => f.name)).toEqual([off])
    await once(sdk, UnleashEvents.Unchanged)
  })
})

describe('the Node SDK in streaming mode (GET /api/client/streaming)', () => {
  it('syncs from the stream, gets each change pushed by the write itself, and drops an archived flag, without falling back to polling', async () => {
    const { on, off, token, switchOn, archive } = await ownProject()
    const { sdk, modes } = await nodeSdk(token, { type: 'streaming' })
    expect(sdk.getFeatureToggleDefinitions().map((f) => f.name).sort()).toEqual([on, off].sort())
    // The frames the stream brings after the sync: each change must come as one, not from a poll (the SDK does not
    // poll in streaming mode unless it falls back, which `modes` would show) nor from the hub's hourly revision poll.
    const frames: string[] = []
    eventSourceOf(sdk).addEventListener('unleash-updated', (event) => frames.push(String(event.data)))
    await switchOn(off)
    await until(sdk, off, true)
    expect(frames.some((data) => data.includes(`"${off}"`)), 'a frame of the stream brought the switch').toBe(true)
    await archive(on)
    await until(sdk, on, undefined)
    expect(frames.some((data) => data.includes(`"${on}"`)), 'a frame of the stream brought the archiving').toBe(true)
    expect(modes).toEqual([])
  })

  it('reconnects after the server restarts with its Last-Event-ID, is sent nothing it has, and goes on receiving changes', async () => {
    const { on, off, token, switchOn } = await ownProject()
    const { sdk, modes } = await nodeSdk(token, { type: 'streaming' })
    // The SDK's own EventSource (launchdarkly-eventsource), to know when it has reconnected.
    const eventSource = eventSourceOf(sdk)
    // Not events.once: it rejects on the 'error' the EventSource emits for each refused attempt while the server is down.
    const reconnected = new Promise((resolve) => eventSource.once('open', resolve))
    const changes: unknown[] = []
    sdk.on(UnleashEvents.Changed, (features) => changes.push(features))
    await server.close()
    server = await start()
    await reconnected
    // A hydration would have been applied (and announced as a change) by now.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(changes).toEqual([])
    await switchOn(off)
    await until(sdk, off, true)
    expect(changes).toHaveLength(1)
    expect(sdk.isEnabled(on, { userId: '1' })).toBe(true)
    expect(modes).toEqual([])
  }, 30_000)
})
