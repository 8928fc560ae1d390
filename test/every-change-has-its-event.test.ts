import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
const segmentId = async () => (await t.call('GET', '/api/admin/segments')).body.segments[0].id as number

interface Case {
  route: string
  path: string | (() => Promise<string>)
  body?: unknown
  events: string[]
}

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
      const method = c.route.split(' ')[0]!
      const res = await t.call(method, path, { body: c.body })
      expect(res.status, res.text).toBeLessThan(300)
      const written = await t.query<{ type: string; created_by: string; label: string; summary: string }>('select type, created_by, label, summary from events where id > $1 order by id', [max])
      expect(written.map((e) => e.type).sort()).toEqual([...c.events].sort())
      for (const e of written) {
        expect(e.created_by).toBe('test-admin')
        expect(e.label).toBeTruthy()
        expect(e.summary).toMatch(/^\*\*test-admin\*\* /)
      }
    })
  }
})
