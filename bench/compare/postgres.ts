// A throw-away PostgreSQL cluster for the side-by-side benchmark: initdb into a temporary folder, pg_ctl
// start on a free port of 127.0.0.1, pg_ctl stop -m fast and remove the folder at the end.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { chown, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort, onCleanUp } from './processes.js'

export interface Postgres {
  version: string
  bin: string
  url(database: string): string
  /** Runs SQL in a database as the superuser. */
  sql(database: string, text: string, params?: unknown[]): Promise<pg.QueryResult>
  createDatabase(name: string): Promise<void>
  /** The postmaster's process id (its children are the cluster's backends and workers). */
  postmasterPid(): number
}

function findBin(): string {
  const candidates = [process.env.PG_BIN, '/usr/lib/postgresql/15/bin', '/usr/pgsql-15/bin', '/usr/local/opt/postgresql@15/bin', '/opt/homebrew/opt/postgresql@15/bin']
  for (const dir of candidates) if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim()
  if (onPath) return onPath.replace(/\/initdb$/, '')
  throw new Error(
    'PostgreSQL binaries not found: bench:compare needs initdb, pg_ctl and postgres of PostgreSQL 15 ' +
      `(looked in ${candidates.filter(Boolean).join(', ')} and on PATH). Install them (Debian/Ubuntu: apt-get install postgresql-15) ` +
      'or set PG_BIN to the folder that holds them.',
  )
}

/** initdb refuses to run as root: as root, the cluster belongs to (and runs as) the `postgres` user. */
function runAs(): { user: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const user = process.env.PG_USER ?? 'postgres'
  const id = (flag: string) => Number(spawnSync('id', [flag, user], { encoding: 'utf8' }).stdout.trim())
  const uid = id('-u')
  if (!Number.isInteger(uid) || uid === 0 || spawnSync('id', ['-u', user]).status !== 0) {
    throw new Error(`Running as root, bench:compare runs PostgreSQL as the user "${user}", which does not exist: create it (useradd -r ${user}) or set PG_USER to another non-root user.`)
  }
  return { user, uid, gid: id('-g') }
}

export async function startPostgres(options: { settings?: Record<string, string> } = {}): Promise<Postgres> {
  const bin = findBin()
  const owner = runAs()
  const run = (tool: string, args: string[]) => {
    const [command, argv] = owner ? ['runuser', ['-u', owner.user, '--', join(bin, tool), ...args]] : [join(bin, tool), args]
    const result = spawnSync(command, argv, { encoding: 'utf8' })
    if (result.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${result.status ?? result.signal}):\n${result.stdout}${result.stderr}${result.error?.message ?? ''}`)
    return result.stdout
  }
  const version = execFileSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).trim()
  if (!/\b15\./.test(version)) console.warn(`Note: found ${version}, not PostgreSQL 15 (set PG_BIN to use another installation).`)

  const dir = await mkdtemp(join(tmpdir(), 'flagpost-compare-pg-'))
  const data = join(dir, 'data')
  let started = false
  const stop = () => {
    if (started) run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'])
    started = false
  }
  onCleanUp(
    'stop PostgreSQL',
    async () => {
      try {
        stop()
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
    () => {
      try {
        if (started) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
      } catch {}
      spawnSync('rm', ['-rf', dir])
    },
  )
  if (owner) await chown(dir, owner.uid, owner.gid)
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'])
  const port = await freePort()
  started = true
  const settings = Object.entries(options.settings ?? {}).map(([name, value]) => ` -c ${name}=${value}`).join('')
  run('pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-w', '-t', '60', '-o', `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories='${dir}'${settings}`, 'start'])

  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`
  const sql = async (database: string, text: string, params?: unknown[]) => {
    const client = new pg.Client({ connectionString: url(database) })
    await client.connect()
    try {
      return await client.query(text, params)
    } finally {
      await client.end()
    }
  }
  const serverVersion = (await sql('postgres', 'show server_version')).rows[0].server_version as string
  return {
    version: `PostgreSQL ${serverVersion}`,
    bin,
    url,
    sql,
    createDatabase: async (name) => void (await sql('postgres', `create database "${name}"`)),
    postmasterPid: () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
  }
}
