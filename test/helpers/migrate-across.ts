import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { migrate } from 'drizzle-orm/pglite/migrator'
import { drizzle } from 'drizzle-orm/pglite'
import { openPglite, migrationsFolder } from '../../src/db-node.js'

type Client = Awaited<ReturnType<typeof openPglite>>['client']

/**
 * A database of the version before the migration whose tag ends with `suffix` (every earlier migration applied),
 * `older` run on it (data that version could hold), then the rest of the migrations; `check` reads the result.
 */
export async function migrateAcross(suffix: string, older: string, check: (client: Client) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), 'flagpost-migration-'))
  const database = await openPglite()
  try {
    await cp(migrationsFolder, dir, { recursive: true })
    const journalPath = join(dir, 'meta', '_journal.json')
    const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { tag: string }[] }
    const at = journal.entries.findIndex((e) => e.tag.endsWith(suffix))
    expect(at).toBeGreaterThan(0)
    await writeFile(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }))
    const db = drizzle(database.client)
    await migrate(db, { migrationsFolder: dir })
    await database.client.exec(older)
    await writeFile(journalPath, JSON.stringify(journal))
    await migrate(db, { migrationsFolder: dir })
    await check(database.client)
  } finally {
    await database.close()
    await rm(dir, { recursive: true, force: true })
  }
}
