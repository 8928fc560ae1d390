import { sql, type SQL } from 'drizzle-orm'
import { actionSetEvents, actionSets } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { ApiError, notFound } from '../core/errors.js'
import { DEFAULT_LOGGER, errorFields, type Logger } from '../http/request-log.js'
import { callerOf, type Principal } from '../core/principal.js'
import { Permission, requirePermission } from '../core/permissions.js'
import type { BackgroundJob, ClaimLedger, HeldClaim } from '../http/background.js'
import { loadUserPrincipal } from '../users/principal.js'
import { setEnvironmentEnabled } from '../flags/store.js'
import type { FlagStates } from '../flags/states.js'
import { requireDirectChangeAllowedFor } from '../change-requests/guard.js'
import { actionSetJson, flagsTagged } from './store.js'
import { payloadMatches } from './filters.js'
import { ACTION_STATES, RUN_STATES, switchesOn, type ActionSet } from './schemas.js'

/*
 * Running action sets. A signal that matches action sets queues one run each, `started`, in the statement that stores
 * the signal, with the action set as it was (its snapshot). Runs are made after the response (the request's background
 * work: waitUntil on Workers), and by the sweep of each home (Node's interval, the worker's cron trigger) for what a
 * stopped process left: a run is claimed, then its actions run in their sort order as the service account, each a
 * flag switch checked as the route checks it (the account's permission there, and change-request protection: refused
 * actions fail, they are never forced). The first that fails ends the run (`failed`, the rest `not started`); the state
 * of each is recorded as it ends, so a run taken over after its claim went stale goes on from the first action not
 * done (switching a flag is idempotent: an action done but not recorded changes nothing when made again).
 */

type ActionState = (typeof ACTION_STATES)[number]
type RunState = (typeof RUN_STATES)[number]
type RunAction = ActionSet['actions'][number] & { state: ActionState; details?: string | null }
type RunSnapshot = Omit<ActionSet, 'actions'> & { actions: RunAction[] }

declare module 'hono' {
  interface ContextVariableMap {
    /** Makes the queued runs of action sets after the response. */
    actionRuns: BackgroundJob
  }
}

/** A claim this old belongs to a run that stopped (process ended, isolate evicted): it is taken over. */
const STALE_CLAIM_MS = 5 * 60_000
const BATCH = 10
const MAX_BATCHES = 20
/** Runs kept per action set: older ones are dropped as runs end. */
export const KEPT_RUNS_PER_SET = 100

/** SQL of the enabled action sets listening to the endpoint whose id is `endpointId`, as a JSON array. */
export const listeningActionSets = (endpointId: SQL) =>
  sql`(select coalesce(jsonb_agg(${actionSetJson('a')} order by a.id), '[]') from ${actionSets} a where a.source_id = ${endpointId} and a.enabled)`

/** The runs a payload starts: the action sets whose filters it passes, as snapshots whose actions have not started. */
export function runsFor(listening: ActionSet[], payload: unknown): RunSnapshot[] {
  return listening.filter((set) => payloadMatches(set.match.payload, payload)).map((set) => ({ ...set, actions: set.actions.map((a) => ({ ...a, state: 'not started' as const })) }))
}

/**
 * SQL queuing the runs (`runs`: SQL of their snapshots as a JSON array) for the signal the CTE `signal` inserted
 * (id, source, source_id, created_at, created_by_source_token_id, payload), for the action sets still enabled.
 */
export const queueRuns = (signal: string, runs: SQL) => sql`insert into ${actionSetEvents} (action_set_id, signal_id, state, signal, action_set, created_at)
    select (r.value->>'id')::int, s.id, 'started',
      jsonb_build_object('id', s.id, 'source', s.source, 'sourceId', s.source_id, 'createdAt', to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'createdBySourceTokenId', s.created_by_source_token_id, 'payload', s.payload),
      r.value, s.created_at
    from ${sql.raw(signal)} s, jsonb_array_elements(${runs}::jsonb) r
    where exists (select from ${actionSets} a where a.id = (r.value->>'id')::int and a.enabled)
    returning id`

interface ClaimedRun {
  id: number
  snapshot: RunSnapshot
  claimedAt: Date
}

/** Takes up to BATCH runs nobody is making (SKIP LOCKED), or whose claim went stale. */
async function claim(db: Db, now: Date): Promise<ClaimedRun[]> {
  const rows = await queryRows<{ id: string | number; action_set: unknown }>(
    db,
    sql`update ${actionSetEvents} set claimed_at = ${now}
      where id in (
        select id from ${actionSetEvents}
        where state = 'started' and (claimed_at is null or claimed_at < ${new Date(now.getTime() - STALE_CLAIM_MS)})
        order by id limit ${BATCH}
        for update skip locked
      )
      returning id, action_set`,
  )
  return rows.map((r) => ({ id: Number(r.id), snapshot: (typeof r.action_set === 'string' ? JSON.parse(r.action_set) : r.action_set) as RunSnapshot, claimedAt: now }))
}

/** Records the run as it stands, only while this claim holds; once it ends, it drops the action set's runs beyond the newest KEPT_RUNS_PER_SET. */
async function record(db: Db, run: ClaimedRun, state: RunState): Promise<boolean> {
  const done = state !== 'started'
  const [row] = await queryRows<{ id: string | number }>(
    db,
    sql`with u as (
        update ${actionSetEvents} set action_set = ${JSON.stringify(run.snapshot)}::jsonb, state = ${state}, claimed_at = ${done ? null : run.claimedAt}
        where id = ${run.id} and claimed_at = ${run.claimedAt}
        returning id, action_set_id
      ),
      old as (
        delete from ${actionSetEvents} e using u
        where ${done} and e.action_set_id = u.action_set_id and e.state <> 'started'
          and e.id <= (select id from ${actionSetEvents} x where x.action_set_id = u.action_set_id order by id desc offset ${KEPT_RUNS_PER_SET} limit 1)
      )
      select id from u`,
  )
  return row !== undefined
}

/** Why an action failed, as the run log shows it: the API's message, never an unexpected error's (it may name SQL or values). */
function failureOf(error: unknown, logger: Logger, run: ClaimedRun, action: RunAction): string {
  if (error instanceof ApiError) return error.message
  logger.log('error', 'an action failed unexpectedly', { job: 'action_runs', runId: run.id, actionSetId: run.snapshot.id, actionId: action.id, ...errorFields(error) })
  return 'Unexpected error: the action was not made'
}

/**
 * One action as its service account: checked as `POST …/environments/{environment}/on` (or `/off`) checks it, then made:
 * on its flag, or (by tag) on each live flag of the project carrying the tag when it runs, in name order (none: nothing
 * to do). A by-tag action that fails part-way leaves the flags before it switched; made again, it switches the rest.
 */
async function act(db: Db, principal: Principal, project: string, action: RunAction, now: Date, flagStates?: FlagStates): Promise<void> {
  const { environment, featureName, tag } = action.executionParams
  requirePermission(principal, Permission.UPDATE_FEATURE_ENVIRONMENT, { project, environment })
  await requireDirectChangeAllowedFor(db, principal, project, environment)
  const enabled = switchesOn(action.action)
  const flags = tag !== undefined ? await flagsTagged(db, project, tag) : [featureName!]
  for (const flag of flags) {
    try {
      await setEnvironmentEnabled(db, callerOf(principal, now), { projectId: project, featureName: flag, environment, enabled }, flagStates)
    } catch (error) {
      if (tag !== undefined && error instanceof ApiError) throw new ApiError(error.name, `${flag}: ${error.message}`)
      throw error
    }
  }
}

/** Makes a claimed run from its first action not done. Answers whether some action succeeded, or undefined when the claim was lost. */
async function execute(db: Db, run: ClaimedRun, clock: () => Date, logger: Logger, flagStates?: FlagStates): Promise<boolean | undefined> {
  const set = run.snapshot
  const principal = await loadUserPrincipal(db, set.actorId)
  const actions = [...set.actions].sort((a, b) => a.sortOrder - b.sortOrder || a.id - b.id)
  let failed = false
  let succeeded = false
  for (const action of actions) {
    if (action.state === 'success') continue
    if (failed) {
      action.state = 'not started'
      continue
    }
    try {
      if (!principal) throw notFound(`The service account ${set.actorId} the action set runs as no longer exists`)
      await act(db, principal, set.project, action, clock(), flagStates)
      action.state = 'success'
      action.details = null
      succeeded = true
    } catch (error) {
      action.state = 'failed'
      action.details = failureOf(error, logger, run, action)
      failed = true
    }
    set.actions = actions
    if (!(await record(db, run, 'started'))) return undefined
  }
  set.actions = actions
  const state = failed ? 'failed' : 'success'
  if (!(await record(db, run, state))) return undefined
  logger.log('info', 'action run', { job: 'action_runs', runId: run.id, actionSetId: set.id, state })
  return succeeded
}

/**
 * Makes every queued run (and every run whose claim went stale), one at a time in the order they were queued. Answers
 * how many it made and whether any action succeeded (then SDKs have something new to see).
 */
export async function runPendingActions(db: Db, clock: () => Date, options: { flagStates?: FlagStates; claims?: ClaimLedger; logger?: Logger } = {}): Promise<{ runs: number; changed: boolean }> {
  const { claims, logger = DEFAULT_LOGGER } = options
  let runs = 0
  let changed = false
  for (let round = 0; round < MAX_BATCHES && (claims?.open() ?? true); round++) {
    const claimed = await claim(db, clock())
    if (claimed.length === 0) break
    for (const run of claimed) claims?.hold('action_runs', run.id, run.claimedAt)
    for (const run of claimed) {
      // Stopping: the runs not begun stay held, and the shutdown hands them back.
      if (claims && !claims.open()) break
      const succeeded = await execute(db, run, clock, logger, options.flagStates)
      claims?.drop('action_runs', run.id)
      runs++
      changed ||= succeeded === true
    }
  }
  return { runs, changed }
}

/**
 * Hands back the runs of `held` this process claimed and did not finish (shutdown): each is taken by the next sweep of
 * any process, rather than once its claim is stale. Only while the claim is still this one (claimed_at unchanged).
 */
export async function releaseRunClaims(db: Db, held: HeldClaim[]): Promise<number> {
  const mine = held.filter((h) => h.queue === 'action_runs').map((h) => ({ id: h.id, at: h.at.toISOString() }))
  if (mine.length === 0) return 0
  const rows = await queryRows<{ id: number }>(
    db,
    sql`update ${actionSetEvents} e set claimed_at = null
      from jsonb_to_recordset(${JSON.stringify(mine)}::jsonb) as h(id bigint, at timestamptz)
      where e.id = h.id and e.claimed_at = h.at and e.state = 'started'
      returning e.id`,
  )
  return rows.length
}
