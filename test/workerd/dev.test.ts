// `npm run dev` on a fresh clone: wrangler dev (workerd) on the embedded database, with no other step.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

let child: ChildProcess | undefined
let dataDir: string | undefined
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL')
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

describe('npm run dev', () => {
  it('serves /health from workerd on a local embedded database over Neon\'s SQL over HTTP, prints a first token, and stops on Ctrl-C', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'flagpost-dev-'))
    const port = await freePort()
    let output = ''
    child = spawn('node_modules/.bin/tsx', ['dev/worker-dev.ts', '--port', String(port), '--ip', '127.0.0.1'], {
      env: { ...process.env, FLAGPOST_DEV_DATA_DIR: join(dataDir, 'db'), WRANGLER_LOG_PATH: join(dataDir, 'logs') },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout!.on('data', (d) => (output += d))
    child.stderr!.on('data', (d) => (output += d))

    let health: unknown
    for (let i = 0; i < 120 && health === undefined; i++) {
      await new Promise((r) => setTimeout(r, 500))
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health`)
        if (res.ok) health = await res.json()
      } catch {
        // not listening yet
      }
    }
    expect(health, output).toEqual({ health: 'GOOD' })
    const token = /\*:\*\.[0-9a-f]{64}/.exec(output)?.[0]
    expect(token, output).toBeDefined()
    const projects = await fetch(`http://127.0.0.1:${port}/api/admin/projects`, { headers: { authorization: token! } })
    expect(projects.status).toBe(200)

    const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow()
    // Both reads went to the local database as in production: over Neon's SQL over HTTP, no WebSocket needed.
    const [, http, webSocket] = /the worker made (\d+) round trips over HTTP and (\d+) over WebSockets/.exec(output) ?? []
    expect(Number(http), output).toBeGreaterThanOrEqual(2)
    expect(Number(webSocket), output).toBe(0)
  }, 90_000)
})
