import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createToken, createUser, fresh } from './helpers/factories.js'

// Every event says who did it with a stable id, so the audit trail can be filtered by any actor: users by
// their id, admin tokens by Unleash's fixed -42, the system by -1337.

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const search = async (query: string) => {
  const res = await t.call('GET', `/api/admin/search/events${query}`)
  expect(res.status, res.text).toBe(200)
  return res.body.events as { type: string; createdBy: string; createdByUserId: number; featureName: string | null }[]
}

/** An application registered with a fresh client token: the system creates it on the token's behalf. */
async function registeredApplication() {
  const client = await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })
  const appName = fresh('reporting-app')
  expect((await t.call('POST', '/api/client/register', { token: client.secret, body: { appName, instanceId: 'i', strategies: [], started: new Date().toISOString(), interval: 15000 } })).status).toBeLessThan(300)
  await t.app.idle()
  return { appName, tokenName: client.tokenName as string }
}

describe('who did it', () => {
  it('finds what an admin token did by the admin-token id -42', async () => {
    const byToken = (await createFlag(t)).name
    const events = await search('?createdBy=IS:-42&limit=1000')
    expect(events.length).toBeGreaterThan(0)
    expect(events.every((e) => e.createdByUserId === -42 && e.createdBy === 'test-admin')).toBe(true)
    expect(events.some((e) => e.type === 'feature-created' && e.featureName === byToken)).toBe(true)
  })

  it('finds what a user did by their id, and nothing of the token', async () => {
    const editor = await createUser(t, 'Editor')
    await createFlag(t)
    const byUser = (await createFlag(editor)).name
    const events = await search(`?createdBy=IS:${editor.id}`)
    expect(events.some((e) => e.type === 'feature-created' && e.featureName === byUser)).toBe(true)
    expect(events.every((e) => e.createdByUserId === editor.id)).toBe(true)
  })

  it('gives what the system does on behalf of SDKs (application-created) the system id -1337', async () => {
    const { appName, tokenName } = await registeredApplication()
    const events = await search(`?type=IS:application-created&query=${appName}`)
    expect(events.map((e) => [e.createdBy, e.createdByUserId])).toEqual([[tokenName, -1337]])
  })

  it('leaves no event without an actor id', async () => {
    // One of each actor: an admin token, a user, the system.
    await createFlag(t)
    await createFlag(await createUser(t, 'Editor'))
    await registeredApplication()
    const [row] = await t.query<{ n: number }>('select count(*)::int as n from events where created_by_user_id is null')
    expect(row!.n).toBe(0)
  })
})
