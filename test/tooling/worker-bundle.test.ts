import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BUDGET_GZIP_BYTES, buildWorker } from '../../scripts/build-worker.js'

let dir: string | undefined
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('the worker bundle', () => {
  it(`stays under ${BUDGET_GZIP_BYTES / 1024} KiB gzipped`, async () => {
    dir = await mkdtemp(join(tmpdir(), 'flagpost-bundle-'))
    const { gzipBytes } = await buildWorker(join(dir, 'worker.js'), join(dir, 'assets'))
    expect(gzipBytes).toBeGreaterThan(50 * 1024)
    expect(gzipBytes).toBeLessThanOrEqual(BUDGET_GZIP_BYTES)
  })

  it('holds neither the OpenAPI generator nor what the routes say only for the document (the build made the document)', async () => {
    const bundle = await readFile(join(dir!, 'worker.js'), 'utf8')
    expect(bundle).toContain('Request validation failed')
    expect(bundle).not.toContain('ZodToOpenAPIError')
    expect(bundle).not.toContain('Add a new feature flag')
    const [document] = await readdir(join(dir!, 'assets', 'docs'))
    expect(bundle).toContain(`/docs/${document}`)
    expect(JSON.parse(await readFile(join(dir!, 'assets', 'docs', document!), 'utf8')).paths['/api/admin/projects/{projectId}/features'].post.summary).toBe('Add a new feature flag')
  })
})
