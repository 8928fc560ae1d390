import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../src/db.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/*
 * What one SDK token learns of another's scope: a private project ("vault") and an open one ("lobby"), each with its
 * own client and frontend tokens. Another token's ETag never earns a 304 (an answer is tagged by its own content), a
 * private flag's key answers as an unknown one, and metrics a token reports for a flag outside its projects neither
 * count for that flag nor list it as unknown.
 */

let t: TestApp
let outsider: TestUser
const pending: ((db: Db) => Promise<unknown>)[] = []
const tokens: Record<string, string> = {}

beforeAll(async () => {
  t = await createTestApp({ background: (_c, task) => pending.push(task) })
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await t.call(method, path, { body })
    expect(res.status, `${method} ${path}: ${res.text.slice(0, 300)}`).toBeLessThan(300)
    return res.body
  }
  await ok('POST', '/api/admin/projects', { id: 'vault', name: 'Vault', mode: 'private', environments: ['development'] })
  await ok('POST', '/api/admin/projects', { id: 'lobby', name: 'Lobby', environments: ['development'] })
  for (const project of ['vault', 'lobby']) {
    await ok('POST', `/api/admin/projects/${project}/features`, { name: `${project}-flag` })
    await ok('POST', `/api/admin/projects/${project}/features/${project}-flag/environments/development/on`)
    for (const type of ['client', 'frontend']) tokens[`${project}-${type}`] = (await ok('POST', '/api/admin/api-tokens', { tokenName: `${project}-${type}`, type, environment: 'development', projects: [project] })).secret
  }
  outsider = await createSignedInUser(t, 'olaf', 'Viewer')
})
afterAll(() => t.close())

describe("another token's ETag", () => {
  it('earns no 304 on GET /api/client/features, /api/frontend or the OFREP bulk evaluation; no token or a wrong one is 401 first', async () => {
    const vault = await t.call('GET', '/api/client/features', { token: tokens['vault-client']! })
    const etag = vault.headers.get('etag')!
    expect((await t.call('GET', '/api/client/features', { token: tokens['vault-client']!, headers: { 'if-none-match': etag } })).status).toBe(304)
    const lobby = await t.call('GET', '/api/client/features', { token: tokens['lobby-client']!, headers: { 'if-none-match': etag } })
    expect(lobby.status).toBe(200)
    expect(lobby.body.features.map((f: any) => f.name)).toEqual(['lobby-flag'])
    for (const token of [null, 'vault:development.not-a-secret']) expect((await t.call('GET', '/api/client/features', { token, headers: { 'if-none-match': etag } })).status).toBe(401)

    const front = await t.call('GET', '/api/frontend?userId=u1', { token: tokens['vault-frontend']! })
    const frontTag = front.headers.get('etag')!
    expect((await t.call('GET', '/api/frontend?userId=u1', { token: tokens['vault-frontend']!, headers: { 'if-none-match': frontTag } })).status).toBe(304)
    const other = await t.call('GET', '/api/frontend?userId=u1', { token: tokens['lobby-frontend']!, headers: { 'if-none-match': frontTag } })
    expect(other.status).toBe(200)
    expect(other.body.toggles.map((f: any) => f.name)).toEqual(['lobby-flag'])

    const bulk = (token: string, etag?: string) => t.call('POST', '/ofrep/v1/evaluate/flags', { token, body: { context: { targetingKey: 'u1' } }, headers: etag ? { 'if-none-match': etag } : {} })
    const ofrepTag = (await bulk(tokens['vault-client']!)).headers.get('etag')!
    expect((await bulk(tokens['vault-client']!, ofrepTag)).status).toBe(304)
    const answered = await bulk(tokens['lobby-client']!, ofrepTag)
    expect(answered.status).toBe(200)
    expect(answered.body.flags.map((f: any) => f.key)).toEqual(['lobby-flag'])
  })

  it("answers a private flag's key to a token of another project exactly as an unknown key (OFREP)", async () => {
    const one = (key: string) => t.call('POST', `/ofrep/v1/evaluate/flags/${key}`, { token: tokens['lobby-client']!, body: { context: { targetingKey: 'u1' } } })
    const hidden = await one('vault-flag')
    const unknown = await one('no-such-flag')
    expect(hidden.status).toBe(404)
    expect(unknown.status).toBe(404)
    expect(hidden.body.errorCode).toBe(unknown.body.errorCode)
    expect(hidden.body.message.replace('vault-flag', 'X')).toBe(unknown.body.message.replace('no-such-flag', 'X'))
  })
})

describe('metrics a token reports for a flag outside its projects', () => {
  it('neither count for that flag nor list it as an unknown flag', async () => {
    const now = new Date().toISOString()
    const res = await t.call('POST', '/api/client/metrics', { token: tokens['lobby-client']!, body: { appName: 'lobby-app', instanceId: 'i', bucket: { start: now, stop: now, toggles: { 'vault-flag': { yes: 5, no: 5 }, 'lobby-flag': { yes: 1, no: 0 } } } } })
    expect(res.status).toBe(202)
    while (pending.length > 0) await pending.shift()!(t.db)
    const raw = await t.call('GET', '/api/admin/client-metrics/features/vault-flag/raw')
    expect(raw.status).toBe(200)
    expect(raw.body.data).toEqual([])
    expect((await t.call('GET', '/api/admin/client-metrics/features/lobby-flag/raw')).body.data).toHaveLength(1)
    for (const caller of [t.call, outsider.call]) {
      const unknown = await caller('GET', '/api/admin/metrics/unknown-flags')
      expect(unknown.status).toBe(200)
      expect(JSON.stringify(unknown.body)).not.toContain('vault-flag')
    }
  })
})
