/**
 * CPU time of the penetration test's evaluating requests at Unleash's resource limits, every operator metered:
 * F1 inverted STR_CONTAINS (30 strategies × 30 constraints × 250 values, also in segments held 5 times), through the
 * frontend API and the advanced playground with comma-separated values; F2 30 × 30 distinct REGEX patterns at the
 * program limit; F4 a naming pattern of 2,003 instructions against 1,000 names in the import's validation; strategy
 * activation (long rollout groupIds, a parent with 60 children); an import of 8,000 strategies on one flag.
 * Stored by SQL where the limits would refuse it. Each request's CPU time is the process's (process.cpuUsage).
 *
 *   npm run bench:evaluation-work
 *
 * Target: no such request takes more than 50 ms of CPU.
 */
import { createApp } from '../src/app.js'
import { createToken } from '../src/api-tokens/store.js'
import { openPglite } from '../src/db-node.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 10)
const database = await openPglite()
await database.migrate()
// BENCH_BUDGET: the evaluation budget (FLAGPOST_EVALUATION_WORK_BUDGET), to see what a refused request would cost.
// The playgrounds' per-caller minute is lifted: every case runs many times in a minute.
const app = createApp({ db: () => database.db, playgroundEvaluationsPerMinute: 0, ...(process.env.BENCH_BUDGET ? { evaluation: { regexWorkBudget: Number(process.env.BENCH_BUDGET) } } : {}) })
const now = new Date()
const admin = (await createToken(database.db, { actor: SYSTEM_ACTOR, now }, { tokenName: 'bench', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret

async function call(method: string, path: string, body?: unknown, token = admin) {
  const res = await app.request(path, { method, headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, text: await res.text() }
}
/**
 * A measured request: its answer read chunk by chunk as a socket sends it, its bytes counted, not decoded (decoding the
 * advanced playground's 16 MB into a string is the client's work: 12–15 ms). BENCH_DECODE=1 decodes it as before.
 */
async function measured(method: string, path: string, body?: unknown, token = admin) {
  if (process.env.BENCH_DECODE) {
    const res = await call(method, path, body, token)
    return { status: res.status, bytes: res.text.length }
  }
  const res = await app.request(path, { method, headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
  let bytes = 0
  for await (const chunk of res.body ?? []) bytes += chunk.byteLength
  return { status: res.status, bytes }
}
async function ok(method: string, path: string, body?: unknown) {
  const res = await call(method, path, body)
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`)
  return JSON.parse(res.text || 'null')
}
const sql = (text: string, params: unknown[]) => database.client.query(text, params)

const contains = (i: number) => ({ contextName: 'userId', operator: 'STR_CONTAINS', inverted: true, caseInsensitive: false, values: Array.from({ length: 250 }, (_, v) => `needle-${i}-${v}`) })
const ALTERNATION = 'abcdefghijklmnopqrst'.split('').join('|')
const regex = (i: number) => ({ contextName: 'userId', operator: 'REGEX', inverted: false, caseInsensitive: false, values: [], value: `(${ALTERNATION}){128}${i}` })

async function project(id: string, strategies: (s: number) => { constraints: object[]; segments?: number[] }) {
  await ok('POST', '/api/admin/projects', { id, name: id, environments: ['development'] })
  await ok('POST', `/api/admin/projects/${id}/features`, { name: `${id}-flag` })
  for (let s = 0; s < 30; s++) {
    const shape = strategies(s)
    const created = await ok('POST', `/api/admin/projects/${id}/features/${id}-flag/environments/development/strategies`, { name: 'default', ...(shape.segments ? { segments: shape.segments } : {}) })
    await sql('update feature_strategies set constraints = $1 where id = $2', [JSON.stringify(shape.constraints), created.id])
  }
  await ok('POST', `/api/admin/projects/${id}/features/${id}-flag/environments/development/on`)
  return (await ok('POST', '/api/admin/api-tokens', { tokenName: id, type: 'frontend', environment: 'development', projects: [id] })).secret as string
}

const f1 = await project('f1', (s) => ({ constraints: Array.from({ length: 30 }, (_, c) => contains(s * 30 + c)) }))
const segments: number[] = []
for (let i = 0; i < 5; i++) segments.push((await ok('POST', '/api/admin/segments', { name: `seg-${i}`, constraints: [contains(10_000 + i)] })).id)
const f1seg = await project('f1seg', () => ({ constraints: [], segments }))
const f2 = await project('f2', (s) => ({ constraints: Array.from({ length: 30 }, (_, c) => regex(s * 30 + c)) }))
await ok('POST', '/api/admin/projects', { id: 'f4', name: 'f4', environments: ['development'] })
await ok('PUT', '/api/admin/projects/f4', { name: 'f4', featureNaming: { pattern: '(.*){1000}' } })

// Strategy activation: rp with 30 flexibleRollout strategies (rollout 1, groupIds of 9,990 characters), 60 flags
// depending on it; then 300 such strategies stored by SQL (past the limit, as an import used to store them).
await ok('POST', '/api/admin/projects', { id: 'act', name: 'act', environments: ['development'] })
await ok('POST', '/api/admin/projects/act/features', { name: 'rp' })
for (let s = 0; s < 30; s++) await ok('POST', '/api/admin/projects/act/features/rp/environments/development/strategies', { name: 'flexibleRollout', parameters: { rollout: '1', stickiness: 'default', groupId: String(s).padStart(9_990, 'g') } })
await ok('POST', '/api/admin/projects/act/features/rp/environments/development/on')
for (let i = 0; i < 60; i++) {
  await ok('POST', '/api/admin/projects/act/features', { name: `rc${i}` })
  await ok('POST', `/api/admin/projects/act/features/rc${i}/dependencies`, { feature: 'rp', enabled: true })
  await ok('POST', `/api/admin/projects/act/features/rc${i}/environments/development/on`)
}
const act = (await ok('POST', '/api/admin/api-tokens', { tokenName: 'act', type: 'frontend', environment: 'development', projects: ['act'] })).secret as string
await ok('POST', '/api/admin/projects', { id: 'act300', name: 'act300', environments: ['development'] })
await ok('POST', '/api/admin/projects/act300/features', { name: 'rp300' })
const first = await ok('POST', '/api/admin/projects/act300/features/rp300/environments/development/strategies', { name: 'flexibleRollout', parameters: { rollout: '1', stickiness: 'default', groupId: 'g' } })
await sql(
  `insert into feature_strategies (id, feature_name, environment, strategy_name, parameters, constraints, sort_order, created_at)
   select gen_random_uuid(), feature_name, environment, strategy_name, jsonb_build_object('rollout', '1', 'stickiness', 'default', 'groupId', lpad(n::text, 9990, 'g')), constraints, n, created_at
   from feature_strategies, generate_series(1, 299) n where id = $1`,
  [first.id],
)
await ok('POST', '/api/admin/projects/act300/features/rp300/environments/development/on')
const act300 = (await ok('POST', '/api/admin/api-tokens', { tokenName: 'act300', type: 'frontend', environment: 'development', projects: ['act300'] })).secret as string

// The advanced playground at a legitimate size: 1,000 flags with one strategy of 10 DATE_AFTER constraints on currentTime
// (stored by SQL: quicker than 3,000 requests), evaluated for 2 currentTime values; and a heavy one, 30 strategies of 30
// such constraints on each of 15 flags (30 × 30 is Unleash's limit), for 1,000 userIds.
const dateAfter = (i: number) => ({ contextName: 'currentTime', operator: 'DATE_AFTER', inverted: false, caseInsensitive: false, values: [], value: new Date(Date.UTC(2000, 0, 1) + i * 1000).toISOString() })
await ok('POST', '/api/admin/projects', { id: 'dates', name: 'dates', environments: ['development'] })
await ok('POST', '/api/admin/projects', { id: 'dates30', name: 'dates30', environments: ['development'] })
await ok('POST', '/api/admin/projects', { id: 'dates5k', name: 'dates5k', environments: ['development'] })
async function storedFlags(project: string, flags: number, strategies: number, constraints: number) {
  await sql(`insert into features (name, project, created_by) select $1 || '-' || n, $1, 'bench' from generate_series(1, $2::int) n`, [project, flags])
  await sql(`insert into feature_environments (feature_name, environment, enabled) select $1 || '-' || n, 'development', true from generate_series(1, $2::int) n`, [project, flags])
  await sql(
    `insert into feature_strategies (id, feature_name, environment, strategy_name, constraints, sort_order) select gen_random_uuid(), $1 || '-' || n, 'development', 'default', $3::jsonb, s from generate_series(1, $2::int) n, generate_series(1, $4::int) s`,
    [project, flags, JSON.stringify(Array.from({ length: constraints }, (_, i) => dateAfter(i))), strategies],
  )
}
await storedFlags('dates', 1000, 1, 10)
await storedFlags('dates30', 15, 30, 30)
await storedFlags('dates5k', 5000, 1, 3)
const times = (n: number) => Array.from({ length: n }, (_, i) => new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString()).join(',')
const long = 'x'.repeat(1000)
const cases: [string, () => Promise<{ status: number; bytes: number }>][] = [
  ['F1 frontend GET, 30×30×250 STR_CONTAINS inverted, userId 1,000 chars', () => measured('GET', `/api/frontend?appName=web&userId=${long}`, undefined, f1)],
  ['F1 segments ×5 per strategy ×30, frontend GET', () => measured('GET', `/api/frontend?appName=web&userId=${long}`, undefined, f1seg)],
  ['F1 advanced playground, 3 comma-separated 1,000-char userIds', () => measured('POST', '/api/admin/playground/advanced', { environments: ['development'], projects: ['f1', 'f1seg'], context: { appName: 'web', userId: `${long},${long}y,${long}z` } })],
  ['F2 frontend GET, 30×30 distinct REGEX at the program limit', () => measured('GET', '/api/frontend?appName=web&userId=a', undefined, f2)],
  ['activation: frontend GET, 30 rollouts × 9,990-char groupIds, 60 children, userId 1,000 chars', () => measured('GET', `/api/frontend?appName=web&userId=${'u'.repeat(1000)}`, undefined, act)],
  ['activation: frontend GET, 300 such rollouts (stored past the limit)', () => measured('GET', `/api/frontend?appName=web&userId=${'u'.repeat(1000)}`, undefined, act300)],
  ['activation: advanced playground, the 60 children, 2 userIds', () => measured('POST', '/api/admin/playground/advanced', { environments: ['development'], projects: ['act'], context: { appName: 'web', userId: `${'u'.repeat(1000)},${'v'.repeat(1000)}` } })],
  ['advanced playground, 1,000 flags × 10 DATE_AFTER, 2 currentTimes', () => measured('POST', '/api/admin/playground/advanced', { environments: ['development'], projects: ['dates'], context: { appName: 'web', currentTime: times(2) } })],
  ['advanced playground, 15 flags × 30 strategies × 30 DATE_AFTER, 1,000 userIds', () => measured('POST', '/api/admin/playground/advanced', { environments: ['development'], projects: ['dates30'], context: { appName: 'web', currentTime: times(1), userId: Array.from({ length: 1000 }, (_, i) => `u${i}`).join(',') } })],
  // Unleash's limit of 15,000 evaluations reached with many cheap flags: a 16 MB answer.
  ['advanced playground, 5,000 flags × 3 DATE_AFTER, 3 currentTimes', () => measured('POST', '/api/admin/playground/advanced', { environments: ['development'], projects: ['dates5k'], context: { appName: 'web', currentTime: times(3) } })],
  ['import of 8,000 strategies on one flag (refused by the limit)', () => measured('POST', '/api/admin/features-batch/import', { project: 'f4', environment: 'development', data: { features: [{ name: 'big', type: 'release' }], featureStrategies: Array.from({ length: 8000 }, () => ({ name: 'default', featureName: 'big', parameters: {} })), tagTypes: [] } })],
  ['F4 import validate, (.*){1000} × 1,000 names of 100 chars', () => measured('POST', '/api/admin/features-batch/validate', { project: 'f4', environment: 'development', data: { features: Array.from({ length: 1000 }, (_, i) => ({ name: `${'a'.repeat(90)}${String(i).padStart(10, '0')}`, type: 'release' })), featureStrategies: [], tagTypes: [] } })],
]

const { loadavg } = await import('node:os')
console.log(`load average: ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${RUNS} runs each`)
console.log('| request | status | bytes | CPU ms p50 | CPU ms max |\n|---|---|---|---|---|')
// BENCH_ONLY=<text>: only the requests whose name contains it.
const only = process.env.BENCH_ONLY
for (const [name, request] of cases) {
  if (only && !name.includes(only)) continue
  const cpu: number[] = []
  let status = 0
  let bytes = 0
  for (let r = 0; r < RUNS; r++) {
    const before = process.cpuUsage()
    const res = await request()
    status = res.status
    bytes = res.bytes
    const used = process.cpuUsage(before)
    cpu.push((used.user + used.system) / 1000)
  }
  cpu.sort((a, b) => a - b)
  console.log(`| ${name} | ${status} | ${bytes.toLocaleString('en')} | ${cpu[Math.floor(cpu.length / 2)]!.toFixed(1)} | ${cpu[cpu.length - 1]!.toFixed(1)} |`)
}
await database.close()
