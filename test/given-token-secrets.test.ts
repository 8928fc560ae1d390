import { rm } from 'node:fs/promises'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { readConfig, startServer } from '../src/server.js'
import { createTestApp } from './helpers/app.js'
import { createUser } from './helpers/factories.js'
import { migratedDataDir } from './helpers/data-dir.js'

// SDK tokens keep working after a move from Unleash: a client or frontend token may be given its secret
// (POST /api/admin/api-tokens `secret`, INIT_CLIENT_API_TOKENS, INIT_FRONTEND_API_TOKENS).

const dirs: string[] = []
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

const RANDOM = '56a1b2c3d4e5f60718293a4b5c6d7e8f'

describe('a given secret for a client or frontend token', () => {
  it('is taken in Unleash’s form with the token’s scope, and the SDK APIs accept it', async () => {
    const t = await createTestApp()
    try {
      const secret = `default:development.${RANDOM}`
      const created = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'kept', type: 'backend', project: 'default', environment: 'development', secret } })
      expect(created.status, created.text).toBe(201)
      expect(created.body.secret).toBe(secret)
      expect((await t.call('GET', '/api/client/features', { token: secret })).status).toBe(200)
      const all = `*:production.${RANDOM}x`
      expect((await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'fe', type: 'frontend', environment: 'production', secret: all } })).status).toBe(201)
      expect((await t.call('GET', '/api/frontend', { token: all })).status).toBe(200)
      // The event carries no secret.
      expect(await t.query(`select id from events where data::text like '%${RANDOM}%'`)).toEqual([])
      // Taken already: 409, and nothing said of whose it is.
      const again = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'other', type: 'client', project: 'default', environment: 'development', secret } })
      expect(again.status).toBe(409)
      expect(again.text).not.toContain(RANDOM)
    } finally {
      await t.close()
    }
  })

  it('is refused when its scope is not the token’s, its random part is short or odd, or the token is an admin token', async () => {
    const t = await createTestApp()
    try {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ type: 'client', project: 'default', environment: 'development', secret: `default:production.${RANDOM}` }, /must begin with default:development\./],
        [{ type: 'client', environment: 'development', secret: `default:development.${RANDOM}` }, /must begin with \*:development\./],
        [{ type: 'client', projects: ['default', 'default2'], environment: 'development', secret: `*:development.${RANDOM}` }, /must begin with \[\]:development\./],
        [{ type: 'client', project: 'default', environment: 'development', secret: 'default:development.short' }, /random part/],
        [{ type: 'client', project: 'default', environment: 'development', secret: `default:development.${RANDOM}!<>` }, /random part/],
        [{ type: 'client', project: 'default', environment: 'development', secret: RANDOM }, /form/],
        [{ type: 'admin', secret: `*:*.${RANDOM}` }, /client and frontend tokens only/],
      ]
      for (const [body, message] of cases) {
        const res = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'x', ...body } })
        expect(res.status, JSON.stringify(body)).toBe(400)
        expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringMatching(message) })
      }
      // An Editor creating a client token may give its secret; a Viewer may not create one at all.
      const viewer = await createUser(t, 'Viewer')
      expect((await viewer.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'v', type: 'client', environment: 'development', secret: `*:development.${RANDOM}` } })).status).toBe(403)
    } finally {
      await t.close()
    }
  })
})

describe('INIT_CLIENT_API_TOKENS and INIT_FRONTEND_API_TOKENS', () => {
  it('creates the tokens at start-up when missing, once, and skips one of an unknown environment naming only its scope', async () => {
    const dataDir = await migratedDataDir('flagpost-init-tokens-')
    dirs.push(dataDir)
    const client = `default:development.${RANDOM}`
    const frontend = `*:production.${RANDOM}`
    const unknown = `default:nowhere.${RANDOM}`
    const config = {
      ...readConfig({ INIT_ADMIN_API_TOKENS: '*:*.init-admin-secret', INIT_CLIENT_API_TOKENS: `${client},${unknown}`, INIT_FRONTEND_API_TOKENS: frontend }),
      port: 0,
      host: '127.0.0.1',
      dataDir,
    }
    const warned: string[] = []
    const spy = vi.spyOn(console, 'warn').mockImplementation((...args) => void warned.push(args.map(String).join(' ')))
    try {
      for (let run = 0; run < 2; run++) {
        const server = await startServer(config)
        try {
          expect((await fetch(`${server.url}/api/client/features`, { headers: { authorization: client } })).status).toBe(200)
          expect((await fetch(`${server.url}/api/frontend`, { headers: { authorization: frontend } })).status).toBe(200)
          const tokens = (await (await fetch(`${server.url}/api/admin/api-tokens`, { headers: { authorization: '*:*.init-admin-secret' } })).json()) as { tokens: { tokenName: string }[] }
          expect(tokens.tokens.map((t) => t.tokenName).sort()).toEqual(['init-admin-token-1', 'init-client-token-1', 'init-frontend-token-3'])
        } finally {
          await server.close()
        }
      }
      expect(warned.join('\n')).toContain('client token default:nowhere')
      expect(warned.join('\n')).not.toContain(RANDOM)
    } finally {
      spy.mockRestore()
    }
  })

  it('refuses a malformed secret at start-up without printing it', () => {
    expect(() => readConfig({ INIT_CLIENT_API_TOKENS: 'default:development.abc' })).toThrow(/INIT_CLIENT_API_TOKENS: a token \(default:development\) is refused: the random part/)
    expect(() => readConfig({ INIT_FRONTEND_API_TOKENS: `nothing-${RANDOM}` })).toThrow(/INIT_FRONTEND_API_TOKENS/)
    expect(() => readConfig({ INIT_FRONTEND_API_TOKENS: `nothing-${RANDOM}` })).not.toThrow(new RegExp(RANDOM))
  })
})
