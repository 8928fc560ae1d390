// SIGTERM under load, on the real Node server in a child process (src/server.ts main): requests in flight are answered
// (none sees its connection reset), an open SDK stream ends cleanly, the process exits 0 within SHUTDOWN_WAIT_MS (plus
// closing the database), and the webhook delivery it had claimed and not finished is handed back to the queue.
// The server runs as one esbuild bundle of src/server.ts (its packages left to node_modules): the same code as
// `npm start`, started in a second or two where tsx would transpile every module first (over 10 s on a loaded machine).
import { execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import { createServer, type ServerResponse } from 'node:http'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { openPglite } from '../src/db-node.js'

const ADMIN = '*:*.shutdown-test-admin-token'
// Long enough for the requests in flight to be answered on a loaded 2-core machine (they are sent before the signal,
// and the server accepts for three quarters of it); the held delivery keeps the process to it.
const SHUTDOWN_WAIT_MS = 6_000
// Bounded: enough to have requests in flight at the signal on every kind of route, few enough to be answered well within the wait.
const IN_FLIGHT = 60

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

const cleanup: (() => Promise<unknown> | void)[] = []
afterAll(async () => {
  for (const step of cleanup.reverse()) await step()
})

describe('SIGTERM on the Node server', () => {
  it('answers every request in flight, ends the SDK stream cleanly, hands back its claimed delivery and exits 0 in time', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'flagpost-shutdown-'))
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }))
    // In dist/ (one level down, as src/): the bundle finds schema/migrations and console/dist where the sources do.
    const bundle = join(process.cwd(), 'dist', `shutdown-test-server-${process.pid}.mjs`)
    cleanup.push(() => rm(bundle, { force: true }))
    // The migrated template as the data folder (what a restarted server finds): a fresh one would migrate for seconds.
    await Promise.all([
      promisify(execFile)('tar', ['-xf', inject('pgTemplatePath'), '-C', dataDir]),
      build({ entryPoints: ['src/server.ts'], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile: bundle, logLevel: 'error' }),
    ])

    // A webhook target that takes the delivery and never answers: the delivery is claimed and under way at SIGTERM.
    const held: ServerResponse[] = []
    const hook = createServer((_req, res) => void held.push(res))
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve))
    cleanup.push(() => new Promise((resolve) => (held.forEach((r) => r.destroy()), hook.close(resolve))))
    const hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/hook`

    const port = await freePort()
    const child = spawn(process.execPath, [bundle], {
      env: { ...process.env, FLAGPOST_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', INIT_ADMIN_API_TOKENS: ADMIN, FLAGPOST_ALLOW_PRIVATE_WEBHOOKS: 'true', FLAGPOST_WEBHOOK_TIMEOUT_MS: '60000', SHUTDOWN_WAIT_MS: String(SHUTDOWN_WAIT_MS), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on('exit', (code) => resolve({ code, at: Date.now() })))
    cleanup.push(() => void (child.exitCode === null && child.kill('SIGKILL')))
    const t0 = Date.now()
    const step = (name: string) => process.env.DEBUG_SHUTDOWN && process.stderr.write(`${Date.now() - t0} ms: ${name}\n`)
    // Ready as a load balancer sees it: GET /ready answers 200 once it listens with its background jobs started.
    const url = `http://127.0.0.1:${port}`
    let gone = false
    void exited.then(() => (gone = true))
    await expect
      .poll(
        async () => {
          if (gone) throw new Error(`the server exited: ${output}`)
          return (await fetch(`${url}/ready`).catch(() => undefined))?.status
        },
        { timeout: 30_000, interval: 100 },
      )
      .toBe(200)

    step('ready')
    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, { method, headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
      expect(res.status, `${method} ${path}`).toBeLessThan(300)
      return res.json() as Promise<any>
    }
    await admin('POST', '/api/admin/addons', { provider: 'webhook', enabled: true, parameters: { url: hookUrl }, events: ['feature-created'] })
    await admin('POST', '/api/admin/projects/default/features', { name: 'shutdown-flag' })
    await expect.poll(() => held.length, { timeout: 10_000 }).toBe(1)
    step('delivery held')
    const client = (await admin('POST', '/api/admin/api-tokens', { tokenName: 'sdk', type: 'client', projects: ['*'], environment: 'development' })).secret as string

    // An SDK stream, open and past its first message.
    const stream = await fetch(`${url}/api/client/streaming`, { headers: { authorization: client, 'unleash-client-spec': '5.2.0' } })
    expect(stream.status).toBe(200)
    const reader = stream.body!.getReader()
    const first = await reader.read()
    expect(first.done).toBe(false)
    step('stream open')
    const streamEnd = (async () => {
      for (;;) if ((await reader.read()).done) return 'ended'
    })().catch((error: unknown) => `broken: ${String((error as Error).cause ?? error)}`)

    // Requests in flight: SDK polls, metrics reports, admin reads and writes.
    let answered = 0
    const requests = Array.from({ length: IN_FLIGHT }, (_, i) => {
      const kind = i % 4
      const call =
        kind === 0
          ? fetch(`${url}/api/client/features`, { headers: { authorization: client } })
          : kind === 1
            ? fetch(`${url}/api/client/metrics`, {
                method: 'POST',
                headers: { authorization: client, 'content-type': 'application/json' },
                body: JSON.stringify({ appName: 'shutdown-app', instanceId: `i-${i}`, bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: { 'shutdown-flag': { yes: 1, no: 0 } } } }),
              })
            : kind === 2
              ? fetch(`${url}/health`)
              : fetch(`${url}/api/admin/projects/default/features/shutdown-flag`, { headers: { authorization: ADMIN } })
      return call.then(
        async (res) => {
          await res.arrayBuffer()
          answered++
          return res.status
        },
        (error: unknown) => `failed: ${String((error as Error).cause ?? error)}`,
      )
    })
    await expect.poll(() => answered, { timeout: 15_000, interval: 5 }).toBeGreaterThanOrEqual(10)
    let tookSignal = Infinity
    child.stdout.on('data', () => void (tookSignal === Infinity && output.includes('SIGTERM: shutting down') && (tookSignal = Date.now())))
    child.kill('SIGTERM')
    step('SIGTERM')

    const outcomes = await Promise.all(requests)
    step('answered')
    expect(outcomes.filter((o) => typeof o === 'string')).toEqual([])
    expect(new Set(outcomes)).toEqual(new Set([200, 202]))
    expect(await streamEnd).toBe('ended')
    const { code, at } = await exited
    step('exited')
    expect(code, output).toBe(0)
    // Timed from when the process took the signal (a loaded machine may run its handler late), plus closing the database.
    expect(output).toMatch(/SIGTERM: shutting down/)
    expect(at - tookSignal).toBeLessThan(SHUTDOWN_WAIT_MS + 2000)
    expect(output).toMatch(/claimed background work not finished, handed back released=1 actionRuns=\[\] deliveries=\[\d+\]/)
    // Every request answered has its log line (written through a buffer, flushed at the latest on exit), the last
    // ones answered during the shutdown included.
    const polls = outcomes.filter((_, i) => i % 4 === 0)
    expect(output.split('\n').filter((l) => /INFO +request .*route="\/api\/client\/features" status=200/.test(l))).toHaveLength(polls.length)
    expect(output.split('\n').filter((l) => /INFO +request .*route="\/health" status=200/.test(l)).length).toBeGreaterThanOrEqual(IN_FLIGHT / 4)

    // The delivery is back in the queue, unclaimed: the next process makes it at once.
    const database = await openPglite({ dataDir })
    try {
      const outbox = await database.client.query<{ claimed_at: Date | null }>('select claimed_at from integration_outbox')
      expect(outbox.rows).toEqual([{ claimed_at: null }])
    } finally {
      await database.close()
    }
  }, 60_000)
})
