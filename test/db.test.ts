import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPglite } from '../src/db-node.js'
import { batch, queryRows, statement } from '../src/db.js'

let database: Awaited<ReturnType<typeof openPglite>>

beforeAll(async () => {
  database = await openPglite()
})
afterAll(async () => {
  await database?.close()
})

describe('statement', () => {
  it('refuses a name already taken, when the module defining it loads', () => {
    statement('flagpost_test_taken', () => sql`select 1`)
    expect(() => statement('flagpost_test_taken', () => sql`select 2`)).toThrow('Two statements are named flagpost_test_taken')
  })

  it('runs with values for its placeholders, a placeholder used twice and a list as one array', async () => {
    const run = statement<{ total: number; n: number; label: string }>(
      'flagpost_test_placeholders',
      () => sql`select ${sql.placeholder('a')}::int * 10 + ${sql.placeholder('a')}::int as total, cardinality(${sql.placeholder('names')}::text[]) as n, ${'fixed'}::text as label`,
    )
    expect(await run(database.db, { a: 4, names: ['x', 'y', 'z'] })).toEqual([{ total: 44, n: 3, label: 'fixed' }])
    expect(await run(database.db, { a: 1, names: [] })).toEqual([{ total: 11, n: 0, label: 'fixed' }])
  })
})

describe('queryRows', () => {
  it('answers raw SQL with its rows', async () => {
    expect(await queryRows<{ v: number }>(database.db, sql`select ${2}::int as v`)).toEqual([{ v: 2 }])
  })
})

describe('batch (PGlite: a transaction of its own)', () => {
  it('answers each statement in order, in one transaction with the isolation asked for', async () => {
    const answers = await batch(
      database.db,
      [
        (q) => queryRows<{ level: string; readOnly: string }>(q, sql`select current_setting('transaction_isolation') as level, current_setting('transaction_read_only') as "readOnly"`),
        (q) => queryRows<{ v: number }>(q, sql`select ${1}::int as v`),
      ],
      { isolationLevel: 'repeatable read', accessMode: 'read only' },
    )
    expect(answers).toEqual([[{ level: 'repeatable read', readOnly: 'on' }], [{ v: 1 }]])
  })

  it('writes nothing when one statement fails', async () => {
    await database.db.execute(sql`create table batch_test (id int primary key)`)
    const error = await batch(database.db, [(q) => queryRows(q, sql`insert into batch_test values (1)`), (q) => queryRows(q, sql`insert into batch_test values (1)`)]).catch((e: unknown) => e)
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('23505')
    expect(await queryRows(database.db, sql`select id from batch_test`)).toEqual([])
  })
})
