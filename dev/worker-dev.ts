// npm run dev: the worker in `wrangler dev` (workerd). With a DATABASE_URL in .dev.vars it uses that
// database as is. Without one it first starts a local database for it: the embedded PGlite data in
// ./.flagpost-dev (its own folder, so it can run next to `npm start`, which uses ./.flagpost), served
// over the Postgres protocol and behind Neon's two endpoints (SQL over HTTP, the WebSocket relay), with migrations applied
// and a first admin token printed. Ctrl-C stops all of it.
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { startLocalPostgres } from './local-postgres.js'
import { bootstrapAdminTokens } from '../src/api-tokens/store.js'

const DATA_DIR = process.env.FLAGPOST_DEV_DATA_DIR ?? './.flagpost-dev'
const extraArgs = process.argv.slice(2)

/** The variables .dev.vars sets (KEY=value lines; # comments). */
function readDevVars(path = '.dev.vars'): Record<string, string> {
  if (!existsSync(path)) return {}
  const vars: Record<string, string> = {}
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line)
    if (match && !line.trimStart().startsWith('#')) vars[match[1]!] = match[2]!.replace(/^(['"])(.*)\1$/, '$2')
  }
  return vars
}

// No telemetry and no update check: the machine may have no internet.
const wranglerEnv = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_HIDE_BANNER: 'true' }
const wranglerBin = 'node_modules/.bin/wrangler'

async function main() {
  const devVars = readDevVars()
  const args = ['dev', ...extraArgs]
  let stopDatabase: (() => Promise<void>) | undefined

  if (devVars.DATABASE_URL) {
    console.log('Using DATABASE_URL from .dev.vars.')
  } else {
    const local = await startLocalPostgres({ dataDir: DATA_DIR, migrate: true })
    stopDatabase = async () => {
      const { http, webSocket } = local.roundTrips()
      console.log(`Local database: the worker made ${http} round trips over HTTP and ${webSocket} over WebSockets.`)
      await local.close()
    }
    const token = await bootstrapAdminTokens(local.database.db, new Date(), (process.env.INIT_ADMIN_API_TOKENS ?? '').split(',').map((t) => t.trim()).filter(Boolean))
    console.log(`Local database: embedded PGlite in ${DATA_DIR}, served at ${local.databaseUrl} (Neon's SQL over HTTP at ${local.fetchEndpoint}, WebSocket relay ${local.wsProxy}).`)
    if (token) console.log(`\nFirst admin API token (shown only this once, keep it safe):\n\n  ${token}\n`)
    args.push('--var', `DATABASE_URL:${local.databaseUrl}`, '--var', `NEON_WS_PROXY:${local.wsProxy}`, '--var', `NEON_FETCH_ENDPOINT:${local.fetchEndpoint}`)
  }

  const wrangler = spawn(wranglerBin, args, { stdio: 'inherit', env: wranglerEnv })
  let stopping = false
  const stop = async (code: number) => {
    if (stopping) return
    stopping = true
    if (wrangler.exitCode === null) wrangler.kill('SIGINT')
    await stopDatabase?.()
    process.exit(code)
  }
  process.on('SIGINT', () => void stop(0))
  process.on('SIGTERM', () => void stop(0))
  wrangler.on('exit', (code) => void stop(code ?? 0))
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
