import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readRevision } from '../src/client-api/revision.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, createToken, fresh, ensureTagType } from './helpers/factories.js'

let t: TestApp
const tokens: Record<string, string> = {}
let segmentId: number
const SPEC = { 'unleash-client-spec': '5.2.0' }

const P = (project: string) => `/api/admin/projects/${project}/features`
const strategies = (project: string, flag: string, env: string) => `${P(project)}/${flag}/environments/${env}/strategies`

async function ok(res: Promise<{ status: number; text: string }>, status?: number) {
  const r = await res
  if (status !== undefined) expect(r.status, r.text).toBe(status)
  else expect(r.status, r.text).toBeLessThan(300)
  return r
}

async function token(tokenName: string, type: string, environment: string, projects: string[]) {
  const res = await ok(t.call('POST', '/api/admin/api-tokens', { body: { tokenName, type, environment, projects } }), 201)
  return (res as unknown as { body: { secret: string } }).body.secret
}

/** Polls as an SDK would: the client token, the client spec header, and optionally the last ETag. */
const poll = (secret: string, query = '', headers: Record<string, string> = {}) => t.call('GET', `/api/client/features${query}`, { token: secret, headers: { ...SPEC, ...headers } })

// A fixture the tests only read; a test that changes state does it in a project of its own (ownProject).
beforeAll(async () => {
  // The revision is read on every request here, so that changes made behind the app's back (raw SQL) are seen too.
  t = await createTestApp({ sdk: { revisionTtlMs: 0 } })
  // Flags here are tagged with the tag type `team`, which (as in Unleash) must exist first.
  await ensureTagType(t, 'team')
  await ok(t.call('POST', '/api/admin/projects', { body: { id: 'shop', name: 'Shop' } }))
  const segment = await ok(t.call('POST', '/api/admin/segments', { body: { name: 'beta-testers', constraints: [{ contextName: 'userId', operator: 'IN', values: ['7', '8'] }] } }))
  segmentId = (segment as unknown as { body: { id: number } }).body.id

  for (const name of ['checkout', 'banner', 'only-disabled', 'child', 'old', 'beta-ui']) await ok(t.call('POST', P('default'), { body: { name, impressionData: name === 'banner' } }))
  await ok(t.call('POST', P('shop'), { body: { name: 'cart' } }))

  // checkout: on in development, two strategies (one disabled) with a constraint and a segment, and variants.
  await ok(t.call('POST', strategies('default', 'checkout', 'development'), { body: { name: 'userWithId', parameters: { userIds: '1,2' }, disabled: true } }))
  await ok(
    t.call('POST', strategies('default', 'checkout', 'development'), {
      body: {
        name: 'flexibleRollout',
        parameters: { rollout: '100', stickiness: 'default', groupId: 'checkout' },
        constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE'] }],
        segments: [segmentId],
      },
    }),
  )
  await ok(t.call('POST', `${P('default')}/checkout/environments/development/on`))
  await ok(t.call('PUT', `${P('default')}/checkout/environments/development/variants`, { body: [{ name: 'blue', weightType: 'variable', payload: { type: 'string', value: 'Blue' } }] }))

  // banner: on in production only, with its default strategy.
  await ok(t.call('POST', `${P('default')}/banner/environments/production/on`))
  // only-disabled: switched on, then its only strategy disabled (which switches the environment off again).
  await ok(t.call('POST', `${P('default')}/only-disabled/environments/development/on`))
  const [added] = (await t.call('GET', strategies('default', 'only-disabled', 'development'))).body
  await ok(t.call('PUT', `${strategies('default', 'only-disabled', 'development')}/${added.id}`, { body: { ...added, disabled: true } }))
  // child depends on checkout.
  await ok(t.call('POST', `${P('default')}/child/dependencies`, { body: { feature: 'checkout', variants: ['blue'] } }))
  await ok(t.call('POST', '/api/admin/features/beta-ui/tags', { body: { type: 'team', value: 'web' } }))
  await ok(t.call('DELETE', `${P('default')}/old`))

  tokens.dev = await token('sdk-dev', 'client', 'development', ['*'])
  tokens.prod = await token('sdk-prod', 'client', 'production', ['*'])
  tokens.defaultDev = await token('sdk-default', 'client', 'development', ['default'])
  tokens.shopDev = await token('sdk-shop', 'client', 'development', ['shop'])
  tokens.frontend = await token('web', 'frontend', 'development', ['*'])
})
afterAll(() => t.close())

const names = (body: { features: { name: string }[] }) => body.features.map((f) => f.name)
/** The flags of the fixture above (default and shop): tests that change state do it in projects of their own. */
const fixtureNames = (body: { features: { name: string; project: string }[] }) => names({ features: body.features.filter((f) => ['default', 'shop'].includes(f.project)) })

/** A fresh project with a flag, and a client token of the project in development: state a test may change. */
async function ownProject() {
  const project = await createProject(t)
  const flag = (await createFlag(t, {}, project)).name as string
  const secret = (await createToken(t, { type: 'client', environment: 'development', projects: [project] })).secret as string
  return { project, flag, secret }
}

describe('GET /api/client/features', () => {
  it('serves the environment of the token: flags, enabled strategies in order, variants, dependencies, segments, and no archived flags', async () => {
    const res = await poll(tokens.dev!)
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.body.version).toBe(2)
    expect(fixtureNames(res.body)).toEqual(['banner', 'beta-ui', 'cart', 'checkout', 'child', 'only-disabled'])
    const checkout = res.body.features.find((f: { name: string }) => f.name === 'checkout')
    expect(checkout).toEqual({
      name: 'checkout',
      type: 'release',
      enabled: true,
      stale: false,
      impressionData: false,
      project: 'default',
      strategies: [
        {
          name: 'flexibleRollout',
          constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE'], caseInsensitive: false, inverted: false }],
          parameters: { rollout: '100', stickiness: 'default', groupId: 'checkout' },
          variants: [],
          segments: [segmentId],
        },
      ],
      variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'Blue' } }],
    })
    expect(res.body.features.find((f: { name: string }) => f.name === 'child')).toMatchObject({ enabled: false, dependencies: [{ feature: 'checkout', enabled: true, variants: ['blue'] }] })
    // Disabled strategies are left out, as Unleash does; with none left the environment is served off, never as on for everyone.
    expect(res.body.features.find((f: { name: string }) => f.name === 'only-disabled')).toMatchObject({ enabled: false, strategies: [] })
    expect(res.body.features.find((f: { name: string }) => f.name === 'banner')).toMatchObject({ enabled: false, impressionData: true })
    expect(res.body.segments).toEqual([{ id: segmentId, name: 'beta-testers', constraints: [{ contextName: 'userId', operator: 'IN', values: ['7', '8'], caseInsensitive: false, inverted: false }] }])
    expect(res.body.query).toEqual({ environment: 'development', inlineSegmentConstraints: false })
    expect(res.body.meta).toEqual({ revisionId: expect.any(Number), etag: res.headers.get('etag'), queryHash: expect.any(String) })
  })

  it('serves another environment to a token of that environment', async () => {
    const res = await poll(tokens.prod!)
    expect(res.status).toBe(200)
    const byName = Object.fromEntries(res.body.features.map((f: { name: string; enabled: boolean }) => [f.name, f]))
    expect(byName.banner).toMatchObject({ enabled: true, strategies: [{ name: 'flexibleRollout' }] })
    expect(byName.checkout).toMatchObject({ enabled: false, strategies: [], variants: [] })
    expect(res.body.segments).toEqual([])
  })

  it("keeps to the token's projects, and applies Unleash's project, namePrefix and tag filters within them", async () => {
    expect(names((await poll(tokens.defaultDev!)).body)).toEqual(['banner', 'beta-ui', 'checkout', 'child', 'only-disabled'])
    expect(names((await poll(tokens.shopDev!)).body)).toEqual(['cart'])
    // A project the token does not have gives nothing rather than widening the scope.
    expect(names((await poll(tokens.shopDev!, '?project=default')).body)).toEqual([])
    expect(names((await poll(tokens.dev!, '?project=shop')).body)).toEqual(['cart'])
    expect(names((await poll(tokens.dev!, '?project=shop&project=default&namePrefix=c')).body)).toEqual(['cart', 'checkout', 'child'])
    const tagged = await poll(tokens.dev!, '?tag=team:web&tag=team:nobody')
    expect(names(tagged.body)).toEqual(['beta-ui'])
    expect(tagged.body.query).toEqual({ environment: 'development', tag: [['team', 'nobody'], ['team', 'web']], inlineSegmentConstraints: false })
    const bad = await poll(tokens.dev!, '?tag=novalue')
    expect(bad.status).toBe(400)
    expect(bad.body.name).toBe('ValidationError')
  })

  it('copies segment constraints into strategies for SDKs that do not announce segment support', async () => {
    const res = await t.call('GET', '/api/client/features', { token: tokens.dev! })
    expect(res.body.segments).toBeUndefined()
    const checkout = res.body.features.find((f: { name: string }) => f.name === 'checkout')
    expect(checkout.strategies[0].segments).toBeUndefined()
    expect(checkout.strategies[0].constraints.map((c: { contextName: string }) => c.contextName)).toEqual(['country', 'userId'])
    expect(res.body.query.inlineSegmentConstraints).toBe(true)
    expect(res.headers.get('etag')).not.toBe((await poll(tokens.dev!)).headers.get('etag'))
  })

  it('answers 304 with no body for the current ETag, and 200 with a new ETag after a change', async () => {
    const { project, flag, secret } = await ownProject()
    const first = await poll(secret)
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/)
    const unchanged = await poll(secret, '', { 'if-none-match': etag })
    expect(unchanged.status).toBe(304)
    expect(unchanged.text).toBe('')
    expect(unchanged.headers.get('etag')).toBe(etag)
    expect((await poll(secret, '', { 'if-none-match': `W/${etag}, "other"` })).status).toBe(304)

    await ok(t.call('POST', `${P(project)}/${flag}/environments/development/on`))
    const changed = await poll(secret, '', { 'if-none-match': etag })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
    expect(changed.body.features.find((f: { name: string }) => f.name === flag).enabled).toBe(true)
    expect(changed.body.meta.revisionId).toBeGreaterThan(first.body.meta.revisionId)
  })

  it('keeps answering 304 when only flags the token does not see changed', async () => {
    const [seen, unseen] = [await ownProject(), await ownProject()]
    const etag = (await poll(seen.secret)).headers.get('etag')!
    await ok(t.call('POST', `${P(unseen.project)}/${unseen.flag}/environments/development/on`))
    expect((await poll(seen.secret, '', { 'if-none-match': etag })).status).toBe(304)
  })

  it('serves the cached payload while the revision is unchanged, and rebuilds it once an event moves the revision', async () => {
    const { project, flag, secret } = await ownProject()
    const before = await poll(secret)
    // Behind the app's back, with no event (every change through the API writes one): the payload is not read again.
    await t.query('update features set stale = true where name = $1', [flag])
    const cached = await poll(secret)
    expect(cached.text).toBe(before.text)
    // Any change through the API writes an event, which moves the revision.
    await ok(t.call('PATCH', `${P(project)}/${flag}`, { body: [{ op: 'replace', path: '/description', value: 'moved' }] }))
    const rebuilt = await poll(secret)
    expect(rebuilt.body.features.find((f: { name: string }) => f.name === flag).stale).toBe(true)
    expect(rebuilt.headers.get('etag')).not.toBe(before.headers.get('etag'))
  })

  it('accepts an admin token: the environment parameter, else the first enabled environment', async () => {
    const fallback = await poll(t.adminToken)
    expect(fallback.status, fallback.text).toBe(200)
    expect(fallback.body.query.environment).toBe('development')
    const prod = await poll(t.adminToken, '?environment=production')
    expect(prod.body.query.environment).toBe('production')
    expect(prod.body.features.find((f: { name: string }) => f.name === 'banner').enabled).toBe(true)
    expect((await poll(t.adminToken, '?environment=nowhere')).status).toBe(400)
    // A client token's environment cannot be overridden.
    expect((await poll(tokens.dev!, '?environment=production')).body.query.environment).toBe('development')
  })

  it('serves one flag on /api/client/features/{featureName}', async () => {
    const res = await t.call('GET', '/api/client/features/checkout', { token: tokens.dev!, headers: SPEC })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ name: 'checkout', enabled: true, project: 'default' })
    expect((await t.call('GET', '/api/client/features/old', { token: tokens.dev! })).status).toBe(404)
    expect((await t.call('GET', '/api/client/features/cart', { token: tokens.defaultDev! })).status).toBe(404)
  })
})

describe('tokens on the client API', () => {
  it('answers 401 without a token or with an unknown one, and 403 to a frontend token', async () => {
    for (const token of [null, 'default:development.nope']) {
      const res = await t.call('GET', '/api/client/features', { token })
      expect(res.status).toBe(401)
      expect(res.body).toEqual({ id: expect.any(String), name: 'AuthenticationRequired', message: expect.any(String) })
    }
    const frontend = await t.call('GET', '/api/client/features', { token: tokens.frontend! })
    expect(frontend.status).toBe(403)
    expect(frontend.body.name).toBe('NoAccessError')
    expect((await t.call('POST', '/api/client/metrics', { token: tokens.frontend!, body: { appName: 'x' } })).status).toBe(403)
  })

  it('refuses client tokens on the frontend API and on the admin API', async () => {
    expect((await t.call('GET', '/api/frontend', { token: tokens.dev! })).status).toBe(403)
    expect((await t.call('GET', '/api/admin/projects', { token: tokens.dev! })).status).toBe(403)
  })

  it('stops accepting a token as soon as it is deleted through this process', async () => {
    const secret = await token(fresh('short-lived'), 'client', 'development', ['*'])
    expect((await poll(secret)).status).toBe(200)
    await ok(t.call('DELETE', `/api/admin/api-tokens/${encodeURIComponent(secret)}`))
    expect((await poll(secret)).status).toBe(401)
  })
})

describe('the revision', () => {
  it('moves when an event commits with an id lower than the newest one (a transaction that committed late)', async () => {
    // Two ids drawn as two transactions would draw them, the later one committed first: only concurrent
    // transactions commit out of id order, and a test cannot time them, so the events are written by hand.
    const [early, late] = await t.query<{ id: number }>(`select nextval(pg_get_serial_sequence('events', 'id'))::int as id from generate_series(1, 2)`)
    await t.query(`insert into events (id, type, created_by) values ($1, 'feature-updated', 'late')`, [late!.id])
    const before = await readRevision(t.db)
    await t.query(`insert into events (id, type, created_by) values ($1, 'feature-updated', 'late')`, [early!.id])
    const after = await readRevision(t.db)
    expect(after.id).toBe(before.id)
    expect(after.key).not.toBe(before.key)
  })
})
