import { sql } from 'drizzle-orm'
import { userFeedback, userSplash } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { validationError } from '../core/errors.js'
import type { Principal } from '../core/principal.js'

/** Feedback prompts and splash screens one user may have state for: beyond it a new id is refused (their ids are the console's, a handful). */
export const MAX_PROMPTS_PER_USER = 200

const givenIso = sql.raw(`to_char(given at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`)

interface FeedbackRow {
  userId: number
  feedbackId: string
  neverShow: boolean
  given: string | null
}

/** The user these routes keep state for: an API token is nobody (as Unleash: feedback needs an identifiable user). */
export function promptUser(principal: Principal): number {
  if (principal.kind !== 'user') throw validationError('Feedback and splash screens belong to a user: call with a session or a personal access token')
  return principal.userId
}

const full = (what: string) => validationError(`A user keeps at most ${MAX_PROMPTS_PER_USER} ${what}; this one is new and there is no room for it`)

/**
 * POST /api/admin/feedback (given now; `neverShow` as sent, else false) and PUT /api/admin/feedback/{id} (only the fields
 * sent; a new prompt starts with `neverShow` false and `given` null). One statement: the upsert, made only while the
 * user has room for a new prompt (or the prompt exists).
 */
export async function saveFeedback(db: Db, userId: number, feedbackId: string, input: { neverShow?: boolean; given?: string | null }): Promise<FeedbackRow> {
  const neverShow = input.neverShow === undefined ? null : input.neverShow
  const given = input.given === undefined ? null : input.given
  const [row] = await queryRows<FeedbackRow>(
    db,
    sql`insert into ${userFeedback} (user_id, feedback_id, never_show, given)
      select ${userId}, ${feedbackId}, coalesce(${neverShow}::boolean, false), ${given}::timestamptz
      where exists (select 1 from ${userFeedback} where user_id = ${userId} and feedback_id = ${feedbackId})
        or (select count(*) from ${userFeedback} where user_id = ${userId}) < ${MAX_PROMPTS_PER_USER}
      on conflict (user_id, feedback_id) do update set
        never_show = coalesce(${neverShow}::boolean, ${userFeedback}.never_show),
        given = case when ${input.given !== undefined} then excluded.given else ${userFeedback}.given end
      returning user_id as "userId", feedback_id as "feedbackId", never_show as "neverShow", ${givenIso} as given`,
  )
  if (!row) throw full('feedback prompts')
  return row
}

/** POST /api/admin/splash/{id}: the splash screen is seen. */
export async function markSplashSeen(db: Db, userId: number, splashId: string) {
  const [row] = await queryRows<{ userId: number; splashId: string; seen: boolean }>(
    db,
    sql`insert into ${userSplash} (user_id, splash_id, seen)
      select ${userId}, ${splashId}, true
      where exists (select 1 from ${userSplash} where user_id = ${userId} and splash_id = ${splashId})
        or (select count(*) from ${userSplash} where user_id = ${userId}) < ${MAX_PROMPTS_PER_USER}
      on conflict (user_id, splash_id) do update set seen = true
      returning user_id as "userId", splash_id as "splashId", seen`,
  )
  if (!row) throw full('splash screens')
  return row
}

/** What GET /api/admin/user says of the user's prompts: the feedback list and the splash screens by id. */
export async function promptsOf(db: Db, userId: number) {
  const [feedback, splash] = await Promise.all([
    queryRows<FeedbackRow>(db, sql`select user_id as "userId", feedback_id as "feedbackId", never_show as "neverShow", ${givenIso} as given from ${userFeedback} where user_id = ${userId} order by feedback_id`),
    queryRows<{ splashId: string; seen: boolean }>(db, sql`select splash_id as "splashId", seen from ${userSplash} where user_id = ${userId} order by splash_id`),
  ])
  return { feedback, splash: Object.fromEntries(splash.map((s) => [s.splashId, s.seen])) }
}
