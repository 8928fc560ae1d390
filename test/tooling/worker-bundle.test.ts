import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BUDGET_GZIP_BYTES, BUDGET_TOTAL_GZIP_BYTES, buildWorker, type WorkerSize } from '../../scripts/build-worker.js'

let dir: string | undefined
let size: WorkerSize
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('the worker bundle', () => {
  it(`stays under ${BUDGET_GZIP_BYTES / 1024} KiB gzipped at start, ${BUDGET_TOTAL_GZIP_BYTES / 1024} KiB with what it loads lazily`, async () => {
    dir = await mkdtemp(join(tmpdir(), 'flagpost-bundle-'))
    size = await buildWorker(join(dir, 'worker.js'), join(dir, 'assets'))
    expect(size.gzipBytes).toBeGreaterThan(50 * 1024)
    expect(size.gzipBytes).toBeLessThanOrEqual(BUDGET_GZIP_BYTES)
    expect(size.totalGzipBytes).toBeLessThanOrEqual(BUDGET_TOTAL_GZIP_BYTES)
  })

  it('holds neither the OpenAPI generator nor what the routes say only for the document (the build made the document)', async () => {
    // Every module of the worker: the entry and its chunks.
    const chunks = (await readdir(join(dir!, 'chunks'))).filter((n) => n.endsWith('.js'))
    const bundle = (await Promise.all([join(dir!, 'worker.js'), ...chunks.map((n) => join(dir!, 'chunks', n))].map((path) => readFile(path, 'utf8')))).join('\n')
    expect(bundle).toContain('Request validation failed')
    expect(bundle).not.toContain('ZodToOpenAPIError')
    expect(bundle).not.toContain('Add a new feature flag')
    const [document] = await readdir(join(dir!, 'assets', 'docs'))
    expect(bundle).toContain(`/docs/${document}`)
    expect(JSON.parse(await readFile(join(dir!, 'assets', 'docs', document!), 'utf8')).paths['/api/admin/projects/{projectId}/features'].post.summary).toBe('Add a new feature flag')
  })

  it('loads the instance state import and the flags import only when first used: their code is in lazily loaded modules, not at start', async () => {
    const chunks = await readdir(join(dir!, 'chunks'))
    const lazy = Object.keys(size.lazy)
    expect(lazy.length).toBeGreaterThan(0)
    const holding = async (text: string) => {
      const found: string[] = []
      for (const name of chunks.filter((n) => n.endsWith('.js'))) if ((await readFile(join(dir!, 'chunks', name), 'utf8')).includes(text)) found.push(name)
      if ((await readFile(join(dir!, 'worker.js'), 'utf8')).includes(text)) found.push('worker.js')
      return found
    }
    // The state import's plan (src/state/plan.ts) and the flags import's statement (src/export-import/import.ts).
    for (const text of ['The document cannot be imported', 'The import tags flags with tag types it does not define']) {
      const found = await holding(text)
      expect(found.length, text).toBeGreaterThan(0)
      for (const name of found) expect(lazy, `${text} in ${name}`).toContain(name)
    }
  })
})
