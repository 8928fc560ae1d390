// npm run bench:client — the SDK-facing hot paths against the Node server (a child process, so autocannon
// does not share its thread): GET /api/client/features for 200 flags with and without If-None-Match, and
// GET /api/frontend with varied contexts. Prints requests/s and latency percentiles per case; the figures
// go to bench/RESULTS.md by hand.
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

const FLAGS = Number(process.env.BENCH_FLAGS ?? 200)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const ADMIN = '*:*.bench-admin-secret'
const root = fileURLToPath(new URL('../', import.meta.url))

const dataDir = await mkdtemp(join(tmpdir(), 'flagpost-bench-'))
const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
  cwd: root,
  env: { ...process.env, PORT: '0', HOST: '127.0.0.1', FLAGPOST_DATA_DIR: dataDir, INIT_ADMIN_API_TOKENS: ADMIN },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const stop = async () => {
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
  await rm(dataDir, { recursive: true, force: true })
}

try {
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match) resolve(match[1]!)
    })
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening:\n${out}`)))
  })

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: ADMIN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : undefined
  }

  console.log(`Creating ${FLAGS} flags through the admin API...`)
  const started = performance.now()
  const segment = await api('POST', '/api/admin/segments', { name: 'beta', constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro', 'enterprise'] }] })
  const F = '/api/admin/projects/default/features'
  const createFlag = async (i: number) => {
    const name = `flag-${String(i).padStart(3, '0')}`
    const env = `${F}/${name}/environments/development`
    await api('POST', F, { name, description: `Flag ${i} of the client API benchmark` })
    // A realistic mix: rollouts with constraints, user lists, segments, strategy and flag variants.
    await api('POST', `${env}/strategies`, {
      name: 'flexibleRollout',
      parameters: { rollout: String((i * 7) % 101), stickiness: 'default', groupId: name },
      constraints: [
        { contextName: 'country', operator: 'IN', values: ['NO', 'SE', 'DK', 'FI', 'DE'] },
        { contextName: 'appVersion', operator: 'SEMVER_GT', value: '1.2.0' },
      ],
      ...(i % 4 === 0 ? { segments: [segment.id] } : {}),
      ...(i % 5 === 0 ? { variants: [{ name: 'strategy-variant', weight: 1000, weightType: 'variable', stickiness: 'default' }] } : {}),
    })
    if (i % 3 === 0) await api('POST', `${env}/strategies`, { name: 'userWithId', parameters: { userIds: Array.from({ length: 20 }, (_, k) => String(k * 13 + i)).join(',') } })
    if (i % 2 === 0) await api('PUT', `${env}/variants`, [{ name: 'a', weightType: 'variable', payload: { type: 'string', value: 'A' } }, { name: 'b', weightType: 'variable' }])
    if (i % 10 !== 9) await api('POST', `${env}/on`)
  }
  for (let i = 0; i < FLAGS; i += 4) await Promise.all([i, i + 1, i + 2, i + 3].filter((n) => n < FLAGS).map(createFlag))
  const clientToken = (await api('POST', '/api/admin/api-tokens', { tokenName: 'bench-backend', type: 'client', environment: 'development' })).secret
  const frontendToken = (await api('POST', '/api/admin/api-tokens', { tokenName: 'bench-frontend', type: 'frontend', environment: 'development' })).secret
  console.log(`Created in ${((performance.now() - started) / 1000).toFixed(1)} s.`)

  const sdkHeaders = { authorization: clientToken, 'unleash-client-spec': '5.2.0', 'unleash-appname': 'bench' }
  const first = await fetch(`${url}/api/client/features`, { headers: sdkHeaders })
  const etag = first.headers.get('etag')!
  const payloadBytes = (await first.arrayBuffer()).byteLength
  const payloadFlags = ((await (await fetch(`${url}/api/client/features`, { headers: sdkHeaders })).json()) as { features: unknown[] }).features.length
  console.log(`Payload: ${payloadFlags} flags, ${(payloadBytes / 1024).toFixed(0)} KiB, ETag ${etag}\n`)

  let n = 0
  const countries = ['NO', 'SE', 'US', 'DE', 'FR']
  const cases: { name: string; options: autocannon.Options; expect: number }[] = [
    { name: `GET /api/client/features (${FLAGS} flags, 200)`, options: { url: `${url}/api/client/features`, headers: sdkHeaders }, expect: 200 },
    { name: 'GET /api/client/features with If-None-Match (304)', options: { url: `${url}/api/client/features`, headers: { ...sdkHeaders, 'if-none-match': etag } }, expect: 304 },
    {
      name: `GET /api/frontend (${FLAGS} flags evaluated, varied contexts)`,
      options: {
        url: `${url}/api/frontend`,
        headers: { authorization: frontendToken },
        requests: [
          {
            setupRequest: (request) => {
              n++
              return { ...request, path: `/api/frontend?appName=bench&userId=${n % 10_000}&sessionId=s${n}&properties[country]=${countries[n % countries.length]}&properties[appVersion]=1.${n % 5}.0&properties[plan]=${n % 3 ? 'free' : 'pro'}` }
            },
          },
        ],
      },
      expect: 200,
    },
  ]

  const rows: string[] = []
  for (const c of cases) {
    // A short warm-up (JIT, caches), then the measured run.
    await autocannon({ ...c.options, connections: CONNECTIONS, duration: 2 })
    const result = await autocannon({ ...c.options, connections: CONNECTIONS, duration: DURATION })
    const statuses = Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => `${code}×${(s as { count: number }).count}`).join(' ')
    const unexpected = Object.entries(result.statusCodeStats ?? {}).filter(([code]) => Number(code) !== c.expect)
    console.log(`${c.name}\n  ${Math.round(result.requests.average).toLocaleString('en')} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${statuses}, errors ${result.errors}, timeouts ${result.timeouts}`)
    if (unexpected.length > 0 || result.errors > 0) console.log(`  WARNING: responses other than ${c.expect}: ${statuses}`)
    rows.push(`| ${c.name} | ${Math.round(result.requests.average).toLocaleString('en')} | ${result.latency.p50} | ${result.latency.p99} |`)
  }
  console.log(`\n| case | requests/s | p50 (ms) | p99 (ms) |\n|---|---:|---:|---:|\n${rows.join('\n')}`)
  console.log(`\n(${CONNECTIONS} connections, ${DURATION} s per case, Node ${process.version}, embedded Postgres)`)
} finally {
  await stop()
}
