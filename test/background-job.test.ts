import { describe, expect, it } from 'vitest'
import type { Context } from 'hono'
import type { Db } from '../src/db.js'
import type { AppEnv } from '../src/http/context.js'
import { backgroundJob, type RunInBackground } from '../src/http/background.js'

const db = {} as Db
const request = {} as Context<AppEnv>
const detached: RunInBackground = (_c, task) => void task(db)

describe('a coalescing background job', () => {
  it('runs once for requests asking within its gap, and once more for those asking during a run', async () => {
    let runs = 0
    let release: () => void = () => {}
    const job = backgroundJob(
      'test job',
      async () => {
        runs++
        if (runs === 2) await new Promise<void>((resolve) => (release = resolve))
      },
      { background: detached, coalesce: true, gapMs: 20 },
    )
    for (let i = 0; i < 10; i++) job.schedule(request)
    await job.idle()
    expect(runs).toBe(1)

    job.schedule(request)
    await expect.poll(() => runs).toBe(2) // the second run waits for release
    for (let i = 0; i < 5; i++) job.schedule(request)
    release()
    await job.idle()
    expect(runs).toBe(3)
  })

  it('without coalescing, runs once per request', async () => {
    let runs = 0
    const job = backgroundJob('test job', async () => void runs++, { background: detached, coalesce: false, gapMs: 20 })
    for (let i = 0; i < 4; i++) job.schedule(request)
    await expect.poll(() => runs).toBe(4)
  })
})
