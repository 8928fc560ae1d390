import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createToken, createUser, fresh, ok } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ signIn: { perMinute: 0 } })
})
afterAll(() => t.close())

describe('GET /api/admin/api-tokens/{name}', () => {
  it('answers the tokens of that name, masked as the list masks them', async () => {
    const name = fresh('ci token')
    const first = await createToken(t, { tokenName: name, type: 'client', environment: 'development', projects: ['*'] })
    await createToken(t, { tokenName: name, type: 'frontend', environment: 'production', projects: ['*'] })
    await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })
    const res = await ok(t, 'GET', `/api/admin/api-tokens/${encodeURIComponent(name)}`)
    expect(res.body.tokens).toHaveLength(2)
    expect(res.body.tokens.map((tk: { tokenName: string }) => tk.tokenName)).toEqual([name, name])
    expect(res.text).not.toContain(first.secret.split('.')[1])
    const listed = (await ok(t, 'GET', '/api/admin/api-tokens')).body.tokens.filter((tk: { tokenName: string }) => tk.tokenName === name)
    expect(res.body.tokens).toEqual(listed)
    expect((await ok(t, 'GET', '/api/admin/api-tokens/no-such-token')).body).toEqual({ tokens: [] })
  })

  it('shows each caller only the token types they may read', async () => {
    const name = fresh('shared')
    await createToken(t, { tokenName: name, type: 'admin' })
    await createToken(t, { tokenName: name, type: 'client', environment: 'development', projects: ['*'] })
    const editor = await createUser(t, 'Editor')
    const seen = (await ok(editor, 'GET', `/api/admin/api-tokens/${name}`)).body.tokens
    expect(seen.map((tk: { type: string }) => tk.type)).not.toContain('admin')
    const viewer = await createUser(t, 'Viewer')
    const denied = await viewer.call('GET', `/api/admin/api-tokens/${name}`)
    expect(denied.status).toBe(403)
    expect(denied.body).toMatchObject({ name: 'NoAccessError' })
    expect((await t.call('GET', `/api/admin/api-tokens/${name}`, { token: null })).status).toBe(401)
  })
})
