// A client that hangs up ends its SDK stream at once on the Node server: `flagpost_streams_open` falls back and the
// per-address and per-token stream limits take a new stream, long before the next keep-alive (set to a minute here,
// so without the hang-up handling the stream would stay counted for the whole test).
import { rm } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readConfig, startServer } from '../src/server.js'
import { migratedDataDir } from './helpers/data-dir.js'
import { adminCaller } from './helpers/server.js'

const ADMIN = '*:*.stream-hang-up-test-admin-token'
const SCRAPE = 'stream-hang-up-scrape-token'
let server: Awaited<ReturnType<typeof startServer>>
let dataDir: string
let client: string

beforeAll(async () => {
  dataDir = await migratedDataDir('flagpost-hang-up-')
  server = await startServer({
    ...readConfig({ INIT_ADMIN_API_TOKENS: ADMIN, FLAGPOST_METRICS_TOKEN: SCRAPE }),
    port: 0,
    host: '127.0.0.1',
    dataDir,
    // One stream per address and per token: a stream still counted refuses the next one with 429.
    streaming: { keepAliveMs: 60_000, maxPerAddress: 1, maxPerToken: 1 },
  })
  const admin = adminCaller(() => server.url, ADMIN)
  client = ((await admin('POST', '/api/admin/api-tokens', { tokenName: 'hang-up', type: 'client', environment: 'development' })) as { secret: string }).secret
})
afterAll(async () => {
  await server?.close()
  await rm(dataDir, { recursive: true, force: true })
})

/** `GET /api/client/streaming` over a socket of its own; resolves with the socket once the first bytes of the answer arrived. */
function openStream(): Promise<{ socket: Socket; head: string }> {
  const { hostname, port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET /api/client/streaming HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${client}\r\nUnleash-Client-Spec: 5.2.0\r\nAccept: text/event-stream\r\n\r\n`)
    })
    socket.setEncoding('utf8')
    socket.once('data', (head: string) => resolve({ socket, head }))
    socket.once('error', reject)
  })
}

const openStreams = async () => {
  const text = await (await fetch(`${server.url}/internal-backstage/prometheus`, { headers: { authorization: `Bearer ${SCRAPE}` } })).text()
  return Number(/^flagpost_streams_open\{kind="sdk"\} (\d+)$/m.exec(text)?.[1])
}

/** The status of a new stream request (its stream, if any, cancelled at once). */
const newStreamStatus = async () => {
  const res = await fetch(`${server.url}/api/client/streaming`, { headers: { authorization: client, 'unleash-client-spec': '5.2.0' } })
  await res.body?.cancel()
  return res.status
}

describe('GET /api/client/streaming when its client hangs up', () => {
  it('ends the stream at once: the gauge falls back and the per-address and per-token limits take a new stream', async () => {
    const { socket, head } = await openStream()
    expect(head).toMatch(/^HTTP\/1\.1 200/)
    expect(await openStreams()).toBe(1)
    // The limits hold while it is open.
    expect(await newStreamStatus()).toBe(429)
    socket.destroy()
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(0)
    await expect.poll(newStreamStatus, { timeout: 5_000 }).toBe(200)
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(0)
  })

  it('ends a stream whose client closed its side before the stream started', async () => {
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(0)
    const { hostname, port } = new URL(server.url)
    const { socket } = await new Promise<{ socket: Socket }>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        // The request and the client's FIN together: the stream is made after the hang-up.
        socket.end(`GET /api/client/streaming HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${client}\r\nUnleash-Client-Spec: 5.2.0\r\n\r\n`)
        resolve({ socket })
      })
      socket.once('error', reject)
    })
    socket.on('error', () => {})
    socket.resume()
    await new Promise((resolve) => socket.once('close', resolve))
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(0)
    await expect.poll(newStreamStatus, { timeout: 5_000 }).toBe(200)
  })

  it('counts no stream for HEAD: its headers, and a new stream is still admitted', async () => {
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(0)
    for (let i = 0; i < 3; i++) {
      const head = await fetch(`${server.url}/api/client/streaming`, { method: 'HEAD', headers: { authorization: client, 'unleash-client-spec': '5.2.0' } })
      expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/event-stream'])
    }
    expect(await openStreams()).toBe(0)
    expect(await newStreamStatus()).toBe(200)
  })

  it('refuses a stream pipelined behind another on its connection, and the hang-up ends the first', async () => {
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(0)
    const request = streamRequest()
    const socket = await rawSocket(request + request + request)
    // Only the first is a stream (the limit is one per address: the others would be 429s otherwise, or counted forever).
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(1)
    socket.destroy()
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(0)
    await expect.poll(newStreamStatus, { timeout: 5_000 }).toBe(200)
  })

  it('sees the hang-up of a stream request that sent a body it never reads', async () => {
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(0)
    const socket = await rawSocket(streamRequest('Content-Length: 10000000\r\n'), 'x'.repeat(200_000))
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(1)
    socket.end()
    await expect.poll(openStreams, { timeout: 5_000 }).toBe(0)
    await expect.poll(newStreamStatus, { timeout: 5_000 }).toBe(200)
  })
})

/** `GET /api/client/streaming` as raw HTTP/1.1, with `extra` header lines. */
const streamRequest = (extra = '') => `GET /api/client/streaming HTTP/1.1\r\nHost: ${new URL(server.url).hostname}\r\nAuthorization: ${client}\r\nUnleash-Client-Spec: 5.2.0\r\n${extra}\r\n`

/** A socket to the server that has written `chunks` (its answers read and dropped, its errors ignored). */
function rawSocket(...chunks: string[]): Promise<Socket> {
  const { hostname, port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      for (const chunk of chunks) socket.write(chunk)
      socket.on('error', () => {})
      socket.resume()
      resolve(socket)
    })
    socket.once('error', reject)
  })
}
