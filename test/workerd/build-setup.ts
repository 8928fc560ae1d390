import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { buildWorker, readWranglerConfig } from './build.js'

declare module 'vitest' {
  export interface ProvidedContext {
    workerScriptPath: string
  }
}

/**
 * The workerd project's files run one deployable bundle, built here once (`wrangler deploy --dry-run`, the
 * scripts/build-worker.ts step included) instead of once per file: they only read it (Miniflare loads it).
 */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), 'flagpost-workerd-build-'))
  project.provide('workerScriptPath', await buildWorker(dir, await readWranglerConfig()))
  return async () => {
    await rm(dir, { recursive: true, force: true })
  }
}
