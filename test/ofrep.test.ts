// OpenFeature's official OFREP providers, unchanged but for the URL and token, against the Node server on a free port;
// then the protocol's edges (errors, scope, ETags, CORS, limits) through HTTP on the test app.
import { rm } from 'node:fs/promises'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'
import { OpenFeature as ServerFeature } from '@openfeature/server-sdk'
import { OpenFeature as WebFeature } from '@openfeature/web-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readConfig, startServer } from '../src/server.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, createToken, enableFlag, fresh, ok } from './helpers/factories.js'
import { adminCaller, eventually } from './helpers/server.js'
import { createPat, createSignedInUser } from './helpers/users.js'
import { migratedDataDir } from './helpers/data-dir.js'

const ADMIN = '*:*.ofrep-test-admin-secret'
let dataDir: string
let server: Awaited<ReturnType<typeof startServer>>
let clientToken: string
let frontendToken: string
const admin = adminCaller(() => server.url, ADMIN)
const F = '/api/admin/projects/default/features'
const dev = (flag: string) => `${F}/${flag}/environments/development`

const variant = (name: string, payload?: { type: string; value: string }, stickiness = 'userId') => ({ name, weightType: 'variable', stickiness, ...(payload ? { payload } : {}) })

beforeAll(async () => {
  dataDir = await migratedDataDir('flagpost-ofrep-')
  server = await startServer({ ...readConfig({}), port: 0, host: '127.0.0.1', dataDir, initAdminTokens: [ADMIN] })
  for (const name of ['on', 'off', 'alice-only', 'text', 'count', 'settings', 'colors', 'plain-variant']) await admin('POST', F, { name })
  await admin('POST', `${dev('on')}/on`)
  await admin('POST', `${dev('alice-only')}/strategies`, { name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: 'a' }, constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice'] }] })
  await admin('POST', `${dev('alice-only')}/on`)
  for (const [flag, payload] of [
    ['text', { type: 'string', value: 'Hello' }],
    ['count', { type: 'number', value: '42' }],
    ['settings', { type: 'json', value: '{"theme":"dark","size":3}' }],
  ] as const) {
    await admin('POST', `${dev(flag)}/on`)
    await admin('PUT', `${dev(flag)}/variants`, [variant(`${flag}-variant`, payload)])
  }
  await admin('POST', `${dev('colors')}/on`)
  await admin('PUT', `${dev('colors')}/variants`, [variant('red', { type: 'string', value: 'Red' }), variant('blue', { type: 'string', value: 'Blue' })])
  await admin('POST', `${dev('plain-variant')}/on`)
  await admin('PUT', `${dev('plain-variant')}/variants`, [variant('only')])
  clientToken = (await admin('POST', '/api/admin/api-tokens', { tokenName: 'ofrep-server', type: 'client', environment: 'development', projects: ['default'] })).secret
  frontendToken = (await admin('POST', '/api/admin/api-tokens', { tokenName: 'ofrep-web', type: 'frontend', environment: 'development', projects: ['default'] })).secret
})

afterAll(async () => {
  await ServerFeature.close()
  await WebFeature.close()
  await server?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

/** An OpenFeature server client on its own domain, through the OFREP server provider with `Authorization: Bearer <token>`. */
async function serverClient(token = clientToken) {
  const domain = fresh('server')
  await ServerFeature.setProviderAndWait(domain, new OFREPProvider({ baseUrl: server.url, headers: [['Authorization', `Bearer ${token}`]] }))
  return ServerFeature.getClient(domain)
}

describe('the OFREP server provider (@openfeature/ofrep-provider) with a client token', () => {
  it('evaluates booleans as the flag’s state, strings, numbers and objects as the chosen variant’s payload', async () => {
    const client = await serverClient()
    expect(await client.getBooleanDetails('on', false)).toMatchObject({ value: true, reason: 'STATIC' })
    expect(await client.getBooleanDetails('off', true)).toMatchObject({ value: false, reason: 'DISABLED' })
    expect(await client.getBooleanDetails('alice-only', false, { targetingKey: 'alice' })).toMatchObject({ value: true, reason: 'TARGETING_MATCH' })
    expect(await client.getBooleanDetails('alice-only', true, { targetingKey: 'bob' })).toMatchObject({ value: false, reason: 'DEFAULT' })
    // userId wins over targetingKey.
    expect(await client.getBooleanValue('alice-only', true, { targetingKey: 'alice', userId: 'bob' })).toBe(false)
    expect(await client.getStringDetails('text', 'none')).toMatchObject({ value: 'Hello', variant: 'text-variant', reason: 'STATIC' })
    expect(await client.getNumberDetails('count', 0)).toMatchObject({ value: 42, variant: 'count-variant' })
    expect(await client.getObjectDetails('settings', {})).toMatchObject({ value: { theme: 'dark', size: 3 }, variant: 'settings-variant' })
    const split = await client.getStringDetails('colors', 'none', { targetingKey: 'user-7' })
    expect(['Red', 'Blue']).toContain(split.value)
    expect(split.reason).toBe('SPLIT')
    // The same user gets the same variant every time (userId stickiness).
    expect(await client.getStringValue('colors', 'none', { targetingKey: 'user-7' })).toBe(split.value)
    expect(await client.getBooleanDetails('plain-variant', false)).toMatchObject({ value: true, variant: 'only' })
  })

  it('answers an unknown flag FLAG_NOT_FOUND and a value of another type TYPE_MISMATCH, with the code’s default', async () => {
    const client = await serverClient()
    expect(await client.getBooleanDetails('no-such-flag', true)).toMatchObject({ value: true, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' })
    expect(await client.getNumberDetails('text', 7)).toMatchObject({ value: 7, reason: 'ERROR', errorCode: 'TYPE_MISMATCH' })
    // A flag without a variant payload answers a boolean: a string evaluation of it is a type mismatch.
    expect(await client.getStringDetails('on', 'fallback')).toMatchObject({ value: 'fallback', errorCode: 'TYPE_MISMATCH' })
  })

  it('answers its configuration to a client or frontend token, 401 without one, 403 to an admin token', async () => {
    const get = (authorization?: string) => fetch(`${server.url}/ofrep/v1/configuration`, { headers: authorization ? { authorization } : {} })
    for (const token of [clientToken, frontendToken]) {
      const res = await get(`Bearer ${token}`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({
        name: 'Flagpost',
        capabilities: { cacheInvalidation: { polling: { enabled: true, minPollingIntervalMs: 1000 } }, flagEvaluation: { supportedTypes: ['boolean', 'string', 'integer', 'float', 'object'] } },
      })
    }
    expect((await get()).status).toBe(401)
    expect((await get('Bearer default:development.not-a-token')).status).toBe(401)
    expect((await get(ADMIN)).status).toBe(403)
  })

  it('with a bad token gets the code’s default and an error, never a flag’s value', async () => {
    const client = await serverClient('default:development.not-a-token')
    const details = await client.getBooleanDetails('on', false)
    expect(details).toMatchObject({ value: false, reason: 'ERROR' })
  })

  it('with a token of another project or environment sees none of this project’s flags', async () => {
    const other = await createProject({ call: (method, path, options) => call(method, path, { ...options, token: ADMIN }) })
    const project = (await admin('POST', '/api/admin/api-tokens', { tokenName: fresh('t'), type: 'client', environment: 'development', projects: [other] })).secret
    const production = (await admin('POST', '/api/admin/api-tokens', { tokenName: fresh('t'), type: 'client', environment: 'production', projects: ['default'] })).secret
    expect(await (await serverClient(project)).getBooleanDetails('on', false)).toMatchObject({ value: false, errorCode: 'FLAG_NOT_FOUND' })
    // The flag exists in production too, but is off there.
    expect(await (await serverClient(production)).getBooleanDetails('on', true)).toMatchObject({ value: false, reason: 'DISABLED' })
  })
})

/** A request to the running server, answered as tests read answers. */
async function call(method: string, path: string, options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...(options.token === null ? {} : { authorization: options.token ?? ADMIN }), ...options.headers }
  if (options.body !== undefined) headers['content-type'] ??= 'application/json'
  const res = await fetch(`${server.url}${path}`, { method, headers, body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body) })
  const text = await res.text()
  let body: any
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  return { status: res.status, headers: res.headers, body, text }
}

describe('the OFREP web provider (@openfeature/ofrep-web-provider) with a frontend token', () => {
  it('evaluates from the bulk endpoint, sees only the flags on for its context, and picks up a change when it polls', async () => {
    const requests: { status: number; ifNoneMatch: string | null }[] = []
    const fetchImplementation = async (input: Request | string | URL, init?: RequestInit) => {
      const request = new Request(input, init)
      const response = await fetch(request)
      requests.push({ status: response.status, ifNoneMatch: request.headers.get('if-none-match') })
      return response
    }
    const domain = fresh('web')
    const provider = new OFREPWebProvider({ baseUrl: server.url, headers: [['Authorization', frontendToken]], pollInterval: 200, cacheMode: 'disabled', disableVisibilityRefresh: true, fetchImplementation })
    await WebFeature.setContext(domain, { targetingKey: 'alice' })
    await WebFeature.setProviderAndWait(domain, provider)
    const client = WebFeature.getClient(domain)
    expect(client.getBooleanDetails('on', false)).toMatchObject({ value: true, reason: 'STATIC' })
    expect(client.getBooleanDetails('alice-only', false)).toMatchObject({ value: true, reason: 'TARGETING_MATCH' })
    expect(client.getStringDetails('text', 'none')).toMatchObject({ value: 'Hello', variant: 'text-variant' })
    expect(client.getNumberValue('count', 0)).toBe(42)
    expect(client.getObjectValue('settings', {})).toEqual({ theme: 'dark', size: 3 })
    expect(client.getNumberDetails('text', 1)).toMatchObject({ value: 1, errorCode: 'TYPE_MISMATCH' })
    // As on /api/frontend, a frontend token never learns of a flag that is off for its context.
    expect(client.getBooleanDetails('off', true)).toMatchObject({ value: true, errorCode: 'FLAG_NOT_FOUND' })

    // Unchanged polls are 304s for the ETag the provider sent back.
    await eventually(async () => expect(requests.some((r) => r.status === 304 && r.ifNoneMatch)).toBe(true))
    await admin('POST', `${dev('off')}/on`)
    try {
      await eventually(async () => expect(client.getBooleanValue('off', false)).toBe(true))
    } finally {
      await admin('POST', `${dev('off')}/off`)
    }
    await WebFeature.clearProviders()
  })
})

describe('OFREP through HTTP', () => {
  let t: TestApp
  let client: string
  let frontend: string
  let project: string
  let flag: string
  beforeAll(async () => {
    t = await createTestApp()
    project = await createProject(t)
    flag = (await createFlag(t, {}, project)).name
    await addStrategy(t, flag, 'development', { name: 'default' }, project)
    await enableFlag(t, flag, 'development', project)
    client = (await createToken(t, { type: 'client', environment: 'development', projects: [project] })).secret
    frontend = (await createToken(t, { type: 'frontend', environment: 'development', projects: [project] })).secret
  })
  afterAll(async () => t?.close())
  const evaluate = (path: string, options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {}) => t.call('POST', `/ofrep/v1/evaluate/flags${path}`, { body: {}, ...options })

  it('answers the bulk endpoint in full for If-None-Match: * (it names no answer of this context; only the ETag a provider got does)', async () => {
    for (const header of ['*', ' * ', '"nope", *']) {
      const res = await evaluate('', { token: client, body: { context: { targetingKey: 'u1' } }, headers: { 'if-none-match': header } })
      expect(res.status, header).toBe(200)
      expect(res.body.flags).toEqual([{ key: flag, value: true, reason: 'STATIC' }])
      const again = await evaluate('', { token: client, body: { context: { targetingKey: 'u1' } }, headers: { 'if-none-match': `*, ${res.headers.get('etag')}` } })
      expect(again.status).toBe(304)
    }
  })

  it('answers the bulk endpoint with an ETag, and 304 for If-None-Match while the answer is the same', async () => {
    const first = await evaluate('', { token: client, body: { context: { targetingKey: 'u1' } } })
    expect(first.status, first.text).toBe(200)
    expect(first.body.flags).toEqual([{ key: flag, value: true, reason: 'STATIC' }])
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/)
    const again = await evaluate('', { token: client, body: { context: { targetingKey: 'u1' } }, headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
    expect(again.text).toBe('')
    await ok(t, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/off`)
    const changed = await evaluate('', { token: client, body: { context: { targetingKey: 'u1' } }, headers: { 'if-none-match': etag } })
    expect(changed.status).toBe(200)
    expect(changed.body.flags).toEqual([{ key: flag, value: false, reason: 'DISABLED' }])
    await enableFlag(t, flag, 'development', project)
  })

  it('takes the token raw or after Bearer; refuses a bad token (401), admin tokens and personal access tokens (403)', async () => {
    expect((await evaluate(`/${flag}`, { token: client })).body).toEqual({ key: flag, value: true, reason: 'STATIC' })
    expect((await evaluate(`/${flag}`, { token: `Bearer ${frontend}` })).body).toEqual({ key: flag, value: true, reason: 'STATIC' })
    const bad = await evaluate(`/${flag}`, { token: 'Bearer default:development.nope' })
    expect(bad.status).toBe(401)
    expect(bad.body).toMatchObject({ name: 'AuthenticationRequired' })
    expect((await evaluate(`/${flag}`, { token: null })).status).toBe(401)
    const adminAnswer = await evaluate(`/${flag}`)
    expect(adminAnswer.status).toBe(403)
    expect(adminAnswer.body).toMatchObject({ name: 'NoAccessError' })
  })

  it('answers an unknown flag, and one of another project, 404 FLAG_NOT_FOUND in both contracts', async () => {
    const elsewhere = (await createFlag(t, {})).name
    await enableFlag(t, elsewhere, 'development')
    for (const key of ['no-such-flag', elsewhere]) {
      const res = await evaluate(`/${key}`, { token: client })
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ key, errorCode: 'FLAG_NOT_FOUND', name: 'NotFoundError' })
      expect(res.body.errorDetails).toBe(res.body.message)
    }
    expect((await evaluate('', { token: client })).body.flags.map((f: { key: string }) => f.key)).toEqual([flag])
  })

  it('answers a body that is not JSON 400 PARSE_ERROR, and a context that is not an object 400 INVALID_CONTEXT', async () => {
    const parse = await evaluate(`/${flag}`, { token: client, body: '{"context":' })
    expect(parse.status).toBe(400)
    expect(parse.body).toMatchObject({ key: flag, errorCode: 'PARSE_ERROR', name: 'ValidationError' })
    const bulkParse = await evaluate('', { token: client, body: 'nope' })
    expect(bulkParse.status).toBe(400)
    expect(bulkParse.body).toMatchObject({ errorCode: 'PARSE_ERROR' })
    expect(bulkParse.body.key).toBeUndefined()
    for (const body of [{ context: 'alice' }, { context: [1] }]) {
      const res = await evaluate(`/${flag}`, { token: client, body })
      expect(res.status, res.text).toBe(400)
      expect(res.body).toMatchObject({ key: flag, errorCode: 'INVALID_CONTEXT', name: 'ValidationError' })
    }
    // No body at all is an empty context.
    expect((await t.call('POST', `/ofrep/v1/evaluate/flags/${flag}`, { token: client })).status).toBe(200)
  })

  it('shows a frontend token only the flags on for its context, as /api/frontend does: the others are FLAG_NOT_FOUND', async () => {
    const targeted = (await createFlag(t, {}, project)).name
    await addStrategy(t, targeted, 'development', { name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: targeted }, constraints: [{ contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@example.com'] }] }, project)
    await enableFlag(t, targeted, 'development', project)
    const off = (await createFlag(t, {}, project)).name
    const inside = { context: { targetingKey: 'u', email: 'a@example.com' } }
    expect((await evaluate(`/${targeted}`, { token: frontend, body: inside })).body).toEqual({ key: targeted, value: true, reason: 'TARGETING_MATCH' })
    for (const key of [targeted, off]) {
      const hidden = await evaluate(`/${key}`, { token: frontend, body: { context: { targetingKey: 'u', email: 'a@other.org' } } })
      expect(hidden.status).toBe(404)
      expect(hidden.body).toMatchObject({ key, errorCode: 'FLAG_NOT_FOUND' })
    }
    const bulk = (await evaluate('', { token: frontend, body: { context: { email: 'a@other.org' } } })).body.flags.map((f: { key: string }) => f.key)
    expect(bulk).toEqual([flag])
    // A client token (a server's) sees every flag of its projects, off ones too.
    const all = (await evaluate('', { token: client, body: { context: { email: 'a@other.org' } } })).body.flags
    expect(all).toEqual(expect.arrayContaining([{ key: targeted, value: false, reason: 'DEFAULT' }, { key: off, value: false, reason: 'DISABLED' }]))
  })

  it('reports a variant an override gave as TARGETING_MATCH (a rule named this user), a weighted draw as SPLIT, in flag and strategy variants', async () => {
    const variants = [
      { name: 'red', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'Red' }, overrides: [{ contextName: 'userId', values: ['vip'] }] },
      { name: 'blue', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'Blue' } },
    ]
    const byFlag = (await createFlag(t, {}, project)).name
    await addStrategy(t, byFlag, 'development', { name: 'default' }, project)
    await ok(t, 'PUT', `/api/admin/projects/${project}/features/${byFlag}/environments/development/variants`, variants)
    await enableFlag(t, byFlag, 'development', project)
    const byStrategy = (await createFlag(t, {}, project)).name
    await addStrategy(t, byStrategy, 'development', { name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: byStrategy }, variants }, project)
    await enableFlag(t, byStrategy, 'development', project)
    for (const key of [byFlag, byStrategy]) {
      expect((await evaluate(`/${key}`, { token: client, body: { context: { targetingKey: 'vip' } } })).body, key).toEqual({ key, value: 'Red', variant: 'red', reason: 'TARGETING_MATCH' })
      const drawn = (await evaluate(`/${key}`, { token: client, body: { context: { targetingKey: 'someone' } } })).body
      expect(drawn, key).toMatchObject({ key, reason: 'SPLIT' })
      expect(['Red', 'Blue']).toContain(drawn.value)
    }
    // A rollout below 100 % let the user in: the draw decided whether the flag is on, whatever the variant.
    const partial = (await createFlag(t, {}, project)).name
    await addStrategy(t, partial, 'development', { name: 'flexibleRollout', parameters: { rollout: '99', stickiness: 'default', groupId: 'p' }, variants }, project)
    await enableFlag(t, partial, 'development', project)
    const users = ['vip', ...Array.from({ length: 20 }, (_, i) => `u${i}`)]
    const answers = await Promise.all(users.map(async (u) => (await evaluate(`/${partial}`, { token: client, body: { context: { targetingKey: u } } })).body))
    for (const a of answers) expect(['SPLIT', 'DEFAULT']).toContain(a.reason)
  })

  it('maps the context: strings, numbers and booleans count (as text), targetingKey is the userId, objects and arrays are left out', async () => {
    const typed = (await createFlag(t, {}, project)).name
    await addStrategy(t, typed, 'development', {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: typed },
      constraints: [
        { contextName: 'userId', operator: 'IN', values: ['7'] },
        { contextName: 'age', operator: 'NUM_GT', value: '17' },
        { contextName: 'beta', operator: 'IN', values: ['true'] },
      ],
    }, project)
    await enableFlag(t, typed, 'development', project)
    const answer = async (context: Record<string, unknown>) => (await evaluate(`/${typed}`, { token: client, body: { context } })).body.value
    expect(await answer({ targetingKey: 7, age: 18, beta: true })).toBe(true)
    expect(await answer({ targetingKey: '7', age: '18', beta: 'true' })).toBe(true)
    expect(await answer({ targetingKey: '8', age: 18, beta: true })).toBe(false)
    expect(await answer({ targetingKey: '7', age: { n: 18 }, beta: true })).toBe(false)
    expect(await answer({ targetingKey: '7', age: 18, beta: [true] })).toBe(false)
    expect(await answer({ userId: '7', targetingKey: '8', age: 18, beta: true })).toBe(true)
  })
})

describe('OFREP: what an attacker would try', () => {
  let t: TestApp
  let project: string
  let flag: string
  let client: string
  beforeAll(async () => {
    t = await createTestApp({ sdk: { frontendCorsOrigins: ['https://app.example.com'] } })
    project = await createProject(t)
    flag = (await createFlag(t, {}, project)).name
    await enableFlag(t, flag, 'development', project)
    client = (await createToken(t, { type: 'client', environment: 'development', projects: [project] })).secret
  })
  afterAll(async () => t?.close())
  const evaluate = (path: string, options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {}) => t.call('POST', `/ofrep/v1/evaluate/flags${path}`, { body: {}, ...options })

  it('answers a json payload nested 20,000 deep as its text, never a 500 for the flag or the bulk', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`
    const res = await t.call('PUT', `/api/admin/projects/${project}/features/${flag}/environments/development/variants`, {
      body: [{ name: 'deep', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: deep } }],
    })
    expect(res.status, res.text).toBe(200)
    const one = await evaluate(`/${flag}`, { token: client, body: { context: { targetingKey: 'u1' } } })
    expect(one.status, one.text).toBe(200)
    expect(one.body).toMatchObject({ key: flag, variant: 'deep', value: deep })
    const bulk = await evaluate('', { token: client, body: { context: { targetingKey: 'u1' } } })
    expect(bulk.status).toBe(200)
    await t.call('PUT', `/api/admin/projects/${project}/features/${flag}/environments/development/variants`, { body: [] })
  })

  it('refuses a signed-in browser’s session cookie and a personal access token: only client and frontend tokens evaluate', async () => {
    const user = await createSignedInUser(t, fresh('admin-user'), 'Admin')
    const byCookie = await user.call('POST', `/ofrep/v1/evaluate/flags/${flag}`, { body: {} })
    expect(byCookie.status).toBe(401)
    const pat = await createPat(user)
    const byPat = await evaluate(`/${flag}`, { token: pat })
    expect(byPat.status).toBe(403)
    expect(byPat.body).toMatchObject({ name: 'NoAccessError' })
  })

  it('answers preflights for the configured origins only, before authentication', async () => {
    const preflight = (origin: string) =>
      t.app.request('/ofrep/v1/evaluate/flags', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,if-none-match' } })
    const allowed = await preflight('https://app.example.com')
    expect(allowed.status).toBe(204)
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization')
    expect((await preflight('https://evil.example.com')).headers.get('access-control-allow-origin')).toBeNull()
    const answer = await evaluate('', { token: client, headers: { origin: 'https://app.example.com' } })
    expect(answer.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    expect(answer.headers.get('access-control-expose-headers')).toContain('ETag')
  })

  it('holds the context to the value length limit and the evaluation work budget: 400 INVALID_CONTEXT', async () => {
    const long = await evaluate(`/${flag}`, { token: client, body: { context: { targetingKey: 'x'.repeat(1_001) } } })
    expect(long.status).toBe(400)
    expect(long.body).toMatchObject({ key: flag, errorCode: 'INVALID_CONTEXT', name: 'ValidationError' })
    expect(long.body.message).toContain('FLAGPOST_CONTEXT_VALUE_MAX_LENGTH')
    const longName = await evaluate('', { token: client, body: { context: { ['p'.repeat(1_001)]: 'x' } } })
    expect(longName.body).toMatchObject({ errorCode: 'INVALID_CONTEXT' })

    const small = await createTestApp({ evaluation: { regexWorkBudget: 1_000 } })
    try {
      const p = await createProject(small)
      const f = (await createFlag(small, {}, p)).name
      await addStrategy(small, f, 'development', { name: 'default', constraints: [{ contextName: 'path', operator: 'REGEX', value: '(a|b|c|d|e|f|g|h)*z' }] }, p)
      await enableFlag(small, f, 'development', p)
      const token = (await createToken(small, { type: 'client', environment: 'development', projects: [p] })).secret
      const res = await small.call('POST', `/ofrep/v1/evaluate/flags/${f}`, { token, body: { context: { path: 'abcdefgh'.repeat(100) } } })
      expect(res.status, res.text).toBe(400)
      expect(res.body).toMatchObject({ key: f, errorCode: 'INVALID_CONTEXT' })
      expect((await small.call('POST', `/ofrep/v1/evaluate/flags/${f}`, { token, body: { context: { path: 'abz' } } })).body.value).toBe(true)
    } finally {
      await small.close()
    }
  })

  it('refuses a body over the size limit (413) and a body that is not JSON (415), with no evaluation', async () => {
    const big = await evaluate(`/${flag}`, { token: client, body: JSON.stringify({ context: { a: 'x'.repeat(1_100_000) } }) })
    expect(big.status).toBe(413)
    const text = await evaluate(`/${flag}`, { token: client, body: 'context=1', headers: { 'content-type': 'text/plain' } })
    expect(text.status).toBe(415)
  })
})
