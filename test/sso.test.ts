// Single sign-on with OpenID Connect against a real provider (oidc-provider on a local port), the browser played by a
// cookie jar: the sign-in page's link, the provider's own sign-in, the callback, and a session that works on the admin API.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { browserAgent, startTestProvider, type TestProvider } from './helpers/oidc-provider.js'
import { ok } from './helpers/factories.js'
import { createSignedInUser, PASSWORD } from './helpers/users.js'

const ORIGIN = 'http://flagpost.test'
let provider: TestProvider
let t: TestApp
/** How far ahead of the real time the app's clock runs (tokens are judged by it). */
let clockAhead = 0

beforeAll(async () => {
  provider = await startTestProvider({
    redirectUris: [`${ORIGIN}/auth/oidc/callback`],
    accounts: [
      { email: 'ann@example.com', name: 'Ann Existing' },
      { email: 'new.person@example.com', name: 'New Person' },
      { email: 'bob@elsewhere.org', name: 'Bob Elsewhere' },
      { email: 'unverified@example.com', emailVerified: false },
    ],
  })
  t = await createTestApp({ now: () => new Date(Date.now() + clockAhead) })
  await ok(t, 'POST', '/api/admin/user-admin', { email: 'Ann@Example.com', name: 'Ann', rootRole: 'Editor', sendEmail: false })
})
afterAll(async () => {
  await t?.close()
  await provider?.close()
})
beforeEach(() => {
  clockAhead = 0
  provider.tamper(undefined)
})

const configure = (patch: Record<string, unknown> = {}) =>
  ok(t, 'POST', '/api/admin/auth/oidc/settings', { enabled: true, discoverUrl: provider.discoverUrl, clientId: provider.clientId, secret: provider.clientSecret, autoCreate: false, ...patch })

/** Goes from the sign-in link through the provider (signing in there as `email`) and stops where the provider sends the browser back. */
async function toCallback(agent: ReturnType<typeof browserAgent>, email: string, redirect = '/projects') {
  const start = await agent.send(`${ORIGIN}/auth/oidc/login?redirect=${encodeURIComponent(redirect)}`)
  expect(start.status).toBe(302)
  const authorize = start.headers.get('location')!
  expect(authorize.startsWith(provider.issuer)).toBe(true)
  expect(authorize).not.toContain(provider.clientSecret)
  const page = await agent.follow(authorize)
  expect(page.response.status, await page.response.clone().text()).toBe(200)
  const back = await agent.follow(page.url, { method: 'POST', body: new URLSearchParams({ email }) }, (url) => url.origin === ORIGIN)
  return new URL(back.response.headers.get('location')!, back.url)
}

/** Sends the callback and answers where the app sends the browser. */
async function callback(agent: ReturnType<typeof browserAgent>, url: URL) {
  const res = await agent.send(url.toString())
  expect(res.status).toBe(302)
  return new URL(res.headers.get('location')!, ORIGIN)
}

const newAgent = () => browserAgent(ORIGIN, (request) => Promise.resolve(t.app.request(request)))
const refusal = (landed: URL) => {
  expect(landed.pathname).toBe('/sign-in')
  return landed.searchParams.get('errorMsg') ?? ''
}

async function me(agent: ReturnType<typeof browserAgent>) {
  const session = agent.cookie('flagpost.test', 'flagpost-session')
  return t.call('GET', '/api/admin/user', { token: null, headers: session ? { cookie: `flagpost-session=${session}` } : {} })
}

describe('signing in with OpenID Connect', () => {
  it('signs an existing user in (e-mail in any case): login, provider, callback, a session the admin API takes', async () => {
    await configure()
    const agent = newAgent()
    const back = await toCallback(agent, 'ann@example.com')
    expect(back.pathname).toBe('/auth/oidc/callback')
    expect(back.searchParams.get('state')).toBeTruthy()
    const landed = await callback(agent, back)
    expect(landed.pathname).toBe('/projects')
    const res = await me(agent)
    expect(res.status, res.text).toBe(200)
    expect(res.body.user.email).toBe('ann@example.com')
    expect(res.body.user.rootRole).toBe(2)
    // The flow's cookie is used up.
    expect(agent.cookie('flagpost.test', 'flagpost-oidc')).toBeUndefined()
    const projects = await t.call('GET', '/api/admin/projects', { token: null, headers: { cookie: `flagpost-session=${agent.cookie('flagpost.test', 'flagpost-session')}` } })
    expect(projects.status).toBe(200)
  })

  it('creates an unknown user with the default root role when autoCreate is on, recording user-created by the system', async () => {
    await configure({ autoCreate: true, defaultRootRole: 'Viewer', emailDomains: 'example.com' })
    const agent = newAgent()
    const landed = await callback(agent, await toCallback(agent, 'new.person@example.com', '/'))
    expect(landed.pathname).toBe('/')
    const res = await me(agent)
    expect(res.status, res.text).toBe(200)
    expect(res.body.user).toMatchObject({ email: 'new.person@example.com', name: 'New Person', rootRole: 3 })
    const events = await t.query<{ created_by: string; data: any }>(`select created_by, data from events where type = 'user-created' and data->>'email' = 'new.person@example.com'`)
    expect(events).toEqual([{ created_by: 'system', data: expect.objectContaining({ email: 'new.person@example.com', rootRole: 3 }) }])
    // Signing in again finds the user: no second one.
    const again = newAgent()
    await callback(again, await toCallback(again, 'new.person@example.com'))
    expect((await me(again)).body.user.id).toBe(res.body.user.id)
  })

  it('refuses an unknown user when autoCreate is off, saying why', async () => {
    await configure({ autoCreate: false })
    const agent = newAgent()
    const message = refusal(await callback(agent, await toCallback(agent, 'bob@elsewhere.org')))
    expect(message).toMatch(/no Flagpost user with the e-mail address bob@elsewhere.org/)
    expect((await me(agent)).status).toBe(401)
    expect(await t.query(`select id from users where email = 'bob@elsewhere.org'`)).toEqual([])
  })

  it('refuses to create a user whose e-mail domain is not listed', async () => {
    await configure({ autoCreate: true, emailDomains: 'example.com,example.net' })
    const agent = newAgent()
    expect(refusal(await callback(agent, await toCallback(agent, 'bob@elsewhere.org')))).toMatch(/elsewhere.org are not created here/)
    expect(await t.query(`select id from users where email = 'bob@elsewhere.org'`)).toEqual([])
  })

  it('refuses an e-mail the provider marks unverified', async () => {
    await configure({ autoCreate: true })
    const agent = newAgent()
    expect(refusal(await callback(agent, await toCallback(agent, 'unverified@example.com')))).toMatch(/not verified/)
  })

  it('refuses an answer whose state is not the one this browser started with', async () => {
    await configure()
    const agent = newAgent()
    const back = await toCallback(agent, 'ann@example.com')
    back.searchParams.set('state', 'forged-state')
    expect(refusal(await callback(agent, back))).toMatch(/state/)
    expect((await me(agent)).status).toBe(401)
  })

  it('refuses a callback with no sign-in under way in this browser', async () => {
    await configure()
    const agent = newAgent()
    const back = await toCallback(agent, 'ann@example.com')
    expect(refusal(await callback(newAgent(), back))).toMatch(/no sign-in under way/)
  })

  it('refuses an ID token whose nonce is not the one sent', async () => {
    await configure()
    const agent = newAgent()
    const back = await toCallback(agent, 'ann@example.com')
    const [state, , verifier, redirect] = agent.cookie('flagpost.test', 'flagpost-oidc')!.split('.')
    agent.setCookie('flagpost.test', 'flagpost-oidc', [state, 'another-nonce', verifier, redirect].join('.'))
    expect(refusal(await callback(agent, back))).toMatch(/nonce/)
    expect((await me(agent)).status).toBe(401)
  })

  it('refuses an ID token for another audience', async () => {
    await configure()
    provider.tamper((claims) => ({ ...claims, aud: 'another-client' }))
    const agent = newAgent()
    expect(refusal(await callback(agent, await toCallback(agent, 'ann@example.com')))).toMatch(/aud/)
  })

  it('refuses an ID token signed with a key the provider does not publish', async () => {
    await configure()
    provider.tamper((claims) => claims, { foreignKey: true })
    const agent = newAgent()
    expect(refusal(await callback(agent, await toCallback(agent, 'ann@example.com')))).toMatch(/ID token was refused/)
    expect((await me(agent)).status).toBe(401)
  })

  it('refuses an expired ID token (judged by the server\'s clock)', async () => {
    await configure()
    const agent = newAgent()
    const back = await toCallback(agent, 'ann@example.com')
    clockAhead = 3 * 60 * 60_000
    expect(refusal(await callback(agent, back))).toMatch(/not valid now/)
  })

  it('sends the browser back to the sign-in page when single sign-on is not enabled', async () => {
    await configure({ enabled: false })
    const res = await newAgent().send(`${ORIGIN}/auth/oidc/login`)
    expect(res.status).toBe(302)
    expect(refusal(new URL(res.headers.get('location')!, ORIGIN))).toMatch(/not enabled/)
  })

  it('leads only to paths of this site', async () => {
    await configure()
    const agent = newAgent()
    const landed = await callback(agent, await toCallback(agent, 'ann@example.com', '//evil.example.com/x'))
    expect(landed.toString()).toBe(`${ORIGIN}/`)
  })
})

describe('how a browser learns to sign in', () => {
  it('the 401 of the admin API without credentials lists OpenID Connect when it is enabled, as Unleash\'s', async () => {
    await configure()
    const res = await t.call('GET', '/api/admin/user', { token: null })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ name: 'AuthenticationRequired', type: 'password', path: '/auth/simple/login', defaultHidden: false, options: [{ type: 'oidc', message: 'Sign in with OpenID Connect', path: '/auth/oidc/login' }] })
    await configure({ enabled: false })
    expect((await t.call('GET', '/api/admin/user', { token: null })).body.options).toEqual([])
    // An API client with a bad token gets the plain error.
    const bad = await t.call('GET', '/api/admin/user', { token: '*:*.not-a-token' })
    expect(bad.body.options).toBeUndefined()
  })
})

describe('switching password sign-in off', () => {
  it('needs OpenID Connect enabled first', async () => {
    await configure({ enabled: false })
    const res = await t.call('POST', '/api/admin/auth/simple/settings', { body: { disabled: true } })
    expect(res.status, res.text).toBe(400)
    expect(res.body.message).toMatch(/Enable OpenID Connect sign-in/)
  })

  it('refuses passwords while OIDC is enabled, hides the form, and gives passwords back when OIDC is off', async () => {
    const user = await createSignedInUser(t, 'pat-pw', 'Viewer')
    await configure()
    expect((await ok(t, 'POST', '/api/admin/auth/simple/settings', { disabled: true })).body).toEqual({ disabled: true })
    expect((await ok(t, 'GET', '/api/admin/auth/simple/settings')).body).toEqual({ disabled: true })
    const refused = await t.call('POST', '/auth/simple/login', { token: null, body: { username: user.username, password: PASSWORD } })
    expect(refused.status).toBe(401)
    expect(refused.body.message).toMatch(/Password sign-in is switched off/)
    // Refusals are not failed attempts: the account is not closer to being locked.
    expect(await t.query(`select login_attempts from users where id = $1`, [user.id])).toEqual([{ login_attempts: 0 }])
    expect((await t.call('GET', '/api/admin/user', { token: null })).body.defaultHidden).toBe(true)
    // SSO still signs in.
    const agent = newAgent()
    await callback(agent, await toCallback(agent, 'ann@example.com'))
    expect((await me(agent)).status).toBe(200)
    // OIDC off: passwords work again.
    await configure({ enabled: false })
    expect((await t.call('POST', '/auth/simple/login', { token: null, body: { username: user.username, password: PASSWORD } })).status).toBe(200)
    await configure()
    await ok(t, 'POST', '/api/admin/auth/simple/settings', { disabled: false })
  })

  it('FLAGPOST_ALLOW_PASSWORD_LOGIN lets passwords in whatever the settings say (the way back in)', async () => {
    const escape = await createTestApp({ allowPasswordLogin: true })
    try {
      await ok(escape, 'POST', '/api/admin/user-admin', { username: 'root2', password: PASSWORD, rootRole: 'Admin', sendEmail: false })
      await ok(escape, 'POST', '/api/admin/auth/oidc/settings', { enabled: true, discoverUrl: provider.discoverUrl, clientId: provider.clientId, secret: provider.clientSecret })
      await ok(escape, 'POST', '/api/admin/auth/simple/settings', { disabled: true })
      expect((await escape.call('POST', '/auth/simple/login', { token: null, body: { username: 'root2', password: PASSWORD } })).status).toBe(200)
      expect((await escape.call('GET', '/api/admin/user', { token: null })).body.defaultHidden).toBe(false)
    } finally {
      await escape.close()
    }
  })

  it('records setting-created, then setting-updated, without the OIDC secret anywhere', async () => {
    const events = await t.query<{ type: string; data: any; pre_data: any }>(`select type, data, pre_data from events where data->>'id' = 'simple' order by id`)
    expect(events.map((e) => e.type)).toEqual(['setting-created', 'setting-updated'])
    expect(events[0]!.data).toEqual({ id: 'simple', disabled: true })
    expect(events[1]!.pre_data).toEqual({ id: 'simple', disabled: true })
    expect(JSON.stringify(await t.query(`select data, pre_data from events`))).not.toContain(provider.clientSecret)
  })
})
