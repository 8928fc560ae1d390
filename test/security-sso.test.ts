// Security of single sign-on: an account is bound to the provider's identity (`iss` + `sub`), never taken over by
// e-mail when its holder chose its password (pre-hijacking through an invite link), the ID token's e-mail must be
// verified and of an allowed domain for every user, and every redirect target stays on this site (server and console).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { browserAgent, startTestProvider, type TestProvider } from './helpers/oidc-provider.js'
import { fresh, ok } from './helpers/factories.js'
import { localPath } from '../src/core/local-path.js'
import { createOidcCache, endSessionUrl } from '../src/sso/oidc.js'

const ORIGIN = 'http://flagpost.test'
let provider: TestProvider
let t: TestApp

const ACCOUNTS = ['victim', 'invited', 'reset', 'bound', 'noverify', 'trusted', 'outsider', 'renamed', 'redirect', 'victim2', 'kelvin', 'nul', 'shape', 'strverify', 'rebind'] as const
const emailOf = (who: (typeof ACCOUNTS)[number]) => `${who}@${who === 'outsider' ? 'elsewhere.org' : 'example.com'}`

beforeAll(async () => {
  provider = await startTestProvider({ redirectUris: [`${ORIGIN}/auth/oidc/callback`], accounts: ACCOUNTS.map((who) => ({ email: emailOf(who), name: who })) })
  t = await createTestApp()
})
afterAll(async () => {
  await t?.close()
  await provider?.close()
})
beforeEach(() => provider.tamper(undefined))

const configure = (patch: Record<string, unknown> = {}) =>
  ok(t, 'POST', '/api/admin/auth/oidc/settings', { enabled: true, discoverUrl: provider.discoverUrl, clientId: provider.clientId, secret: provider.clientSecret, autoCreate: false, ...patch })

const newAgent = () => browserAgent(ORIGIN, (request) => Promise.resolve(t.app.request(request)))
type Agent = ReturnType<typeof newAgent>

/** The whole browser flow: the sign-in link, the provider (signing in there as `email`), the callback. Answers where the app sends the browser last. */
async function signInWithProvider(agent: Agent, email: string, redirect = '/projects') {
  const start = await agent.send(`${ORIGIN}/auth/oidc/login?redirect=${encodeURIComponent(redirect)}`)
  expect(start.status).toBe(302)
  const page = await agent.follow(start.headers.get('location')!)
  expect(page.response.status).toBe(200)
  const back = await agent.follow(page.url, { method: 'POST', body: new URLSearchParams({ email }) }, (url) => url.origin === ORIGIN)
  const res = await agent.send(new URL(back.response.headers.get('location')!, back.url).toString())
  expect(res.status).toBe(302)
  return res.headers.get('location')!
}
const refusal = (location: string) => {
  const url = new URL(location, ORIGIN)
  expect(url.pathname).toBe('/sign-in')
  return url.searchParams.get('errorMsg') ?? ''
}
async function whoAmI(agent: Agent) {
  const session = agent.cookie('flagpost.test', 'flagpost-session')
  return t.call('GET', '/api/admin/user', { token: null, headers: session ? { cookie: `flagpost-session=${session}` } : {} })
}
const bindingOf = async (email: string) =>
  (await t.query<{ sso_issuer: string | null; sso_subject: string | null }>('select sso_issuer, sso_subject from users where lower(email) = $1', [email]))[0]

/** Makes the provider's next ID token carry the e-mail itself (so UserInfo is not asked) with `claims` changed. */
const tamperIdToken = (email: string, claims: Record<string, unknown>, drop: string[] = []) =>
  provider.tamper((c) => {
    const next: Record<string, unknown> = { ...c, email, email_verified: true, ...claims }
    for (const name of drop) delete next[name]
    return next
  })

describe("the provider's e-mail address and name", () => {
  it('refuses an address with a letter that only lower-cases into ASCII (the Kelvin sign), which would land in another account', async () => {
    await configure({ autoCreate: true })
    await ok(t, 'POST', '/api/admin/user-admin', { email: 'kim@example.com', rootRole: 'Admin' })
    tamperIdToken('\u212Aim@example.com', {})
    const agent = newAgent()
    expect(refusal(await signInWithProvider(agent, emailOf('kelvin')))).toMatch(/cannot take as an account/)
    expect((await whoAmI(agent)).status).toBe(401)
    expect(await bindingOf('kim@example.com')).toEqual({ sso_issuer: null, sso_subject: null })
  })

  it('refuses a NUL, a line break or a second @ in the address with a message, never a 500', async () => {
    await configure({ autoCreate: true })
    for (const email of ['n1\u0000@example.com', 'd7@evil.org\n@example.com', 'd4@evil.org@example.com', `${'x'.repeat(3000)}@example.com`]) {
      tamperIdToken(email, {})
      expect(refusal(await signInWithProvider(newAgent(), emailOf('nul')))).toMatch(/cannot take as an account/)
    }
    expect((await t.query('select id from users where email like $1', ['%evil.org%']))).toHaveLength(0)
  })

  it('keeps a name without its control characters, and at most 255 characters of it', async () => {
    await configure({ autoCreate: true })
    tamperIdToken(emailOf('shape'), { name: `a\u0000b${'c'.repeat(400)}` })
    const agent = newAgent()
    expect(await signInWithProvider(agent, emailOf('shape'))).toBe('/projects')
    const name = (await whoAmI(agent)).body.user.name as string
    expect(name.startsWith('abccc')).toBe(true)
    expect(name).toHaveLength(255)
  })
})

describe('an account made with an e-mail nobody verified is never joined by single sign-on', () => {
  it('an invite-link sign-up with a colleague\'s e-mail is not taken over when the colleague signs in with the provider', async () => {
    await configure({ autoCreate: true })
    const link = (await ok(t, 'POST', '/api/admin/invite-link/tokens', { name: fresh('invite'), expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).body
    const attacker = await t.call('POST', `/invite/${link.secret}/signup`, { token: null, body: { email: emailOf('victim'), name: 'Not the victim', password: 'attacker password 123' } })
    expect(attacker.status, attacker.text).toBe(200)

    const agent = newAgent()
    expect(refusal(await signInWithProvider(agent, emailOf('victim')))).toMatch(/made through an invite link, where nobody proved the address/)
    expect((await whoAmI(agent)).status).toBe(401)
    expect(await bindingOf(emailOf('victim'))).toEqual({ sso_issuer: null, sso_subject: null })
  })

  it('a user an admin made who then set their own password through the welcome link is bound by e-mail (the admin gave the address)', async () => {
    await configure()
    const created = (await ok(t, 'POST', '/api/admin/user-admin', { email: emailOf('reset'), rootRole: 'Viewer' })).body
    const token = new URL(created.inviteLink as string).searchParams.get('token')!
    expect((await t.call('POST', '/auth/reset/password', { token: null, body: { token, password: 'my own password 123' } })).status).toBe(200)
    const agent = newAgent()
    expect(await signInWithProvider(agent, emailOf('reset'))).toBe('/projects')
    expect(await bindingOf(emailOf('reset'))).toEqual({ sso_issuer: provider.issuer, sso_subject: emailOf('reset') })
  })

  it('an invite-link account keeps its mark through a password change, so it is still never taken over', async () => {
    await configure({ autoCreate: true })
    const link = (await ok(t, 'POST', '/api/admin/invite-link/tokens', { name: fresh('invite'), expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).body
    const password = 'attacker password 123'
    const signUp = await t.call('POST', `/invite/${link.secret}/signup`, { token: null, body: { email: emailOf('victim2'), name: 'Not the victim', password } })
    expect(signUp.status, signUp.text).toBe(200)
    const user = (await t.query<{ id: number }>(`select id from users where email = $1`, [emailOf('victim2')]))[0]!
    expect((await ok(t, 'POST', `/api/admin/user-admin/${user.id}/change-password`, { password: 'an admin set this 123' })).status).toBe(200)
    const agent = newAgent()
    expect(refusal(await signInWithProvider(agent, emailOf('victim2')))).toMatch(/made through an invite link/)
    expect(await bindingOf(emailOf('victim2'))).toEqual({ sso_issuer: null, sso_subject: null })
  })

  it('a user an admin made (no password chosen) is bound to the provider\'s iss and sub at the first sign-in', async () => {
    await configure()
    await ok(t, 'POST', '/api/admin/user-admin', { email: emailOf('invited'), rootRole: 'Editor' })
    const agent = newAgent()
    expect(await signInWithProvider(agent, emailOf('invited'))).toBe('/projects')
    expect((await whoAmI(agent)).body.user.email).toBe(emailOf('invited'))
    expect(await bindingOf(emailOf('invited'))).toEqual({ sso_issuer: provider.issuer, sso_subject: emailOf('invited') })
  })

  it('a user who signs up through an invite link after the provider made the account is refused (the e-mail is taken)', async () => {
    await configure({ autoCreate: true })
    const agent = newAgent()
    expect(await signInWithProvider(agent, emailOf('trusted'))).toBe('/projects')
    const link = (await ok(t, 'POST', '/api/admin/invite-link/tokens', { name: fresh('invite'), expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).body
    const res = await t.call('POST', `/invite/${link.secret}/signup`, { token: null, body: { email: emailOf('trusted'), name: 'x', password: 'attacker password 123' } })
    expect(res.status).toBe(409)
  })
})

describe('the ID token\'s identity', () => {
  it('refuses a different sub for an account already bound, and keeps the binding', async () => {
    await configure()
    await ok(t, 'POST', '/api/admin/user-admin', { email: emailOf('bound'), rootRole: 'Viewer' })
    expect(await signInWithProvider(newAgent(), emailOf('bound'))).toBe('/projects')
    tamperIdToken(emailOf('bound'), { sub: 'someone-else' })
    const agent = newAgent()
    expect(refusal(await signInWithProvider(agent, emailOf('bound')))).toMatch(/belongs to another identity/)
    expect((await whoAmI(agent)).status).toBe(401)
    expect(await bindingOf(emailOf('bound'))).toEqual({ sso_issuer: provider.issuer, sso_subject: emailOf('bound') })
  })

  it('finds a bound account by its identity when the provider now says another e-mail', async () => {
    await configure()
    await ok(t, 'POST', '/api/admin/user-admin', { email: emailOf('renamed'), rootRole: 'Viewer' })
    const first = newAgent()
    await signInWithProvider(first, emailOf('renamed'))
    const id = (await whoAmI(first)).body.user.id
    tamperIdToken('renamed.now@example.com', {})
    const agent = newAgent()
    expect(await signInWithProvider(agent, emailOf('renamed'))).toBe('/projects')
    expect((await whoAmI(agent)).body.user.id).toBe(id)
  })

  it('records a binding as user-updated with the issuer, and an admin may unbind (DELETE …/sso) so another identity binds', async () => {
    await configure()
    const id = (await ok(t, 'POST', '/api/admin/user-admin', { email: emailOf('rebind'), rootRole: 'Viewer' })).body.id as number
    const first = newAgent()
    expect(await signInWithProvider(first, emailOf('rebind'))).toBe('/projects')
    const updates = async () =>
      (await t.query<{ data: any; pre_data: any }>(`select data, pre_data from events where type = 'user-updated' and (data->>'id')::int = $1 order by id`, [id])).map((e) => [e.pre_data.ssoIssuer, e.data.ssoIssuer])
    expect(await updates()).toEqual([[null, provider.issuer]])
    tamperIdToken(emailOf('rebind'), { sub: 'replacement-sub' })
    expect(refusal(await signInWithProvider(newAgent(), emailOf('rebind')))).toMatch(/belongs to another identity/)
    expect((await t.call('DELETE', `/api/admin/user-admin/${id}/sso`)).status).toBe(200)
    expect(await bindingOf(emailOf('rebind'))).toEqual({ sso_issuer: null, sso_subject: null })
    expect(await updates()).toEqual([[null, provider.issuer], [provider.issuer, null]])
    // The unbinding ended the account's sessions; the new identity binds at its first sign-in.
    expect((await whoAmI(first)).status).toBe(401)
    const second = newAgent()
    expect(await signInWithProvider(second, emailOf('rebind'))).toBe('/projects')
    expect(await bindingOf(emailOf('rebind'))).toEqual({ sso_issuer: provider.issuer, sso_subject: 'replacement-sub' })
    // The subject is never in an event; unbinding an unbound user writes nothing; an unknown user is a 404.
    expect(JSON.stringify(await t.query(`select data, pre_data from events where type = 'user-updated'`))).not.toContain('replacement-sub')
    expect((await t.call('DELETE', '/api/admin/user-admin/999999/sso')).status).toBe(404)
  })

  it('refuses an ID token without email_verified, unless the settings say the provider verifies e-mail addresses', async () => {
    await configure({ autoCreate: true })
    tamperIdToken(emailOf('noverify'), {}, ['email_verified'])
    const agent = newAgent()
    expect(refusal(await signInWithProvider(agent, emailOf('noverify')))).toMatch(/did not say your e-mail address noverify@example.com is verified/)
    expect(await t.query('select id from users where email = $1', [emailOf('noverify')])).toEqual([])

    await configure({ autoCreate: true, emailVerifiedByProvider: true })
    expect((await t.call('GET', '/api/admin/auth/oidc/settings')).body.emailVerifiedByProvider).toBe(true)
    tamperIdToken(emailOf('noverify'), {}, ['email_verified'])
    expect(await signInWithProvider(newAgent(), emailOf('noverify'))).toBe('/projects')
    // An explicit false is refused whatever the setting.
    tamperIdToken(emailOf('noverify'), { email_verified: false })
    expect(refusal(await signInWithProvider(newAgent(), emailOf('noverify')))).toMatch(/not verified/)
  })

  it('reads email_verified "false" (any case) as false and "true" as true, and refuses anything else, when the provider is trusted to verify', async () => {
    await configure({ autoCreate: true, emailVerifiedByProvider: true })
    for (const claim of ['false', 'FALSE', ' False ']) {
      tamperIdToken(emailOf('strverify'), { email_verified: claim })
      expect(refusal(await signInWithProvider(newAgent(), emailOf('strverify')))).toMatch(/not verified/)
    }
    for (const claim of ['no', 0, 1, 'yes']) {
      tamperIdToken(emailOf('strverify'), { email_verified: claim })
      expect(refusal(await signInWithProvider(newAgent(), emailOf('strverify')))).toMatch(/neither true nor false/)
    }
    expect(await t.query('select id from users where email = $1', [emailOf('strverify')])).toEqual([])
    await configure({ autoCreate: true })
    tamperIdToken(emailOf('strverify'), { email_verified: 'True' })
    expect(await signInWithProvider(newAgent(), emailOf('strverify'))).toBe('/projects')
  })

  it('applies the allowed e-mail domains to existing users too', async () => {
    await ok(t, 'POST', '/api/admin/user-admin', { email: emailOf('outsider'), rootRole: 'Viewer' })
    await configure({ emailDomains: 'example.com' })
    const agent = newAgent()
    expect(refusal(await signInWithProvider(agent, emailOf('outsider')))).toMatch(/elsewhere.org do not sign in here/)
    expect((await whoAmI(agent)).status).toBe(401)
    await configure({ emailDomains: 'example.com,elsewhere.org' })
    expect(await signInWithProvider(newAgent(), emailOf('outsider'))).toBe('/projects')
  })
})

describe('redirect targets stay on this site', () => {
  it('GET /auth/oidc/login?redirect=/%09/evil.example leads to / after signing in, never off the site', async () => {
    await configure({ autoCreate: true })
    for (const target of ['/\t/evil.example', '/\n/evil.example', '/\\evil.example', '//evil.example', 'https://evil.example/', '/\u00a0/evil.example']) {
      expect(await signInWithProvider(newAgent(), emailOf('redirect'), target), JSON.stringify(target)).toBe('/')
    }
    expect(await signInWithProvider(newAgent(), emailOf('redirect'), '/projects/default?tab=flags#x')).toBe('/projects/default?tab=flags#x')
  })

  it('a pending sign-in cookie whose redirect was changed in the browser leads to / too', async () => {
    await configure({ autoCreate: true })
    const agent = newAgent()
    const start = await agent.send(`${ORIGIN}/auth/oidc/login?redirect=/projects`)
    const [state, nonce, verifier] = agent.cookie('flagpost.test', 'flagpost-oidc')!.split('.')
    const forged = btoa('/\t/evil.example').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
    agent.setCookie('flagpost.test', 'flagpost-oidc', [state, nonce, verifier, forged].join('.'))
    const page = await agent.follow(start.headers.get('location')!)
    const back = await agent.follow(page.url, { method: 'POST', body: new URLSearchParams({ email: emailOf('redirect') }) }, (url) => url.origin === ORIGIN)
    const res = await agent.send(new URL(back.response.headers.get('location')!, back.url).toString())
    expect(res.headers.get('location')).toBe('/')
  })

  it('localPath (the one check the server and the console share) keeps only paths that parse to this origin', () => {
    const origin = 'https://flags.example.com'
    for (const bad of [undefined, null, '', 'evil.example', 'https://evil.example', '//evil.example', '/\\evil.example', '/\t/evil.example', '/\n/evil', '/\r/evil', '\t//evil', ' /x', '/x y', '/\u0000', '/\u2028/evil', 'javascript:alert(1)', '/%5C%5Cevil']) {
      expect(localPath(bad, origin), JSON.stringify(bad)).toBe(bad === '/%5C%5Cevil' ? '/%5C%5Cevil' : '/')
    }
    expect(localPath('/projects?x=1#y', origin)).toBe('/projects?x=1#y')
    expect(localPath('/a/../b', origin)).toBe('/b')
    expect(localPath('/%2F%2Fevil.example', origin)).toBe('/%2F%2Fevil.example')
    expect(localPath('//evil', origin, '/home')).toBe('/home')
  })
})

describe('single sign-out leads only to a web address', () => {
  it("answers no redirectUrl when the provider's end_session_endpoint is not https (a javascript: URL the console would open)", async () => {
    const discoverUrl = 'https://idp.example.com'
    const settings = { enabled: true, discoverUrl, clientId: 'c', secret: 's', enableSingleSignOut: true }
    const cacheWith = (endSession: string) => {
      const cache = createOidcCache()
      cache.discovery.set(discoverUrl, { as: { issuer: discoverUrl, end_session_endpoint: endSession }, until: Date.now() + 60_000 })
      return cache
    }
    expect(await endSessionUrl(cacheWith('javascript:alert(document.cookie)//'), settings, 'id.token.x', `${ORIGIN}/sign-in`)).toBeUndefined()
    expect(await endSessionUrl(cacheWith('http://idp.example.com/logout'), settings, 'id.token.x', `${ORIGIN}/sign-in`)).toBeUndefined()
    expect(await endSessionUrl(cacheWith('https://idp.example.com/logout'), settings, 'id.token.x', `${ORIGIN}/sign-in`)).toMatch(/^https:\/\/idp\.example\.com\/logout\?id_token_hint=/)
  })
})
