import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'

let t: TestApp
let now = new Date('2026-03-10T12:00:00Z')
beforeAll(async () => {
  t = await createTestApp({ now: () => now })
  await t.call('POST', '/api/admin/projects', { body: { id: 'shop', name: 'Shop' } })
  now = new Date('2026-03-11T08:00:00Z')
  await t.call('POST', '/api/admin/projects/shop/features', { body: { name: 'cart', description: 'The Shopping Cart', tags: [{ type: 'team', value: 'checkout-crew' }] } })
  await t.call('POST', '/api/admin/projects/default/features', { body: { name: 'search' } })
  now = new Date('2026-03-12T23:59:59Z')
  await t.call('POST', '/api/admin/projects/shop/features/cart/environments/production/on')
  now = new Date('2026-03-13T00:00:00Z')
  await t.call('POST', '/api/admin/projects/default/features/search/environments/development/on')
})
afterAll(() => t.close())

const search = (query: string) => t.call('GET', `/api/admin/search/events${query}`)

describe('events of one flag (operation 5)', () => {
  it('lists the events of a flag, newest first, with the total', async () => {
    const res = await t.call('GET', '/api/admin/events/cart')
    expect(res.status).toBe(200)
    expect(res.body.version).toBe(1)
    expect(res.body.toggleName).toBe('cart')
    expect(res.body.events.map((e: any) => e.type)).toEqual(['feature-environment-enabled', 'feature-strategy-add', 'feature-created'])
    expect(res.body.totalEvents).toBe(3)
    const enabled = res.body.events[0]
    expect(enabled).toMatchObject({
      type: 'feature-environment-enabled',
      createdBy: 'test-admin',
      createdByUserId: null,
      project: 'shop',
      environment: 'production',
      featureName: 'cart',
      tags: [{ type: 'team', value: 'checkout-crew' }],
      label: 'Flag enabled',
      summary: '**test-admin** enabled **cart** in *production*',
      createdAt: '2026-03-12T23:59:59.000Z',
    })
    expect(enabled.id).toBeGreaterThan(0)
  })

  it('pages with limit and offset while totalEvents counts them all', async () => {
    const res = await t.call('GET', '/api/admin/events/cart?limit=1&offset=1')
    expect(res.body.events.map((e: any) => e.type)).toEqual(['feature-strategy-add'])
    expect(res.body.totalEvents).toBe(3)
  })

  it('gives an unknown flag an empty list, not 404', async () => {
    const res = await t.call('GET', '/api/admin/events/no-such-flag')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ version: 1, toggleName: 'no-such-flag', events: [], totalEvents: 0 })
  })

  it('needs a token', async () => {
    expect((await t.call('GET', '/api/admin/events/cart', { token: null })).status).toBe(401)
  })
})

describe('event search (operation 7)', () => {
  it('returns everything newest first with the total', async () => {
    const res = await search('')
    expect(res.status).toBe(200)
    const all = await t.query<{ n: number }>('select count(*)::int as n from events')
    expect(res.body.total).toBe(all[0]!.n)
    const times = res.body.events.map((e: any) => e.createdAt)
    expect([...times].sort().reverse()).toEqual(times)
  })

  it('filters by feature, project, type and createdBy with IS and IS_ANY_OF', async () => {
    expect((await search('?feature=IS:cart')).body.total).toBe(3)
    expect((await search('?feature=IS_ANY_OF:cart,search')).body.total).toBe(6)
    const shop = await search('?project=IS:shop')
    expect(shop.body.events.every((e: any) => e.project === 'shop')).toBe(true)
    expect(shop.body.total).toBe(4)
    const types = await search('?type=IS_ANY_OF:feature-created,project-created')
    expect(types.body.events.map((e: any) => e.type).sort()).toEqual(['feature-created', 'feature-created', 'project-created'])
    expect((await search('?feature=IS:cart&type=IS:feature-created')).body.total).toBe(1)
    expect((await search('?createdBy=IS:test-admin')).body.total).toBe(7)
    expect((await search('?createdBy=IS_ANY_OF:test-admin,system')).body.total).toBe((await search('')).body.total)
    expect((await search('?createdBy=IS:someone-else')).body.total).toBe(0)
  })

  it('filters by creation day, including the whole `to` day', async () => {
    const day12 = await search('?from=IS:2026-03-12&to=IS:2026-03-12')
    expect(day12.body.events.map((e: any) => e.type)).toEqual(['feature-environment-enabled', 'feature-strategy-add'])
    expect((await search('?from=IS:2026-03-13')).body.total).toBe(2)
    // The test admin token (by system) and the project were created on the 10th.
    expect((await search('?to=IS:2026-03-10')).body.events.map((e: any) => e.type).sort()).toEqual(['api-token-created', 'project-created'])
  })

  it('finds free text case-insensitively in data, preData and tags', async () => {
    expect((await search('?query=shopping%20CART')).body.events.map((e: any) => e.type)).toEqual(['feature-created'])
    expect((await search('?query=CHECKOUT-CREW')).body.total).toBe(3)
    expect((await search('?query=100%25')).body.total).toBe(0)
    expect((await search('?query=groupId')).body.total).toBe(2)
  })

  it('pages with offset and limit', async () => {
    const all = (await search('')).body
    const page = await search('?offset=2&limit=2')
    expect(page.body.events.map((e: any) => e.id)).toEqual(all.events.slice(2, 4).map((e: any) => e.id))
    expect(page.body.total).toBe(all.total)
  })

  it.each([
    ['feature=cart', 'feature'],
    ['project=EQ:shop', 'project'],
    ['type=IS:no-such-type', 'type'],
    ['from=2026-03-01', 'from'],
    ['to=IS:2026-13-45', 'to'],
    ['from=IS:2026-03-13&to=IS:2026-03-01', 'from'],
    ['offset=-1', 'offset'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
  ])('answers 400 for %s naming the parameter', async (query, parameter) => {
    const res = await search(`?${query}`)
    expect(res.status).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.body.message).toContain(parameter)
  })

  it('accepts the maximum page size', async () => {
    expect((await search('?limit=1000')).status).toBe(200)
  })
})

describe('totals of large searches', () => {
  it('stay exact when they are cached, as new events arrive', async () => {
    await t.query(`insert into events (created_at, type, created_by, project, feature_name, data, tags)
      select timestamptz '2025-01-01' + g * interval '1 minute', 'feature-updated', 'bulk', 'bulk-project', 'bulk-' || (g % 10), '{"n":1}', '[]'
      from generate_series(1, 12000) g`)
    const first = await search('?project=IS:bulk-project')
    expect(first.body.total).toBe(12000)
    const cached = await t.query<{ n: number }>('select n::int from event_count_cache')
    expect(cached).toEqual([{ n: 12000 }])
    await t.query(`insert into events (created_at, type, created_by, project, tags) values (now(), 'feature-updated', 'bulk', 'bulk-project', '[]'), (now(), 'feature-updated', 'bulk', 'other', '[]')`)
    expect((await search('?project=IS:bulk-project')).body.total).toBe(12001)
    expect((await search('?project=IS:bulk-project&type=IS:feature-updated')).body.total).toBe(12001)
    const all = await t.query<{ n: number }>('select count(*)::int as n from events')
    expect((await search('')).body.total).toBe(all[0]!.n)
    await t.query(`insert into events (created_at, type, created_by, tags) values (now(), 'feature-updated', 'bulk', '[]')`)
    expect((await search('')).body.total).toBe(all[0]!.n + 1)
  })
})
