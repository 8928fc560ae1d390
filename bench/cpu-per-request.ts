// CPU per request of a running server: node --import tsx bench/cpu-per-request.ts PID URL SECONDS [name:value ...]
// (e.g. `authorization:<token>` `if-none-match:"<etag>"`). Reads the process's user + system time from /proc/PID/stat
// around an autocannon run (10 connections, after a 2 s warm-up). On a shared machine compare two builds side by
// side, alternating them, and read the minimum and median of several runs, never throughput alone.
import autocannon from 'autocannon'
import { readFileSync } from 'node:fs'

const [pid, url, seconds = '4', ...pairs] = process.argv.slice(2)
if (!pid || !url) throw new Error('usage: bench/cpu-per-request.ts PID URL SECONDS [name:value ...]')
const headers: Record<string, string> = { 'unleash-appname': 'bench', 'unleash-client-spec': '5.2.0' }
for (const pair of pairs) headers[pair.slice(0, pair.indexOf(':'))] = pair.slice(pair.indexOf(':') + 1)
// utime and stime, fields 14 and 15 of /proc/PID/stat, in clock ticks (100 per second on Linux).
const cpuMicros = () => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}
await autocannon({ url, headers, connections: 10, duration: 2 })
const before = cpuMicros()
const result = await autocannon({ url, headers, connections: 10, duration: Number(seconds) })
const used = cpuMicros() - before
console.log(JSON.stringify({ requestsPerSecond: Math.round(result.requests.average), cpuMicrosPerRequest: +(used / result.requests.total).toFixed(1), statuses: Object.keys(result.statusCodeStats ?? {}) }))
