// The SDK revision's index on events (migration sdk_revision_index) is built at start in the migrations' transaction,
// which blocks event writes while it builds on a big events table. An operator may build it beforehand with CREATE
// INDEX CONCURRENTLY (docs/OPERATIONS.md, "Upgrading"): the migration then finds it and builds nothing.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { migrate } from 'drizzle-orm/pglite/migrator'
import { drizzle } from 'drizzle-orm/pglite'
import { describe, expect, inject, it } from 'vitest'
import { migrationsFolder, openPglite } from '../../src/db-node.js'
import { MIGRATIONS } from '../../src/health/migrations.js'
import { migrateAcross } from '../helpers/migrate-across.js'

const indexes = (client: Awaited<ReturnType<typeof openPglite>>['client']) =>
  client.query<{ name: string; valid: boolean }>(
    `select c.relname as name, i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = 'events'::regclass and c.relname = 'events_configuration_idx'`,
  )

describe('the events_configuration_idx migration', () => {
  it('finds the index an operator built CONCURRENTLY before the upgrade, and completes', async () => {
    const migration = await readFile(join(migrationsFolder, '0039_sdk_revision_index.sql'), 'utf8')
    expect(migration).toMatch(/^CREATE INDEX IF NOT EXISTS "events_configuration_idx"/)
    // What docs/OPERATIONS.md tells the operator to run: the migration's statement, built CONCURRENTLY.
    const byHand = migration.replace('CREATE INDEX IF NOT EXISTS', 'CREATE INDEX CONCURRENTLY IF NOT EXISTS')
    await migrateAcross('_sdk_revision_index', byHand, async (client) => {
      expect((await indexes(client)).rows).toEqual([{ name: 'events_configuration_idx', valid: true }])
      expect((await client.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations')).rows).toEqual([{ n: MIGRATIONS }])
    })
  }, 60_000)

  it('leaves a database that applied it as first written (another hash) as it is: the runner goes by migration time', async () => {
    const database = await openPglite({ loadDataDir: new Blob([await readFile(inject('pgTemplatePath'))]) })
    try {
      const journal = JSON.parse(await readFile(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string; when: number }[] }
      const when = journal.entries.find((entry) => entry.tag.endsWith('_sdk_revision_index'))!.when
      const changed = await database.client.query(`update drizzle.__drizzle_migrations set hash = 'applied-before-if-not-exists' where created_at = $1`, [when])
      expect(changed.affectedRows).toBe(1)
      await migrate(drizzle(database.client), { migrationsFolder })
      expect((await database.client.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations')).rows).toEqual([{ n: MIGRATIONS }])
      expect((await indexes(database.client)).rows).toEqual([{ name: 'events_configuration_idx', valid: true }])
    } finally {
      await database.close()
    }
  })
})
