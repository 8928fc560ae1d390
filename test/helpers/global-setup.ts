import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { openPglite } from '../../src/db-node.js'

declare module 'vitest' {
  export interface ProvidedContext {
    pgTemplatePath: string
    pgTemplateDir: string
  }
}

/**
 * Migrates one database and saves it as a template, so each test file starts from a copy in a second or two instead of
 * the ~10–20 s of a first start (initdb and every migration): `pgTemplatePath`, a tarball PGlite loads into memory
 * (createTestApp), and `pgTemplateDir`, the same data folder on disk that tests starting the Node server copy
 * (test/helpers/data-dir.ts).
 */
export default async function setup(project: TestProject) {
  // Both test projects list this setup; they share one template (through globalThis, whatever module instance runs).
  shared.flagpostTemplate ??= makeTemplate()
  const { dir, path, dataDir } = await shared.flagpostTemplate
  project.provide('pgTemplatePath', path)
  project.provide('pgTemplateDir', dataDir)
  return async () => {
    await rm(dir, { recursive: true, force: true })
  }
}

const shared = globalThis as { flagpostTemplate?: Promise<{ dir: string; path: string; dataDir: string }> }

async function makeTemplate() {
  const dir = await mkdtemp(join(tmpdir(), 'flagpost-test-'))
  const dataDir = join(dir, 'pgdata')
  await mkdir(dataDir)
  const database = await openPglite({ dataDir })
  await database.migrate()
  const dump = await database.client.dumpDataDir('none')
  await database.close()
  const path = join(dir, 'template.tar')
  await writeFile(path, new Uint8Array(await dump.arrayBuffer()))
  return { dir, path, dataDir }
}
