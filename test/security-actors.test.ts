import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

// Every event says who did it with a stable id, so the audit trail can be filtered by any actor: users by
// their id, admin tokens by Unleash's fixed -42, the system by -1337.

let t: TestApp
let editor: TestUser
beforeAll(async () => {
  t = await createTestApp()
  editor = await createSignedInUser(t, 'edith', 'Editor')
  expect((await t.call('POST', '/api/admin/projects/default/features', { body: { name: 'by-token' } })).status).toBe(201)
  expect((await editor.call('POST', '/api/admin/projects/default/features', { body: { name: 'by-user' } })).status).toBe(201)
  const client = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'sdk', type: 'client', environment: 'development', projects: ['*'] } })
  expect(client.status, client.text).toBe(201)
  expect((await t.call('POST', '/api/client/register', { token: client.body.secret, body: { appName: 'reporting-app', instanceId: 'i', strategies: [], started: new Date().toISOString(), interval: 15000 } })).status).toBeLessThan(300)
  await t.app.idle()
})
afterAll(() => t.close())

const search = async (query: string) => {
  const res = await t.call('GET', `/api/admin/search/events${query}`)
  expect(res.status, res.text).toBe(200)
  return res.body.events as { type: string; createdBy: string; createdByUserId: number; featureName: string | null }[]
}

describe('who did it', () => {
  it('finds what an admin token did by the admin-token id -42', async () => {
    const events = await search('?createdBy=IS:-42')
    expect(events.length).toBeGreaterThan(0)
    expect(events.every((e) => e.createdByUserId === -42 && e.createdBy === 'test-admin')).toBe(true)
    expect(events.some((e) => e.type === 'feature-created' && e.featureName === 'by-token')).toBe(true)
  })

  it('finds what a user did by their id, and nothing of the token', async () => {
    const events = await search(`?createdBy=IS:${editor.id}`)
    expect(events.some((e) => e.type === 'feature-created' && e.featureName === 'by-user')).toBe(true)
    expect(events.every((e) => e.createdByUserId === editor.id)).toBe(true)
  })

  it('gives what the system does on behalf of SDKs (application-created) the system id -1337', async () => {
    const events = await search('?type=IS:application-created')
    expect(events.map((e) => [e.createdBy, e.createdByUserId])).toEqual([['sdk', -1337]])
  })

  it('leaves no event without an actor id', async () => {
    const [row] = await t.query<{ n: number }>('select count(*)::int as n from events where created_by_user_id is null')
    expect(row!.n).toBe(0)
  })
})
