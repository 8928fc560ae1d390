// Single sign-on at the edge (Neon's driver over local-postgres, as the worker opens it): a sign-in that changes the
// user's group memberships writes them, their events and the session in one statement after one read, no WebSocket;
// signing out of that session ends it in one statement and reads the settings for the provider's sign-out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { ok } from './helpers/factories.js'
import { browserAgent, startTestProvider, type TestAccount, type TestProvider } from './helpers/oidc-provider.js'

const ORIGIN = 'http://flagpost.test'
const erin: TestAccount = { email: 'erin@example.com', name: 'Erin Edge', groups: ['blue'] }
let t: EdgeApp
let provider: TestProvider
/** The round trips of the latest request the browser made to the app. */
let last = { http: 0, webSocket: 0 }

beforeAll(async () => {
  ;[t, provider] = await Promise.all([createEdgeApp(), startTestProvider({ redirectUris: [`${ORIGIN}/auth/oidc/callback`], postLogoutRedirectUris: [`${ORIGIN}/sign-in`], accounts: [erin] })])
})
afterAll(async () => {
  await t?.close()
  await provider?.close()
})

const browser = () =>
  browserAgent(ORIGIN, async (request) => {
    const { response, http, webSocket } = await t.send(request)
    last = { http, webSocket }
    return response
  })

async function signIn(agent: ReturnType<typeof browser>) {
  const start = await agent.send(`${ORIGIN}/auth/oidc/login`)
  const page = await agent.follow(start.headers.get('location')!)
  const back = await agent.follow(page.url, { method: 'POST', body: new URLSearchParams({ email: erin.email }) }, (url) => url.origin === ORIGIN && url.pathname === '/auth/oidc/callback')
  const landed = await agent.send(back.url)
  expect(landed.status).toBe(302)
  expect(new URL(landed.headers.get('location')!, ORIGIN).pathname).toBe('/')
}

describe('single sign-on at the edge', () => {
  it('syncs groups with the sign-in in one statement after one read, and signs out of the provider too', async () => {
    const userId = (await ok(t, 'POST', '/api/admin/user-admin', { email: erin.email, rootRole: 'Viewer', sendEmail: false })).body.id as number
    const blue = (await ok(t, 'POST', '/api/admin/groups', { name: 'blue', mappingsSSO: ['blue'] })).body.id as number
    const green = (await ok(t, 'POST', '/api/admin/groups', { name: 'green', mappingsSSO: ['green'] })).body.id as number
    await ok(t, 'POST', '/api/admin/auth/oidc/settings', {
      enabled: true,
      discoverUrl: provider.discoverUrl,
      clientId: provider.clientId,
      secret: provider.clientSecret,
      enableGroupSyncing: true,
      groupJsonPath: 'groups',
      addGroupsScope: true,
      enableSingleSignOut: true,
    })
    const members = async (id: number) => (await ok(t, 'GET', `/api/admin/groups/${id}`)).body.users.map((u: any) => u.user.id)

    await signIn(browser())
    // The settings, the user with their memberships and the matching groups, then the statement.
    expect(last).toEqual({ http: 3, webSocket: 0 })
    expect(await members(blue)).toEqual([userId])

    erin.groups = ['green']
    const agent = browser()
    await signIn(agent)
    expect(last).toEqual({ http: 3, webSocket: 0 })
    expect([await members(blue), await members(green)]).toEqual([[], [userId]])
    expect(await t.query(`select type, data, pre_data from events where type like 'group-user-%' order by id`)).toEqual([
      { type: 'group-user-added', data: { groupId: blue, userId }, pre_data: null },
      { type: 'group-user-added', data: { groupId: green, userId }, pre_data: null },
      { type: 'group-user-removed', data: null, pre_data: { groupId: blue, userId } },
    ])

    const out = await agent.send(`${ORIGIN}/logout`, { method: 'POST' })
    expect(out.status).toBe(200)
    // The session deleted (answering its ID token), then the settings read.
    expect(last).toEqual({ http: 2, webSocket: 0 })
    const { redirectUrl } = (await out.json()) as { redirectUrl: string }
    expect(new URL(redirectUrl).searchParams.get('post_logout_redirect_uri')).toBe(`${ORIGIN}/sign-in`)
    // This browser's session is gone; the first browser's stays.
    expect(await t.query(`select count(*)::int as n from sessions where user_id = $1`, [userId])).toEqual([{ n: 1 }])
  })
})
