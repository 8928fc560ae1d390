import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readConfig, startServer } from '../src/server.js'
import { CONSOLE_HEADERS } from '../src/console-headers.js'
import { precompressConsole } from '../scripts/precompress-console.js'
import { migratedDataDir } from './helpers/data-dir.js'

const dirs: string[] = []
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'flagpost-server-'))
  dirs.push(dir)
  return dir
}
/** A data folder holding the migrated template database: a first start without initdb and the migrations. */
const migratedDir = async () => {
  const dir = await migratedDataDir('flagpost-server-')
  dirs.push(dir)
  return dir
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

describe('the Node server (npm start)', () => {
  // initdb and every migration, then a restart: the one start from an empty folder, the slowest under load.
  it('starts on an empty data folder, prints a first admin token that works, and keeps data across restarts', { timeout: 120_000 }, async () => {
    const dataDir = await tempDir()
    const first = await startServer({ ...readConfig({}), port: 0, host: '127.0.0.1', dataDir })
    try {
      expect(first.firstToken).toMatch(/^\*:\*\.[0-9a-f]{64}$/)
      expect(await (await fetch(`${first.url}/health`)).json()).toEqual({ health: 'GOOD' })
      const created = await fetch(`${first.url}/api/admin/projects`, {
        method: 'POST',
        headers: { authorization: first.firstToken!, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Persisted' }),
      })
      expect(created.status).toBe(201)
    } finally {
      await first.close()
    }
    const second = await startServer({ ...readConfig({}), port: 0, host: '127.0.0.1', dataDir })
    try {
      expect(second.firstToken).toBeUndefined()
      const list = await fetch(`${second.url}/api/admin/projects`, { headers: { authorization: first.firstToken! } })
      expect(((await list.json()) as { projects: { id: string }[] }).projects.map((p: { id: string }) => p.id)).toContain('persisted')
    } finally {
      await second.close()
    }
  })

  it('creates the INIT_ADMIN_API_TOKENS once, and then no generated token', async () => {
    const dataDir = await migratedDir()
    const config = { ...readConfig({ INIT_ADMIN_API_TOKENS: '*:*.first-secret, *:*.second-secret' }), port: 0, host: '127.0.0.1', dataDir }
    for (let run = 0; run < 2; run++) {
      const server = await startServer(config)
      try {
        expect(server.firstToken).toBeUndefined()
        for (const token of ['*:*.first-secret', '*:*.second-secret']) {
          expect((await fetch(`${server.url}/api/admin/projects`, { headers: { authorization: token } })).status).toBe(200)
        }
        const tokens = (await (await fetch(`${server.url}/api/admin/api-tokens`, { headers: { authorization: '*:*.first-secret' } })).json()) as { tokens: unknown[] }
        expect(tokens.tokens).toHaveLength(2)
      } finally {
        await server.close()
      }
    }
  })

  it('creates an Admin user on the first start (with its event), whose printed password signs in, and none on later starts', async () => {
    const dataDir = await migratedDir()
    const config = { ...readConfig({ INIT_ADMIN_API_TOKENS: '*:*.user-secret' }), port: 0, host: '127.0.0.1', dataDir }
    const first = await startServer(config)
    let password: string
    try {
      expect(first.firstAdmin?.username).toBe('admin')
      password = first.firstAdmin!.password!
      expect(password).toMatch(/^[A-Za-z0-9]{20}$/)
      const signIn = await signInAs(first.url, 'admin', password)
      expect(signIn.status).toBe(200)
      const me = await fetch(`${first.url}/api/admin/user`, { headers: { cookie: signIn.cookie } })
      expect(await me.json()).toMatchObject({ user: { username: 'admin', rootRole: 1 }, permissions: [{ permission: 'ADMIN' }] })
      const events = await fetch(`${first.url}/api/admin/search/events?type=IS:user-created`, { headers: { authorization: '*:*.user-secret' } })
      const created = ((await events.json()) as { events: { createdBy: string; data: { username?: string } }[] }).events
      expect(created).toEqual([expect.objectContaining({ createdBy: 'system', data: expect.objectContaining({ username: 'admin' }) })])
    } finally {
      await first.close()
    }
    const second = await startServer(config)
    try {
      expect(second.firstAdmin).toBeUndefined()
      expect((await signInAs(second.url, 'admin', password)).status).toBe(200)
      const users = await fetch(`${second.url}/api/admin/user-admin`, { headers: { authorization: '*:*.user-secret' } })
      expect(((await users.json()) as { users: unknown[] }).users).toHaveLength(1)
    } finally {
      await second.close()
    }
  })

  it('names the first Admin user and sets its password from FLAGPOST_ADMIN_USERNAME and FLAGPOST_ADMIN_PASSWORD, printing no password', async () => {
    const dataDir = await migratedDir()
    const server = await startServer({ ...readConfig({ FLAGPOST_ADMIN_USERNAME: 'root', FLAGPOST_ADMIN_PASSWORD: 'a-long-password' }), port: 0, host: '127.0.0.1', dataDir })
    try {
      expect(server.firstAdmin).toEqual({ username: 'root' })
      expect((await signInAs(server.url, 'root', 'a-long-password')).status).toBe(200)
      expect((await signInAs(server.url, 'admin', 'a-long-password')).status).toBe(401)
    } finally {
      await server.close()
    }
  })

  it('serves the web console at / and its routes, and every app path as before', async () => {
    const consoleDir = await tempDir()
    await mkdir(join(consoleDir, 'assets'))
    await writeFile(join(consoleDir, 'index.html'), '<!doctype html><title>console</title>')
    await writeFile(join(consoleDir, 'assets', 'index-abc123.js'), 'console.log(1)')
    const server = await startServer({ ...readConfig({ INIT_ADMIN_API_TOKENS: '*:*.console-secret' }), port: 0, host: '127.0.0.1', dataDir: await migratedDir(), consoleDir })
    try {
      // The pages links lead to (a new user's, a public sign-up link's) are the console's too.
      for (const path of ['/', '/projects/checkout/flags/new-checkout', '/events?type=x', '/sign-up?invite=abc', '/new-user?token=abc']) {
        const page = await fetch(`${server.url}${path}`)
        expect([path, page.status, page.headers.get('cache-control'), await page.text()]).toEqual([path, 200, 'no-cache', '<!doctype html><title>console</title>'])
      }
      const asset = await fetch(`${server.url}/assets/index-abc123.js`)
      expect([asset.status, asset.headers.get('cache-control'), asset.headers.get('content-type')]).toEqual([200, 'public, max-age=31536000, immutable', expect.stringMatching(/javascript/)])
      // The console's security headers, on its page and its files (the app's paths keep their own).
      for (const response of [await fetch(`${server.url}/projects`), asset]) {
        for (const [name, value] of Object.entries(CONSOLE_HEADERS)) expect([response.url, name, response.headers.get(name)]).toEqual([response.url, name, value])
      }
      expect((await fetch(`${server.url}/health`)).headers.get('x-frame-options')).toBeNull()
      expect((await fetch(`${server.url}/assets/missing-123.js`)).status).toBe(404)

      const unknownApi = await fetch(`${server.url}/api/admin/no-such-thing`, { headers: { authorization: '*:*.console-secret' } })
      expect([unknownApi.status, ((await unknownApi.json()) as { name: string }).name]).toEqual([404, 'NotFoundError'])
      expect(await (await fetch(`${server.url}/health`)).json()).toEqual({ health: 'GOOD' })
      expect(((await (await fetch(`${server.url}/docs/openapi.json`)).json()) as { openapi: string }).openapi).toBe('3.1.0')
      expect(await (await fetch(`${server.url}/docs`)).text()).not.toContain('<title>console</title>')
      expect((await fetch(`${server.url}/logout`, { method: 'POST' })).status).toBe(200)
      const validate = await fetch(`${server.url}/invite/0123456789abcdef0123456789abcdef/validate`)
      expect([validate.status, ((await validate.json()) as { name: string }).name]).toEqual([400, 'ValidationError'])
      // Only GET and HEAD are the console's: another method on a console path reaches the app (and its 404).
      const post = await fetch(`${server.url}/projects`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      expect(post.status).toBe(404)
    } finally {
      await server.close()
    }
  })

  it('compresses: precompressed console files by Accept-Encoding (hashed assets immutable, index.html no-cache), JSON above 1 KiB, not small JSON nor event streams', async () => {
    const consoleDir = await tempDir()
    await mkdir(join(consoleDir, 'assets'))
    const html = `<!doctype html><title>console</title>${'<!-- padding -->'.repeat(100)}`
    const script = `console.log(${JSON.stringify('flag '.repeat(1000))})`
    await writeFile(join(consoleDir, 'index.html'), html)
    await writeFile(join(consoleDir, 'assets', 'index-abc123.js'), script)
    await writeFile(join(consoleDir, 'assets', 'tiny-abc123.js'), 'console.log(1)')
    await precompressConsole(consoleDir)
    const server = await startServer({ ...readConfig({ INIT_ADMIN_API_TOKENS: '*:*.compress-secret' }), port: 0, host: '127.0.0.1', dataDir: await migratedDir(), consoleDir })
    const get = (path: string, acceptEncoding: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers: { 'accept-encoding': acceptEncoding, ...headers } })
    const seen = async (response: Response) => [response.headers.get('content-encoding'), response.headers.get('vary'), response.headers.get('cache-control'), await response.text()]
    try {
      expect(await seen(await get('/assets/index-abc123.js', 'gzip, deflate, br'))).toEqual(['br', 'Accept-Encoding', 'public, max-age=31536000, immutable', script])
      expect(await seen(await get('/assets/index-abc123.js', 'gzip'))).toEqual(['gzip', 'Accept-Encoding', 'public, max-age=31536000, immutable', script])
      const plain = await get('/assets/index-abc123.js', 'identity')
      expect([plain.headers.get('content-encoding'), plain.headers.get('content-length'), await plain.text()]).toEqual([null, String(script.length), script])
      expect((await get('/assets/tiny-abc123.js', 'br')).headers.get('content-encoding')).toBeNull()
      for (const path of ['/', '/projects/big?sort=name&page=2']) expect(await seen(await get(path, 'br, gzip'))).toEqual(['br', 'Accept-Encoding', 'no-cache', html])

      const openapi = await get('/docs/openapi.json', 'gzip;q=0.5, br;q=0.9')
      expect([openapi.headers.get('content-encoding'), openapi.headers.get('vary')]).toEqual(['br', expect.stringMatching(/Accept-Encoding/)])
      expect(((await openapi.json()) as { openapi: string }).openapi).toBe('3.1.0')
      expect((await get('/docs/openapi.json', 'br;q=0, gzip')).headers.get('content-encoding')).toBe('gzip')
      expect((await get('/docs/openapi.json', 'identity')).headers.get('content-encoding')).toBeNull()
      const health = await get('/health', 'br, gzip')
      expect([health.headers.get('content-encoding'), await health.json()]).toEqual([null, { health: 'GOOD' }])

      const token = await fetch(`${server.url}/api/admin/api-tokens`, {
        method: 'POST',
        headers: { authorization: '*:*.compress-secret', 'content-type': 'application/json' },
        body: JSON.stringify({ tokenName: 'stream', type: 'client', projects: ['*'], environment: 'development' }),
      })
      const { secret } = (await token.json()) as { secret: string }
      const abort = new AbortController()
      const stream = await fetch(`${server.url}/api/client/streaming`, { headers: { authorization: secret, 'accept-encoding': 'br, gzip', accept: 'text/event-stream' }, signal: abort.signal })
      expect([stream.status, stream.headers.get('content-type'), stream.headers.get('content-encoding')]).toEqual([200, expect.stringMatching(/^text\/event-stream/), null])
      const first = await stream.body!.getReader().read()
      expect(new TextDecoder().decode(first.value)).toMatch(/event: hydration|^:|data:/)
      abort.abort()
    } finally {
      await server.close()
    }
  })

  it("gives Workers' static assets the same console headers (console/public/_headers)", async () => {
    const rules = await readFile(new URL('../console/public/_headers', import.meta.url), 'utf8')
    const all = rules.split(/\n(?=\S)/).find((block) => block.startsWith('/*\n'))!
    const headers = Object.fromEntries(all.split('\n').slice(1).filter((line) => line.trim()).map((line) => [line.trim().split(': ')[0], line.trim().slice(line.trim().indexOf(': ') + 2)]))
    expect(headers).toEqual(CONSOLE_HEADERS)
  })

  it('refuses malformed configuration', () => {
    expect(() => readConfig({ FLAGPOST_ADMIN_PASSWORD: 'short' })).toThrow(/FLAGPOST_ADMIN_PASSWORD/)
    expect(() => readConfig({ INIT_ADMIN_API_TOKENS: 'default:development.abc' })).toThrow(/INIT_ADMIN_API_TOKENS/)
    expect(() => readConfig({ PORT: 'eighty' })).toThrow(/PORT/)
    expect(readConfig({})).toMatchObject({ port: 4242, dataDir: './.flagpost', databaseUrl: undefined })
    // The frontend API's origins: a path or a wildcard host is refused by name; origins are kept as browsers send them.
    for (const bad of ['https://app.example.com/path', 'https://*.example.com', 'app.example.com', 'https://ok.example.com, ftp://x'])
      expect(() => readConfig({ FLAGPOST_FRONTEND_CORS_ORIGINS: bad }), bad).toThrow(/FLAGPOST_FRONTEND_CORS_ORIGINS/)
    expect(readConfig({ FLAGPOST_FRONTEND_CORS_ORIGINS: 'HTTPS://App.Example.com/, http://localhost:3000' }).frontendCorsOrigins).toEqual(['https://app.example.com', 'http://localhost:3000'])
  })

  it('does not start with a bad FLAGPOST_FRONTEND_CORS_ORIGINS: exits 1 naming it, listening on nothing', async () => {
    const dataDir = await tempDir()
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, FLAGPOST_DATA_DIR: dataDir, PORT: '0', FLAGPOST_FRONTEND_CORS_ORIGINS: 'https://*.example.com' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    expect(code).toBe(1)
    expect(output).toContain('FLAGPOST_FRONTEND_CORS_ORIGINS')
    expect(output).not.toContain('listening on')
  })
})

/** Signs in over HTTP as a browser would (same origin); the session cookie to send back. */
async function signInAs(url: string, username: string, password: string) {
  const response = await fetch(`${url}/auth/simple/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ username, password }),
  })
  return { status: response.status, cookie: (response.headers.get('set-cookie') ?? '').split(';')[0]! }
}

describe('request bodies over HTTP', () => {
  it('limits a body of declared length and a chunked one alike, and reads both', async () => {
    const dataDir = await migratedDir()
    const server = await startServer({ ...readConfig({ INIT_ADMIN_API_TOKENS: '*:*.body-secret' }), port: 0, host: '127.0.0.1', dataDir })
    try {
      const { hostname, port } = new URL(server.url)
      // A raw HTTP/1.1 request, so the framing (Content-Length or chunked) is exactly what is tested.
      const send = (framing: 'length' | 'chunked' | 'none', body: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const socket = connect({ host: hostname, port: Number(port) }, () => {
            const head = [`POST /api/admin/projects HTTP/1.1`, `host: ${hostname}`, 'authorization: *:*.body-secret', 'content-type: application/json', 'connection: close']
            const bytes = Buffer.from(body)
            if (framing === 'none') socket.end(`${head.join('\r\n')}\r\n\r\n`)
            else if (framing === 'length') socket.end(`${[...head, `content-length: ${bytes.length}`].join('\r\n')}\r\n\r\n${body}`)
            else {
              socket.write(`${[...head, 'transfer-encoding: chunked'].join('\r\n')}\r\n\r\n`)
              for (let i = 0; i < bytes.length; i += 64 * 1024) {
                const chunk = bytes.subarray(i, i + 64 * 1024)
                socket.write(`${chunk.length.toString(16)}\r\n`)
                socket.write(chunk)
                socket.write('\r\n')
              }
              socket.end('0\r\n\r\n')
            }
          })
          let answer = ''
          socket.on('data', (d) => (answer += d.toString()))
          socket.on('end', () => resolve({ status: Number(answer.split(' ')[1]), body: answer.slice(answer.indexOf('\r\n\r\n') + 4) }))
          socket.on('error', reject)
        })
      const big = JSON.stringify({ name: 'big', description: 'x'.repeat(1024 * 1024 + 10) })
      for (const framing of ['length', 'chunked'] as const) {
        const tooLarge = await send(framing, big)
        expect(tooLarge.status, framing).toBe(413)
        expect(tooLarge.body).toContain('PayloadTooLargeError')
        const created = await send(framing, JSON.stringify({ name: `Over ${framing}` }))
        expect(created.status, created.body).toBe(201)
        const malformed = await send(framing, '{"name": ')
        expect(malformed.status).toBe(400)
      }
      // Neither header: no body, which this route needs.
      const none = await send('none', '')
      expect(none.status).toBe(400)
      expect(none.body).toContain('ValidationError')
    } finally {
      await server.close()
    }
  })
})
