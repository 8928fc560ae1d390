/**
 * CPU time of a request that evaluates REGEX constraints, at their worst: patterns at the program limit, built so that
 * every thread of the matcher stays alive, against context values at the length limit, through the playground (basic
 * and advanced) and the frontend API (GET and POST), on PGlite in process. Also a pattern far over the limit, stored
 * before the limit existed (inserted by SQL). Each request's CPU time is the process's (process.cpuUsage: every
 * thread, GC included), and its matching steps are counted (regexWorkDone).
 *
 *   npm run bench:regex
 *
 * Target: no such request takes more than 50 ms of CPU, whatever the patterns and the context.
 */
import { createApp } from '../src/app.js'
import { createToken } from '../src/api-tokens/store.js'
import { openPglite } from '../src/db-node.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { compileRegex, DEFAULT_REGEX_MAX_PROGRAM, regexWorkDone } from '../src/evaluation/index.js'
import { DEFAULT_CONTEXT_VALUE_MAX_LENGTH, DEFAULT_REGEX_WORK_BUDGET } from '../src/http/evaluation-limits.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 20)
const FLAGS = Number(process.env.BENCH_FLAGS ?? 10)
const COMBINATIONS = 50
const TARGET_MS = 50
const LENGTH = DEFAULT_CONTEXT_VALUE_MAX_LENGTH

const database = await openPglite()
await database.migrate()
const app = createApp({ db: () => database.db })
const admin = (await createToken(database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'bench', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret

async function call(method: string, path: string, body?: unknown, token = admin) {
  const res = await app.request(path, { method, headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, text }
}
async function ok(method: string, path: string, body?: unknown) {
  const res = await call(method, path, body)
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`)
  return JSON.parse(res.text || 'null')
}

const ALTERNATION = 'abcdefghijklmnopqrst'.split('').join('|')
// Twenty Unicode classes the matcher asks one by one (a RegExp test each) before the last one matches '€'.
const SCRIPTS = ['Greek', 'Latin', 'Cyrillic', 'Han', 'Arabic', 'Hebrew', 'Thai', 'Armenian', 'Georgian', 'Hangul', 'Khmer', 'Lao', 'Tibetan', 'Sinhala', 'Tamil', 'Telugu', 'Bengali', 'Lu', 'Nd']
const UNICODE_CLASS = `[${SCRIPTS.map((s) => `\\p{${s}}`).join('')}\\p{Sc}]`
// A class listing 128 single characters before the one that matches: a linear scan of its ranges would cost 128 steps a thread.
let listed = ''
for (let cp = 1; cp < 256; cp += 2) listed += `\\x{${cp.toString(16)}}`
const MANY_RANGES = `[${listed}\\x{10000}]`

interface Scenario {
  name: string
  pattern: string
  /** The context value the patterns are matched against. */
  value: string
  /** Written by SQL over a legal placeholder: a pattern saved before the limit existed. */
  stored?: boolean
}

const scenarios: Scenario[] = [
  { name: 'alternation at the limit: (a|…|t){120}x', pattern: `(${ALTERNATION}){120}x`, value: 'a'.repeat(LENGTH) },
  { name: 'ranges at the limit: [a-z]{1,1000}[a-z]{1,1000}[a-z]{1,490}x', pattern: '[a-z]{1,1000}[a-z]{1,1000}[a-z]{1,490}x', value: 'a'.repeat(LENGTH) },
  { name: 'twenty Unicode classes: [\\p{Greek}…\\p{Sc}]{1000}x', pattern: `${UNICODE_CLASS}{1000}x`, value: '€'.repeat(LENGTH) },
  { name: 'a class of 129 ranges: [\\x{1}\\x{3}…\\x{10000}]{1000}x', pattern: `${MANY_RANGES}{1000}x`, value: '\u{10000}'.repeat(LENGTH / 2) },
  { name: 'stored before the limit: (a|…|t){1000}x', pattern: `(${ALTERNATION}){1000}x`, value: 'a'.repeat(LENGTH), stored: true },
  { name: 'realistic: e-mail domain, id prefix', pattern: '^[a-z0-9._%+-]+@(example\\.com|example\\.org)$', value: 'someone.with.a.long.name@example.com' },
]

interface Row {
  scenario: string
  program: number
  route: string
  status: number
  steps: number
  cpu: number[]
}
const rows: Row[] = []

for (const [i, scenario] of scenarios.entries()) {
  const project = `regex-${i}`
  await ok('POST', '/api/admin/projects', { id: project, name: project, environments: ['development'] })
  const F = `/api/admin/projects/${project}/features`
  for (let f = 0; f < FLAGS; f++) {
    const name = `${project}-flag-${f}`
    await ok('POST', F, { name })
    const pattern = scenario.stored ? '^placeholder$' : scenario.pattern
    const strategy = await ok('POST', `${F}/${name}/environments/development/strategies`, { name: 'default', constraints: [{ contextName: 'userId', operator: 'REGEX', value: pattern }] })
    if (scenario.stored) {
      await database.client.query('update feature_strategies set constraints = $1 where id = $2', [JSON.stringify([{ contextName: 'userId', operator: 'REGEX', value: scenario.pattern, values: [], inverted: false, caseInsensitive: false }]), strategy.id])
    }
    await ok('POST', `${F}/${name}/environments/development/on`)
  }
  const frontend = (await ok('POST', '/api/admin/api-tokens', { tokenName: project, type: 'frontend', environment: 'development', projects: [project] })).secret as string
  const context = { appName: 'web', userId: scenario.value }
  const combinations = Array.from({ length: COMBINATIONS }, (_, n) => `v${n}`).join(',')
  const requests: [string, () => Promise<{ status: number }>][] = [
    ['POST /api/admin/playground', () => call('POST', '/api/admin/playground', { environment: 'development', projects: [project], context })],
    [`POST /api/admin/playground/advanced (${COMBINATIONS} combinations)`, () => call('POST', '/api/admin/playground/advanced', { environments: ['development'], projects: [project], context: { ...context, properties: { n: combinations } } })],
    ['GET /api/frontend', () => call('GET', `/api/frontend?appName=web&userId=${encodeURIComponent(scenario.value)}`, undefined, frontend)],
    ['POST /api/frontend', () => call('POST', '/api/frontend', { context }, frontend)],
  ]
  for (const [route, request] of requests) {
    for (let w = 0; w < 3; w++) await request() // warm up
    const cpu: number[] = []
    let status = 0
    let steps = 0
    for (let r = 0; r < RUNS; r++) {
      const work = regexWorkDone()
      const used = process.cpuUsage()
      status = (await request()).status
      const spent = process.cpuUsage(used)
      cpu.push((spent.user + spent.system) / 1000)
      steps = regexWorkDone() - work
    }
    rows.push({ scenario: scenario.name, program: compileRegex(scenario.pattern).programSize, route, status, steps, cpu: cpu.sort((a, b) => a - b) })
  }
}

const at = (list: number[], q: number) => list[Math.min(list.length - 1, Math.floor(q * list.length))]!
console.log(`\nREGEX work per request: ${FLAGS} flags per scenario, a value of ${LENGTH} characters; limits: program ${DEFAULT_REGEX_MAX_PROGRAM} instructions, ${DEFAULT_REGEX_WORK_BUDGET.toLocaleString('en-US')} steps per request`)
console.log(`node ${process.version}, PGlite in process, ${RUNS} runs after 3 warm-ups; CPU ms of the process per request\n`)
console.log('| scenario | program | route | status | steps | CPU p50 ms | CPU p95 ms | CPU max ms |')
console.log('|---|---:|---|---:|---:|---:|---:|---:|')
for (const row of rows) {
  console.log(`| ${row.scenario.replaceAll('|', '\\|')} | ${row.program.toLocaleString('en-US')} | ${row.route} | ${row.status} | ${row.steps.toLocaleString('en-US')} | ${at(row.cpu, 0.5).toFixed(1)} | ${at(row.cpu, 0.95).toFixed(1)} | ${row.cpu.at(-1)!.toFixed(1)} |`)
}
const worst = Math.max(...rows.map((r) => at(r.cpu, 0.95)))
console.log(`\nworst p95: ${worst.toFixed(1)} ms; target: < ${TARGET_MS} ms of CPU per request  ${worst < TARGET_MS ? 'met' : 'NOT met'}`)
await app.idle()
await database.close()
