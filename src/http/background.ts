import type { Context } from 'hono'
import type { Db } from '../db.js'
import type { AppEnv } from './context.js'
import { loggable } from '../core/errors.js'

/**
 * Hands work to run after the response, with the request's database. Workers pass one that keeps the
 * request's connection open until the work is done (waitUntil); on Node the default runs it detached.
 */
export type RunInBackground = (c: Context<AppEnv>, task: (db: Db) => Promise<unknown>) => void

export const runDetached: RunInBackground = (c, task) => void task(c.var.db)

export interface BackgroundJob {
  /** Runs the job after this request's response. */
  schedule(c: Context<AppEnv>): void
  /** Resolves when no run of this job is under way (tests, shutdown). */
  idle(): Promise<void>
}

/**
 * A job many requests ask for (deliver queued webhooks, fold SDK reports). With `coalesce` (Node: one
 * process, one database), one run at a time: requests that ask during a run get one more run after
 * it, so a burst costs a few runs, not one each. Without (Workers), each request's run goes to its own
 * waitUntil; the jobs take disjoint rows (SKIP LOCKED), so concurrent runs are safe. Failures are logged.
 */
export function backgroundJob(name: string, run: (db: Db) => Promise<unknown>, options: { background?: RunInBackground; coalesce: boolean; gapMs?: number }): BackgroundJob {
  const background = options.background ?? runDetached
  const safeRun = (db: Db) =>
    run(db).catch((error: unknown) => {
      console.error(`${name} failed:`, loggable(error))
    })
  let running: Promise<void> | undefined
  let again = false
  return {
    schedule(c) {
      if (!options.coalesce) return background(c, safeRun)
      if (running) {
        again = true
        return
      }
      background(c, (db) => {
        running = (async () => {
          do {
            // With a gap, requests asking within it share the run: under a burst of writes, a few runs a second.
            if (options.gapMs) await new Promise((resolve) => setTimeout(resolve, options.gapMs))
            again = false
            await safeRun(db)
          } while (again)
        })().finally(() => (running = undefined))
        return running
      })
    },
    async idle() {
      while (running) await running
    },
  }
}
