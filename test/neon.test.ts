// The Workers database (src/db.ts openNeon) in Node, against dev/local-postgres: statements over Neon's SQL over
// HTTP, batches as one HTTP round trip, interactive transactions over the WebSocket pool. The worker bundle runs
// the same code in workerd (test/workerd); this pins the database layer's own behaviour.
import { readFile } from 'node:fs/promises'
import { neonConfig } from '@neondatabase/serverless'
import { eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { WebSocket } from 'ws'
import { startLocalPostgres, type LocalPostgres } from '../dev/local-postgres.js'
import { batch, openNeon, queryRows, statement, type DbHandle } from '../src/db.js'
import { projects } from '../schema/index.js'

let postgres: LocalPostgres
const handles: DbHandle[] = []

beforeAll(async () => {
  const template = new Blob([new Uint8Array(await readFile(inject('pgTemplatePath')))])
  postgres = await startLocalPostgres({ loadDataDir: template })
  // Node 20 has no global WebSocket; workerd has one.
  neonConfig.webSocketConstructor = WebSocket
})
afterAll(async () => {
  for (const handle of handles) await handle.close()
  await postgres?.close()
})

const open = () => {
  const handle = openNeon(postgres.databaseUrl, { fetchEndpoint: postgres.fetchEndpoint, wsProxy: postgres.wsProxy })
  handles.push(handle)
  return handle
}

/** What `run` cost in round trips, by kind. */
async function counted<T>(run: () => Promise<T>) {
  const before = postgres.roundTrips()
  const value = await run()
  const after = postgres.roundTrips()
  return { value, http: after.http - before.http, webSocket: after.webSocket - before.webSocket }
}

let counter = 0
const freshId = (prefix: string) => `${prefix}-${++counter}`

const insertProject = statement<{ id: string }>('flagpost_test_neon_insert_project', () => sql`insert into ${projects} (id, name) values (${sql.placeholder('id')}, ${sql.placeholder('name')}) returning id`)

describe('statements over HTTP', () => {
  it('runs query builders, raw SQL and statements, one HTTP round trip each and no WebSocket', async () => {
    const { db } = open()
    const id = freshId('neon-http')
    const inserted = await counted(() => insertProject(db, { id, name: 'Over HTTP' }))
    expect(inserted).toEqual({ value: [{ id }], http: 1, webSocket: 0 })
    const selected = await counted(() => db.select({ id: projects.id, name: projects.name, createdAt: projects.createdAt }).from(projects).where(eq(projects.id, id)))
    expect(selected.value).toEqual([{ id, name: 'Over HTTP', createdAt: expect.any(Date) }])
    expect([selected.http, selected.webSocket]).toEqual([1, 0])
    expect(await queryRows(db, sql`select ${id}::text as id, ${sql.param([1, 2])}::int[] as list, ${JSON.stringify({ a: [1] })}::jsonb as doc, null::text as nothing`)).toEqual([
      { id, list: [1, 2], doc: { a: [1] }, nothing: null },
    ])
  })

  it('fails with the database error code, which the app maps (a unique violation is 23505)', async () => {
    const { db } = open()
    const id = freshId('neon-duplicate')
    await insertProject(db, { id, name: 'First' })
    const error = await insertProject(db, { id, name: 'Second' }).catch((e: unknown) => e)
    expect((error as { cause?: { code?: string; constraint?: string } }).cause).toMatchObject({ code: '23505', constraint: 'projects_pkey' })
  })
})

describe('batch over HTTP', () => {
  it('sends its statements in one round trip and answers each in order', async () => {
    const { db } = open()
    const [a, b] = [freshId('neon-batch'), freshId('neon-batch')]
    const { value, http, webSocket } = await counted(() =>
      batch(db, [
        (q) => insertProject(q, { id: a, name: 'A' }),
        (q) => q.insert(projects).values({ id: b, name: 'B' }).returning({ id: projects.id }),
        (q) => queryRows<{ n: number }>(q, sql`select count(*)::int as n from ${projects} where id in (${a}, ${b})`),
        (q) => q.select({ name: projects.name }).from(projects).where(eq(projects.id, a)),
      ]),
    )
    expect([http, webSocket]).toEqual([1, 0])
    // One transaction: the count sees both inserts before it.
    expect(value).toEqual([[{ id: a }], [{ id: b }], [{ n: 2 }], [{ name: 'A' }]])
  })

  it('writes nothing when one statement fails, and fails with its error', async () => {
    const { db } = open()
    const [taken, other] = [freshId('neon-batch-taken'), freshId('neon-batch-other')]
    await insertProject(db, { id: taken, name: 'Taken' })
    const error = await batch(db, [(q) => insertProject(q, { id: other, name: 'Other' }), (q) => insertProject(q, { id: taken, name: 'Again' })]).catch((e: unknown) => e)
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('23505')
    expect(await queryRows(db, sql`select id from ${projects} where id = ${other}`)).toEqual([])
  })

  it('runs read only and repeatable read when asked: a write is refused', async () => {
    const { db } = open()
    const [isolation] = await batch(db, [(q) => queryRows<{ level: string; readOnly: string }>(q, sql`select current_setting('transaction_isolation') as level, current_setting('transaction_read_only') as "readOnly"`)], {
      isolationLevel: 'repeatable read',
      accessMode: 'read only',
    })
    expect(isolation).toEqual([{ level: 'repeatable read', readOnly: 'on' }])
    const error = await batch(db, [(q) => insertProject(q, { id: freshId('neon-read-only'), name: 'No' })], { accessMode: 'read only' }).catch((e: unknown) => e)
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('25006')
  })

  it('refuses a statement made after the batch was sent', async () => {
    const { db } = open()
    const late = await batch(db, [
      async (q) => {
        await queryRows(q, sql`select 1`)
        return queryRows(q, sql`select 2`)
      },
    ]).catch((e: unknown) => e)
    expect((late as Error).cause).toEqual(new Error('A statement of a batch was made after the batch was sent (it waited on another statement)'))
  })
})

describe('interactive transactions', () => {
  it('open the WebSocket pool only when one runs, and roll back on error', async () => {
    const handle = open()
    const id = freshId('neon-tx')
    const opened = postgres.relayConnections().total
    await handle.db.execute(sql`select 1`)
    expect(postgres.relayConnections().total).toBe(opened)

    const { webSocket } = await counted(() =>
      handle.db
        .transaction(async (tx) => {
          await insertProject(tx, { id, name: 'Rolled back' })
          // A locking read and a decision on it: what needs a transaction over the pool.
          const [row] = await tx.select({ id: projects.id }).from(projects).where(eq(projects.id, id)).for('update')
          if (row) throw new Error('decided to roll back')
        })
        .catch((e: unknown) => e),
    )
    expect(webSocket).toBeGreaterThan(0)
    expect(postgres.relayConnections().total).toBe(opened + 1)
    expect(await queryRows(handle.db, sql`select id from ${projects} where id = ${id}`)).toEqual([])

    const committed = freshId('neon-tx')
    await handle.db.transaction(async (tx) => void (await insertProject(tx, { id: committed, name: 'Committed' })))
    // The request's pool is reused by its next transaction, and ended with it.
    expect(postgres.relayConnections().total).toBe(opened + 1)
    expect(await queryRows(handle.db, sql`select name from ${projects} where id = ${committed}`)).toEqual([{ name: 'Committed' }])
    await handle.close()
    await expect.poll(() => postgres.relayConnections().open).toBe(0)
  })
})
