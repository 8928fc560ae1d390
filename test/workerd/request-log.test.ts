// The worker's request log in workerd (Miniflare): with LOG_LEVEL=info and LOG_FORMAT=json every answered request is
// one JSON line through console.log, which Cloudflare collects in Workers Logs and sends on with Logpush. Read here from
// workerd's own stdout, as Cloudflare reads it.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtWorker, readWranglerConfig, workerModuleOptions } from './build.js'

let tempDir: string
let mf: Miniflare | undefined
let stdout = ''
let stderr = ''

beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), 'flagpost-workerd-log-'))
  const config = await readWranglerConfig()
  const scriptPath = await builtWorker()
  mf = new Miniflare({
    ...workerModuleOptions(scriptPath, config),
    // No database: the log line is written whatever the answer.
    bindings: { LOG_FORMAT: 'json', LOG_LEVEL: 'info' },
    handleRuntimeStdio(out: Readable, err: Readable) {
      out.on('data', (chunk: Buffer) => void (stdout += chunk.toString()))
      err.on('data', (chunk: Buffer) => void (stderr += chunk.toString()))
    },
  })
  await mf.ready
})

afterAll(async () => {
  await mf?.dispose()
  if (tempDir) await rm(tempDir, { recursive: true, force: true })
})

/** The JSON lines workerd wrote to stdout (other lines, workerd's own, skipped). */
const jsonLines = () =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('the worker\'s request log (Workers Logs)', () => {
  it('writes one JSON line per request through console.log: its id, method, route template and status, never the path or query', async () => {
    const res = await mf!.dispatchFetch('http://flagpost.test/api/admin/projects/secret-project-name?token=secret-in-query', {
      headers: { 'x-request-id': 'workerd-log-test-1' },
    })
    // Without a database the request fails (500) once it needs one: answered all the same, and logged with its status.
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.headers.get('x-request-id')).toBe('workerd-log-test-1')
    await res.arrayBuffer()
    await expect.poll(() => jsonLines().find((line) => line.requestId === 'workerd-log-test-1'), { timeout: 10_000 }).toMatchObject({
      level: 'info',
      msg: 'request',
      method: 'GET',
      route: '/api/admin/projects/:projectId',
      status: res.status,
      durationMs: expect.any(Number),
    })
    expect(stdout + stderr).not.toContain('secret-')
  })
})
