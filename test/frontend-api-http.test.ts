import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readConfig, startServer } from '../src/server.js'
import { migratedDataDir } from './helpers/data-dir.js'
import { adminCaller, rawRequest } from './helpers/server.js'

/*
 * The frontend API over real HTTP (node-server writes the answer): its CORS headers are set on the route's own answer,
 * which then goes whole with its length, as any answer held whole does. (Set on a provisional answer before the route
 * and appended with `c.header` after it, they made Hono copy the answer into Web `Response`s with streamed bodies:
 * chunked, and about a tenth of the request's CPU.)
 */
const ADMIN = '*:*.frontend-http-admin-secret-0123456789'
const FRONTEND = 'default:development.frontend-http-secret-0123456789'
let server: Awaited<ReturnType<typeof startServer>>
let dataDir: string

beforeAll(async () => {
  dataDir = await migratedDataDir('flagpost-frontend-http-')
  server = await startServer({ ...readConfig({ INIT_FRONTEND_API_TOKENS: FRONTEND }), port: 0, host: '127.0.0.1', dataDir, initAdminTokens: [ADMIN] })
  const admin = adminCaller(() => server.url, ADMIN)
  // Enough flags on for an answer over 1 KiB (the size from which a client asking for it would get it compressed).
  for (let i = 0; i < 12; i++) {
    await admin('POST', '/api/admin/projects/default/features', { name: `frontend-http-${i}` })
    await admin('POST', `/api/admin/projects/default/features/frontend-http-${i}/environments/development/on`)
  }
})
afterAll(async () => {
  await server.close()
  await rm(dataDir, { recursive: true, force: true })
})

const raw = (path: string, headers: Record<string, string>, method = 'GET') => rawRequest(server.url, path, { headers, method })

describe('the frontend API over HTTP', () => {
  it('answers whole with its length and the CORS headers, Vary naming Origin and Accept-Encoding', async () => {
    const res = await raw('/api/frontend?userId=1', { authorization: FRONTEND, origin: 'https://shop.example' })
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body).toggles).toHaveLength(12)
    expect(res.headers['transfer-encoding']).toBeUndefined()
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body))
    expect(Buffer.byteLength(res.body)).toBeGreaterThan(1024)
    expect(res.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'ETag',
      vary: 'Origin, Accept-Encoding',
      'cache-control': 'no-cache',
      'content-type': 'application/json; charset=UTF-8',
    })
    expect(res.headers.etag).toMatch(/^W\/"[0-9a-f]{32}"$/)
    // The unchanged answer: 304 with the same caching and CORS headers.
    const unchanged = await raw('/api/frontend?userId=1', { authorization: FRONTEND, origin: 'https://shop.example', 'if-none-match': res.headers.etag as string })
    expect(unchanged.status).toBe(304)
    expect(unchanged.headers).toMatchObject({ etag: res.headers.etag, 'cache-control': 'no-cache', 'access-control-allow-origin': '*', 'access-control-expose-headers': 'ETag', vary: 'Origin' })
  })

  it('answers OFREP\'s unchanged bulk evaluation 304 with Cache-Control as its 200', async () => {
    const post = (headers: Record<string, string>) =>
      rawRequest(server.url, '/ofrep/v1/evaluate/flags', {
        method: 'POST',
        headers: { authorization: FRONTEND, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ context: { targetingKey: 'u1' } }),
      })
    const first = await post({})
    expect(first.status).toBe(200)
    expect(first.headers['cache-control']).toBe('no-cache')
    const unchanged = await post({ 'if-none-match': first.headers.etag as string })
    expect(unchanged.status).toBe(304)
    expect(unchanged.headers).toMatchObject({ etag: first.headers.etag, 'cache-control': 'no-cache', vary: 'Origin' })
  })

  it('gives an error the CORS headers too, and answers a preflight before authentication', async () => {
    const refused = await raw('/api/frontend', { authorization: 'default:development.unknown', origin: 'https://shop.example' })
    expect(refused.status).toBe(401)
    expect(refused.headers).toMatchObject({ 'access-control-allow-origin': '*', 'access-control-expose-headers': 'ETag', vary: 'Origin' })
    const preflight = await raw('/api/frontend', { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' }, 'OPTIONS')
    expect(preflight.status).toBe(204)
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET,POST,OPTIONS',
      'access-control-allow-headers': 'authorization',
      'access-control-max-age': '86400',
    })
  })
})
