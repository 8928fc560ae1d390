// npm run bench:edge — the worker bundle in workerd (Miniflare) against dev/local-postgres, with an added
// latency on every database round trip (as if the database were that far from the worker): for each kind of
// request, the database round trips it makes (HTTP requests + WebSocket flights, counted by local-postgres)
// before its response and after it (waitUntil work), and its latency as the caller sees it.
//
//   BENCH_LATENCY_MS  the added round trip, default 50
//   BENCH_ITERATIONS  timed requests per case (after two warm-ups), default 20
//   BENCH_COLD        cold isolates per cold case (a new workerd each), default 5
//   BENCH_CPU_POLLS   SDK polls per CPU measurement (the workerd process's CPU time per warm poll), default 2000
//   BENCH_BUNDLE      a built worker bundle to run instead of building this checkout (to compare with another
//                     version: build it there with `npm run build` and give .wrangler/dist/worker.js)
//
// Requests run one at a time, each after the previous one's background work has settled, so every round trip
// is counted against the request that made it. The figures go to bench/RESULTS.md by hand.
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Miniflare } from 'miniflare'
import { startLocalPostgres, type LocalPostgres, type RoundTrips } from '../dev/local-postgres.js'
import { createToken } from '../src/api-tokens/store.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { buildWorker, readWranglerConfig, type WranglerConfig } from '../test/workerd/build.js'

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 50)
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20)
const COLD = Number(process.env.BENCH_COLD ?? 5)
const CPU_POLLS = Number(process.env.BENCH_CPU_POLLS ?? 2000)
const ORIGIN = 'http://flagpost.bench'

interface Sample {
  ms: number
  /** Round trips before the response, and after it (the request's waitUntil work). */
  during: RoundTrips
  after: RoundTrips
}

const diff = (a: RoundTrips, b: RoundTrips): RoundTrips => ({ http: a.http - b.http, webSocket: a.webSocket - b.webSocket })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until no round trip has started for a while and no WebSocket is open: the request's background work is done. */
async function settled(pg: LocalPostgres) {
  const quiet = Math.max(150, 3 * LATENCY_MS)
  let last = pg.roundTrips()
  let since = Date.now()
  for (;;) {
    await sleep(20)
    const now = pg.roundTrips()
    if (now.http !== last.http || now.webSocket !== last.webSocket || pg.relayConnections().open > 0) {
      last = now
      since = Date.now()
    } else if (Date.now() - since >= quiet) return
  }
}

interface Call {
  method?: string
  path: string
  headers?: Record<string, string>
  body?: unknown
  /** The status the request must answer (default 200). */
  status?: number
}

async function send(mf: Miniflare, call: Call) {
  const headers: Record<string, string> = { ...call.headers }
  if (call.body !== undefined) headers['content-type'] = 'application/json'
  const response = await mf.dispatchFetch(`${ORIGIN}${call.path}`, { method: call.method ?? 'GET', headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) })
  const text = await response.text()
  if (response.status !== (call.status ?? 200)) throw new Error(`${call.method ?? 'GET'} ${call.path} answered ${response.status}: ${text}`)
  return { response, text }
}

async function measure(mf: Miniflare, pg: LocalPostgres, call: Call): Promise<Sample & { response: Response; text: string }> {
  const before = pg.roundTrips()
  const started = performance.now()
  const { response, text } = await send(mf, call)
  const ms = performance.now() - started
  const answered = pg.roundTrips()
  await settled(pg)
  return { ms, during: diff(answered, before), after: diff(pg.roundTrips(), answered), response, text }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/** `n`, or `min–max` when the samples differ. */
function range(values: number[]) {
  const min = Math.min(...values)
  const max = Math.max(...values)
  return min === max ? String(min) : `${min}–${max}`
}

const rows: string[][] = []
function report(name: string, samples: Sample[]) {
  const total = (t: RoundTrips) => t.http + t.webSocket
  rows.push([
    name,
    range(samples.map((s) => total(s.during))),
    `${range(samples.map((s) => s.during.http))} + ${range(samples.map((s) => s.during.webSocket))}`,
    range(samples.map((s) => total(s.after))),
    percentile(samples.map((s) => s.ms), 50).toFixed(1),
    percentile(samples.map((s) => s.ms), 95).toFixed(1),
  ])
  console.log(`  ${name}: done`)
}

function printTable() {
  const head = ['request', 'round trips', 'http + ws', 'after the response', 'p50 ms', 'p95 ms']
  console.log(`\n| ${head.join(' | ')} |\n|---|${head.slice(1).map(() => '---:').join('|')}|`)
  for (const row of rows) console.log(`| ${row.join(' | ')} |`)
}

const tempDir = await mkdtemp(join(tmpdir(), 'flagpost-bench-edge-'))
const pg = await startLocalPostgres({ migrate: true })
const workers: Miniflare[] = []
const cpuLines: string[] = []

/** CPU time (user + system, µs) of the workerd processes Miniflare started for this benchmark (Linux /proc). */
function workerdCpuMicros(): number {
  let total = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[1]) !== process.pid || !stat.includes('(workerd)')) continue
      total += ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS
    } catch {}
  }
  return total
}
const CLOCK_TICKS = 100

try {
  const config = await readWranglerConfig()
  const scriptPath = process.env.BENCH_BUNDLE ?? (await buildWorker(tempDir, config))
  /** A new isolate; all share one Cache API store, as the isolates of one location do. */
  const startWorker = async (cfg: WranglerConfig = config) => {
    const mf = new Miniflare({
      modules: true,
      scriptPath,
      modulesRoot: dirname(scriptPath),
      modulesRules: config.modulesRules,
      compatibilityDate: cfg.compatibilityDate,
      compatibilityFlags: cfg.compatibilityFlags,
      bindings: { DATABASE_URL: pg.databaseUrl, NEON_WS_PROXY: pg.wsProxy, NEON_FETCH_ENDPOINT: pg.fetchEndpoint },
      cachePersist: join(tempDir, 'cache'),
    })
    await mf.ready
    workers.push(mf)
    return mf
  }
  const dispose = async (mf: Miniflare) => {
    workers.splice(workers.indexOf(mf), 1)
    await mf.dispose()
  }

  // The data, made through the worker without added latency.
  const admin = (await createToken(pg.database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'bench-admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
  const auth = { authorization: admin }
  const mf = await startWorker()
  const api = async (method: string, path: string, body?: unknown, status = method === 'POST' && !path.endsWith('/on') ? 201 : 200) =>
    JSON.parse((await send(mf, { method, path, headers: auth, body, status })).text || 'null')
  const project = 'bench'
  const F = `/api/admin/projects/${project}/features`
  await api('POST', '/api/admin/projects', { id: project, name: 'Bench' })
  for (let i = 0; i < 20; i++) {
    const name = `bench-flag-${i}`
    await api('POST', F, { name, description: `Flag ${i}` })
    await api('POST', `${F}/${name}/environments/development/strategies`, { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: name }, constraints: [] }, 200)
    await api('POST', `${F}/${name}/environments/development/on`)
  }
  const flag = 'bench-flag-0'
  const strategyId = (await api('GET', `${F}/bench-flag-5`)).environments.find((e: { name: string }) => e.name === 'development').strategies[0].id as string
  const client = { authorization: (await api('POST', '/api/admin/api-tokens', { tokenName: 'bench-client', type: 'client', environment: 'development', projects: ['*'] })).secret, 'unleash-client-spec': '5.2.0' }
  const frontend = { authorization: (await api('POST', '/api/admin/api-tokens', { tokenName: 'bench-frontend', type: 'frontend', environment: 'development', projects: ['*'] })).secret }
  await settled(pg)

  pg.setLatency(LATENCY_MS)
  console.log(`Added round trip ${LATENCY_MS} ms; ${ITERATIONS} requests per case (after 2 warm-ups), ${COLD} cold isolates per cold case.`)

  /** `prepare` makes what one request needs (not measured). */
  const run = async (name: string, call: (i: number) => Call, prepare?: (i: number) => Promise<void>) => {
    const samples: Sample[] = []
    for (let i = -2; i < ITERATIONS; i++) {
      await prepare?.(i)
      await settled(pg)
      const sample = await measure(mf, pg, call(i))
      if (i >= 0) samples.push(sample)
    }
    report(name, samples)
  }
  const cold = async (name: string, call: Call, prepare?: (mf: Miniflare) => Promise<void>) => {
    const samples: Sample[] = []
    for (let i = 0; i < COLD; i++) {
      const fresh = await startWorker()
      try {
        await prepare?.(fresh)
        samples.push(await measure(fresh, pg, call))
      } finally {
        await dispose(fresh)
      }
    }
    report(name, samples)
  }

  await run('GET /health', () => ({ path: '/health' }))
  await run('flag read', () => ({ path: `${F}/${flag}`, headers: auth }))
  await run('project overview', () => ({ path: `/api/admin/projects/${project}`, headers: auth }))
  await run('event search', () => ({ path: `/api/admin/search/events?project=IS:${project}&limit=20`, headers: auth }))
  await run('toggle (environment on/off)', (i) => ({ method: 'POST', path: `${F}/bench-flag-1/environments/development/${i % 2 === 0 ? 'off' : 'on'}`, headers: auth }))
  await run('PATCH a flag', (i) => ({ method: 'PATCH', path: `${F}/bench-flag-2`, headers: auth, body: [{ op: 'replace', path: '/description', value: `Patched ${i}` }] }))
  await run('PATCH variants', (i) => ({
    method: 'PATCH',
    path: `${F}/bench-flag-3/variants`,
    headers: auth,
    body: [{ op: 'replace', path: '', value: [{ name: `v${i}`, weightType: 'variable', weight: 1000, stickiness: 'default' }] }],
  }))
  // Writes that take the flag's lock: a flag's first switch on moves its lifecycle on; a strategy is added under the lock.
  await run(
    'switch on, moving the lifecycle on',
    (i) => ({ method: 'POST', path: `${F}/bench-first-on-${i + 2}/environments/development/on`, headers: auth }),
    async (i) => {
      await api('POST', F, { name: `bench-first-on-${i + 2}` })
      await api('POST', `${F}/bench-first-on-${i + 2}/environments/development/strategies`, { name: 'default' }, 200)
    },
  )
  await run('add a strategy', (i) => ({ method: 'POST', path: `${F}/bench-flag-4/environments/development/strategies`, headers: auth, body: { name: 'userWithId', parameters: { userIds: `user-${i}` } } }))
  await run('create a flag', (i) => ({ method: 'POST', path: F, headers: auth, body: { name: `bench-created-${i + 2}` }, status: 201 }))
  // The other writes, each a read and one checked statement or batch.
  await run('update a strategy', (i) => ({
    method: 'PUT',
    path: `${F}/bench-flag-5/environments/development/strategies/${strategyId}`,
    headers: auth,
    body: { name: 'flexibleRollout', parameters: { rollout: String(i + 10), stickiness: 'default', groupId: 'bench-flag-5' }, constraints: [] },
  }))
  await run('archive a flag', (i) => ({ method: 'DELETE', path: `${F}/bench-archived-${i + 2}`, headers: auth, status: 202 }), async (i) => void (await api('POST', F, { name: `bench-archived-${i + 2}` })))
  await run('tag a flag', (i) => ({ method: 'POST', path: `/api/admin/features/bench-flag-6/tags`, headers: auth, body: { type: 'simple', value: `tag-${i + 2}` }, status: 201 }))
  await run('create a segment', (i) => ({ method: 'POST', path: '/api/admin/segments', headers: auth, body: { name: `bench-segment-${i + 2}`, constraints: [] }, status: 201 }))
  await run('update a project', (i) => ({ method: 'PUT', path: `/api/admin/projects/${project}`, headers: auth, body: { name: `Bench ${i}` } }))
  await run('create an API token', (i) => ({ method: 'POST', path: '/api/admin/api-tokens', headers: auth, body: { tokenName: `bench-token-${i + 2}`, type: 'client', environment: 'development', projects: ['*'] }, status: 201 }))
  // An SDK polls with the ETag it has: 304 until something changes.
  let etag = ''
  await run('client features 200', () => ({ path: '/api/client/features', headers: client }))
  etag = (await send(mf, { path: '/api/client/features', headers: client })).response.headers.get('etag') ?? ''
  await run('client features 304', () => ({ path: '/api/client/features', headers: { ...client, 'if-none-match': etag }, status: 304 }))
  await run('frontend API', (i) => ({ path: `/api/frontend?userId=user-${i}`, headers: frontend }))
  // What a warm poll costs the runtime, billed per millisecond of CPU at the edge: the workerd process's CPU time over
  // many polls (Miniflare's loopback HTTP included, as Cloudflare's front end is not), 10 in flight.
  const cpuPerPoll = async (name: string, headers: Record<string, string>, status: number) => {
    const before = workerdCpuMicros()
    let next = 0
    const worker = async () => {
      while (next < CPU_POLLS) {
        next++
        const response = await mf.dispatchFetch(`${ORIGIN}/api/client/features`, { headers })
        await response.arrayBuffer()
        if (response.status !== status) throw new Error(`${name}: ${response.status}, expected ${status}`)
      }
    }
    await Promise.all(Array.from({ length: 10 }, worker))
    const used = workerdCpuMicros() - before
    cpuLines.push(`| ${name} | ${(used / CPU_POLLS).toFixed(0)} |`)
  }
  await cpuPerPoll('client features 304, warm isolate', { ...client, 'if-none-match': etag }, 304)
  await cpuPerPoll('client features 200, warm isolate', client, 200)

  await cold('client features 200, cold isolate', { path: '/api/client/features', headers: client })
  await cold('client features 304, cold isolate', { path: '/api/client/features', headers: { ...client, 'if-none-match': etag }, status: 304 })
  await cold('flag read, cold isolate', { path: `${F}/${flag}`, headers: auth })

  printTable()
  if (cpuLines.length > 0) console.log(['', `CPU per poll in workerd (µs, ${CPU_POLLS} polls, /proc):`, '| poll | µs of CPU per poll |', '|---|---:|', ...cpuLines].join('\n'))
} finally {
  for (const mf of workers.splice(0)) await mf.dispose()
  await pg.close()
  await rm(tempDir, { recursive: true, force: true })
}
