// Writes A/B (round nine): two Flagpost builds side by side on one throw-away PostgreSQL 15, each on its own
// database with bench:compare's data, the write rows of bench:compare alternated between them; per request, the
// server's CPU and the cluster's (bench/compare/db-stats.ts). Usage:
//   BASE=/tmp/write-base [ROUNDS=3] [BENCH_CASES=regex] [EXPLAIN=1] npx tsx bench/scratch/write-ab.ts
// BASE: a folder holding the other build (git archive of the base commit, node_modules linked). EXPLAIN=1 also
// loads auto_explain (analyze, buffers, nested statements) and prints where the log is, then does one PATCH per
// server and stops.
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { apiClient } from '../compare/api.js'
import { CASES, type Target } from '../compare/cases.js'
import { cleanUp } from '../compare/processes.js'
import { startPostgres } from '../compare/postgres.js'
import { dbStatsProbe, describeDbStats } from '../compare/db-stats.js'
import { seed } from '../compare/seed.js'
import { startFlagpost } from '../compare/servers.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const base = process.env.BASE ?? '/tmp/write-base'
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const DURATION = Number(process.env.BENCH_DURATION ?? 8)
const ONLY = new RegExp(process.env.BENCH_CASES ?? 'PATCH|variants', 'i')
const EXPLAIN = process.env.EXPLAIN === '1'

async function main() {
  const settings: Record<string, string> = { shared_preload_libraries: EXPLAIN ? 'pg_stat_statements,auto_explain' : 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on' }
  if (EXPLAIN) Object.assign(settings, { 'auto_explain.log_analyze': 'on', 'auto_explain.log_buffers': 'on', 'auto_explain.log_nested_statements': 'on', 'auto_explain.log_verbose': 'on', 'auto_explain.log_wal': 'on', 'auto_explain.log_settings': 'off' })
  const pg = await startPostgres({ settings })
  const builds = [
    { name: 'base', dir: base },
    { name: 'branch', dir: root },
  ]
  for (const b of builds) await pg.createDatabase(b.name)
  // SOCKET=branch: that build reaches PostgreSQL through its Unix socket instead of loopback TCP.
  const socketDir = (await pg.sql('postgres', 'show unix_socket_directories')).rows[0].unix_socket_directories as string
  const urlOf = (name: string) => (process.env.SOCKET === name ? `postgres://postgres@/${name}?host=${encodeURIComponent(socketDir)}&port=${new URL(pg.url(name)).port}` : pg.url(name))
  const servers = await Promise.all(builds.map((b) => startFlagpost({ root: b.dir, databaseUrl: urlOf(b.name), poolSize: 10, nodeArgs: process.env.CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', `${process.env.CPU_PROF}/${b.name}`] : [] })))
  const targets: Target[] = []
  for (const [i, s] of servers.entries()) {
    const api = apiClient(s.url, s.adminToken)
    const createProjects = async (projects: { id: string; name: string }[]) => {
      for (const p of projects) await api('POST', '/api/admin/projects', { id: p.id, name: p.name, description: `${p.name} project` })
    }
    const r = await seed(api, createProjects, () => {})
    console.log(`${builds[i]!.name}: ${r.flags} flags, ${r.events} events`)
    targets.push({ kind: 'flagpost', url: s.url, adminToken: s.adminToken, clientToken: r.clientToken, frontendToken: r.frontendToken, etag: null })
  }
  for (const b of builds) await pg.sql(b.name, 'vacuum analyze')
  if (process.env.KEEP === '1') {
    // Leaves the cluster and the servers up (for bench/scratch/write-parts.ts) until this process is interrupted.
    console.log(`kept: ${pg.url('base')} and ${pg.url('branch')}`)
    await new Promise((resolve) => process.once('SIGINT', resolve))
    return
  }
  if (EXPLAIN) {
    await pg.sql('postgres', 'alter system set auto_explain.log_min_duration = 0')
    await pg.sql('postgres', 'select pg_reload_conf()')
    await new Promise((resolve) => setTimeout(resolve, 500))
    for (const c of CASES.filter((c) => c.write && ONLY.test(c.name))) {
      const options = c.options(targets[0]!)!
      const r = await autocannon({ ...options, connections: 1, amount: 3 })
      console.log(c.name, r.statusCodeStats, (await pg.sql('base', 'show auto_explain.log_min_duration')).rows)
    }
    const data = (await pg.sql('postgres', 'show data_directory')).rows[0].data_directory as string
    execFileSync('cp', [join(data, '..', 'postgres.log'), '/tmp/write-explain.log'])
    console.log('auto_explain log: /tmp/write-explain.log')
    return
  }
  if (process.env.PERF === '1') {
    // A long run on the base build for `perf record` of its cluster and process (pids in /tmp/write-perf.pids).
    const { writeFileSync } = await import('node:fs')
    writeFileSync('/tmp/write-perf.pids', `${pg.postmasterPid()} ${servers[0]!.child.process.pid}\n`)
    for (const c of CASES.filter((c) => c.write && ONLY.test(c.name))) {
      const r = await autocannon({ ...c.options(targets[0]!)!, connections: 10, duration: 30 })
      console.log(c.name, Math.round(r.requests.average), 'req/s')
    }
    return
  }
  const probe = await dbStatsProbe({ url: pg.url('postgres'), postmasterPid: pg.postmasterPid })
  const cases = CASES.filter((c) => c.write && ONLY.test(c.name))
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of cases) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0]
      for (const i of order) {
        const options = c.options(targets[i]!)!
        await autocannon({ ...options, connections: 10, duration: 2 })
        const finish = await probe.start(builds[i]!.name, servers[i]!.child.process.pid!)
        const result = await autocannon({ ...options, connections: 10, duration: DURATION })
        const bad = Object.keys(result.statusCodeStats ?? {}).filter((code) => Number(code) !== c.expect)
        console.log(describeDbStats(`r${round} ${c.name} (${builds[i]!.name}) ${Math.round(result.requests.average)} req/s${bad.length ? ` UNEXPECTED ${bad}` : ''}`, await finish(result.requests.total)))
      }
    }
  }
  await probe.close()
  for (const b of builds) {
    const { rows } = await pg.sql(b.name, `select relname, n_tup_ins, autovacuum_count, autoanalyze_count from pg_stat_user_tables where relname in ('events', 'features', 'feature_collaborators') order by relname`)
    console.log(`${b.name}: ${rows.map((r) => `${r.relname} ${r.n_tup_ins} inserted, ${r.autovacuum_count} autovacuums, ${r.autoanalyze_count} autoanalyzes`).join('; ')}`)
  }
}

main()
  .catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
  .finally(cleanUp)
