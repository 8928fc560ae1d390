import { readFile } from 'node:fs/promises'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { createApp } from '../src/app.js'
import { createToken } from '../src/api-tokens/store.js'
import { openPg, openPglite, type NodeDbHandle } from '../src/db-node.js'
import { queryRows } from '../src/db.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { sql } from 'drizzle-orm'

// The server with DATABASE_URL talks to Postgres through node-postgres, the one driver that keeps named
// prepared statements per connection (see statement in src/db.ts). Here it runs against PGlite over the wire protocol.
let embedded: Awaited<ReturnType<typeof openPglite>>
let server: PGLiteSocketServer
let database: NodeDbHandle
let app: ReturnType<typeof createApp>
let call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>

beforeAll(async () => {
  embedded = await openPglite({ loadDataDir: new Blob([await readFile(inject('pgTemplatePath'))]) })
  server = new PGLiteSocketServer({ db: embedded.client, host: '127.0.0.1', port: 0 })
  await server.start()
  // PGlite serves one connection at a time.
  process.env.DATABASE_POOL_SIZE = '1'
  database = openPg(`postgres://postgres@127.0.0.1:${server.getServerConn().split(':').pop()}/postgres`)
  delete process.env.DATABASE_POOL_SIZE
  app = createApp({ db: () => database.db })
  const token = (await createToken(database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
  call = async (method, path, body) => {
    const res = await app.request(path, { method, headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : undefined }
  }
})
afterAll(async () => {
  await app?.idle()
  await database?.close()
  await server?.stop()
  await embedded?.close()
})

describe('node-postgres (DATABASE_URL)', () => {
  it('runs writes and reads with prepared statements reused across calls', async () => {
    expect((await call('POST', '/api/admin/projects/default/features', { name: 'wire' })).status).toBe(201)
    for (let i = 0; i < 8; i++) {
      const toggled = await call('POST', `/api/admin/projects/default/features/wire/environments/development/${i % 2 ? 'off' : 'on'}`)
      expect(toggled.status).toBe(200)
      expect(toggled.body.environments.find((e: any) => e.name === 'development').enabled).toBe(i % 2 === 0)
      const patched = await call('PATCH', '/api/admin/projects/default/features/wire', [{ op: 'replace', path: '/description', value: `round ${i}` }])
      expect(patched.body.description).toBe(`round ${i}`)
      const overview = await call('GET', '/api/admin/projects/default')
      expect(overview.body.features.find((f: any) => f.name === 'wire').description).toBe(`round ${i}`)
    }
    const events = await call('GET', '/api/admin/events/wire')
    expect(events.body.totalEvents).toBe(1 + 8 + 1 + 8) // created, 8 switches, the first strategy, 8 descriptions
    const statements = await queryRows<{ name: string }>(database.db, sql`select name from pg_prepared_statements`)
    expect(statements.map((s) => s.name)).toEqual(
      expect.arrayContaining([
        'flagpost_token_principal',
        'flagpost_create_flag',
        'flagpost_feature_named',
        'flagpost_feature_for_change',
        'flagpost_switch_on_stage_default_strategy',
        'flagpost_switch_environment',
        'flagpost_patch_flag',
        'flagpost_record_events',
        'flagpost_project_overview',
        'flagpost_project_features',
        'flagpost_feature_events',
      ]),
    )
  })

  it('answers event searches by one flag, project or type, and by days, with prepared statements, as the same search planned for its values', async () => {
    expect((await call('POST', '/api/admin/projects/default/features', { name: 'shaped' })).status).toBe(201)
    for (let i = 0; i < 3; i++) await call('PATCH', '/api/admin/projects/default/features/shaped', [{ op: 'replace', path: '/description', value: `shape ${i}` }])
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
    const days = `from=IS:${day(-1)}&to=IS:${day(1)}`
    // Each prepared search, and the same matches asked with a second value that matches nothing (planned for its values).
    const pairs: [string, string][] = [
      ['feature=IS:shaped', 'feature=IS_ANY_OF:shaped,no-such-flag'],
      [`feature=IS:shaped&${days}`, `feature=IS_ANY_OF:shaped,no-such-flag&${days}`],
      ['project=IS:default&limit=5', 'project=IS_ANY_OF:default,no-such-project&limit=5'],
      [`type=IS:feature-metadata-updated&from=IS:${day(-1)}`, `type=IS_ANY_OF:feature-metadata-updated,feature-archived&from=IS:${day(-1)}`],
      [`project=IS:default&to=IS:${day(1)}&offset=1&limit=2`, `project=IS_ANY_OF:default,no-such-project&to=IS:${day(1)}&offset=1&limit=2`],
    ]
    for (const [prepared, planned] of pairs) {
      const a = await call('GET', `/api/admin/search/events?${prepared}`)
      const b = await call('GET', `/api/admin/search/events?${planned}`)
      expect(a.status, prepared).toBe(200)
      expect(a.body.total, prepared).toBeGreaterThan(0)
      expect(JSON.stringify(a.body), prepared).toBe(JSON.stringify(b.body))
    }
    // By days alone: the newest events of those days (`to` includes its whole day), and all of them counted.
    const byDays = await call('GET', `/api/admin/search/events?${days}&limit=3`)
    const newest = await queryRows<{ id: string; n: string }>(
      database.db,
      sql`select id, count(*) over () as n from events where created_at >= ${`${day(-1)}T00:00:00Z`}::timestamptz and created_at < ${`${day(2)}T00:00:00Z`}::timestamptz order by created_at desc, id desc limit 3`,
    )
    expect(byDays.body.events.map((e: any) => e.id)).toEqual(newest.map((r) => Number(r.id)))
    expect(byDays.body.total).toBe(Number(newest[0]!.n))
    expect((await call('GET', `/api/admin/search/events?from=IS:${day(1)}`)).body).toEqual({ events: [], total: 0 })
    const statements = await queryRows<{ name: string }>(database.db, sql`select name from pg_prepared_statements`)
    expect(statements.map((s) => s.name)).toEqual(
      expect.arrayContaining(['flagpost_event_search_feature_from_to', 'flagpost_event_search_project', 'flagpost_event_search_type_from', 'flagpost_event_search_project_to', 'flagpost_event_search_days_from_to']),
    )
  })

  it('times every query, a transaction\'s included, and reports the pool (the operator\'s metrics)', async () => {
    const times: number[] = []
    database.timeQueries((seconds) => times.push(seconds))
    try {
      // A write runs in a transaction on a connection drizzle takes from the pool; a read through the pool's own query.
      expect((await call('POST', '/api/admin/projects/default/features', { name: 'timed-by-pool' })).status).toBe(201)
      const afterWrite = times.length
      expect(afterWrite).toBeGreaterThanOrEqual(3)
      expect((await call('GET', '/api/admin/projects/default/features/timed-by-pool')).status).toBe(200)
      expect(times.length).toBeGreaterThan(afterWrite)
      expect(times.every((seconds) => seconds >= 0 && seconds < 30)).toBe(true)
      // One connection (DATABASE_POOL_SIZE=1), held by a transaction: two reads wait for it.
      let release = () => {}
      const gate = new Promise<void>((resolve) => (release = resolve))
      let holding = false
      const held = database.db.transaction(async (tx) => {
        await tx.execute(sql`select 1`)
        holding = true
        await gate
      })
      await expect.poll(() => holding).toBe(true)
      const reads = [1, 2].map(() => queryRows(database.db, sql`select 1`))
      try {
        // At least those two (the write's background work may wait too).
        await expect.poll(() => database.poolState().waiting).toBeGreaterThanOrEqual(2)
        expect(database.poolState()).toMatchObject({ total: 1, idle: 0 })
      } finally {
        release()
      }
      await Promise.all([held, ...reads])
      await app.idle()
      expect(database.poolState()).toEqual({ total: 1, idle: 1, waiting: 0 })
    } finally {
      database.timeQueries(() => {})
    }
  })
})
