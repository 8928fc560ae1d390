import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { evaluate, fromClientFeatures, prepareRuleset, type EvaluationContext } from '../src/evaluation/index.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { cloudflareClientAddress } from '../src/http/client-address.js'
import { createFlag, createProject, createToken, enableFlag, fresh } from './helpers/factories.js'

let t: TestApp
const tokens: Record<string, string> = {}
const P = '/api/admin/projects/default/features'

async function token(tokenName: string, type: string, environment: string, projects: string[]) {
  const res = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName, type, environment, projects } })
  expect(res.status, res.text).toBe(201)
  return res.body.secret as string
}

async function admin(method: string, path: string, body?: unknown) {
  const res = await t.call(method, path, { body })
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300)
  return res.body
}

const frontend = (query = '', secret = tokens.web!, headers: Record<string, string> = {}) => t.call('GET', `/api/frontend${query}`, { token: secret, headers })
const enabledNames = (body: { toggles: { name: string }[] }) => body.toggles.map((f) => f.name)

// A fixture the tests only read; a test that changes a flag makes its own.
beforeAll(async () => {
  // The caller's address as on Workers (CF-Connecting-IP), which app.request can set; Node's is its socket's peer.
  t = await createTestApp({ clientAddress: cloudflareClientAddress })
  await admin('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
  const segment = await admin('POST', '/api/admin/segments', { name: 'nordics', constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE', 'DK'] }] })
  for (const name of ['everyone', 'nordic-users', 'beta', 'off', 'child', 'half', 'by-address']) await admin('POST', P, { name, impressionData: name === 'beta' })
  await admin('POST', '/api/admin/projects/shop/features', { name: 'cart' })

  await admin('POST', `${P}/everyone/environments/development/on`)
  await admin('POST', `${P}/nordic-users/environments/development/strategies`, { name: 'default', segments: [segment.id] })
  await admin('POST', `${P}/nordic-users/environments/development/on`)
  await admin('POST', `${P}/beta/environments/development/strategies`, {
    name: 'userWithId',
    parameters: { userIds: '1,2,3' },
    variants: [{ name: 'gold', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"tier":"gold"}' } }],
  })
  await admin('POST', `${P}/beta/environments/development/strategies`, { name: 'default', constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }] })
  await admin('POST', `${P}/beta/environments/development/on`)
  await admin('PUT', `${P}/beta/environments/development/variants`, [{ name: 'silver', weightType: 'variable' }])
  await admin('POST', `${P}/child/dependencies`, { feature: 'beta' })
  await admin('POST', `${P}/child/environments/development/on`)
  await admin('POST', `${P}/half/environments/development/strategies`, { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'userId', groupId: 'half' } })
  await admin('POST', `${P}/half/environments/development/on`)
  await admin('POST', `${P}/by-address/environments/development/strategies`, { name: 'remoteAddress', parameters: { IPs: '10.1.2.3' } })
  await admin('POST', `${P}/by-address/environments/development/on`)
  await admin('POST', '/api/admin/projects/shop/features/cart/environments/development/on')

  tokens.web = await token('web', 'frontend', 'development', ['*'])
  tokens.webDefault = await token('web-default', 'frontend', 'development', ['default'])
  tokens.webProd = await token('web-prod', 'frontend', 'production', ['*'])
  tokens.client = await token('backend', 'client', 'development', ['*'])
})
afterAll(() => t.close())

describe('GET and POST /api/frontend', () => {
  it('returns only the flags enabled for the context, each with its variant and impressionData', async () => {
    const res = await frontend('?appName=web&userId=2&properties[country]=NO')
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-cache')
    expect(res.body.toggles).toEqual([
      { name: 'beta', enabled: true, variant: { name: 'gold', enabled: true, payload: { type: 'json', value: '{"tier":"gold"}' }, feature_enabled: true, featureEnabled: true }, impressionData: true },
      { name: 'cart', enabled: true, variant: { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true }, impressionData: false },
      { name: 'child', enabled: true, variant: { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true }, impressionData: false },
      { name: 'everyone', enabled: true, variant: { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true }, impressionData: false },
      ...(res.body.toggles.some((f: { name: string }) => f.name === 'half') ? [expect.objectContaining({ name: 'half' })] : []),
      { name: 'nordic-users', enabled: true, variant: { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true }, impressionData: false },
    ])
  })

  it('reads properties as properties[name], and other parameters as properties too', async () => {
    expect(enabledNames((await frontend('?userId=99&plan=pro')).body)).toContain('beta')
    expect(enabledNames((await frontend('?userId=99&properties[plan]=pro')).body)).toContain('beta')
    const beta = (await frontend('?userId=99&plan=pro')).body.toggles.find((f: { name: string }) => f.name === 'beta')
    // The second strategy has no variants of its own, so the flag's variants apply.
    expect(beta.variant).toMatchObject({ name: 'silver', enabled: true })
    expect(enabledNames((await frontend('?userId=99&properties[country]=FI')).body)).not.toContain('nordic-users')
  })

  it("takes remoteAddress from the query, else from the caller's address", async () => {
    expect(enabledNames((await frontend('?remoteAddress=10.1.2.3')).body)).toContain('by-address')
    expect(enabledNames((await frontend('', tokens.web, { 'cf-connecting-ip': '10.1.2.3' })).body)).toContain('by-address')
    expect(enabledNames((await frontend('', tokens.web, { 'cf-connecting-ip': '10.9.9.9' })).body)).not.toContain('by-address')
  })

  it('answers POST with the context in the body, as GET does with the query', async () => {
    const body = { context: { appName: 'web', userId: '2', properties: { country: 'NO' } } }
    const post = await t.call('POST', '/api/frontend', { token: tokens.web!, body })
    expect(post.status, post.text).toBe(200)
    expect(post.body).toEqual((await frontend('?appName=web&userId=2&properties[country]=NO')).body)
    expect((await t.call('POST', '/api/frontend', { token: tokens.web!, body: {} })).status).toBe(200)
    expect((await t.call('POST', '/api/frontend', { token: tokens.web! })).status).toBe(200)
    expect((await t.call('POST', '/api/frontend', { token: tokens.web!, body: { context: { userId: ['1'] } } })).status).toBe(400)
  })

  it('gives the same answers as the engine on the payload server SDKs get, for many contexts', async () => {
    const payload = (await t.call('GET', '/api/client/features', { token: tokens.client!, headers: { 'unleash-client-spec': '5.2.0' } })).body
    const ruleset = prepareRuleset(fromClientFeatures(payload))
    for (let i = 0; i < 40; i++) {
      const context: EvaluationContext = { userId: String(i), sessionId: `s${i}`, remoteAddress: i % 7 === 0 ? '10.1.2.3' : '10.0.0.1', properties: { country: i % 3 === 0 ? 'SE' : 'US', plan: i % 4 === 0 ? 'pro' : 'free' } }
      const query = `?userId=${i}&sessionId=s${i}&remoteAddress=${context.remoteAddress}&properties[country]=${context.properties!.country}&properties[plan]=${context.properties!.plan}`
      const answered = (await frontend(query)).body.toggles as { name: string; variant: { name: string } }[]
      const expected = [...ruleset.flags.keys()].filter((name) => evaluate(ruleset.flags.get(name), { ...context, environment: 'development' }).enabled)
      expect(answered.map((f) => f.name)).toEqual(expected)
      for (const f of answered) expect(f.variant.name).toBe(evaluate(ruleset.flags.get(f.name), { ...context, environment: 'development' }).variant.name)
    }
  })

  it("keeps to the token's environment and projects", async () => {
    expect(enabledNames((await frontend('?userId=2', tokens.webDefault)).body)).not.toContain('cart')
    expect((await frontend('?userId=2', tokens.webProd)).body.toggles).toEqual([])
    // The environment the SDK sends (the browser SDK sends `default`) does not override the token's.
    expect(enabledNames((await frontend('?userId=2&environment=production')).body)).toContain('everyone')
  })

  it('reflects a change through the admin API on the next request', async () => {
    const project = await createProject(t)
    const everyone = (await createFlag(t, {}, project)).name
    await enableFlag(t, everyone, 'development', project)
    const secret = (await createToken(t, { type: 'frontend', environment: 'development', projects: [project] })).secret
    expect(enabledNames((await frontend('', secret)).body)).toContain(everyone)
    await admin('POST', `/api/admin/projects/${project}/features/${everyone}/environments/development/off`)
    expect(enabledNames((await frontend('', secret)).body)).not.toContain(everyone)
  })
})

describe('tokens on the frontend API', () => {
  it('answers 401 without a token, and 403 to client and admin tokens', async () => {
    const none = await frontend('', null as unknown as string)
    expect(none.status).toBe(401)
    expect(none.body.name).toBe('AuthenticationRequired')
    for (const secret of [tokens.client!, t.adminToken]) {
      const res = await frontend('', secret)
      expect(res.status).toBe(403)
      expect(res.body).toEqual({ id: expect.any(String), name: 'NoAccessError', message: expect.any(String) })
    }
    expect((await t.call('GET', '/api/admin/projects', { token: tokens.web! })).status).toBe(403)
  })
})

describe('frontend metrics and registration', () => {
  it('accepts metrics with 200 and folds them in the background (lastSeenAt in the token environment)', async () => {
    // A flag of a project of its own, off, so that no other test's answer lists it.
    const everyone = (await createFlag(t, {}, await createProject(t))).name
    const res = await t.call('POST', '/api/frontend/client/metrics', {
      token: tokens.web!,
      body: { appName: 'web', instanceId: 'browser', bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: { [everyone]: { yes: 3, no: 0, variants: {} } } } },
    })
    expect(res.status, res.text).toBe(200)
    await vi.waitFor(async () => {
      expect(await t.query(`select environment, last_seen_at is not null as seen from feature_environments where feature_name = $1 order by environment`, [everyone])).toEqual([
        { environment: 'development', seen: true },
        { environment: 'production', seen: false },
      ])
    })
    expect((await t.call('POST', '/api/frontend/client/metrics', { token: tokens.web!, body: { bucket: {} } })).status).toBe(400)
  })

  it('accepts a registration with 200', async () => {
    const appName = fresh('web')
    const res = await t.call('POST', '/api/frontend/client/register', { token: tokens.web!, body: { appName, interval: 30000, started: new Date().toISOString(), strategies: [] } })
    expect(res.status, res.text).toBe(200)
    await vi.waitFor(async () => expect(await t.query(`select app_name from client_applications where app_name = $1`, [appName])).toEqual([{ app_name: appName }]))
  })
})

describe('CORS', () => {
  it('answers preflights and allows any origin on the frontend API by default, and nowhere else', async () => {
    const preflight = await t.app.request('/api/frontend', {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,if-none-match' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization/i)
    const get = await frontend('', tokens.web, { origin: 'https://shop.example.com' })
    expect(get.headers.get('access-control-allow-origin')).toBe('*')
    // Errors carry the header too, so a browser can read them.
    expect((await frontend('', null as unknown as string, { origin: 'https://shop.example.com' })).headers.get('access-control-allow-origin')).toBe('*')
    expect((await t.call('GET', '/api/client/features', { token: tokens.client!, headers: { origin: 'https://shop.example.com' } })).headers.get('access-control-allow-origin')).toBeNull()
    expect((await t.call('GET', '/api/admin/projects', { headers: { origin: 'https://shop.example.com' } })).headers.get('access-control-allow-origin')).toBeNull()
  })

  it('allows only the configured origins when there are some', async () => {
    const other = await createTestApp({ sdk: { frontendCorsOrigins: ['https://app.example.com'] } })
    try {
      const allowed = await other.app.request('/api/frontend', { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' } })
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
      const refused = await other.app.request('/api/frontend', { method: 'OPTIONS', headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'GET' } })
      expect(refused.headers.get('access-control-allow-origin')).toBeNull()
    } finally {
      await other.close()
    }
  })
})

describe('ETags on GET /api/frontend', () => {
  it('tags the answer, not the context: 304 on If-None-Match while the context gets the same flags, 200 when it gets others', async () => {
    const alice = await frontend('?userId=1&sessionId=s1&remoteAddress=10.0.0.1')
    expect(alice.status).toBe(200)
    const etag = alice.headers.get('etag')!
    expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/)
    expect(enabledNames(alice.body)).toContain('beta')

    const again = await frontend('?userId=1&sessionId=s1&remoteAddress=10.0.0.1', tokens.web, { 'if-none-match': etag })
    expect(again.status).toBe(304)
    expect(again.text).toBe('')
    expect(again.headers.get('etag')).toBe(etag)

    // Another user, who does not get `beta`: another answer, so another ETag, and the first one does not match it.
    const bob = await frontend('?userId=9&sessionId=s1&remoteAddress=10.0.0.1', tokens.web, { 'if-none-match': etag })
    expect(bob.status).toBe(200)
    expect(enabledNames(bob.body)).not.toContain('beta')
    expect(bob.headers.get('etag')).not.toBe(etag)
    // The strong form and a list are matched too.
    expect((await frontend('?userId=1&sessionId=s1&remoteAddress=10.0.0.1', tokens.web, { 'if-none-match': `"x", ${etag.slice(2)}` })).status).toBe(304)
  })

  it('answers 200 with the new answer once a change through the admin API changes what the context gets', async () => {
    const flag = (await createFlag(t, {})).name as string
    const query = '?userId=5&sessionId=s5&remoteAddress=10.0.0.5'
    const before = await frontend(query)
    expect(enabledNames(before.body)).not.toContain(flag)
    await enableFlag(t, flag, 'development')
    const after = await frontend(query, tokens.web, { 'if-none-match': before.headers.get('etag')! })
    expect(after.status).toBe(200)
    expect(enabledNames(after.body)).toContain(flag)
    expect((await frontend(query, tokens.web, { 'if-none-match': after.headers.get('etag')! })).status).toBe(304)
  })
})
