import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createToken } from '../src/api-tokens/store.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { createTestApp, type TestApp } from './helpers/app.js'

/*
 * Walks every route that changes state, in an order where each one has something to act on, and
 * checks the events it writes. The route list comes from the OpenAPI document, so a new write route
 * without a case here fails the first test.
 */

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const F = '/api/admin/projects/shop/features'
const strategyId = async () => (await t.call('GET', `${F}/cart/environments/development/strategies`)).body[0].id as string
const draftId = async () => (await t.call('GET', '/api/admin/projects/shop/change-requests?state=Draft')).body[0].id as number
/** A change request by another token, In review, so that test-admin may approve it. */
async function reviewedByAnother() {
  const other = (await createToken(t.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'other-admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
  const created = await t.call('POST', '/api/admin/projects/shop/environments/production/change-requests', { body: { feature: 'cart', action: 'patchVariant', payload: { variants: [{ name: 'x' }] } }, token: other })
  await t.call('PUT', `/api/admin/projects/shop/change-requests/${created.body.id}/state`, { body: { state: 'In review' }, token: other })
  return created.body.id as number
}
const segmentId = async () => (await t.call('GET', '/api/admin/segments')).body.segments[0].id as number

// Users, sign-in and personal access tokens: dana is created by the first of their cases.
let danaId = 0
let patId = 0
let resetToken = ''
const findDana = async () => (danaId = (await t.query<{ id: number }>("select id from users where username = 'dana'"))[0]!.id)
const asDana = async () => {
  const res = await t.call('POST', '/auth/simple/login', { token: null, body: { username: 'dana', password: 'dana-password' } })
  return { token: null, headers: { cookie: /flagpost-session=[^;]*/.exec(res.headers.get('set-cookie') ?? '')![0] }, actor: 'dana@example.com' }
}

interface Case {
  /** Who makes the request (default: the test-admin token) and the name its events carry. */
  as?: () => Promise<{ token: string | null; headers?: Record<string, string>; actor: string }>
  route: string
  path: string | (() => Promise<string>)
  body?: unknown
  events: string[]
  /** Waits for background work the route hands over (SDK reports are folded after the response). */
  settle?: () => Promise<void>
}

let frontendToken = ''
/** SDK reports are stored on the request and folded (with application-created for a new application) in the background. */
const reportsFolded = () =>
  vi.waitFor(async () => expect(await t.query('select count(*)::int as n from client_metrics_inbox')).toEqual([{ n: 0 }]), { timeout: 5_000, interval: 20 })
const sdkBucket = { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: { cart: { yes: 1, no: 0, variants: {} } } }
const asFrontend = async () => ({ token: frontendToken, actor: 'web' })

const cases: Case[] = [
  { route: 'POST /api/admin/environments', path: '/api/admin/environments', body: { name: 'staging', type: 'preproduction' }, events: ['environment-created'] },
  { route: 'POST /api/admin/projects', path: '/api/admin/projects', body: { id: 'shop', name: 'Shop', environments: ['development', 'production'] }, events: ['project-created'] },
  { route: 'PUT /api/admin/projects/{projectId}', path: '/api/admin/projects/shop', body: { name: 'Shop!' }, events: ['project-updated'] },
  { route: 'POST /api/admin/projects/{projectId}/environments', path: '/api/admin/projects/shop/environments', body: { environment: 'staging' }, events: ['project-environment-added'] },
  { route: 'PUT /api/admin/projects/{projectId}/environments/{environment}/default-strategy', path: '/api/admin/projects/shop/environments/staging/default-strategy', body: { name: 'default' }, events: ['default-strategy-updated'] },
  { route: 'POST /api/admin/projects/{projectId}/environments/{environment}/default-strategy', path: '/api/admin/projects/shop/environments/staging/default-strategy', body: { name: 'flexibleRollout' }, events: ['default-strategy-updated'] },
  { route: 'POST /api/admin/api-tokens', path: '/api/admin/api-tokens', body: { tokenName: 'sdk', type: 'backend', environment: 'development' }, events: ['api-token-created'] },
  {
    route: 'DELETE /api/admin/api-tokens/{token}',
    path: async () => `/api/admin/api-tokens/${encodeURIComponent((await t.call('GET', '/api/admin/api-tokens')).body.tokens.find((x: any) => x.tokenName === 'sdk').secret)}`,
    events: ['api-token-deleted'],
  },
  { route: 'POST /api/admin/segments', path: '/api/admin/segments', body: { name: 'beta', constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }] }, events: ['segment-created'] },
  { route: 'PUT /api/admin/segments/{id}', path: async () => `/api/admin/segments/${await segmentId()}`, body: { name: 'beta', constraints: [] }, events: ['segment-updated'] },
  { route: 'POST /api/admin/projects/{projectId}/features', path: F, body: { name: 'cart' }, events: ['feature-created'] },
  { route: 'PATCH /api/admin/projects/{projectId}/features/{featureName}', path: `${F}/cart`, body: [{ op: 'replace', path: '/stale', value: true }], events: ['feature-metadata-updated', 'feature-stale-on'] },
  { route: 'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on', path: `${F}/cart/environments/development/on`, events: ['feature-strategy-add', 'feature-environment-enabled'] },
  { route: 'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off', path: `${F}/cart/environments/development/off`, events: ['feature-environment-disabled'] },
  { route: 'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies', path: `${F}/cart/environments/development/strategies`, body: { name: 'userWithId', parameters: { userIds: '1' } }, events: ['feature-strategy-add'] },
  {
    route: 'PUT /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}',
    path: async () => `${F}/cart/environments/development/strategies/${await strategyId()}`,
    body: { name: 'default' },
    events: ['feature-strategy-update'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order',
    path: `${F}/cart/environments/development/strategies/set-sort-order`,
    body: [],
    events: ['strategy-order-changed'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}',
    path: async () => `${F}/cart/environments/development/strategies/${await strategyId()}`,
    events: ['feature-strategy-remove'],
  },
  { route: 'PATCH /api/admin/projects/{projectId}/features/{featureName}/variants', path: `${F}/cart/variants`, body: [{ op: 'add', path: '/-', value: { name: 'a' } }], events: ['feature-variants-updated', 'feature-variants-updated', 'feature-variants-updated'] },
  { route: 'PUT /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants', path: `${F}/cart/environments/production/variants`, body: [{ name: 'b' }], events: ['feature-environment-variants-updated'] },
  { route: 'PATCH /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants', path: `${F}/cart/environments/production/variants`, body: [{ op: 'replace', path: '/0/name', value: 'c' }], events: ['feature-environment-variants-updated'] },
  { route: 'PUT /api/admin/projects/{projectId}/change-requests/config', path: '/api/admin/projects/shop/change-requests/config', body: { environment: 'production', changeRequestsEnabled: true }, events: ['change-request-configuration-updated'] },
  { route: 'POST /api/admin/projects/{projectId}/environments/{environment}/change-requests', path: '/api/admin/projects/shop/environments/production/change-requests', body: { feature: 'cart', action: 'updateEnabled', payload: { enabled: true } }, events: ['change-request-created', 'change-added'] },
  { route: 'PUT /api/admin/projects/{projectId}/change-requests/{id}/state', path: async () => `/api/admin/projects/shop/change-requests/${await draftId()}/state`, body: { state: 'In review' }, events: ['change-request-sent-to-review'] },
  { route: 'POST /api/admin/playground/change-request/{id}', path: async () => `/api/admin/playground/change-request/${(await t.call('GET', '/api/admin/projects/shop/change-requests')).body[0].id}`, body: { context: { appName: 'web' } }, events: [] },
  { route: 'POST /api/admin/projects/{projectId}/change-requests/{id}/approve', path: async () => `/api/admin/projects/shop/change-requests/${await reviewedByAnother()}/approve`, events: ['change-request-approved'] },
  {
    route: 'PUT /api/admin/projects/{projectId}/change-requests/{id}/state',
    path: async () => `/api/admin/projects/shop/change-requests/${(await t.call('GET', '/api/admin/projects/shop/change-requests?state=Approved')).body[0].id}/state`,
    body: { state: 'Applied' },
    events: ['feature-environment-variants-updated', 'change-request-applied'],
  },
  { route: 'POST /api/admin/playground', path: '/api/admin/playground', body: { environment: 'production', context: { appName: 'web' } }, events: [] },
  { route: 'POST /api/admin/playground/advanced', path: '/api/admin/playground/advanced', body: { environments: ['production'], context: { appName: 'web,app' } }, events: [] },
  { route: 'POST /api/admin/features/{featureName}/tags', path: '/api/admin/features/cart/tags', body: { type: 'team', value: 'payments' }, events: ['feature-tagged'] },
  { route: 'DELETE /api/admin/features/{featureName}/tags/{type}/{value}', path: '/api/admin/features/cart/tags/team/payments', events: ['feature-untagged'] },
  { route: 'POST /api/admin/projects/{projectId}/features/{featureName}/favorites', path: `${F}/cart/favorites`, events: ['feature-favorited'] },
  { route: 'DELETE /api/admin/projects/{projectId}/features/{featureName}/favorites', path: `${F}/cart/favorites`, events: ['feature-unfavorited'] },
  { route: 'POST /api/admin/projects/{projectId}/favorites', path: '/api/admin/projects/shop/favorites', events: ['project-favorited'] },
  { route: 'DELETE /api/admin/projects/{projectId}/favorites', path: '/api/admin/projects/shop/favorites', events: ['project-unfavorited'] },
  { route: 'POST /api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete', path: `${F}/cart/lifecycle/complete`, body: { status: 'kept' }, events: ['feature-completed'] },
  { route: 'POST /api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete', path: `${F}/cart/lifecycle/uncomplete`, events: ['feature-uncompleted'] },
  { route: 'POST /api/admin/projects/{projectId}/features/{child}/dependencies', path: async () => (await t.call('POST', F, { body: { name: 'cart-child' } }), `${F}/cart-child/dependencies`), body: { feature: 'cart' }, events: ['feature-dependency-added'] },
  { route: 'DELETE /api/admin/projects/{projectId}/features/{child}/dependencies/{parent}', path: `${F}/cart-child/dependencies/cart`, events: ['feature-dependency-removed'] },
  { route: 'DELETE /api/admin/projects/{projectId}/features/{child}/dependencies', path: async () => (await t.call('POST', `${F}/cart-child/dependencies`, { body: { feature: 'cart' } }), `${F}/cart-child/dependencies`), events: ['feature-dependencies-removed'] },
  { route: 'DELETE /api/admin/projects/{projectId}/features/{featureName}', path: `${F}/cart-child`, events: ['feature-archived'] },
  { route: 'POST /api/admin/archive/revive/{featureName}', path: '/api/admin/archive/revive/cart-child', events: ['feature-revived'] },
  { route: 'POST /api/admin/addons', path: '/api/admin/addons', body: { provider: 'webhook', enabled: false, parameters: { url: 'https://hooks.example.com/x' }, events: ['feature-created'] }, events: ['addon-config-created'] },
  {
    route: 'PUT /api/admin/addons/{id}',
    path: async () => `/api/admin/addons/${(await t.call('GET', '/api/admin/addons')).body.addons[0].id}`,
    body: { provider: 'webhook', enabled: false, parameters: { url: 'https://hooks.example.com/y' }, events: ['feature-created'] },
    events: ['addon-config-updated'],
  },
  { route: 'DELETE /api/admin/addons/{id}', path: async () => `/api/admin/addons/${(await t.call('GET', '/api/admin/addons')).body.addons[0].id}`, events: ['addon-config-deleted'] },
  { route: 'DELETE /api/admin/segments/{id}', path: async () => `/api/admin/segments/${await segmentId()}`, events: ['segment-deleted'] },
  { route: 'POST /api/admin/user-admin', path: '/api/admin/user-admin', body: { username: 'dana', email: 'dana@example.com', password: 'dana-password', rootRole: 'Editor' }, events: ['user-created'] },
  { route: 'PUT /api/admin/user-admin/{id}', path: async () => `/api/admin/user-admin/${await findDana()}`, body: { name: 'Dana' }, events: ['user-updated'] },
  { route: 'POST /api/admin/user-admin/{id}/change-password', path: async () => `/api/admin/user-admin/${danaId}/change-password`, body: { password: 'dana-password' }, events: ['user-updated'] },
  { route: 'POST /auth/simple/login', path: '/auth/simple/login', body: { username: 'dana', password: 'dana-password' }, events: [] },
  { route: 'POST /logout', path: '/logout', as: asDana, events: [] },
  {
    route: 'POST /auth/reset/password',
    path: async () => {
      const invited = await t.call('POST', '/api/admin/user-admin', { body: { email: 'erin@example.com', rootRole: 'Viewer' } })
      resetToken = new URL(invited.body.inviteLink).searchParams.get('token')!
      return '/auth/reset/password'
    },
    get body() {
      return { token: resetToken, password: 'erin-password' }
    },
    as: async () => ({ token: null, actor: 'erin@example.com' }),
    events: ['user-updated'],
  },
  { route: 'POST /api/admin/user/tokens', path: '/api/admin/user/tokens', body: { description: 'ci', expiresAt: '2099-01-01T00:00:00Z' }, as: asDana, events: ['pat-created'] },
  {
    route: 'DELETE /api/admin/user/tokens/{id}',
    path: async () => `/api/admin/user/tokens/${(patId = (await t.query<{ id: number }>("select id from api_tokens where type = 'pat'"))[0]!.id)}`,
    as: asDana,
    events: ['pat-deleted'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/access',
    path: '/api/admin/projects/shop/access',
    get body() {
      return { roles: [5], users: [danaId] }
    },
    events: ['project-access-added'],
  },
  { route: 'PUT /api/admin/projects/{projectId}/users/{userId}/roles', path: async () => `/api/admin/projects/shop/users/${danaId}/roles`, body: { roles: [5] }, events: ['project-access-user-roles-updated'] },
  { route: 'DELETE /api/admin/projects/{projectId}/users/{userId}/roles', path: async () => `/api/admin/projects/shop/users/${danaId}/roles`, events: ['project-access-user-roles-deleted'] },
  { route: 'POST /api/admin/auth/oidc/settings', path: '/api/admin/auth/oidc/settings', body: { enabled: true, clientId: 'flagpost', secret: 'oidc-secret' }, events: ['setting-created'] },
  { route: 'DELETE /api/admin/user-admin/{id}', path: async () => `/api/admin/user-admin/${danaId}`, events: ['user-deleted'] },
  {
    route: 'POST /api/client/register',
    path: '/api/client/register',
    body: { appName: 'cart-service', instanceId: 'a', strategies: ['default'], interval: 15000, started: new Date().toISOString() },
    settle: reportsFolded,
    events: ['application-created'],
  },
  { route: 'POST /api/client/metrics', path: '/api/client/metrics', body: { appName: 'cart-service', bucket: sdkBucket }, settle: reportsFolded, events: [] },
  {
    route: 'POST /api/frontend',
    path: async () => {
      frontendToken = (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'web', type: 'frontend', environment: 'development' } })).body.secret
      return '/api/frontend'
    },
    as: asFrontend,
    body: { context: { userId: '1' } },
    events: [],
  },
  { route: 'POST /api/frontend/client/metrics', path: '/api/frontend/client/metrics', as: asFrontend, body: { appName: 'cart-service', bucket: sdkBucket }, settle: reportsFolded, events: [] },
  {
    route: 'POST /api/frontend/client/register',
    path: '/api/frontend/client/register',
    as: asFrontend,
    body: { appName: 'cart-service', interval: 30000, started: new Date().toISOString(), strategies: [] },
    settle: reportsFolded,
    events: [],
  },
]

describe('every change writes its events in the same transaction', () => {
  it('has a case for every route that changes state', async () => {
    const doc = (await t.call('GET', '/docs/openapi.json', { token: null })).body
    const writeRoutes = Object.entries<Record<string, unknown>>(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).filter((m) => m !== 'get').map((m) => `${m.toUpperCase()} ${path}`),
    )
    expect(writeRoutes.filter((r) => !cases.some((c) => c.route === r))).toEqual([])
  })

  for (const c of cases) {
    it(`${c.route} writes ${c.events.join(', ')}`, async () => {
      const path = typeof c.path === 'string' ? c.path : await c.path()
      const max = (await t.query<{ max: number }>('select coalesce(max(id), 0)::int as max from events'))[0]!.max
      const versions = async () => new Map((await t.query<{ name: string; version: number }>('select name, version from features')).map((f) => [f.name, f.version]))
      const versionsBefore = await versions()
      const method = c.route.split(' ')[0]!
      const caller = c.as ? await c.as() : undefined
      const actor = caller?.actor ?? 'test-admin'
      const res = await t.call(method, path, { body: c.body, token: caller?.token, headers: caller?.headers })
      expect(res.status, res.text).toBeLessThan(300)
      await c.settle?.()
      const written = await t.query<{ type: string; feature_name: string | null; created_by: string; label: string; summary: string }>('select type, feature_name, created_by, label, summary from events where id > $1 order by id', [max])
      expect(written.map((e) => e.type).sort()).toEqual([...c.events].sort())
      // A change to a flag moves its version (src/flags/lock.ts), which optimistic writes rely on; favorites
      // and change-request bookkeeping do not change the flag, and a new flag starts at its first version.
      const versionsAfter = await versions()
      for (const e of written.filter((e) => e.feature_name && /^(feature-|strategy-order)/.test(e.type) && !/^feature-(created|favorited|unfavorited)$/.test(e.type))) {
        expect(versionsAfter.get(e.feature_name!), `${e.type} of ${e.feature_name}`).toBeGreaterThan(versionsBefore.get(e.feature_name!)!)
      }
      for (const e of written) {
        expect(e.created_by).toBe(actor)
        expect(e.label).toBeTruthy()
        expect(e.summary.startsWith(`**${actor}** `)).toBe(true)
      }
    })
  }
})
