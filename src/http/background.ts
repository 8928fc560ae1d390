import type { Context } from 'hono'
import type { Db } from '../db.js'
import type { AppEnv } from './context.js'
import { DEFAULT_LOGGER, errorFields, type Logger } from './request-log.js'

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
export function backgroundJob(name: string, run: (db: Db) => Promise<unknown>, options: { background?: RunInBackground; coalesce: boolean; gapMs?: number; logger?: Logger }): BackgroundJob {
  const logger = options.logger ?? DEFAULT_LOGGER
  const background = options.background ?? runDetached
  const safeRun = (db: Db) =>
    run(db).catch((error: unknown) => {
      logger.log('error', 'background job failed', { job: name, ...errorFields(error) })
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

/** The background queues whose rows a process claims for a while (a lease of STALE_CLAIM_MS in their module). */
export type ClaimQueue = 'action_runs' | 'integration_deliveries'

export interface HeldClaim {
  queue: ClaimQueue
  id: number
  /** The claim's `claimed_at`: a release hands back this claim only, never another process's newer one. */
  at: Date
}

/**
 * What this process has claimed and not finished, so that a shutdown hands it back at once instead of leaving it
 * until its lease runs out; and whether it may claim more (not once stopping). Without one (Workers, tests), claims
 * simply expire.
 */
export interface ClaimLedger {
  open(): boolean
  hold(queue: ClaimQueue, id: number, at: Date): void
  drop(queue: ClaimQueue, id: number): void
  /** Claims no more; answers what is held now. */
  stop(): HeldClaim[]
  held(): HeldClaim[]
}

export function claimLedger(): ClaimLedger {
  const held = new Map<string, HeldClaim>()
  let open = true
  const list = () => [...held.values()]
  return {
    open: () => open,
    hold: (queue, id, at) => void held.set(`${queue}:${id}`, { queue, id, at }),
    drop: (queue, id) => void held.delete(`${queue}:${id}`),
    stop() {
      open = false
      return list()
    },
    held: list,
  }
}
