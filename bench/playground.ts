/**
 * Latency of the advanced playground through the app on PGlite: 100 flags × 1,000 context
 * combinations (100,000 evaluations) in one environment, until the last byte of the response is read.
 *
 *   npm run bench:playground        (also run by npm run bench:evaluation)
 */
import { performance } from 'node:perf_hooks'
import { createApp } from '../src/app.js'
import { createToken } from '../src/api-tokens/store.js'
import { openPglite } from '../src/db-node.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'

const FLAGS = Number(process.env.BENCH_FLAGS ?? 100)
const USERS = Number(process.env.BENCH_USERS ?? 100)
const REGIONS = Number(process.env.BENCH_REGIONS ?? 10)
const RUNS = Number(process.env.BENCH_RUNS ?? 20)

const database = await openPglite()
await database.migrate()
// The per-caller minute is lifted: every run is 100,000 evaluations.
const app = createApp({ db: () => database.db, playgroundMaxEvaluations: 1_000_000, playgroundEvaluationsPerMinute: 0 })
const token = (await createToken(database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'bench', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret

async function call(method: string, path: string, body?: unknown) {
  const res = await app.request(path, { method, headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return { text, json: () => JSON.parse(text) }
}

console.log(`Creating ${FLAGS} flags, each with three strategies (constraints, segments, variants)...`)
await call('POST', '/api/admin/projects', { id: 'bench', name: 'Bench', environments: ['development', 'production'] })
// Custom strategies must be defined first (as in Unleash).
await call('POST', '/api/admin/strategies', { name: 'customStrategy', parameters: [{ name: 'anything', type: 'string', description: 'any text', required: false }] })
const segmentIds: number[] = []
for (const [name, constraints] of [
  ['europe', [{ contextName: 'region', operator: 'IN', values: ['r0', 'r1', 'r2', 'r3'] }]],
  ['beta', [{ contextName: 'userId', operator: 'STR_STARTS_WITH', values: ['user-1'] }]],
] as const) {
  segmentIds.push((await call('POST', '/api/admin/segments', { name, constraints })).json().id)
}
const F = '/api/admin/projects/bench/features'
for (let i = 0; i < FLAGS; i++) {
  const name = `flag-${String(i).padStart(3, '0')}`
  await call('POST', F, { name })
  const strategies = `${F}/${name}/environments/production/strategies`
  await call('POST', strategies, { name: 'userWithId', parameters: { userIds: Array.from({ length: 20 }, (_, u) => `user-${u * 5}`).join(',') } })
  await call('POST', strategies, {
    name: 'flexibleRollout',
    parameters: { rollout: String(10 + (i % 90)), stickiness: 'default', groupId: name },
    constraints: [
      { contextName: 'region', operator: 'IN', values: ['r0', 'r1', 'r2', 'r5', 'r8'] },
      { contextName: 'appVersion', operator: 'SEMVER_GT', value: '1.2.0', inverted: i % 2 === 0 },
    ],
    segments: [segmentIds[i % segmentIds.length]!],
  })
  if (i % 10 === 0) await call('POST', strategies, { name: 'customStrategy', parameters: { anything: 'x' }, disabled: i % 20 === 0 })
  await call('POST', `${F}/${name}/environments/production/on`)
  if (i % 3 === 0) await call('PUT', `${F}/${name}/environments/production/variants`, [{ name: 'a', payload: { type: 'string', value: 'A' } }, { name: 'b' }])
}

const body = {
  environments: ['production'],
  projects: ['bench'],
  context: {
    appName: 'web',
    userId: Array.from({ length: USERS }, (_, u) => `user-${u}`).join(','),
    properties: { region: Array.from({ length: REGIONS }, (_, r) => `r${r}`).join(','), appVersion: '1.4.0' },
  },
}
const evaluations = FLAGS * USERS * REGIONS

async function once() {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const res = await app.request('/api/admin/playground/advanced', { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (res.status !== 200) throw new Error(`advanced playground: ${res.status} ${await res.text()}`)
  // Read to the end as a socket would send it, chunk by chunk, without gathering 100+ MB in one buffer.
  let bytes = 0
  for await (const chunk of res.body!) bytes += chunk.byteLength
  const used = process.cpuUsage(cpu)
  return { ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000, bytes }
}

// Once: the streamed document is one valid JSON answer with every evaluation in it.
const checked = JSON.parse(await (await app.request('/api/admin/playground/advanced', { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify(body) })).text())
const entries = checked.features.reduce((n: number, f: { environments: Record<string, unknown[]> }) => n + f.environments.production!.length, 0)
if (checked.features.length !== FLAGS || entries !== evaluations) throw new Error(`expected ${evaluations} evaluations, got ${entries}`)
const gathered: number[] = []
for (let i = 0; i < 5; i++) {
  const started = performance.now()
  await (await app.request('/api/admin/playground/advanced', { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify(body) })).arrayBuffer()
  gathered.push(performance.now() - started)
}
for (let i = 0; i < 3; i++) await once() // warm up
const runs: number[] = []
const cpu: number[] = []
let bytes = 0
for (let i = 0; i < RUNS; i++) {
  const run = await once()
  runs.push(run.ms)
  cpu.push(run.cpuMs)
  bytes = run.bytes
}
runs.sort((a, b) => a - b)
cpu.sort((a, b) => a - b)
const at = (q: number) => runs[Math.min(runs.length - 1, Math.floor(q * runs.length))]!
console.log(`\nPOST /api/admin/playground/advanced: ${FLAGS} flags × ${USERS * REGIONS} combinations = ${evaluations.toLocaleString('en-US')} evaluations, response ${(bytes / 1e6).toFixed(1)} MB`)
console.log(`node ${process.version}, PGlite in process, ${RUNS} runs after 3 warm-ups`)
console.log(`  p50 ${at(0.5).toFixed(0)} ms   p95 ${at(0.95).toFixed(0)} ms   min ${runs[0]!.toFixed(0)} ms   (${Math.round(evaluations / (at(0.5) / 1000)).toLocaleString('en-US')} evaluations/s at p50)`)
console.log(`  gathered into one buffer by the client (Response.arrayBuffer, undici): median of 5 ${gathered.sort((a, b) => a - b)[2]!.toFixed(0)} ms`)
// CPU time of the process (all its threads, GC included) per request: what the request costs when the machine is shared.
console.log(`  CPU time per request: p50 ${cpu[Math.floor(cpu.length / 2)]!.toFixed(0)} ms`)
console.log(`  target: < 500 ms  ${at(0.5) < 500 ? 'met' : 'NOT met'}`)
await app.idle()
await database.close()
