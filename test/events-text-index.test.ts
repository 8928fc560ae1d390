// The event search's free text, indexed after the write (src/events/text-index.ts): the same answers before and
// after the job runs, indexed_through only where every event below it is indexed for good, and the migration that
// moved the index off the events copying the text of the events already there.
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
import { indexEventText, unindexedTail } from '../src/events/text-index.js'
import { fresh } from './helpers/factories.js'
import { migrateAcross } from './helpers/migrate-across.js'

// PGlite has one connection: a prepared transaction (two-phase commit) keeps an event in flight, its id drawn.
let db: PGlite
let orm: Db
let app: ReturnType<typeof createApp>
let token: string
beforeAll(async () => {
  const template = await readFile(inject('pgTemplatePath'))
  db = await PGlite.create({ loadDataDir: new Blob([template]), extensions: { pg_trgm }, startParams: [...PGlite.defaultStartParams, '-c', 'max_prepared_transactions=2'] })
  orm = drizzle(db, { schema }) as unknown as Db
  app = createApp({ db: () => orm })
  token = (await createToken(orm, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
})
afterAll(async () => {
  await app.idle()
  await db.close()
})
afterEach(async () => {
  if ((await db.query(`select from pg_prepared_xacts where gid = 'held'`)).rows.length > 0) await db.exec(`rollback prepared 'held'`)
})

/** `n` events whose data holds `word` (and the event's number), in a project of their own. */
const insert = (n: number, word: string, project = 'text-index') =>
  db.query(
    `insert into events (type, created_by, project, data, pre_data, tags)
     select 'feature-metadata-updated', 'bulk', $1, jsonb_build_object('description', $2 || ' number ' || i), null, '[{"type":"team","value":"Crew"}]' from generate_series(1, $3::int) i`,
    [project, word, n],
  )
const hold = async (word: string) => {
  await db.exec('begin')
  await insert(1, word)
  await db.exec(`prepare transaction 'held'`)
}
const one = async <T>(text: string, params: unknown[] = []) => (await db.query<T>(text, params)).rows[0]!
const maxId = async () => (await one<{ id: number }>('select max(id)::int as id from events')).id
const search = async (query: string) => (await app.request(`/api/admin/search/events?${query}&limit=1000`, { headers: { authorization: token } })).json() as Promise<any>
const ids = (answer: any) => answer.events.map((e: any) => e.id as number)
const indexed = async (word: string) => (await one<{ n: number }>(`select count(*)::int as n from event_search_text where text like $1`, [`%${word}%`])).n

describe('the event search text index', () => {
  it('finds the same events by text before the job copies them and after', async () => {
    const word = fresh('Lantern').toLowerCase()
    await insert(30, word)
    expect(await indexed(word)).toBe(0)
    const before = await search(`query=${word.toUpperCase()}`)
    expect(before.total).toBe(30)
    expect(before.events).toHaveLength(30)
    await indexEventText(orm)
    expect(await indexed(word)).toBe(30)
    expect(await unindexedTail(orm)).toEqual({ indexedThrough: await maxId(), above: 0 })
    expect(await search(`query=${word}`)).toEqual(before)
    // Text anywhere in data, pre_data or tags, and a filter alongside.
    expect((await search(`query=${word}%20number%207`)).total).toBe(1)
    expect((await search(`query=crew&project=IS:text-index`)).total).toBeGreaterThanOrEqual(30)
    expect((await search(`query=${word}&project=IS:elsewhere`)).total).toBe(0)
    // One or two characters (no trigram to look up: each event is checked by its id), in any case and spacing.
    for (const [query, pattern] of [['B', '%b%'], ['%20nU%20', '%nu%']] as const) {
      const expected = (await one<{ n: number }>(`select count(*)::int as n from events where lower(coalesce(data::text, '') || ' ' || coalesce(pre_data::text, '') || ' ' || tags::text) like $1`, [pattern])).n
      expect(expected).toBeGreaterThan(0)
      expect((await search(`query=${query}`)).total).toBe(expected)
    }
  })

  it('copies an event once, however many runs', async () => {
    const word = fresh('Beacon').toLowerCase()
    await insert(5, word)
    await Promise.all([indexEventText(orm), indexEventText(orm), indexEventText(orm)])
    expect(await indexed(word)).toBe(5)
    expect((await one<{ n: number }>('select count(*)::int as n from events e where not exists (select from event_search_text s where s.event_id = e.id)')).n).toBe(0)
  })

  it('copies more events than one batch holds in one run', async () => {
    const word = fresh('Quarry').toLowerCase()
    await insert(4_500, word)
    expect(await indexEventText(orm)).toBe(4_500)
    expect(await indexed(word)).toBe(4_500)
    expect((await search(`query=${word}`)).total).toBe(4_500)
  })

  it('stops below an event in flight, and finds it by its own text once it commits below copied ones', async () => {
    const early = fresh('Harbor').toLowerCase()
    await insert(3, early)
    await indexEventText(orm)
    const held = fresh('Tidewater').toLowerCase()
    await hold(held)
    const heldId = (await maxId()) + 1
    const later = fresh('Orchard').toLowerCase()
    await insert(4, later)
    await indexEventText(orm)
    // Not quiet (the held transaction has an id): only the dense run of copied ids counts, up to the held one.
    expect((await unindexedTail(orm)).indexedThrough).toBe(heldId - 1)
    expect(await indexed(later)).toBe(4)
    expect((await search(`query=${later}`)).total).toBe(4)
    expect((await search(`query=${held}`)).total).toBe(0)

    await db.exec(`commit prepared 'held'`)
    // Committed below events already copied: the search reads its own text.
    const found = await search(`query=${held}`)
    expect(ids(found)).toEqual([heldId])
    await indexEventText(orm)
    expect(await indexed(held)).toBe(1)
    expect(await search(`query=${held}`)).toEqual(found)
    expect((await unindexedTail(orm)).indexedThrough).toBe(await maxId())
  })

  it('steps over the id of a rolled-back transaction only once no transaction is in flight', async () => {
    await insert(2, fresh('Meadow').toLowerCase())
    await indexEventText(orm)
    const before = (await unindexedTail(orm)).indexedThrough
    await hold(fresh('Ghost').toLowerCase())
    await insert(6, fresh('Valley').toLowerCase())
    await indexEventText(orm)
    expect((await unindexedTail(orm)).indexedThrough).toBe(before)
    await db.exec(`rollback prepared 'held'`)
    await indexEventText(orm)
    expect(await unindexedTail(orm)).toEqual({ indexedThrough: await maxId(), above: 0 })
  })

  it('matches copies, not the events, up to indexed_through: in a first count, a kept total moved on, and pages', async () => {
    // A copy changed by hand (nothing else changes one) shows which text each part of a search reads.
    const word = fresh('Cobalt').toLowerCase()
    await insert(1_200, word)
    await indexEventText(orm)
    const [first] = (await db.query<{ id: number }>(`select min(id)::int as id from events where data->>'description' like $1`, [`${word} %`])).rows
    await db.query(`update event_search_text set text = 'replaced' where event_id = $1`, [first!.id])
    // A first count (every match found through the copies' index): 1,199, which the count cache keeps.
    const counted = await search(`query=${word}`)
    expect(counted.total).toBe(1_199)
    expect(ids(counted)).not.toContain(first!.id)
    // Events above the kept total are checked one by one, each by its copy once it has one.
    await insert(30, word)
    await indexEventText(orm)
    const [late] = (await db.query<{ id: number }>(`select max(id)::int as id from events`)).rows
    await db.query(`update event_search_text set text = 'replaced' where event_id = $1`, [late!.id])
    const moved = await search(`query=${word}`)
    expect(moved.total).toBe(1_228)
    expect(ids(moved)).not.toContain(late!.id)
    expect(ids(moved)).toHaveLength(1_000)
    expect((await search(`query=replaced`)).total).toBeGreaterThanOrEqual(2)
  })

  it('is what a write through the API is found by, before and after the job', async () => {
    const name = fresh('lighthouse')
    const created = await app.request('/api/admin/projects/default/features', {
      method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify({ name, description: 'Guides Ships Home' }),
    })
    expect(created.status).toBe(201)
    const before = await search('query=guides%20ships')
    expect(before.events.map((e: any) => e.featureName)).toContain(name)
    await app.idle()
    await indexEventText(orm)
    expect(await search('query=guides%20ships')).toEqual(before)
  })
})

describe('the migration that moved the text index off the events', () => {
  it('copies the text of every event there and leaves the events without their trigram index', async () => {
    const older = `insert into events (type, created_by, data, pre_data, tags) values
      ('feature-created', 'ann', '{"name":"Old-Flag","description":"Before The Move"}', null, '[]'),
      ('feature-metadata-updated', 'bob', '{"description":"after"}', '{"description":"Before"}', '[{"type":"team","value":"Blue"}]')`
    await migrateAcross('_event_search_text', older, async (client) => {
      const rows = await client.query<{ text: string }>('select s.text from event_search_text s join events e on e.id = s.event_id order by e.id')
      expect(rows.rows.map((r) => r.text)).toEqual([
        '{"name": "old-flag", "description": "before the move"}  []',
        '{"description": "after"} {"description": "before"} [{"type": "team", "value": "blue"}]',
      ])
      expect((await client.query(`select from pg_indexes where indexname = 'events_search_text_idx'`)).rows).toHaveLength(0)
      expect((await client.query(`select from pg_indexes where indexname = 'event_search_text_trgm_idx'`)).rows).toHaveLength(1)
      expect((await client.query<{ w: number }>('select indexed_through::int as w from event_search_state')).rows).toEqual([{ w: 0 }])
    })
  }, 60_000)
})
