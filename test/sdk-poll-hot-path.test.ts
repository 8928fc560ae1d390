import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readConfig, startServer } from '../src/server.js'
import { TrieRouter } from 'hono/router/trie-router'
import { MemoRouter } from '../src/http/route-memo.js'
import { migratedDataDir } from './helpers/data-dir.js'
import { rawRequest } from './helpers/server.js'

/*
 * The SDK poll's hot path over real HTTP (node-server writes the answer): an unchanged poll's 304 is made with all its
 * headers in one record, and the app's router remembers its matches. What a client sees must not change.
 */
const ADMIN = '*:*.hot-path-admin-secret-0123456789'
const CLIENT = 'default:development.hot-path-client-secret-0123456789'
let server: Awaited<ReturnType<typeof startServer>>
let dataDir: string

beforeAll(async () => {
  dataDir = await migratedDataDir('flagpost-hot-')
  server = await startServer({
    ...readConfig({ INIT_CLIENT_API_TOKENS: CLIENT }),
    port: 0,
    host: '127.0.0.1',
    dataDir,
    initAdminTokens: [ADMIN],
  })
  for (const name of ['hot-a', 'hot-b']) {
    const created = await fetch(`${server.url}/api/admin/projects/default/features`, {
      method: 'POST',
      headers: { authorization: ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ name, description: `the flag ${name}` }),
    })
    expect(created.status).toBe(201)
  }
})
afterAll(async () => {
  await server.close()
  await rm(dataDir, { recursive: true, force: true })
})

const raw = (path: string, headers: Record<string, string>) => rawRequest(server.url, path, { headers })

const named = (rawHeaders: string[], name: string) => rawHeaders.filter((_, i) => i % 2 === 0 && rawHeaders[i]!.toLowerCase() === name).length
const valueOf = (rawHeaders: string[], name: string) => rawHeaders[rawHeaders.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === name) + 1] ?? ''

describe('an unchanged SDK poll over HTTP', () => {
  it('answers 304 with no body, the ETag and X-Request-Id once each, the client’s id kept, as the 200 does', async () => {
    const sdk = { authorization: CLIENT, 'unleash-appname': 'hot', 'unleash-client-spec': '5.2.0' }
    const full = await raw('/api/client/features', sdk)
    expect(full.status).toBe(200)
    const etag = valueOf(full.rawHeaders, 'etag')
    expect(etag).toMatch(/^"[0-9a-f]+"$/)
    expect(named(full.rawHeaders, 'x-request-id')).toBe(1)
    for (const path of ['/api/client/features', '/api/client/delta']) {
      const unchanged = await raw(path, { ...sdk, 'if-none-match': etag, 'x-request-id': 'poll-7f3a' })
      expect(unchanged.status).toBe(304)
      expect(unchanged.body).toBe('')
      expect(named(unchanged.rawHeaders, 'etag')).toBe(1)
      expect(valueOf(unchanged.rawHeaders, 'etag')).toBe(etag)
      expect(named(unchanged.rawHeaders, 'x-request-id')).toBe(1)
      expect(valueOf(unchanged.rawHeaders, 'x-request-id')).toBe('poll-7f3a')
      const made = await raw(path, { ...sdk, 'if-none-match': etag })
      expect(valueOf(made.rawHeaders, 'x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
      expect(valueOf(made.rawHeaders, 'x-request-id')).not.toBe(valueOf(unchanged.rawHeaders, 'x-request-id'))
    }
  })

  it('routes each path to its own flag however often the same paths are asked, and long paths too', async () => {
    for (let round = 0; round < 3; round++) {
      for (const name of ['hot-a', 'hot-b']) {
        const res = await fetch(`${server.url}/api/admin/projects/default/features/${name}`, { headers: { authorization: ADMIN } })
        expect(res.status).toBe(200)
        expect(((await res.json()) as { name: string }).name).toBe(name)
      }
      const sdkFlag = await fetch(`${server.url}/api/client/features/hot-b`, { headers: { authorization: CLIENT } })
      expect(((await sdkFlag.json()) as { name: string }).name).toBe('hot-b')
    }
    // Beyond what the router remembers: matched every time, answered by the same route.
    const long = 'x'.repeat(300)
    const missing = await fetch(`${server.url}/api/admin/projects/default/features/${long}`, { headers: { authorization: ADMIN } })
    expect(missing.status).toBe(404)
    expect(Object.keys((await missing.json()) as object).sort()).toEqual(['id', 'message', 'name'])
  })
})

describe('answers to a client that takes no encoding', () => {
  it('go in one piece with their length (not chunked), marked Vary: Accept-Encoding above 1 KiB, unmarked below', async () => {
    const big = await raw('/api/admin/projects/default/features/hot-a', { authorization: ADMIN })
    expect(big.status).toBe(200)
    expect(JSON.parse(big.body)).toMatchObject({ name: 'hot-a', description: 'the flag hot-a' })
    expect(Buffer.byteLength(big.body)).toBeGreaterThanOrEqual(1024)
    expect(valueOf(big.rawHeaders, 'content-length')).toBe(String(Buffer.byteLength(big.body)))
    expect(named(big.rawHeaders, 'transfer-encoding')).toBe(0)
    expect(valueOf(big.rawHeaders, 'vary')).toBe('Accept-Encoding')
    const small = await raw('/health', {})
    expect(JSON.parse(small.body)).toEqual({ health: 'GOOD' })
    expect(valueOf(small.rawHeaders, 'content-length')).toBe(String(Buffer.byteLength(small.body)))
    expect(named(small.rawHeaders, 'vary')).toBe(0)
    // A client that takes gzip still gets it compressed.
    const zipped = await fetch(`${server.url}/api/admin/projects/default/features/hot-a`, { headers: { authorization: ADMIN, 'accept-encoding': 'gzip' } })
    expect([zipped.headers.get('content-encoding'), zipped.headers.get('vary'), ((await zipped.json()) as { name: string }).name]).toEqual(['gzip', 'Accept-Encoding', 'hot-a'])
  })
})

describe('MemoRouter', () => {
  it('answers what the router it wraps answers, stays bounded, and forgets its matches when a route is added', () => {
    const routes: [string, string, string][] = [
      ['GET', '/flags/:name', 'flag'],
      ['ALL', '/flags/*', 'guard'],
      ['GET', '/flags/:name/events', 'events'],
    ]
    const memo = new MemoRouter<string>(new TrieRouter(), 2)
    const plain = new TrieRouter<string>()
    for (const [method, path, handler] of routes) {
      memo.add(method, path, handler)
      plain.add(method, path, handler)
    }
    const asked: [string, string][] = [['GET', '/flags/a'], ['GET', '/flags/b'], ['POST', '/flags/a'], ['GET', '/flags/c/events'], ['GET', '/other'], ['GET', `/flags/${'y'.repeat(300)}`]]
    for (let round = 0; round < 3; round++) {
      for (const [method, path] of asked) expect(JSON.stringify(memo.match(method, path))).toBe(JSON.stringify(plain.match(method, path)))
    }
    expect(memo.match('GET', '/flags/a')[0].map(([handler]) => handler)).toEqual(['flag', 'guard'])
    memo.add('GET', '/flags/a', 'a only')
    expect(memo.match('GET', '/flags/a')[0].map(([handler]) => handler)).toContain('a only')
  })
})
