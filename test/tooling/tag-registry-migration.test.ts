// The migration that made tags a registry keeps the tags flags already had: it registers their types and tags
// (and the built-in `simple`), so the foreign keys it adds hold for the data of an older version.
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

describe('the tag registry migration', () => {
  it('registers every tag type and tag already on a flag, and simple', async () => {
    dir = await mkdtemp(join(tmpdir(), 'flagpost-tag-migration-'))
    await cp(migrationsFolder, dir, { recursive: true })
    const journalPath = join(dir, 'meta', '_journal.json')
    const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { tag: string }[] }
    const at = journal.entries.findIndex((e) => e.tag.endsWith('_tag_types'))
    expect(at).toBeGreaterThan(0)
    // The database of the version before it: every earlier migration.
    await writeFile(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }))
    const database = await openPglite()
    try {
      const db = drizzle(database.client)
      await migrate(db, { migrationsFolder: dir })
      // Data of an older version, which the API of this one can no longer make (tags of unregistered types).
      await database.client.exec(`
        insert into features (name, project, type, created_at, created_by) values ('old-a', 'default', 'release', now(), 'admin'), ('old-b', 'default', 'release', now(), 'admin');
        insert into feature_tags (feature_name, tag_type, tag_value) values ('old-a', 'team', 'payments'), ('old-b', 'team', 'payments'), ('old-b', 'simple', 'beta'), ('old-b', 'region', 'eu');`)
      await writeFile(journalPath, JSON.stringify(journal))
      await migrate(db, { migrationsFolder: dir })
      expect((await database.client.query('select name from tag_types order by name')).rows).toEqual([{ name: 'region' }, { name: 'simple' }, { name: 'team' }])
      expect((await database.client.query('select type, value from tags order by type, value')).rows).toEqual([
        { type: 'region', value: 'eu' },
        { type: 'simple', value: 'beta' },
        { type: 'team', value: 'payments' },
      ])
      expect((await database.client.query('select count(*)::int as n from feature_tags')).rows).toEqual([{ n: 4 }])
    } finally {
      await database.close()
    }
  }, 60_000)
})
