// Single sign-on with OpenID Connect against a real provider (oidc-provider on a local port), the browser played by a
// cookie jar: the sign-in page's link, the provider's own sign-in, the callback, and a session that works on the admin API.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { browserAgent, confirmSignOut, startTestProvider, type TestAccount, type TestProvider } from './helpers/oidc-provider.js'
import { ok } from './helpers/factories.js'
import { createSignedInUser, PASSWORD, signIn as signInWith } from './helpers/users.js'

const ORIGIN = 'http://flagpost.test'
let provider: TestProvider
let t: TestApp
/** An account whose groups at the provider the group-sync tests change between sign-ins. */
const gus: TestAccount = { email: 'gus@example.com', name: 'Gus Groups', groups: [] }
/** How far ahead of the real time the app's clock runs (tokens are judged by it). */
let clockAhead = 0

beforeAll(async () => {
  provider = await startTestProvider({
    redirectUris: [`${ORIGIN}/auth/oidc/callback`],
    postLogoutRedirectUris: [`${ORIGIN}/sign-in`],
    accounts: [
      gus,
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
    expect(refusal(await callback(agent, await toCallback(agent, 'bob@elsewhere.org')))).toMatch(/elsewhere.org do not sign in here/)
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

  it("logs a refusal as one line through the app's logger, the provider's error_description a field that cannot forge a line", async () => {
    const lines: string[] = []
    const logged = await createTestApp({ log: { format: 'json', level: 'warn', write: (line) => lines.push(line) } })
    try {
      await ok(logged, 'POST', '/api/admin/auth/oidc/settings', { enabled: true, discoverUrl: provider.discoverUrl, clientId: provider.clientId, secret: provider.clientSecret, autoCreate: false })
      const agent = browserAgent(ORIGIN, (request) => Promise.resolve(logged.app.request(request)))
      const start = await agent.send(`${ORIGIN}/auth/oidc/login`)
      const state = new URL(start.headers.get('location')!).searchParams.get('state')!
      const forged = 'denied\n{"level":"error","msg":"forged line"}'
      const back = new URL(`${ORIGIN}/auth/oidc/callback`)
      back.search = new URLSearchParams({ error: 'access_denied', error_description: forged, state, iss: provider.issuer }).toString()
      const res = await agent.send(back.toString())
      expect(res.status).toBe(302)
      expect(lines.every((line) => !/[\n\r]/.test(line))).toBe(true)
      const refused = lines.map((line) => JSON.parse(line)).find((l) => l.msg === 'OpenID Connect sign-in refused')
      expect(refused).toMatchObject({ level: 'warn', requestId: expect.any(String), reason: expect.stringContaining(forged) })
      expect(lines.map((line) => JSON.parse(line)).filter((l) => l.msg === 'forged line')).toEqual([])
    } finally {
      await logged.close()
    }
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

  it('refuses invite-link sign-ups and invite or password-reset links while password sign-in is off (403 saying so), and lets them again once it is on', async () => {
    const link = (await ok(t, 'POST', '/api/admin/invite-link/tokens', { name: 'Join us', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).body
    const invited = (await ok(t, 'POST', '/api/admin/user-admin', { email: 'invited@example.com', rootRole: 'Viewer', sendEmail: false })).body
    const token = new URL(invited.inviteLink).searchParams.get('token')!
    const signUp = () => t.call('POST', `/invite/${link.secret}/signup`, { token: null, body: { name: 'Joiner', email: 'joiner@example.com', password: 'a password of mine' } })
    const setPassword = () => t.call('POST', '/auth/reset/password', { token: null, body: { token, password: 'a password of mine' } })
    await configure()
    await ok(t, 'POST', '/api/admin/auth/simple/settings', { disabled: true })
    try {
      for (const refused of [
        await t.call('GET', `/invite/${link.secret}/validate`, { token: null }),
        await signUp(),
        await t.call('GET', `/auth/reset/validate?token=${token}`, { token: null }),
        await setPassword(),
      ]) {
        expect(refused.status, refused.text).toBe(403)
        expect(refused.body).toMatchObject({ name: 'NoAccessError', message: expect.stringMatching(/Password sign-in is switched off.*single sign-on/) })
      }
      // Any link, working or not: the answer does not tell whether it does.
      expect((await t.call('GET', '/invite/00000000000000000000000000000000/validate', { token: null })).status).toBe(403)
      expect(await t.query(`select count(*)::int as n from users where email = 'joiner@example.com'`)).toEqual([{ n: 0 }])
      expect(await t.query(`select password_hash from users where id = $1`, [invited.id])).toEqual([{ password_hash: null }])
    } finally {
      await ok(t, 'POST', '/api/admin/auth/simple/settings', { disabled: false })
    }
    // The links were kept: they work once password sign-in is on again.
    expect((await t.call('GET', `/auth/reset/validate?token=${token}`, { token: null })).status).toBe(200)
    expect((await setPassword()).status).toBe(200)
    expect((await signUp()).status).toBe(200)
  })

  it('FLAGPOST_ALLOW_PASSWORD_LOGIN lets invite-link sign-ups and password links work while password sign-in is off', async () => {
    const escape = await createTestApp({ allowPasswordLogin: true })
    try {
      await ok(escape, 'POST', '/api/admin/auth/oidc/settings', { enabled: true, discoverUrl: provider.discoverUrl, clientId: provider.clientId, secret: provider.clientSecret })
      await ok(escape, 'POST', '/api/admin/auth/simple/settings', { disabled: true })
      const link = (await ok(escape, 'POST', '/api/admin/invite-link/tokens', { name: 'Join us', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).body
      expect((await escape.call('GET', `/invite/${link.secret}/validate`, { token: null })).status).toBe(200)
      expect((await escape.call('POST', `/invite/${link.secret}/signup`, { token: null, body: { name: 'Joiner', email: 'joiner@example.com', password: 'a password of mine' } })).status).toBe(200)
      const invited = (await ok(escape, 'POST', '/api/admin/user-admin', { email: 'invited@example.com', rootRole: 'Viewer', sendEmail: false })).body
      const token = new URL(invited.inviteLink).searchParams.get('token')!
      expect((await escape.call('GET', `/auth/reset/validate?token=${token}`, { token: null })).status).toBe(200)
      expect((await escape.call('POST', '/auth/reset/password', { token: null, body: { token, password: 'a password of mine' } })).status).toBe(200)
    } finally {
      await escape.close()
    }
  })

  it('refuses setting a password (your own, an admin setting one, a new user with one) while password sign-in is off, makes new users no invite link, and allows it all again once it is on', async () => {
    const user = await createSignedInUser(t, 'pat-changes', 'Viewer')
    const changeOwn = (password: string) => user.call('POST', '/api/admin/user/change-password', { body: { oldPassword: PASSWORD, password, confirmPassword: password } })
    const adminSets = () => t.call('POST', `/api/admin/user-admin/${user.id}/change-password`, { body: { password: 'set by an admin' } })
    const createWithPassword = () => t.call('POST', '/api/admin/user-admin', { body: { username: 'with-password', password: 'a password of mine', rootRole: 'Viewer', sendEmail: false } })
    const hashOf = async () => (await t.query<{ password_hash: string }>(`select password_hash from users where id = $1`, [user.id]))[0]!.password_hash
    const hashBefore = await hashOf()
    await configure()
    await ok(t, 'POST', '/api/admin/auth/simple/settings', { disabled: true })
    try {
      for (const refused of [await changeOwn('a new password'), await adminSets(), await createWithPassword()]) {
        expect(refused.status, refused.text).toBe(403)
        expect(refused.body).toMatchObject({ name: 'NoAccessError', message: expect.stringMatching(/Password sign-in is switched off.*single sign-on/) })
      }
      // Nothing changed: the password, the attempts count (a refusal is no failed sign-in), no user made.
      expect(await hashOf()).toBe(hashBefore)
      expect(await t.query(`select login_attempts from users where id = $1`, [user.id])).toEqual([{ login_attempts: 0 }])
      expect(await t.query(`select count(*)::int as n from users where username = 'with-password'`)).toEqual([{ n: 0 }])
      expect(await t.query(`select count(*)::int as n from events where type = 'user-updated' and (data->>'id')::int = $1`, [user.id])).toEqual([{ n: 0 }])
      // A user made without a password: no invite link, none stored; they sign in through single sign-on.
      const created = await t.call('POST', '/api/admin/user-admin', { body: { email: 'sso.only@example.com', rootRole: 'Viewer', sendEmail: false } })
      expect(created.status, created.text).toBe(201)
      expect(created.body).not.toHaveProperty('inviteLink')
      expect(await t.query(`select count(*)::int as n from reset_tokens where user_id = $1`, [created.body.id])).toEqual([{ n: 0 }])
      expect(await t.query(`select count(*)::int as n from events where type = 'user-created' and (data->>'id')::int = $1`, [created.body.id])).toEqual([{ n: 1 }])
    } finally {
      await ok(t, 'POST', '/api/admin/auth/simple/settings', { disabled: false })
    }
    expect((await adminSets()).status).toBe(200)
    const changed = await t.call('POST', '/api/admin/user/change-password', { token: null, headers: { cookie: await signInAs(user.username, 'set by an admin') }, body: { oldPassword: 'set by an admin', password: 'mine again', confirmPassword: 'mine again' } })
    expect(changed.status, changed.text).toBe(200)
    const withPassword = await createWithPassword()
    expect(withPassword.status, withPassword.text).toBe(201)
    expect(withPassword.body.inviteLink).toMatch(/\/new-user\?token=/)
  })

  it('FLAGPOST_ALLOW_PASSWORD_LOGIN lets passwords be set, and new users get their invite link, while password sign-in is off', async () => {
    const escape = await createTestApp({ allowPasswordLogin: true })
    try {
      const user = await createSignedInUser(escape, 'pat-escape', 'Viewer')
      await ok(escape, 'POST', '/api/admin/auth/oidc/settings', { enabled: true, discoverUrl: provider.discoverUrl, clientId: provider.clientId, secret: provider.clientSecret })
      await ok(escape, 'POST', '/api/admin/auth/simple/settings', { disabled: true })
      expect((await escape.call('POST', `/api/admin/user-admin/${user.id}/change-password`, { body: { password: 'set by an admin' } })).status).toBe(200)
      const cookie = await signInWith(escape, user.username, 'set by an admin')
      const own = await escape.call('POST', '/api/admin/user/change-password', { token: null, headers: { cookie }, body: { oldPassword: 'set by an admin', password: 'mine again' } })
      expect(own.status, own.text).toBe(200)
      const created = await ok(escape, 'POST', '/api/admin/user-admin', { username: 'with-password', password: 'a password of mine', rootRole: 'Viewer', sendEmail: false })
      expect(created.body.inviteLink).toMatch(/\/new-user\?token=/)
    } finally {
      await escape.close()
    }
  })
})

const signInAs = (username: string, password: string) => signInWith(t, username, password)

const SYNC = { enableGroupSyncing: true, groupJsonPath: 'groups', addGroupsScope: true }

/** Signs `email` in through the provider with a browser of its own; answers the browser and its session cookie. */
async function signInThroughProvider(email: string) {
  const agent = newAgent()
  const landed = await callback(agent, await toCallback(agent, email))
  expect(landed.pathname, landed.searchParams.get('errorMsg') ?? '').toBe('/projects')
  return { agent, cookie: `flagpost-session=${agent.cookie('flagpost.test', 'flagpost-session')}` }
}

const group = (body: Record<string, unknown>) => ok(t, 'POST', '/api/admin/groups', body).then((r) => r.body.id as number)
const membersOf = async (id: number) => (await ok(t, 'GET', `/api/admin/groups/${id}`)).body.users.map((u: any) => ({ id: u.user.id, createdBy: u.createdBy }))
const groupEvents = (userId: number) =>
  t.query<{ type: string; created_by: string; created_by_user_id: number; data: any; pre_data: any }>(
    `select type, created_by, created_by_user_id, data, pre_data from events where type in ('group-user-added', 'group-user-removed') and coalesce(data, pre_data)->>'userId' = $1 order by id`,
    [String(userId)],
  )

describe('group sync', () => {
  let devs: number, ops: number, handmade: number, mappedByHand: number, gusId: number

  beforeAll(async () => {
    gusId = (await ok(t, 'POST', '/api/admin/user-admin', { email: 'gus@example.com', name: 'Gus', rootRole: 'Viewer', sendEmail: false })).body.id
    devs = await group({ name: 'devs', mappingsSSO: ['dev'] })
    ops = await group({ name: 'ops', mappingsSSO: ['ops', 'sre'] })
    // Managed by hand: no mappings, or a mapping Gus's groups never name, with Gus made a member by an admin.
    handmade = await group({ name: 'handmade', users: [{ user: { id: gusId } }] })
    mappedByHand = await group({ name: 'mapped-by-hand', mappingsSSO: ['never-sent'], users: [{ user: { id: gusId } }] })
  })

  it('the first sign-in makes the user a member of the groups their groups map to, by SSO, with group-user-added by the system', async () => {
    gus.groups = ['dev', 'sre', 'unknown-group']
    await configure(SYNC)
    await signInThroughProvider('gus@example.com')
    expect(await membersOf(devs)).toEqual([{ id: gusId, createdBy: 'SSO' }])
    expect(await membersOf(ops)).toEqual([{ id: gusId, createdBy: 'SSO' }])
    const events = await groupEvents(gusId)
    expect(events).toEqual([
      { type: 'group-user-added', created_by: 'system', created_by_user_id: -1337, data: { groupId: devs, userId: gusId }, pre_data: null },
      { type: 'group-user-added', created_by: 'system', created_by_user_id: -1337, data: { groupId: ops, userId: gusId }, pre_data: null },
    ])
    // The hand-managed groups are as they were.
    expect((await membersOf(handmade)).map((m: any) => m.id)).toEqual([gusId])
    expect((await membersOf(mappedByHand)).map((m: any) => m.id)).toEqual([gusId])
  })

  it('a later sign-in with other groups removes the groups no longer matched (group-user-removed), keeps the rest, writes nothing unchanged', async () => {
    gus.groups = ['ops']
    await configure(SYNC)
    const before = (await groupEvents(gusId)).length
    await signInThroughProvider('gus@example.com')
    expect(await membersOf(devs)).toEqual([])
    expect(await membersOf(ops)).toEqual([{ id: gusId, createdBy: 'SSO' }])
    expect((await membersOf(handmade)).map((m: any) => m.id)).toEqual([gusId])
    // Mapped, not matched, but an admin made Gus a member: not group sync's to undo (as Unleash).
    expect((await membersOf(mappedByHand)).map((m: any) => m.id)).toEqual([gusId])
    const events = (await groupEvents(gusId)).slice(before)
    expect(events).toEqual([{ type: 'group-user-removed', created_by: 'system', created_by_user_id: -1337, data: null, pre_data: { groupId: devs, userId: gusId } }])

    // Signing in again with the same groups changes nothing and writes no event.
    await signInThroughProvider('gus@example.com')
    expect((await groupEvents(gusId)).length).toBe(before + 1)
    // Back in dev: joins devs again.
    gus.groups = ['dev', 'ops']
    await signInThroughProvider('gus@example.com')
    expect(await membersOf(devs)).toEqual([{ id: gusId, createdBy: 'SSO' }])
    expect((await groupEvents(gusId)).slice(before + 1).map((e) => [e.type, e.data?.groupId])).toEqual([['group-user-added', devs]])
  })

  it('with group syncing off, a sign-in changes no membership', async () => {
    gus.groups = []
    await configure({ ...SYNC, enableGroupSyncing: false })
    const before = await groupEvents(gusId)
    await signInThroughProvider('gus@example.com')
    expect(await membersOf(devs)).toEqual([{ id: gusId, createdBy: 'SSO' }])
    expect(await groupEvents(gusId)).toEqual(before)
  })

  it('without the claim (the groups scope not asked, so not released) memberships stay as they are', async () => {
    gus.groups = []
    await configure({ ...SYNC, addGroupsScope: false })
    const before = await groupEvents(gusId)
    await signInThroughProvider('gus@example.com')
    expect(await membersOf(ops)).toEqual([{ id: gusId, createdBy: 'SSO' }])
    expect(await groupEvents(gusId)).toEqual(before)
  })

  it('reads the groups from the ID token at a JSONPath, before asking UserInfo', async () => {
    gus.groups = ['dev', 'ops']
    await configure({ ...SYNC, groupJsonPath: '$.realm_access.roles' })
    provider.tamper((claims) => ({ ...claims, realm_access: { roles: ['sre'] } }))
    await signInThroughProvider('gus@example.com')
    expect(await membersOf(devs)).toEqual([])
    expect(await membersOf(ops)).toEqual([{ id: gusId, createdBy: 'SSO' }])
  })

  it('an empty list of groups removes every membership sync made, and none an admin made', async () => {
    gus.groups = []
    await configure(SYNC)
    await signInThroughProvider('gus@example.com')
    expect(await membersOf(ops)).toEqual([])
    expect((await membersOf(handmade)).map((m: any) => m.id)).toEqual([gusId])
    expect((await membersOf(mappedByHand)).map((m: any) => m.id)).toEqual([gusId])
  })

  it('creates a new user as a member of their groups in the same statement as the user', async () => {
    const nina: TestAccount = { email: 'nina@example.com', name: 'Nina New', groups: ['dev'] }
    const own = await startTestProvider({ redirectUris: [`${ORIGIN}/auth/oidc/callback`], accounts: [nina] })
    try {
      await ok(t, 'POST', '/api/admin/auth/oidc/settings', { enabled: true, discoverUrl: own.discoverUrl, clientId: own.clientId, secret: own.clientSecret, autoCreate: true, ...SYNC })
      const agent = newAgent()
      const start = await agent.send(`${ORIGIN}/auth/oidc/login`)
      const page = await agent.follow(start.headers.get('location')!)
      const back = await agent.follow(page.url, { method: 'POST', body: new URLSearchParams({ email: 'nina@example.com' }) }, (url) => url.origin === ORIGIN && url.pathname !== '/auth/oidc/callback')
      expect(new URL(back.url).pathname).toBe('/')
      const [user] = await t.query<{ id: number }>(`select id from users where email = 'nina@example.com'`)
      expect(await membersOf(devs)).toEqual([{ id: user!.id, createdBy: 'SSO' }])
      expect((await groupEvents(user!.id)).map((e) => [e.type, e.data])).toEqual([['group-user-added', { groupId: devs, userId: user!.id }]])
    } finally {
      await own.close()
    }
  })

  it('a change of memberships is seen at once by the sessions and tokens this app remembers', async () => {
    const admins = await group({ name: 'sso-admins', mappingsSSO: ['flag-admins'], rootRole: 1 })
    gus.groups = []
    await configure(SYNC)
    const first = await signInThroughProvider('gus@example.com')
    const asFirst = () => t.call('GET', '/api/admin/user-admin', { token: null, headers: { cookie: first.cookie } })
    // A Viewer: remembered as such by this app.
    expect((await asFirst()).status).toBe(403)
    gus.groups = ['flag-admins']
    await signInThroughProvider('gus@example.com')
    expect(await membersOf(admins)).toEqual([{ id: gusId, createdBy: 'SSO' }])
    expect((await asFirst()).status).toBe(200)
  })
})

describe('group sync settings', () => {
  it('refuse a groupJsonPath that is no JSONPath, and group syncing without one (400)', async () => {
    for (const groupJsonPath of ['$.groups[', '$..', "$['unclosed", '$.groups[?@ =']) {
      const res = await t.call('POST', '/api/admin/auth/oidc/settings', { body: { enabled: true, discoverUrl: provider.discoverUrl, clientId: 'c', secret: 's', enableGroupSyncing: true, groupJsonPath } })
      expect(res.status, groupJsonPath).toBe(400)
      expect(res.body.name).toBe('ValidationError')
      expect(res.body.message).toMatch(/groupJsonPath/)
    }
    const none = await t.call('POST', '/api/admin/auth/oidc/settings', { body: { enabled: true, discoverUrl: provider.discoverUrl, clientId: 'c', secret: 's', enableGroupSyncing: true } })
    expect(none.status).toBe(400)
    expect(none.body.message).toMatch(/groupJsonPath is required/)
  })

  it('refuse a groupJsonPath with a filter selector, which group sync does not read (400)', async () => {
    const res = await t.call('POST', '/api/admin/auth/oidc/settings', { body: { enabled: true, discoverUrl: provider.discoverUrl, clientId: 'c', secret: 's', enableGroupSyncing: true, groupJsonPath: '$.groups[?@ == "admins"]' } })
    expect(res.status).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.body.message).toMatch(/groupJsonPath must be a JSONPath .*filter selectors are not supported/)
  })

  it('take a JSONPath, a claim name, or a name that is no path, stored as given', async () => {
    for (const groupJsonPath of ['$.realm_access.roles', 'groups', 'realm_access.roles', 'cognito:groups', "$['cognito:groups']"]) {
      const res = await t.call('POST', '/api/admin/auth/oidc/settings', { body: { enabled: true, discoverUrl: provider.discoverUrl, clientId: 'c', secret: 's', enableGroupSyncing: true, groupJsonPath } })
      expect(res.status, `${groupJsonPath}: ${res.text}`).toBe(200)
      expect(res.body).toMatchObject({ enableGroupSyncing: true, groupJsonPath, secret: '********' })
    }
  })
})

describe('single sign-out', () => {
  it('ends the session here and sends the browser to the provider to end its own, which sends it back to the sign-in page', async () => {
    await configure({ enableSingleSignOut: true })
    const { agent, cookie } = await signInThroughProvider('ann@example.com')
    // The ID token stays with the session, on the server: the cookie is the session's id only.
    const [stored] = await t.query<{ id_token: string }>(`select id_token from sessions where id_token is not null order by created_at desc limit 1`)
    expect(stored!.id_token.split('.')).toHaveLength(3)
    expect(cookie).not.toContain(stored!.id_token)

    // Signed in at the provider: a new sign-in goes straight back.
    const again = await agent.send(`${ORIGIN}/auth/oidc/login`)
    const straight = await agent.follow(again.headers.get('location')!, {}, (url) => url.origin === ORIGIN)
    expect(new URL(straight.url).pathname).toBe('/auth/oidc/callback')

    const out = await agent.send(`${ORIGIN}/logout`, { method: 'POST' })
    expect(out.status).toBe(200)
    expect(out.headers.get('set-cookie')).toMatch(/^flagpost-session=; /)
    expect(agent.cookie('flagpost.test', 'flagpost-session')).toBeUndefined()
    const redirect = new URL(((await out.json()) as { redirectUrl: string }).redirectUrl)
    expect(redirect.origin).toBe(provider.issuer)
    expect(Object.fromEntries(redirect.searchParams)).toEqual({ id_token_hint: stored!.id_token, client_id: provider.clientId, post_logout_redirect_uri: `${ORIGIN}/sign-in` })
    // The session is gone, its ID token with it.
    expect((await t.call('GET', '/api/admin/user', { token: null, headers: { cookie } })).status).toBe(401)
    expect(await t.query(`select 1 from sessions where id_token = $1`, [stored!.id_token])).toEqual([])

    const back = await confirmSignOut(agent, redirect.toString())
    expect(back.toString()).toBe(`${ORIGIN}/sign-in`)
    // Signed out at the provider too: a new sign-in asks who signs in.
    const next = await agent.send(`${ORIGIN}/auth/oidc/login`)
    const page = await agent.follow(next.headers.get('location')!, {}, (url) => url.origin === ORIGIN)
    expect(new URL(page.url).origin).toBe(provider.issuer)
    expect(await page.response.text()).toContain('Test provider')
  })

  it('with single sign-out off, ends only the session here', async () => {
    await configure({ enableSingleSignOut: false })
    const { cookie } = await signInThroughProvider('ann@example.com')
    const out = await t.call('POST', '/logout', { token: null, headers: { cookie } })
    expect(out.status).toBe(200)
    expect(out.body).toEqual({})
    expect((await t.call('GET', '/api/admin/user', { token: null, headers: { cookie } })).status).toBe(401)
  })

  it('a password session signs out as before, single sign-out on or not', async () => {
    await configure({ enableSingleSignOut: true })
    const user = await createSignedInUser(t, 'pat-out', 'Viewer')
    const cookie = user.cookie
    expect((await t.call('GET', '/api/admin/user', { token: null, headers: { cookie } })).status).toBe(200)
    const out = await t.call('POST', '/logout', { token: null, headers: { cookie } })
    expect(out.status).toBe(200)
    expect(out.body).toEqual({})
    expect(out.headers.get('set-cookie')).toMatch(/^flagpost-session=; /)
    expect((await t.call('GET', '/api/admin/user', { token: null, headers: { cookie } })).status).toBe(401)
  })
})
