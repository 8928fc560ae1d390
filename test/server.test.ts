import { connect } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readConfig, startServer } from '../src/server.js'

const dirs: string[] = []
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'flagpost-server-'))
  dirs.push(dir)
  return dir
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

describe('the Node server (npm start)', () => {
  it('starts on an empty data folder, prints a first admin token that works, and keeps data across restarts', async () => {
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
    const dataDir = await tempDir()
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

  it('refuses malformed configuration', () => {
    expect(() => readConfig({ INIT_ADMIN_API_TOKENS: 'default:development.abc' })).toThrow(/INIT_ADMIN_API_TOKENS/)
    expect(() => readConfig({ PORT: 'eighty' })).toThrow(/PORT/)
    expect(readConfig({})).toMatchObject({ port: 4242, dataDir: './.flagpost', databaseUrl: undefined })
  })
})

describe('request bodies over HTTP', () => {
  it('limits a body of declared length and a chunked one alike, and reads both', async () => {
    const dataDir = await tempDir()
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
