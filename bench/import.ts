/**
 * Cost of a heavy import and state restore: 1,000 flags × 9 strategies (~750 KB, as the attack's), through
 * POST /api/admin/features-batch/validate, /import (twice: creating, then overwriting), a refused import (too many
 * strategies), and POST /api/admin/state/import of the same flags. Reports each request's wall and CPU time
 * (process.cpuUsage) and the event loop's longest stall while it ran (the gap between ticks of a 5 ms timer).
 *
 *   npm run bench:import
 */
import { createApp } from '../src/app.js'
import { createToken } from '../src/api-tokens/store.js'
import { openPglite } from '../src/db-node.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'

const database = await openPglite()
await database.migrate()

const app = createApp({ db: () => database.db })
const now = new Date()
const admin = (await createToken(database.db, { actor: SYSTEM_ACTOR, now }, { tokenName: 'bench', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret

async function call(method: string, path: string, body?: unknown) {
  const res = await app.request(path, { method, headers: { authorization: admin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, text: await res.text() }
}

const FLAGS = Number(process.env.BENCH_FLAGS ?? 1000)
const constraint = (i: number) => ({ contextName: 'userId', operator: 'IN', inverted: false, caseInsensitive: false, values: [`user-${i}-a`, `user-${i}-b`, `user-${i}-c`] })
const strategy = (flag: string, s: number) => ({ name: 'flexibleRollout', featureName: flag, parameters: { rollout: '50' }, ...(s === 0 ? { constraints: [constraint(s)] } : {}) })
function exportOf(prefix: string, strategiesPerFlag = 9) {
  const names = Array.from({ length: FLAGS }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`)
  return {
    features: names.map((name) => ({ name, type: 'release' })),
    featureStrategies: names.flatMap((name) => Array.from({ length: strategiesPerFlag }, (_, s) => strategy(name, s))),
    featureEnvironments: names.map((name) => ({ name, enabled: true })),
    contextFields: [], segments: [], tagTypes: [], featureTags: [], dependencies: [],
  }
}

await call('POST', '/api/admin/projects', { id: 'bench', name: 'bench', environments: ['development'] })
const data = exportOf('heavy')
const body = { project: 'bench', environment: 'development', data }
console.log(`document: ${(JSON.stringify(body).length / 1024).toFixed(0)} KiB, ${data.features.length} flags, ${data.featureStrategies.length} strategies`)

const tooBig = { project: 'bench', environment: 'development', data: { features: [{ name: 'big', type: 'release' }], featureStrategies: Array.from({ length: 8000 }, () => ({ name: 'default', featureName: 'big', parameters: {} })), tagTypes: [] } }

async function measured(name: string, request: () => Promise<{ status: number; text: string }>) {
  // The event loop's longest stall: the gap between ticks of a 5 ms timer (what every other request waits).
  let worst = 0
  let last = performance.now()
  const ticker = setInterval(() => {
    const at = performance.now()
    worst = Math.max(worst, at - last)
    last = at
  }, 5)
  const before = process.cpuUsage()
  const started = performance.now()
  const res = await request()
  const wall = performance.now() - started
  const used = process.cpuUsage(before)
  clearInterval(ticker)
  worst = Math.max(worst, performance.now() - last)
  console.log(`| ${name} | ${res.status} | ${wall.toFixed(0)} | ${((used.user + used.system) / 1000).toFixed(0)} | ${worst.toFixed(0)} |${res.status >= 300 ? ' ' + res.text.slice(0, 120) : ''}`)
}

const { loadavg } = await import('node:os')
console.log(`load average: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
console.log('| request | status | wall ms | CPU ms | longest event-loop stall ms |\n|---|---|---|---|---|')
await measured('validate 1,000 flags × 9 strategies', () => call('POST', '/api/admin/features-batch/validate', body))
await measured('import 1,000 flags × 9 strategies (new flags)', () => call('POST', '/api/admin/features-batch/import', body))
await measured('import again (every flag overwritten)', () => call('POST', '/api/admin/features-batch/import', body))
await measured('import of 8,000 strategies on one flag (refused)', () => call('POST', '/api/admin/features-batch/import', tooBig))
const state = JSON.parse((await call('GET', '/api/admin/state/export?format=json&download=false')).text)
console.log(`state export: ${(JSON.stringify(state).length / 1024).toFixed(0)} KiB`)
await measured('state import of that export (1,000 flags × 9 strategies)', () => call('POST', '/api/admin/state/import?drop=false&keep=false', state))
await database.close()
