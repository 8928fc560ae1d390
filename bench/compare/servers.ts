// The two servers under test, each a child process on the benchmark's Postgres with an admin token:
// Flagpost (src/server.ts through DATABASE_URL) and Unleash's open-source server (npm unleash-server@8,
// installed into the ignored bench/.unleash on first use).
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startChild, type Child } from './processes.js'

export type ServerKind = 'flagpost' | 'unleash'

export interface RunningServer {
  kind: ServerKind
  label: string
  url: string
  adminToken: string
  child: Child
}

export interface ServerOptions {
  root: string
  databaseUrl: string
  poolSize: number
  /** Extra node flags, e.g. --cpu-prof for profiling. */
  nodeArgs?: string[]
}

const UNLEASH_RANGE = '^8'
const ADMIN_TOKEN = { flagpost: '*:*.flagpost-bench-admin-secret', unleash: '*:*.5c1e0a7b93d24f6e8a0b7c2d9e4f1a3b6c8d0e2f4a6b8c0d2e4f6a8b0c2d4e6f' }

export async function startFlagpost(options: ServerOptions): Promise<RunningServer> {
  const child = startChild('Flagpost', process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', 'src/server.ts'], {
    cwd: options.root,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: options.databaseUrl,
      DATABASE_POOL_SIZE: String(options.poolSize),
      INIT_ADMIN_API_TOKENS: ADMIN_TOKEN.flagpost,
      // Unleash limits no caller's playground requests: a throughput comparison measures both without a limit.
      FLAGPOST_PLAYGROUND_EVALUATIONS_PER_MINUTE: '0',
    },
  })
  const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/, 120_000)
  return { kind: 'flagpost', label: 'Flagpost', url: url!, adminToken: ADMIN_TOKEN.flagpost, child }
}

/** Installs unleash-server@8 into bench/.unleash unless it is there; returns the installed version. */
export async function installUnleash(root: string): Promise<{ dir: string; version: string }> {
  const dir = join(root, 'bench', '.unleash')
  const manifest = join(dir, 'node_modules', 'unleash-server', 'package.json')
  const installed = () => (existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version : undefined)
  const current = installed()
  if (current?.startsWith('8.')) return { dir, version: current }
  console.log(`Installing unleash-server@8 into bench/.unleash (first use; about a minute)...`)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ name: 'flagpost-bench-unleash', private: true, description: 'Unleash for npm run bench:compare (not part of Flagpost)', dependencies: { 'unleash-server': UNLEASH_RANGE } }, null, 2)}\n`)
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const result = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' })
  const version = installed()
  if (result.status !== 0 || !version) throw new Error(`npm install unleash-server@8 in ${dir} failed (${result.status ?? result.error?.message})`)
  return { dir, version }
}

/** The bare Hono route (bench/compare/bare-route.mjs) serving `body` with `etag`: the SDK rows' physical limit. */
export async function startBareRoute(options: { root: string; bodyFile: string; etag: string; nodeArgs?: string[] }): Promise<{ url: string }> {
  const child = startChild('bare route', process.execPath, [...(options.nodeArgs ?? []), join(options.root, 'bench', 'compare', 'bare-route.mjs')], {
    cwd: options.root,
    env: { ...process.env, NODE_ENV: 'production', BENCH_BARE_BODY_FILE: options.bodyFile, BENCH_BARE_ETAG: options.etag },
  })
  const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/, 30_000)
  return { url: url! }
}

export async function startUnleash(options: ServerOptions & { unleashDir: string; database: { host: string; port: number; user: string; database: string } }): Promise<RunningServer> {
  const unleashOptions = {
    db: { ...options.database, password: '', ssl: false, pool: { min: 0, max: options.poolSize } },
    server: { host: '127.0.0.1', port: 0, enableRequestLogger: false, gracefulShutdownEnable: true },
    authentication: { type: 'open-source', createAdminUser: true },
    versionCheck: { enable: false },
    // Unleash limits SDK and token-authenticated calls to 20,000 a minute per path by default; a benchmark
    // measures the server, not that limit (Flagpost has none).
    rateLimiting: { tokenAuthenticationMaxPerMinute: 1e9, sdkApiMaxPerMinute: 1e9, searchFeaturesMaxPerMinute: 1e9 },
    // Per-environment variants (the counterpart of the flag's variants PATCH) are behind this flag in Unleash 8 for flags that have none yet.
    experimental: { flags: { enableLegacyVariants: true } },
    logLevel: 'error',
  }
  const child = startChild('Unleash', process.execPath, [...(options.nodeArgs ?? []), join(options.root, 'bench', 'compare', 'start-unleash.mjs')], {
    cwd: options.unleashDir,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      TZ: 'UTC',
      BENCH_UNLEASH_MODULE: join(options.unleashDir, 'node_modules', 'unleash-server', 'dist', 'lib', 'server-impl.js'),
      BENCH_UNLEASH_OPTIONS: JSON.stringify(unleashOptions),
      INIT_ADMIN_API_TOKENS: ADMIN_TOKEN.unleash,
      SEND_TELEMETRY: 'false',
      UNLEASH_TELEMETRY_DISABLED: 'true',
      CHECK_VERSION: 'false',
    },
  })
  const [, url] = await child.waitFor(/is listening on (http:\/\/\S+)/, 300_000)
  return { kind: 'unleash', label: 'Unleash', url: url!, adminToken: ADMIN_TOKEN.unleash, child }
}
