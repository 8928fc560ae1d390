// BENCH_DB_STATS=1: what each measured run cost, per request, on each server: statements sent (pg_stat_statements,
// BEGIN and COMMIT included), commits and WAL bytes (pg_walinspect over the run's WAL: exact, unlike the
// cumulative statistics views, which backends flush up to 10 s late), CPU of the server's process and of the
// PostgreSQL cluster (postmaster, its children, and children already gone), and what the database's client
// backends were doing (pg_stat_activity sampled every 10 ms: on CPU, or the wait event). The servers take turns, so a
// run's WAL and cluster CPU are its server's (plus the other server's idle background work).
import { readdirSync, readFileSync } from 'node:fs'
import pg from 'pg'

export interface DbStats {
  statements: number
  commits: number
  walBytes: number
  fpiBytes: number
  serverCpuMicros: number
  postgresCpuMicros: number
  /** Share of the samples per state, e.g. `CPU 61 %, WALSync 22 %`. */
  waits: string
  /** The statements most called, per request. */
  top: { calls: number; plans: number; meanMs: number; planMs: number; query: string }[]
  /** WAL bytes per request by record kind (resource manager/record), the largest first. */
  wal: { kind: string; count: number; bytes: number }[]
}

const ticksToMicros = 10_000
function cpuOf(pid: number): { own: number; children: number; ppid: number } | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return { own: (Number(fields[11]) + Number(fields[12])) * ticksToMicros, children: (Number(fields[13]) + Number(fields[14])) * ticksToMicros, ppid: Number(fields[1]) }
  } catch {
    return undefined
  }
}

/** CPU of a process and its children, the reaped ones included. */
function treeCpu(root: number): number {
  let total = 0
  const top = cpuOf(root)
  if (!top) return 0
  total += top.own + top.children
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const c = cpuOf(Number(entry))
    if (c && c.ppid === root) total += c.own
  }
  return total
}

export async function dbStatsProbe(options: { url: string; postmasterPid: () => number }) {
  const client = new pg.Client({ connectionString: options.url })
  await client.connect()
  await client.query('create extension if not exists pg_stat_statements')
  await client.query('create extension if not exists pg_walinspect')

  const statementRows = async (database: string) =>
    (
      await client.query<{ queryid: string; calls: string; plans: string; total: number; planTime: number; query: string }>(
        'select s.queryid::text, s.calls::text, s.plans::text, s.total_exec_time as total, s.total_plan_time as "planTime", s.query from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = $1',
        [database],
      )
    ).rows

  return {
    /** Starts measuring a run of `database`'s server (process `serverPid`); `finish` answers its costs per request. */
    async start(database: string, serverPid: number) {
      const before = new Map((await statementRows(database)).map((r) => [r.queryid, r]))
      const lsn = (await client.query<{ lsn: string }>('select pg_current_wal_flush_lsn()::text as lsn')).rows[0]!.lsn
      const serverCpu = cpuOf(serverPid)?.own ?? 0
      const postgresCpu = treeCpu(options.postmasterPid())
      const samples = new Map<string, number>()
      let sampling = true
      const sampler = (async () => {
        const sampleClient = new pg.Client({ connectionString: options.url })
        await sampleClient.connect()
        try {
          while (sampling) {
            const { rows } = await sampleClient.query<{ state: string }>(
              `select coalesce(wait_event, 'CPU') as state from pg_stat_activity where datname = $1 and backend_type = 'client backend' and state = 'active' and pid <> pg_backend_pid()`,
              [database],
            )
            for (const r of rows) samples.set(r.state, (samples.get(r.state) ?? 0) + 1)
            await new Promise((resolve) => setTimeout(resolve, 10))
          }
        } finally {
          await sampleClient.end()
        }
      })()
      return async (requests: number): Promise<DbStats> => {
        sampling = false
        await sampler
        const per = (n: number) => (requests > 0 ? n / requests : 0)
        const after = await statementRows(database)
        const deltas = after
          .map((r) => {
            const b = before.get(r.queryid)
            return { calls: Number(r.calls) - Number(b?.calls ?? 0), plans: Number(r.plans) - Number(b?.plans ?? 0), total: r.total - (b?.total ?? 0), planTime: r.planTime - (b?.planTime ?? 0), query: r.query }
          })
          .filter((d) => d.calls > 0)
          .sort((a, b) => b.calls - a.calls)
        const end = (await client.query<{ lsn: string }>('select pg_current_wal_flush_lsn()::text as lsn')).rows[0]!.lsn
        // pg_get_wal_stats refuses a start at the flushed end: a run that wrote no WAL has nothing to read.
        const wal = (
          end === lsn
            ? []
            : (
                await client.query<{ kind: string; count: string; bytes: string; fpi: string }>(
            `select "resource_manager/record_type" as kind, count::text, combined_size::text as bytes, fpi_size::text as fpi from pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) where count > 0`,
                  [lsn, end],
                )
              ).rows
        ).map((r) => ({ kind: r.kind, count: Number(r.count), bytes: Number(r.bytes), fpi: Number(r.fpi) }))
        const sampled = [...samples.values()].reduce((a, b) => a + b, 0)
        return {
          statements: per(deltas.reduce((a, d) => a + d.calls, 0)),
          commits: per(wal.filter((w) => w.kind === 'Transaction/COMMIT').reduce((a, w) => a + w.count, 0)),
          walBytes: per(wal.reduce((a, w) => a + w.bytes, 0)),
          fpiBytes: per(wal.reduce((a, w) => a + w.fpi, 0)),
          serverCpuMicros: per((cpuOf(serverPid)?.own ?? 0) - serverCpu),
          postgresCpuMicros: per(treeCpu(options.postmasterPid()) - postgresCpu),
          waits: [...samples.entries()]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 5)
            .map(([state, n]) => `${state} ${Math.round((100 * n) / Math.max(1, sampled))} %`)
            .join(', '),
          top: deltas.slice(0, 6).map((d) => ({ calls: +per(d.calls).toFixed(2), plans: +per(d.plans).toFixed(2), meanMs: +(d.total / d.calls).toFixed(3), planMs: d.plans > 0 ? +(d.planTime / d.plans).toFixed(3) : 0, query: d.query.replace(/\s+/g, ' ').slice(0, 140) })),
          wal: wal
            .sort((a, b) => b.bytes - a.bytes)
            .slice(0, 8)
            .map((w) => ({ kind: w.kind, count: +per(w.count).toFixed(2), bytes: Math.round(per(w.bytes)) })),
        }
      }
    },
    close: () => client.end(),
  }
}

/** One run's figures as lines for the console. */
export function describeDbStats(label: string, s: DbStats): string {
  return [
    `    ${label} per request: ${s.statements.toFixed(2)} statements, ${s.commits.toFixed(2)} commits, WAL ${Math.round(s.walBytes)} B (full pages ${Math.round(s.fpiBytes)} B), CPU server ${Math.round(s.serverCpuMicros)} µs, PostgreSQL ${Math.round(s.postgresCpuMicros)} µs; backends: ${s.waits}`,
    ...s.top.map((t) => `      ${t.calls} × ${t.meanMs} ms (planned ${t.plans} × ${t.planMs} ms)  ${t.query}`),
    `      WAL: ${s.wal.map((w) => `${w.kind} ${w.count}× ${w.bytes} B`).join('; ')}`,
  ].join('\n')
}
