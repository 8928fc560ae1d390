import { cp, mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inject } from 'vitest'

/**
 * A new data folder for the Node server (startServer's `dataDir`) holding a copy of the migrated template database
 * (test/helpers/global-setup.ts): the server starts on it as on a migrated database with no user and no token yet, in
 * a second or two instead of the ~10–20 s initdb and the migrations take. A test of a truly empty folder makes its own.
 * The caller removes the folder.
 */
export async function migratedDataDir(prefix = 'flagpost-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  await cp(inject('pgTemplateDir'), dir, { recursive: true })
  return dir
}

/** The migrated template database as a tarball (PGlite's `loadDataDir`): an in-memory copy opens in a second or two. */
export async function migratedTemplate(): Promise<Blob> {
  return new Blob([await readFile(inject('pgTemplatePath'))])
}
