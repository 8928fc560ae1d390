// Limits of the README's "Limits" table that no other test file holds.
import { describe, expect, it } from 'vitest'
import { streamHub } from '../src/client-api/streaming.js'
import { frontendContext } from '../src/frontend-api/context.js'
import { KEPT_PER_ENDPOINT } from '../src/signals/incoming.js'
import { createTestApp } from './helpers/app.js'
import { createToken, flagOnWithClientToken } from './helpers/factories.js'
import { Lru } from '../src/core/lru.js'

describe('SDK streams on this server (FLAGPOST_MAX_STREAMS)', () => {
  it('answers 429 TooManyRequestsError past the total, whatever the token or address, and takes a stream again once one ends', async () => {
    const t = await createTestApp({ streams: streamHub({ maxConnections: 1 }) })
    try {
      const first = await flagOnWithClientToken(t)
      const second = await flagOnWithClientToken(t)
      const open = (token: string) => {
        const controller = new AbortController()
        return { controller, response: t.app.request('/api/client/streaming', { headers: { authorization: token, 'unleash-client-spec': '5.2.0' }, signal: controller.signal }) }
      }
      const held = open(first.token)
      expect((await held.response).status).toBe(200)
      const refused = await open(second.token).response
      expect(refused.status).toBe(429)
      expect((await refused.json()) as { name: string; message: string }).toMatchObject({ name: 'TooManyRequestsError', message: expect.stringContaining('on this server') })
      held.controller.abort()
      await (await held.response).body?.cancel().catch(() => {})
      await expect.poll(async () => {
        const again = open(second.token)
        const status = (await again.response).status
        again.controller.abort()
        await (await again.response).body?.cancel().catch(() => {})
        return status
      }).toBe(200)
    } finally {
      await t.close()
    }
  })
})

describe('the frontend API context', () => {
  it('keeps at most 100 properties, and values whole (a longer value than the route takes is refused there, never cut)', () => {
    const fields: Record<string, unknown> = { userId: 'u'.repeat(5_000) }
    for (let i = 0; i < 150; i++) fields[`field${i}`] = `value ${i}`
    fields.properties = { long: 'x'.repeat(5_000) }
    const context = frontendContext(fields, { environment: 'development' })
    expect(Object.keys(context.properties ?? {})).toHaveLength(100)
    expect(context.properties?.field0).toBe('value 0')
    expect(context.properties?.field120).toBeUndefined()
    expect(context.userId).toHaveLength(5_000)
  })
})

describe('signals kept per endpoint', () => {
  it('keeps the newest 1,000 of an endpoint: a new signal drops the oldest', async () => {
    const t = await createTestApp()
    try {
      expect(KEPT_PER_ENDPOINT).toBe(1_000)
      const endpoint = (await t.call('POST', '/api/admin/signal-endpoints', { body: { name: 'kept-alerts' } })).body as { id: number; name: string }
      const token = (await t.call('POST', `/api/admin/signal-endpoints/${endpoint.id}/tokens`, { body: { name: 'grafana' } })).body as { token: string }
      await t.query(`insert into signals (source_id, payload) select $1, jsonb_build_object('n', n) from generate_series(1, 1000) n`, [endpoint.id])
      const sent = await t.call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: `Bearer ${token.token}`, body: { n: 'new' } })
      expect(sent.status, sent.text).toBe(200)
      const rows = await t.query<{ n: string }>(`select payload->>'n' as n from signals where source_id = $1 order by id`, [endpoint.id])
      expect(rows).toHaveLength(1_000)
      expect(rows[0]!.n).toBe('2')
      expect(rows.at(-1)!.n).toBe('new')
    } finally {
      await t.close()
    }
  })
})

describe('the context length limit (FLAGPOST_CONTEXT_VALUE_MAX_LENGTH) holds property names and currentTime too', () => {
  const LONG_NAME = 'k'.repeat(100_000)
  const refusedName = (res: { status: number; body: any }, path: string) => {
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400)
    expect(res.body).toMatchObject({ id: expect.any(String), name: 'ValidationError', message: expect.stringMatching(/a property name is (100000|5000) characters long, more than the limit of 1000 /) })
    expect(res.body.details).toEqual([{ path, message: 'must be at most 1000 characters' }])
  }

  it('the frontend API: a 100,000-character property name (in properties, as a custom field or properties[…]) is a 400', async () => {
    const t = await createTestApp()
    try {
      const token = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'names', type: 'frontend', environment: 'development', projects: ['default'] } })
      expect(token.status, token.text).toBe(201)
      const frontend = token.body.secret as string
      refusedName(await t.call('POST', '/api/frontend', { token: frontend, body: { context: { appName: 'web', properties: { [LONG_NAME]: 'x' } } } }), 'properties')
      refusedName(await t.call('POST', '/api/frontend', { token: frontend, body: { context: { appName: 'web', [LONG_NAME]: 'x' } } }), 'properties')
      refusedName(await t.call('GET', `/api/frontend?appName=web&properties[${LONG_NAME.slice(0, 5_000)}]=x`, { token: frontend }), 'properties')
      // A name at the limit is taken.
      expect((await t.call('POST', '/api/frontend', { token: frontend, body: { context: { appName: 'web', properties: { ['k'.repeat(1_000)]: 'x' } } } })).status).toBe(200)
      const longTime = `Mon, 01 Jan 2026 00:00:00 GMT (${'a'.repeat(2_000)})`
      const time = await t.call('POST', '/api/frontend', { token: frontend, body: { context: { appName: 'web', currentTime: longTime } } })
      expect(time.status, time.text.slice(0, 300)).toBe(400)
      expect(time.body.details).toEqual([{ path: 'currentTime', message: 'must be at most 1000 characters' }])
    } finally {
      await t.close()
    }
  })

  it('the playgrounds: a long property or custom field name, and a currentTime longer than the limit, are a 400', async () => {
    const t = await createTestApp()
    try {
      const playground = (context: Record<string, unknown>) => t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: '*', context: { appName: 'web', ...context } } })
      const advanced = (context: Record<string, unknown>) =>
        t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], projects: '*', context: { appName: 'web', ...context } } })
      for (const run of [playground, advanced]) {
        refusedName(await run({ properties: { [LONG_NAME]: 'x' } }), 'context.properties')
        refusedName(await run({ [LONG_NAME]: 'x' }), 'context')
        const times = Array.from({ length: 60 }, (_, i) => `2026-01-01T00:${String(i).padStart(2, '0')}:00Z`).join(',')
        expect(times.length).toBeGreaterThan(1_000)
        const time = await run({ currentTime: times })
        expect(time.status, time.text.slice(0, 300)).toBe(400)
        expect(time.body.details).toEqual([{ path: 'context.currentTime', message: 'must be at most 1000 characters' }])
        expect((await run({ properties: { ['k'.repeat(1_000)]: 'x' }, currentTime: '2026-01-01T00:00:00Z' })).status).toBe(200)
      }
    } finally {
      await t.close()
    }
  })
})

describe('a payload heavier than the payload cache', () => {
  it('is still kept as the newest: the second SDK poll and frontend call do not rebuild it', async () => {
    const builds: string[] = []
    // Every payload weighs more than 64 "bytes": each is over the cache's weight alone, as a payload over 16 MiB is over 64 MiB.
    const t = await createTestApp({ sdk: { maxPayloadBytes: 64, onBuild: (key) => builds.push(key) } })
    try {
      const { token, project } = await flagOnWithClientToken(t)
      const frontend = (await createToken(t, { type: 'frontend', environment: 'development', projects: [project] })).secret as string
      for (let i = 0; i < 3; i++) expect((await t.app.request('/api/client/features', { headers: { authorization: token } })).status).toBe(200)
      expect(builds).toHaveLength(1)
      for (let i = 0; i < 3; i++) expect((await t.app.request('/api/frontend', { headers: { authorization: frontend } })).status).toBe(200)
      // One build per scope (the client token's, then the frontend token's), not one per request.
      expect(builds.length).toBeLessThanOrEqual(2)
    } finally {
      await t.close()
    }
  })

  it('each new namePrefix is derived from the scope\'s kept payload: namePrefix values never rebuild it from the database', async () => {
    const builds: string[] = []
    const t = await createTestApp({ sdk: { maxPayloadBytes: 64, onBuild: (key) => builds.push(key) } })
    try {
      const { token, flag } = await flagOnWithClientToken(t)
      const poll = async (namePrefix: string) => {
        const response = await t.app.request(`/api/client/features?namePrefix=${encodeURIComponent(namePrefix)}`, { headers: { authorization: token } })
        expect(response.status).toBe(200)
        return ((await response.json()) as { features: { name: string }[]; query: { namePrefix?: string } })
      }
      for (let length = 1; length <= flag.length; length++) {
        const body = await poll(flag.slice(0, length))
        expect(body.features.map((f) => f.name)).toEqual([flag])
        expect(body.query.namePrefix).toBe(flag.slice(0, length))
      }
      expect((await poll(`${flag}-none`)).features).toEqual([])
      // One build: the scope without a namePrefix, every prefix filtered from it in memory.
      expect(builds).toHaveLength(1)
    } finally {
      await t.close()
    }
  })

  it('a few scopes each over the weight do not evict each other: alternating tokens do not rebuild per request', async () => {
    const builds: string[] = []
    const t = await createTestApp({ sdk: { maxPayloadBytes: 64, onBuild: (key) => builds.push(key) } })
    try {
      const first = await flagOnWithClientToken(t)
      const second = await flagOnWithClientToken(t)
      const frontend = (await createToken(t, { type: 'frontend', environment: 'development', projects: [first.project] })).secret as string
      for (let i = 0; i < 4; i++) {
        expect((await t.app.request('/api/client/features', { headers: { authorization: first.token } })).status).toBe(200)
        expect((await t.app.request('/api/client/features', { headers: { authorization: second.token } })).status).toBe(200)
        expect((await t.app.request('/api/frontend', { headers: { authorization: frontend } })).status).toBe(200)
      }
      expect(new Set(builds).size).toBe(builds.length)
      expect(builds.length).toBeLessThanOrEqual(3)
    } finally {
      await t.close()
    }
  })
})

describe('SDK payloads of many namePrefix values (derived from their scope\'s payload)', () => {
  it('evict only each other: polling more prefixes in turn than the cache keeps over its weight never rebuilds the scope from the database', async () => {
    const builds: string[] = []
    const t = await createTestApp({ sdk: { maxPayloadBytes: 64, onBuild: (key) => builds.push(key) } })
    try {
      const { token, flag } = await flagOnWithClientToken(t)
      for (let round = 0; round < 2; round++) {
        for (let length = 1; length <= 8; length++) {
          const response = await t.app.request(`/api/client/features?namePrefix=${encodeURIComponent(flag.slice(0, length))}`, { headers: { authorization: token } })
          expect(response.status).toBe(200)
          expect(((await response.json()) as { features: { name: string }[] }).features.map((f) => f.name)).toEqual([flag])
        }
        expect((await t.app.request('/api/client/features', { headers: { authorization: token } })).status).toBe(200)
      }
      // The scope's payload is kept: eight prefixes polled in turn, twice, and the scope itself, one build.
      expect(builds).toHaveLength(1)
    } finally {
      await t.close()
    }
  })

  it('are held within the weight bound in bytes: at most the newest one over it', () => {
    const lru = new Lru<string, number>({ maxEntries: 256, maxWeight: 100, keepNewest: 4 })
    lru.set('scope', 0, 80)
    for (let i = 0; i < 10; i++) lru.set(`prefix-${i}`, i, 50, true)
    // The scope (kept: not derived) and the newest prefix only; every earlier prefix went first.
    expect(lru.size).toBe(2)
    expect(lru.get('scope')).toBe(0)
    expect(lru.get('prefix-9')).toBe(9)
    for (let i = 0; i < 10; i++) lru.set(`small-${i}`, i, 2, true)
    expect(lru.size).toBe(1 + 10)
  })
})
