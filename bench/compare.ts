// npm run bench:compare — Flagpost and Unleash's open-source server side by side, on the same machine and
// the same PostgreSQL: a throw-away PostgreSQL cluster, unleash-server@8 (installed into the ignored
// bench/.unleash on first use), both servers as child processes on separate databases with an admin token
// each, the same data loaded into both through their admin APIs, then autocannon on the operations both
// serve, alternating the servers case by case. Prints one table and writes it to bench/RESULTS.md.
// Everything it started is stopped at the end, whatever fails. Not part of npm test or CI.
//
// Settings (environment): BENCH_DURATION (s per case, 10), BENCH_WARMUP (s, 2), BENCH_CONNECTIONS (10),
// BENCH_POOL_SIZE (database connections of each server, 10), BENCH_CASES (a regular expression: run only
// the cases it matches; RESULTS.md is then left alone), BENCH_CPU_PROF (a folder: Flagpost, Unleash and
// the bare route run with node --cpu-prof and leave their profiles there), BENCH_DB_STATS (1: print each run's statements,
// commits, WAL bytes, CPU and the database's waits per request; bench/compare/db-stats.ts), PG_BIN (folder of initdb,
// pg_ctl, postgres).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cpus, release, tmpdir, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { apiClient } from './compare/api.js'
import { CASES, SDK_HEADERS, type Case, type Target } from './compare/cases.js'
import { cleanUp, isInterrupted } from './compare/processes.js'
import { startPostgres } from './compare/postgres.js'
import { dbStatsProbe, describeDbStats } from './compare/db-stats.js'
import { BARE_SHARE_TARGET, bareShare, keepsWriteMargin, meetsTarget, ratio, table, WRITE_MARGIN, writeResults, type Measurement, type Row } from './compare/report.js'
import { EVENT_TARGET, FLAG_COUNT, PROJECTS, seed, type SeedResult } from './compare/seed.js'
import { installUnleash, startBareRoute, startFlagpost, startUnleash, type RunningServer, type ServerKind } from './compare/servers.js'

const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const POOL_SIZE = Number(process.env.BENCH_POOL_SIZE ?? 10)
const ONLY = process.env.BENCH_CASES ? new RegExp(process.env.BENCH_CASES, 'i') : undefined
const CPU_PROF = process.env.BENCH_CPU_PROF
const DB_STATS = process.env.BENCH_DB_STATS === '1'
const root = fileURLToPath(new URL('../', import.meta.url))
const started = Date.now()
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`

type Probe = Awaited<ReturnType<typeof dbStatsProbe>>

async function measure(c: Case, target: Target, stats?: { probe: Probe; database: string; pid: number }): Promise<Measurement | undefined> {
  const options = c.options(target)
  if (!options) return undefined
  if (WARMUP > 0) await autocannon({ ...options, connections: CONNECTIONS, duration: WARMUP })
  const finish = await stats?.probe.start(stats.database, stats.pid)
  const result = await autocannon({ ...options, connections: CONNECTIONS, duration: DURATION })
  if (finish) console.log(describeDbStats(`${c.name} (${target.kind})`, await finish(result.requests.total)))
  const statuses = Object.entries(result.statusCodeStats ?? {}) as [string, { count: number }][]
  const unexpected = [
    ...statuses.filter(([code]) => Number(code) !== c.expect).map(([code, s]) => `${code}×${s.count}`),
    ...(result.errors > 0 ? [`errors×${result.errors}`] : []),
    ...(result.timeouts > 0 ? [`timeouts×${result.timeouts}`] : []),
  ].join(' ')
  const requests = result.requests.average
  return { requests, p50: result.latency.p50, p99: result.latency.p99, bytes: requests > 0 ? result.throughput.average / requests : 0, unexpected }
}

function describeMachine(pgVersion: string, unleashVersion: string) {
  const cores = cpus()
  const git = (args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    } catch {
      return ''
    }
  }
  const commit = git(['rev-parse', '--short', 'HEAD'])
  const dirty = git(['status', '--porcelain', '--', 'src', 'schema']) ? ' with uncommitted changes in src/' : ''
  const flagpostVersion = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
  return [
    `${cores.length} cores (${cores[0]?.model.trim() ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Linux ${release()}`,
    `Node ${process.version}; ${pgVersion}; Unleash ${unleashVersion} (npm unleash-server); Flagpost ${flagpostVersion}${commit ? ` at ${commit}${dirty}` : ''}`,
  ]
}

async function main() {
  console.log('Starting PostgreSQL and installing Unleash if needed...')
  const pg = await startPostgres(DB_STATS ? { settings: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on' } } : {})
  const unleashInstall = await installUnleash(root)
  await pg.createDatabase('flagpost')
  await pg.createDatabase('unleash')
  const databaseUrl = pg.url('flagpost')
  const { port } = new URL(databaseUrl)

  console.log(`${pg.version}; starting Flagpost and Unleash ${unleashInstall.version} (Unleash migrates its database on first start)...`)
  const nodeArgs = CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] : []
  const [flagpost, unleash] = await Promise.all([
    startFlagpost({ root, databaseUrl, poolSize: POOL_SIZE, nodeArgs }),
    startUnleash({ root, databaseUrl: pg.url('unleash'), poolSize: POOL_SIZE, unleashDir: unleashInstall.dir, database: { host: '127.0.0.1', port: Number(port), user: 'postgres', database: 'unleash' } }),
  ])
  console.log(`[${elapsed()}] Flagpost on ${flagpost.url}, Unleash on ${unleash.url}`)

  console.log(`Loading ${PROJECTS.length} projects, ${FLAG_COUNT} flags and ${EVENT_TARGET.toLocaleString('en')} events into each...`)
  const seeded = new Map<ServerKind, SeedResult>()
  await Promise.all(
    [flagpost, unleash].map(async (server) => {
      const api = apiClient(server.url, server.adminToken)
      const createProjects =
        server.kind === 'flagpost'
          ? async (projects: { id: string; name: string }[]) => {
              for (const p of projects) await api('POST', '/api/admin/projects', { id: p.id, name: p.name, description: `${p.name} project` })
            }
          : async (projects: { id: string; name: string }[]) => {
              // Unleash's open-source edition has no API to create projects (an Enterprise feature): the rows
              // its project store would write go in with SQL.
              for (const p of projects) {
                await pg.sql('unleash', 'insert into projects (id, name, description) values ($1, $2, $3)', [p.id, p.name, `${p.name} project`])
                await pg.sql('unleash', `insert into project_settings (project, default_stickiness, project_mode) values ($1, 'default', 'open')`, [p.id])
                await pg.sql('unleash', 'insert into project_environments (project_id, environment_name) select $1, name from environments where enabled', [p.id])
              }
            }
      const result = await seed(api, createProjects, (line) => console.log(`${server.label}:${line}`))
      seeded.set(server.kind, result)
      console.log(`[${elapsed()}] ${server.label}: ${result.flags} flags, ${result.segments} segments, ${result.events.toLocaleString('en')} events (${result.descriptionChanges.toLocaleString('en')} description changes)`)
    }),
  )
  // Both databases get fresh planner statistics before measuring.
  await pg.sql('flagpost', 'vacuum analyze')
  await pg.sql('unleash', 'vacuum analyze')

  const targets = new Map<ServerKind, Target>()
  for (const server of [flagpost, unleash] as RunningServer[]) {
    const s = seeded.get(server.kind)!
    // The same headers as the measured polls: the ETag can depend on them (the client spec version).
    const res = await fetch(`${server.url}/api/client/features`, { headers: { authorization: s.clientToken, ...SDK_HEADERS } })
    const body = (await res.json()) as { features: unknown[] }
    const front = (await (await fetch(`${server.url}/api/frontend?appName=bench&userId=user-13&properties[country]=NO&properties[appVersion]=1.4.0`, { headers: { authorization: s.frontendToken } })).json()) as { toggles: unknown[] }
    console.log(`${server.label}: client features ${body.features.length} flags; frontend API, one context: ${front.toggles.length} flags on`)
    targets.set(server.kind, { kind: server.kind, url: server.url, adminToken: server.adminToken, clientToken: s.clientToken, frontendToken: s.frontendToken, etag: res.headers.get('etag') })
  }

  // The SDK rows' physical limit: a bare Hono route on the same Node, serving Flagpost's payload bytes and ETag.
  const fp = targets.get('flagpost')!
  const payload = await fetch(`${fp.url}/api/client/features`, { headers: { authorization: fp.clientToken, ...SDK_HEADERS } })
  const bodyFile = join(mkdtempSync(join(tmpdir(), 'flagpost-bare-')), 'payload.json')
  writeFileSync(bodyFile, Buffer.from(await payload.arrayBuffer()))
  const bare = await startBareRoute({ root, bodyFile, etag: fp.etag ?? '"none"', nodeArgs })
  const bareTarget: Target = { ...fp, kind: 'bare', url: bare.url }

  // Reads first, on the data as loaded; then the writes, which add events and change flags.
  const selected = CASES.filter((c) => !ONLY || ONLY.test(c.name))
  const order = [...selected.filter((c) => !c.write), ...selected.filter((c) => c.write)]
  const rows = new Map<string, Row>(selected.map((c) => [c.name, { name: c.name, write: c.write }]))
  console.log(`\nMeasuring ${order.length} cases: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s per case and server, alternating the servers.\n`)
  const probe = DB_STATS ? await dbStatsProbe({ url: pg.url('postgres'), postmasterPid: pg.postmasterPid }) : undefined
  const servers = new Map([flagpost, unleash].map((s) => [s.kind, s]))
  for (const [i, c] of order.entries()) {
    const kinds: ServerKind[] = i % 2 === 0 ? ['flagpost', 'unleash'] : ['unleash', 'flagpost']
    for (const kind of kinds) {
      const m = await measure(c, targets.get(kind)!, probe && { probe, database: kind, pid: servers.get(kind)!.child.process.pid! })
      rows.get(c.name)![kind] = m
      const label = kind === 'flagpost' ? 'Flagpost' : 'Unleash '
      console.log(
        m
          ? `[${elapsed()}] ${c.name} — ${label}: ${Math.round(m.requests).toLocaleString('en')} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, ${(m.bytes / 1024).toFixed(1)} KiB/response${m.unexpected ? `, UNEXPECTED: ${m.unexpected}` : ''}`
          : `[${elapsed()}] ${c.name} — ${label}: not served`,
      )
    }
    if (c.againstBare) {
      const m = await measure(c, bareTarget)
      rows.get(c.name)!.bare = m
      if (m) console.log(`[${elapsed()}] ${c.name} — bare route: ${Math.round(m.requests).toLocaleString('en')} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms`)
    }
  }

  await probe?.close()
  const ordered = selected.map((c) => rows.get(c.name)!)
  const machine = describeMachine(pg.version, unleashInstall.version)
  const misses = ordered.filter((r) => meetsTarget(r) === false)
  const settings =
    `autocannon, ${CONNECTIONS} connections, ${WARMUP} s warm-up then ${DURATION} s per case and server, the servers alternating ` +
    `(reads first, then writes); each server's database pool ${POOL_SIZE} connections; both on one PostgreSQL cluster (separate databases), on the same machine as autocannon.`
  const data =
    `Data, loaded through each server's admin API: ${PROJECTS.length} projects (${PROJECTS.map((p) => `${p.id} ${p.flags}`).join(', ')} flags), 5 segments, ${FLAG_COUNT} flags ` +
    `(flexibleRollout strategies with 2–3 constraints, a quarter with a segment, a fifth with strategy variants, a third with a user-list strategy; ` +
    `half with variants in both environments), then description changes until the audit log held ${EVENT_TARGET.toLocaleString('en')} events ` +
    `(Flagpost ${seeded.get('flagpost')!.events.toLocaleString('en')}, Unleash ${seeded.get('unleash')!.events.toLocaleString('en')}).`
  const generated = [
    `Run of ${new Date().toISOString().slice(0, 10)}: ${machine.join('; ')}.`,
    '',
    settings,
    '',
    data,
    '',
    table(ordered),
    '',
    `Ratio: Flagpost requests/s ÷ Unleash requests/s; ✗ marks a row under the target (at least 3× with a lower p99); writes are held to ${WRITE_MARGIN}× so that noise never takes them under 3×. ` +
      `The last column: the same SDK request to a bare Hono route on the same Node (Flagpost's payload bytes and ETag, nothing else), and Flagpost's requests/s as a share of it (the 304 poll's target: ${BARE_SHARE_TARGET * 100} % or more).`,
    '',
    'What each row asks each server:',
    '',
    ...selected.map((c) => `- ${c.name}: ${c.paths ? (c.paths.unleash === 'same' ? `\`${c.paths.flagpost}\`` : `Flagpost \`${c.paths.flagpost}\`, Unleash \`${c.paths.unleash}\``) : 'the same request on both'}`),
  ].join('\n')

  console.log(`\n${table(ordered)}\n`)
  console.log(machine.join('\n'))
  console.log(settings)
  for (const row of ordered) {
    if (keepsWriteMargin(row) === false) console.log(`Write under ${WRITE_MARGIN}×: ${row.name} (${ratio(row)?.toFixed(1)}×)`)
    const share = bareShare(row)
    if (share !== undefined) console.log(`${row.name}: ${Math.round(share * 100)} % of the bare Hono route${share < BARE_SHARE_TARGET && /304/.test(row.name) ? ` (under the ${BARE_SHARE_TARGET * 100} % target)` : ''}`)
  }
  if (misses.length > 0) console.log(`\nUnder the target (3× requests/s and lower p99): ${misses.map((r) => `${r.name} (${ratio(r)?.toFixed(1)}×)`).join('; ')}`)
  if (ONLY) console.log('\n(BENCH_CASES given: bench/RESULTS.md left as it was.)')
  else {
    await writeResults(new URL('RESULTS.md', import.meta.url).pathname, generated)
    console.log('\nWritten to bench/RESULTS.md.')
  }
}

try {
  await main()
} catch (error) {
  if (!isInterrupted()) console.error(`\nbench:compare failed: ${error instanceof Error ? (error.stack ?? error.message) : error}`)
  process.exitCode = 1
} finally {
  console.log(`[${elapsed()}] Stopping the servers and PostgreSQL...`)
  await cleanUp()
}
