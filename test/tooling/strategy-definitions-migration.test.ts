// The migration that made strategy types a registry keeps the strategies flags and default strategies already had
// writable: it registers their names as custom types (and seeds the built-in ones).
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { migrate } from 'drizzle-orm/pglite/migrator'
import { drizzle } from 'drizzle-orm/pglite'
import { openPglite, migrationsFolder } from '../../src/db-node.js'

let dir: string | undefined
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('the strategy definitions migration', () => {
  it('registers every strategy name already used by a flag or a default strategy, next to the built-in ones', async () => {
    dir = await mkdtemp(join(tmpdir(), 'flagpost-strategy-migration-'))
    await cp(migrationsFolder, dir, { recursive: true })
    const journalPath = join(dir, 'meta', '_journal.json')
    const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { tag: string }[] }
    const at = journal.entries.findIndex((e) => e.tag.endsWith('_strategy_definitions'))
    expect(at).toBeGreaterThan(0)
    await writeFile(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }))
    const database = await openPglite()
    try {
      const db = drizzle(database.client)
      await migrate(db, { migrationsFolder: dir })
      // Data of an older version, which accepted any strategy name.
      await database.client.exec(`
        insert into features (name, project, type, created_at, created_by) values ('old-a', 'default', 'release', now(), 'admin');
        insert into feature_environments (feature_name, environment) values ('old-a', 'development');
        insert into feature_strategies (id, feature_name, environment, strategy_name, sort_order) values
          (gen_random_uuid(), 'old-a', 'development', 'legacyThing', 0), (gen_random_uuid(), 'old-a', 'development', 'default', 1);
        update project_environments set default_strategy = '{"name": "olderThing"}' where project_id = 'default' and environment_name = 'development';`)
      await writeFile(journalPath, JSON.stringify(journal))
      await migrate(db, { migrationsFolder: dir })
      const rows = (await database.client.query<{ name: string; built_in: boolean }>('select name, built_in from strategy_definitions order by built_in, name')).rows
      expect(rows.filter((r) => !r.built_in).map((r) => r.name)).toEqual(['legacyThing', 'olderThing'])
      expect(rows.filter((r) => r.built_in)).toHaveLength(8)
    } finally {
      await database.close()
    }
  }, 60_000)
})
