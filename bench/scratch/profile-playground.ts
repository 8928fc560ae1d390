/**
 * CPU profile of the advanced playground at Unleash's limit with many cheap flags (5,000 flags × 3 DATE_AFTER × 3
 * currentTimes, 15,000 evaluations, a 16 MB answer): CPU per request split into the service (evaluations), the
 * stream (the answer's bytes) and the client's decoding; then the inspector's profile, self time per function.
 *
 *   npx tsx bench/scratch/profile-playground.ts     (PROFILE_RUNS, PROFILE_TOP)
 */
import { Session } from 'node:inspector/promises'
import { loadavg } from 'node:os'
import { createApp } from '../../src/app.js'
import { createToken } from '../../src/api-tokens/store.js'
import { openPglite } from '../../src/db-node.js'
import { SYSTEM_ACTOR } from '../../src/core/principal.js'

const RUNS = Number(process.env.PROFILE_RUNS ?? 20)
const FLAGS = Number(process.env.PROFILE_FLAGS ?? 5000)
const TIMES = Number(process.env.PROFILE_TIMES ?? 3)
const database = await openPglite()
await database.migrate()
const app = createApp({ db: () => database.db, playgroundEvaluationsPerMinute: 0 })
const admin = (await createToken(database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'bench', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
const sql = (text: string, params: unknown[]) => database.client.query(text, params)
await app.request('/api/admin/projects', { method: 'POST', headers: { authorization: admin, 'content-type': 'application/json' }, body: JSON.stringify({ id: 'dates5k', name: 'dates5k', environments: ['development'] }) })
const dateAfter = (i: number) => ({ contextName: 'currentTime', operator: 'DATE_AFTER', inverted: false, caseInsensitive: false, values: [], value: new Date(Date.UTC(2000, 0, 1) + i * 1000).toISOString() })
await sql(`insert into features (name, project, created_by) select 'dates5k-' || n, 'dates5k', 'bench' from generate_series(1, $1::int) n`, [FLAGS])
await sql(`insert into feature_environments (feature_name, environment, enabled) select 'dates5k-' || n, 'development', true from generate_series(1, $1::int) n`, [FLAGS])
await sql(`insert into feature_strategies (id, feature_name, environment, strategy_name, constraints, sort_order) select gen_random_uuid(), 'dates5k-' || n, 'development', 'default', $2::jsonb, 1 from generate_series(1, $1::int) n`, [FLAGS, JSON.stringify(Array.from({ length: 3 }, (_, i) => dateAfter(i)))])
const times = Array.from({ length: TIMES }, (_, i) => new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString()).join(',')
const body = JSON.stringify({ environments: ['development'], projects: ['dates5k'], context: { appName: 'web', currentTime: times } })
const request = () => app.request('/api/admin/playground/advanced', { method: 'POST', headers: { authorization: admin, 'content-type': 'application/json' }, body })
const cpuMs = (before: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(before)
  return (u.user + u.system) / 1000
}
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const min = (xs: number[]) => Math.min(...xs)

for (let i = 0; i < 3; i++) await (await request()).text()
const answered: number[] = []
const streamed: number[] = []
const decoded: number[] = []
let bytes = 0
for (let r = 0; r < RUNS; r++) {
  let before = process.cpuUsage()
  const res = await request()
  answered.push(cpuMs(before))
  before = process.cpuUsage()
  const chunks: Uint8Array[] = []
  for await (const chunk of res.body!) chunks.push(chunk)
  streamed.push(cpuMs(before))
  before = process.cpuUsage()
  bytes = new TextDecoder().decode(Buffer.concat(chunks)).length
  decoded.push(cpuMs(before))
}
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${FLAGS} flags × ${TIMES} currentTimes; ${bytes.toLocaleString('en')} bytes; ${RUNS} runs`)
console.log(`CPU ms p50 (min): until the response (evaluations) ${p50(answered).toFixed(1)} (${min(answered).toFixed(1)}), streaming its bytes ${p50(streamed).toFixed(1)} (${min(streamed).toFixed(1)}), the client's decoding ${p50(decoded).toFixed(1)} (${min(decoded).toFixed(1)})`)
const total: number[] = []
for (let r = 0; r < RUNS; r++) {
  const before = process.cpuUsage()
  await (await request()).text()
  total.push(cpuMs(before))
}
console.log(`CPU ms per request as bench:evaluation-work reads it (text()): p50 ${p50(total).toFixed(1)}, min ${min(total).toFixed(1)}`)

if (process.env.PROFILE_TOP !== '0') {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 100 })
  await session.post('Profiler.start')
  for (let r = 0; r < RUNS; r++) await (await request()).text()
  const { profile } = await session.post('Profiler.stop')
  const self = new Map<string, number>()
  const dt = new Map<number, number>()
  for (let i = 0; i < profile.samples!.length; i++) dt.set(profile.samples![i]!, (dt.get(profile.samples![i]!) ?? 0) + (profile.timeDeltas![i] ?? 0))
  let all = 0
  for (const node of profile.nodes) {
    const t = dt.get(node.id) ?? 0
    all += t
    const f = node.callFrame
    const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`
    self.set(key, (self.get(key) ?? 0) + t)
  }
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.PROFILE_TOP ?? 40))
  console.log(`profile: ${(all / 1000 / RUNS).toFixed(1)} ms sampled per request; self time per request:`)
  for (const [k, t] of top) console.log(`${(t / 1000 / RUNS).toFixed(2).padStart(7)} ms  ${k}`)
}
await database.close()
