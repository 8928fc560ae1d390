// npm run bench:streaming — GET /api/client/streaming on the Node server with BENCH_STREAMS (1,000) connected clients
// (bench/streaming-clients.ts, a process of its own, through the EventSource the Node SDK uses). The server runs in
// this process, so that its memory and CPU time can be read: memory per connection (JS heap after a collection, and
// the process's resident set), the time from an admin write's answer to each client having the change (p50, p99, and
// to the last client of each write), and the CPU time one change costs fanned out to every stream (the server's CPU
// over the write and its fan-out, less that of the same write with no stream open). Figures go to bench/RESULTS.md
// by hand.
import { fork } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readConfig, startServer } from '../src/server.js'

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000)
const FLAGS = Number(process.env.BENCH_FLAGS ?? 100)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30)
const ADMIN = '*:*.bench-streaming-admin-secret'
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc (npm run bench:streaming does)')

const now = () => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1000
}
const memory = () => {
  gc()
  gc()
  const { heapUsed, rss } = process.memoryUsage()
  return { heapUsed, rss }
}

const dataDir = await mkdtemp(join(tmpdir(), 'flagpost-bench-streaming-'))
const server = await startServer({
  ...readConfig({}),
  port: 0,
  host: '127.0.0.1',
  dataDir,
  initAdminTokens: [ADMIN],
  // Every client comes from this machine with one token.
  streaming: { maxPerAddress: STREAMS * 2, maxPerToken: STREAMS * 2, maxConnections: STREAMS * 2 },
})
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: ADMIN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : undefined
}

try {
  console.log(`Creating ${FLAGS} flags...`)
  const F = '/api/admin/projects/default/features'
  for (let i = 0; i < FLAGS; i++) {
    const name = `flag-${String(i).padStart(3, '0')}`
    await api('POST', F, { name })
    await api('POST', `${F}/${name}/environments/development/strategies`, {
      name: 'flexibleRollout',
      parameters: { rollout: String(i % 100), stickiness: 'userId', groupId: name },
      constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE', 'DK'] }],
    })
    if (i % 2 === 0) await api('POST', `${F}/${name}/environments/development/on`)
  }
  const token = (await api('POST', '/api/admin/api-tokens', { tokenName: 'bench-streaming', type: 'client', environment: 'development', projects: ['*'] })).secret as string
  let on = false
  /** The change each round makes: flag-001 switched on, then off. */
  const toggle = () => {
    on = !on
    return api('POST', `${F}/flag-001/environments/development/${on ? 'on' : 'off'}`)
  }

  // The same write with no stream open: what a change costs before any fan-out.
  for (let i = 0; i < 5; i++) await toggle()
  const alone: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const cpu = process.cpuUsage()
    await toggle()
    alone.push(cpuMs(cpu))
    await sleep(50)
  }

  /** Connects `streams` clients, makes ROUNDS changes, and measures each one's arrival and CPU time. */
  async function phase(streams: number) {
    const before = memory()
    const connectedAt = now()
    const clients = fork(fileURLToPath(new URL('./streaming-clients.ts', import.meta.url)), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, BENCH_URL: server.url, BENCH_TOKEN: token, BENCH_STREAMS: String(streams) },
    })
    const rounds = new Map<number, number[]>()
    const waiters = new Map<number, () => void>()
    await new Promise<void>((resolve, reject) => {
      clients.on('message', (message: { kind: string; round?: number; times?: number[] }) => {
        if (message.kind === 'connected') resolve()
        if (message.kind === 'round') {
          rounds.set(message.round!, message.times!)
          waiters.get(message.round!)?.()
        }
      })
      clients.once('exit', (code) => reject(new Error(`the clients exited (${code})`)))
    })
    const connectSeconds = (now() - connectedAt) / 1000
    await sleep(1000)
    const after = memory()
    const latencies: number[] = []
    const toLast: number[] = []
    const cpu: number[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      const arrived = new Promise<void>((resolve) => waiters.set(round, resolve))
      const used = process.cpuUsage()
      await toggle()
      const answeredAt = now()
      await arrived
      cpu.push(cpuMs(used))
      // A client may have its change before the writer reads the answer: that counts as no wait.
      const waits = rounds.get(round)!.map((t) => Math.max(0, t - answeredAt))
      latencies.push(...waits)
      toLast.push(Math.max(...waits))
      await sleep(300)
    }
    clients.send({ kind: 'stop' })
    await new Promise((resolve) => clients.once('exit', resolve))
    await sleep(500)
    return { connectSeconds, heapPer: (after.heapUsed - before.heapUsed) / streams, rssPer: (after.rss - before.rss) / streams, latencies, toLast, cpu: percentile(cpu, 50) }
  }

  console.log('One stream...')
  const one = await phase(1)
  console.log(`${STREAMS} streams...`)
  const many = await phase(STREAMS)

  const payload = await fetch(`${server.url}/api/client/features`, { headers: { authorization: token, 'unleash-client-spec': '5.2.0' } }).then((r) => r.text())
  const kib = (bytes: number) => (bytes / 1024).toFixed(1)
  const ms = (value: number) => `${value.toFixed(1)} ms`
  const aloneMs = percentile(alone, 50)
  console.log(`\n${STREAMS} streams, ${FLAGS} flags (payload ${kib(payload.length)} KiB), ${ROUNDS} changes (one flag switched each)`)
  console.log(`connecting all: ${many.connectSeconds.toFixed(1)} s`)
  console.log(`memory per connection: ${kib(many.heapPer)} KiB of JS heap, ${kib(many.rssPer)} KiB of resident set`)
  console.log(`write answered -> a client has the change: p50 ${ms(percentile(many.latencies, 50))}, p99 ${ms(percentile(many.latencies, 99))}, max ${ms(Math.max(...many.latencies))}`)
  console.log(`write answered -> the last of the ${STREAMS} has it: p50 ${ms(percentile(many.toLast, 50))}, p99 ${ms(percentile(many.toLast, 99))}`)
  console.log(`  (one stream: p50 ${ms(percentile(one.latencies, 50))}, p99 ${ms(percentile(one.latencies, 99))})`)
  console.log(`server CPU per change (p50): the write alone ${ms(aloneMs)}; with one stream ${ms(one.cpu)} (the payload rebuilt and one delta); with ${STREAMS} ${ms(many.cpu)}`)
  console.log(`  the fan-out to ${STREAMS} streams: ${ms(many.cpu - aloneMs)} in all, ${(((many.cpu - one.cpu) * 1000) / (STREAMS - 1)).toFixed(1)} µs per further stream`)
} finally {
  await server.close()
  await rm(dataDir, { recursive: true, force: true })
}
