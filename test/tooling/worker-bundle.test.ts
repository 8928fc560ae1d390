import { mkdtemp, rm } from 'node:fs/promises'
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
    const { gzipBytes } = await buildWorker(join(dir, 'worker.js'))
    expect(gzipBytes).toBeGreaterThan(50 * 1024)
    expect(gzipBytes).toBeLessThanOrEqual(BUDGET_GZIP_BYTES)
  })
})
