import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { openPglite } from '../../src/db-node.js'

declare module 'vitest' {
  export interface ProvidedContext {
    pgTemplatePath: string
  }
}

/** Migrates one database and saves it as a template, so each test file starts from a copy in about a second. */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), 'flagpost-test-'))
  const database = await openPglite()
  await database.migrate()
  const dump = await database.client.dumpDataDir('none')
  await database.close()
  const path = join(dir, 'template.tar')
  await writeFile(path, new Uint8Array(await dump.arrayBuffer()))
  project.provide('pgTemplatePath', path)
  return async () => {
    await rm(dir, { recursive: true, force: true })
  }
}
