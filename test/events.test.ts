import { readFile } from 'node:fs/promises'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { drizzle } from 'drizzle-orm/pglite'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import * as schema from '../schema/index.js'
import { createToken } from '../src/api-tokens/store.js'
import { createApp } from '../src/app.js'
import type { Db } from '../src/db.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createEnvironment, createFlag, createProject, enableFlag, fresh, ensureTagType } from './helpers/factories.js'
import { createSignedInUser } from './helpers/users.js'

let t: TestApp
let now = new Date('2026-03-10T12:00:00Z')
beforeAll(async () => {
  t = await createTestApp({ now: () => now })
  // Flags here are tagged with the tag type `team`, which (as in Unleash) must exist first.
  await ensureTagType(t, 'team')
})
afterAll(() => t.close())

const search = (query: string) => t.call('GET', `/api/admin/search/events${query}`)

/**
 * A fresh project made on the 10th, with a tagged flag (`cart`, made on the 11th, enabled in production at the
 * last second of the 12th), and a flag of the default project (`search`, made on the 11th, enabled in
 * development at the first second of the 13th).
 */
async function shopWithCart() {
  now = new Date('2026-03-10T12:00:00Z')
  const shop = await createProject(t, { name: 'Shop' })
  now = new Date('2026-03-11T08:00:00Z')
  const cart = (await createFlag(t, { name: fresh('cart'), description: 'The Shopping Cart', tags: [{ type: 'team', value: 'checkout-crew' }] }, shop)).name as string
  const search = (await createFlag(t, { name: fresh('search') })).name as string
  now = new Date('2026-03-12T23:59:59Z')
  await enableFlag(t, cart, 'production', shop)
  now = new Date('2026-03-13T00:00:00Z')
  await enableFlag(t, search, 'development')
  return { shop, cart, search, both: `feature=IS_ANY_OF:${cart},${search}` }
}

/** `n` events of a project, a minute apart from 2025-01-01: only SQL makes this many in a test's time. */
const bulkEvents = (project: string, n: number) =>
  t.query(
    `insert into events (created_at, type, created_by, project, feature_name, data, tags)
      select timestamptz '2025-01-01' + g * interval '1 minute', 'feature-updated', 'bulk', $1, 'bulk-' || (g % 10), '{"n":1}', '[]'
      from generate_series(1, $2::int) g`,
    [project, n],
  )
const cacheKey = (project: string) => JSON.stringify([['project', `IS:${project}`]])

describe('events of one flag (operation 5)', () => {
  it('lists the events of a flag, newest first, with the total', async () => {
    const { shop, cart } = await shopWithCart()
    const res = await t.call('GET', `/api/admin/events/${cart}`)
    expect(res.status).toBe(200)
    expect(res.body.version).toBe(1)
    expect(res.body.toggleName).toBe(cart)
    expect(res.body.events.map((e: any) => e.type)).toEqual(['feature-environment-enabled', 'feature-strategy-add', 'feature-created'])
    expect(res.body.totalEvents).toBe(3)
    const enabled = res.body.events[0]
    expect(enabled).toMatchObject({
      type: 'feature-environment-enabled',
      createdBy: 'test-admin',
      createdByUserId: -42,
      project: shop,
      environment: 'production',
      featureName: cart,
      tags: [{ type: 'team', value: 'checkout-crew' }],
      label: 'Flag enabled',
      summary: `**test-admin** enabled **${cart}** in *production*`,
      createdAt: '2026-03-12T23:59:59.000Z',
    })
    expect(enabled.id).toBeGreaterThan(0)
  })

  it('pages with limit and offset while totalEvents counts them all', async () => {
    const { cart } = await shopWithCart()
    const res = await t.call('GET', `/api/admin/events/${cart}?limit=1&offset=1`)
    expect(res.body.events.map((e: any) => e.type)).toEqual(['feature-strategy-add'])
    expect(res.body.totalEvents).toBe(3)
  })

  it('gives an unknown flag an empty list, not 404', async () => {
    const res = await t.call('GET', '/api/admin/events/no-such-flag')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ version: 1, toggleName: 'no-such-flag', events: [], totalEvents: 0 })
  })

  it('needs a token', async () => {
    const { cart } = await shopWithCart()
    expect((await t.call('GET', `/api/admin/events/${cart}`, { token: null })).status).toBe(401)
  })
})

describe('event search (operation 7)', () => {
  it('returns everything newest first with the total', async () => {
    await shopWithCart()
    const res = await search('')
    expect(res.status).toBe(200)
    const all = await t.query<{ n: number }>('select count(*)::int as n from events')
    expect(res.body.total).toBe(all[0]!.n)
    const times = res.body.events.map((e: any) => e.createdAt)
    expect([...times].sort().reverse()).toEqual(times)
  })

  it('filters by feature, project, type and createdBy with IS and IS_ANY_OF', async () => {
    const { shop, cart, search: other, both } = await shopWithCart()
    expect((await search(`?feature=IS:${cart}`)).body.total).toBe(3)
    expect((await search(`?${both}`)).body.total).toBe(6)
    const inShop = await search(`?project=IS:${shop}`)
    expect(inShop.body.events.every((e: any) => e.project === shop)).toBe(true)
    expect(inShop.body.total).toBe(4)
    const types = await search('?type=IS_ANY_OF:feature-created,project-created&limit=1000')
    expect(types.body.events.every((e: any) => ['feature-created', 'project-created'].includes(e.type))).toBe(true)
    const mine = types.body.events.filter((e: any) => e.project === shop || e.featureName === other)
    expect(mine.map((e: any) => e.type).sort()).toEqual(['feature-created', 'feature-created', 'project-created'])
    expect((await search(`?feature=IS:${cart}&type=IS:feature-created`)).body.total).toBe(1)
    expect((await search(`?createdBy=IS:test-admin&project=IS:${shop}`)).body.total).toBe(4)
    expect((await search(`?createdBy=IS:test-admin&${both}`)).body.total).toBe(6)
    // The test admin token was made by the system.
    const bySystem = (await search('?createdBy=IS:system')).body.total
    expect(bySystem).toBeGreaterThan(0)
    expect((await search('?createdBy=IS_ANY_OF:test-admin,system')).body.total).toBe((await search('?createdBy=IS:test-admin')).body.total + bySystem)
    expect((await search('?createdBy=IS:someone-else')).body.total).toBe(0)
  })

  it('filters by creation day, including the whole `to` day', async () => {
    const { shop, both } = await shopWithCart()
    const day12 = await search(`?from=IS:2026-03-12&to=IS:2026-03-12&${both}`)
    expect(day12.body.events.map((e: any) => e.type)).toEqual(['feature-environment-enabled', 'feature-strategy-add'])
    expect((await search(`?from=IS:2026-03-13&${both}`)).body.total).toBe(2)
    expect((await search(`?to=IS:2026-03-10&project=IS:${shop}`)).body.events.map((e: any) => e.type)).toEqual(['project-created'])
    // The test admin token (by system) was created on the 10th too.
    expect((await search('?to=IS:2026-03-10&createdBy=IS:system')).body.events.map((e: any) => e.type)).toEqual(['api-token-created'])
    // The last day there is: every event is before its end (its next day is past what Postgres' timestamps hold).
    const all = (await search('')).body.total
    for (const shape of ['', `&project=IS:${shop}`, '&createdBy=IS:system', '&query=shop', '&from=IS:2026-03-12']) {
      const res = await search(`?to=IS:9999-12-31${shape}`)
      expect(res.status, res.text).toBe(200)
      if (shape === '') expect(res.body.total).toBe(all)
    }
  })

  it('finds free text case-insensitively in data, preData and tags', async () => {
    const { shop, both } = await shopWithCart()
    expect((await search(`?query=shopping%20CART&project=IS:${shop}`)).body.events.map((e: any) => e.type)).toEqual(['feature-created'])
    expect((await search(`?query=CHECKOUT-CREW&project=IS:${shop}`)).body.total).toBe(3)
    expect((await search(`?query=100%25&${both}`)).body.total).toBe(0)
    expect((await search(`?query=groupId&${both}`)).body.total).toBe(2)
  })

  it('pages with offset and limit', async () => {
    await shopWithCart()
    const all = (await search('')).body
    expect(all.total).toBeGreaterThanOrEqual(4)
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

describe('pages kept with their totals', () => {
  // Flagpost never changes an event: one changed behind the app's back shows whether a page was built again or reused.
  const changeBehindTheBack = (id: number, data: unknown) => t.query('update events set data = $1 where id = $2', [JSON.stringify(data), id])

  it('are reused while the total is the same, by the flag\'s events and the search by the flag, and read again when an event is added', async () => {
    const flag = (await createFlag(t)).name as string
    const first = await t.call('GET', `/api/admin/events/${flag}`)
    expect(first.body.events.map((e: any) => e.type)).toEqual(['feature-created'])
    await changeBehindTheBack(first.body.events[0].id, { changed: true })
    expect((await t.call('GET', `/api/admin/events/${flag}`)).text).toBe(first.text)
    expect((await search(`?feature=IS:${flag}`)).body).toEqual({ events: first.body.events, total: 1 })

    await enableFlag(t, flag, 'development')
    const after = await t.call('GET', `/api/admin/events/${flag}`)
    expect(after.body.totalEvents).toBe(3)
    expect(after.body.events.map((e: any) => e.type)).toEqual(['feature-environment-enabled', 'feature-strategy-add', 'feature-created'])
    expect(after.body.events[2].data).toEqual({ changed: true })
  })

  it('are never read under another caller\'s access, even with the same total', async () => {
    const editor = await createSignedInUser(t, fresh('editor'), 'Editor')
    const word = `${fresh('zebra')}q`
    // An admin-only event (user-created) and a flag's event match the text.
    await createSignedInUser(t, word, 'Viewer')
    await createFlag(t, { description: word })
    const admin = await search(`?query=${word}`)
    expect(admin.body.total).toBe(2)
    expect(admin.body.events.map((e: any) => e.type).sort()).toEqual(['feature-created', 'user-created'])
    // The editor counts two as well: the flags' events.
    await createFlag(t, { description: word })
    const seen = await editor.call('GET', `/api/admin/search/events?query=${word}`)
    expect(seen.body.total).toBe(2)
    expect(seen.body.events.map((e: any) => e.type)).toEqual(['feature-created', 'feature-created'])
  })

  it('are not kept for callers from whom past lives of private projects are hidden', async () => {
    const viewer = await createSignedInUser(t, fresh('viewer'), 'Viewer')
    const flag = (await createFlag(t)).name as string
    const first = await viewer.call('GET', `/api/admin/events/${flag}`)
    expect(first.body.totalEvents).toBe(1)
    await changeBehindTheBack(first.body.events[0].id, { changed: true })
    const again = await viewer.call('GET', `/api/admin/events/${flag}`)
    expect(again.body.totalEvents).toBe(1)
    expect(again.body.events[0].data).toEqual({ changed: true })
  })
})

describe('totals of large searches', () => {
  it('stay exact when they are cached, as new events arrive', async () => {
    const bulk = fresh('bulk-project')
    await bulkEvents(bulk, 12000)
    const first = await search(`?project=IS:${bulk}`)
    expect(first.body.total).toBe(12000)
    const cached = await t.query<{ n: number }>('select n::int from event_count_cache where filter_key = $1', [cacheKey(bulk)])
    expect(cached).toEqual([{ n: 12000 }])
    // New events: the project's own project-created, and one of another project.
    await createProject(t, { id: bulk })
    await createProject(t)
    expect((await search(`?project=IS:${bulk}`)).body.total).toBe(12001)
    expect((await search(`?project=IS:${bulk}&type=IS:feature-updated`)).body.total).toBe(12000)
    expect((await search(`?project=IS:${bulk}&type=IS:project-created`)).body.total).toBe(1)
    const all = await t.query<{ n: number }>('select count(*)::int as n from events')
    expect((await search('')).body.total).toBe(all[0]!.n)
    // One of no project.
    await createEnvironment(t)
    expect((await search('')).body.total).toBe(all[0]!.n + 1)
  })

  it('keep the most recently computed filters only, and stay exact for one that was dropped', async () => {
    const { evictCountCache } = await import('../src/events/count-cache.js')
    const bulk = fresh('bulk-project')
    await bulkEvents(bulk, 12000)
    expect((await search(`?project=IS:${bulk}`)).body.total).toBe(12000)
    await createProject(t, { id: bulk })
    const keys = async () => (await t.query<{ filter_key: string }>('select filter_key from event_count_cache order by filter_key')).map((r) => r.filter_key)
    const before = await keys()
    expect(before).toContain(cacheKey(bulk))
    // Computed long ago: the least recent of all.
    await t.query(`insert into event_count_cache (filter_key, up_to_id, n, computed_at)
      select 'old-' || g, 1, 0, timestamptz '2020-01-01' + g * interval '1 day' from generate_series(1, 5) g`)
    await evictCountCache(t.db, before.length + 2)
    expect(await keys()).toEqual([...before, 'old-4', 'old-5'].sort())
    await evictCountCache(t.db, 0)
    expect(await keys()).toEqual([])
    const all = await t.query<{ n: number }>('select count(*)::int as n from events')
    expect((await search('')).body.total).toBe(all[0]!.n)
    expect((await search(`?project=IS:${bulk}`)).body.total).toBe(12001)
  })
})

describe('cached totals while other transactions write', () => {
  // PGlite has one connection, so nothing else runs between two statements; a prepared transaction (two-phase
  // commit) is the way to keep one in flight: its events are invisible and its id drawn until it ends.
  let db: PGlite
  let clock = new Date('2026-03-20T12:00:00Z')
  let call: (path: string) => Promise<any>
  let app: ReturnType<typeof createApp>
  let token: string
  beforeAll(async () => {
    const template = await readFile(inject('pgTemplatePath'))
    db = await PGlite.create({ loadDataDir: new Blob([template]), extensions: { pg_trgm }, startParams: [...PGlite.defaultStartParams, '-c', 'max_prepared_transactions=2'] })
    const orm = drizzle(db, { schema }) as unknown as Db
    app = createApp({ db: () => orm, clock: () => clock })
    token = (await createToken(orm, { actor: SYSTEM_ACTOR, now: clock }, { tokenName: 'admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
    call = async (path) => (await app.request(path, { headers: { authorization: token } })).json()
  })
  afterAll(() => db.close())
  // A failed test must not leave its transaction in flight for the next ones.
  afterEach(async () => {
    if ((await db.query(`select from pg_prepared_xacts where gid = 'held'`)).rows.length > 0) await db.exec(`rollback prepared 'held'`)
  })

  // Thousands of events, and one held in a transaction in flight: only SQL makes these.
  const insert = (n: number, project: string) =>
    db.query(`insert into events (created_at, type, created_by, project, tags) select now(), 'feature-updated', 'bulk', $1, '[]' from generate_series(1, $2::int)`, [project, n])
  const hold = async (project: string) => {
    await db.exec('begin')
    await insert(1, project)
    await db.exec(`prepare transaction 'held'`)
  }
  const one = async <T>(text: string, params: unknown[] = []) => (await db.query<T>(text, params)).rows[0]!
  const exact = async (project: string) => (await one<{ n: number }>('select count(*)::int as n from events where project = $1', [project])).n
  const exactUpdates = async () => (await one<{ n: number }>(`select count(*)::int as n from events where type = 'feature-updated'`)).n
  const maxId = async () => (await one<{ id: number }>('select max(id)::int as id from events')).id
  const cached = async (key: string) => (await db.query<{ n: number; upToId: number }>('select n::int, up_to_id::int as "upToId" from event_count_cache where filter_key = $1', [key])).rows[0]
  const total = async (query: string) => (await call(`/api/admin/search/events?${query}`)).total as number
  const keyOf = (project: string) => JSON.stringify([['project', `IS:${project}`]])
  /** A fresh project with 1,500 events, its total cached up to the newest event. */
  const cachedProject = async () => {
    const project = fresh('p')
    await insert(1500, project)
    expect(await total(`project=IS:${project}`)).toBe(1500)
    expect(await cached(keyOf(project))).toEqual({ n: 1500, upToId: await maxId() })
    return project
  }

  it('move up by whole thousands of events and stay exact', async () => {
    const p1 = await cachedProject()
    const key = keyOf(p1)
    for (let round = 0; round < 4; round++) {
      await insert(400, p1)
      await insert(500, 'other')
      await insert(300, p1)
      expect(await total(`project=IS:${p1}`)).toBe(await exact(p1))
      expect(await cached(key)).toEqual({ n: await exact(p1), upToId: await maxId() })
    }
    const before = await cached(key)
    await insert(10, p1)
    expect(await total(`project=IS:${p1}`)).toBe(await exact(p1))
    expect(await cached(key)).toEqual(before)
  })

  it('stop before the id of a transaction in flight, and count its event once it commits', async () => {
    const p1 = await cachedProject()
    const key = keyOf(p1)
    await insert(700, p1)
    await hold(p1)
    const held = (await one<{ id: number }>(`select max(id)::int as id from events`)).id + 1
    await insert(700, p1)
    expect(await total(`project=IS:${p1}`)).toBe(await exact(p1))
    // Not quiet, so only the run of ids that are all visible counts: up to the one before the held event.
    expect(await cached(key)).toEqual({ n: (await exact(p1)) - 700, upToId: held - 1 })
    // Nor is the first count of a filter cached.
    expect(await total('type=IS:feature-updated')).toBe(await exactUpdates())
    expect(await cached(JSON.stringify([['type', 'IS:feature-updated']]))).toBeUndefined()

    await db.exec(`commit prepared 'held'`)
    expect(await total(`project=IS:${p1}`)).toBe(await exact(p1))
    await insert(400, p1)
    expect(await total(`project=IS:${p1}`)).toBe(await exact(p1))
    expect(await cached(key)).toEqual({ n: await exact(p1), upToId: await maxId() })
    clock = new Date(clock.getTime() + 2_000)
    expect(await total('type=IS:feature-updated')).toBe(await exactUpdates())
    expect(await cached(JSON.stringify([['type', 'IS:feature-updated']]))).toEqual({ n: await exactUpdates(), upToId: await maxId() })
  })

  it('step over the ids of rolled-back transactions only when no other transaction is in flight', async () => {
    const p1 = await cachedProject()
    const key = keyOf(p1)
    const before = (await cached(key))!
    // The held event takes the first id above the cached one: no run of visible ids to move up by.
    await hold(p1)
    await insert(1100, p1)
    expect(await total(`project=IS:${p1}`)).toBe(await exact(p1))
    expect(await cached(key)).toEqual(before)
    await db.exec(`rollback prepared 'held'`)
    clock = new Date(clock.getTime() + 2_000)
    expect(await total(`project=IS:${p1}`)).toBe(await exact(p1))
    expect(await cached(key)).toEqual({ n: await exact(p1), upToId: await maxId() })
  })

  it('are shared by the events of a flag and the search by that flag', async () => {
    const flag = fresh('busy-flag')
    const flagTotal = async () => (await call(`/api/admin/events/${flag}?limit=5`)).totalEvents as number
    const key = JSON.stringify([['feature', `IS:${flag}`]])
    const flagEvents = (n: number) => db.query(`insert into events (type, created_by, feature_name, tags) select 'feature-updated', 'bulk', $1, '[]' from generate_series(1, $2::int)`, [flag, n])
    await flagEvents(1200)
    expect(await flagTotal()).toBe(1200)
    expect(await cached(key)).toEqual({ n: 1200, upToId: await maxId() })
    await flagEvents(1100)
    expect(await total(`feature=IS:${flag}`)).toBe(2300)
    expect(await cached(key)).toEqual({ n: 2300, upToId: await maxId() })
    await insert(3, 'other')
    expect(await flagTotal()).toBe(2300)
  })

  it('give a kept page up when an event with a lower id commits after it was read', async () => {
    const flag = fresh('late-flag')
    const flagEvents = (n: number) => db.query(`insert into events (type, created_by, feature_name, tags) select 'feature-updated', 'bulk', $1, '[]' from generate_series(1, $2::int)`, [flag, n])
    const read = async () => (await app.request(`/api/admin/events/${flag}?limit=1000`, { headers: { authorization: token } })).json() as Promise<any>
    await flagEvents(1200)
    await db.exec('begin')
    await flagEvents(1)
    await db.exec(`prepare transaction 'held'`)
    const held = (await one<{ id: number }>(`select max(id)::int as id from events`)).id + 1
    await flagEvents(1)
    const before = await read()
    expect(before.totalEvents).toBe(1201)
    expect(before.events.map((e: any) => e.id)).not.toContain(held)
    expect(await read()).toEqual(before)
    await db.exec(`commit prepared 'held'`)
    const after = await read()
    expect(after.totalEvents).toBe(1202)
    expect(after.events.map((e: any) => e.id)).toContain(held)
  })

  it('count no first total while a transaction holds an id newer than every finished one', async () => {
    const [p2, p3] = [fresh('p'), fresh('p')]
    // Its id is at or above the snapshot's xmax, so the snapshot does not list it as running.
    await insert(1201, p3)
    await hold(p2)
    expect(await total(`project=IS:${p3}`)).toBe(1201)
    expect(await cached(keyOf(p3))).toBeUndefined()
    await db.exec(`commit prepared 'held'`)
    clock = new Date(clock.getTime() + 2_000)
    expect(await total(`project=IS:${p3}`)).toBe(1201)
    expect(await cached(keyOf(p3))).toEqual({ n: 1201, upToId: await maxId() })
  })
})

describe('statistics of the events table', () => {
  it('ANALYZE samples no data or pre_data (no query compares them whole), and still the columns the event search filters on', async () => {
    await t.query('analyze events')
    const sampled = (await t.query<{ attname: string }>(`select attname from pg_stats where schemaname = 'public' and tablename = 'events' order by attname`)).map((r) => r.attname)
    expect(sampled).toEqual(expect.arrayContaining(['created_at', 'created_by', 'feature_name', 'project', 'type']))
    expect(sampled).not.toContain('data')
    expect(sampled).not.toContain('pre_data')
  })
})
