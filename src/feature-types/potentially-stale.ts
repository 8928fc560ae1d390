import { sql } from 'drizzle-orm'
import { features } from '../../schema/index.js'
import type { Db } from '../db.js'
import { derivedEventsStatement } from '../events/store.js'
import { SYSTEM_ACTOR } from '../core/principal.js'
import { pastLifetimeSql } from './store.js'

const now = sql`${sql.placeholder('now')}::timestamptz`

/*
 * The potentially-stale job, as Unleash's: a live flag not marked stale that has outlived its type's lifetime is
 * marked potentially stale, with `feature-potentially-stale-on` (data: the flag's name and the mark; tags: its
 * tags); one whose type's lifetime grew past its age again loses the mark, without an event (Unleash records
 * none, and the catalogue has no `-off`). Both move the flag's version on, so cached flag states are read again.
 * One statement: the update decides, so overlapping runs (the Node timer, the worker's cron) mark a flag once.
 */
const run = derivedEventsStatement<number>('flagpost_mark_potentially_stale', {
  alongside: [
    sql`update ${features} f set potentially_stale = true, version = f.version + 1
      where not f.potentially_stale and not f.stale and f.archived_at is null and ${pastLifetimeSql(now)}
      returning f.name, f.project`,
  ],
  unguarded: [
    sql`update ${features} f set potentially_stale = false, version = f.version + 1
      where f.potentially_stale and not f.stale and f.archived_at is null and not ${pastLifetimeSql(now)}
      returning f.name`,
  ],
  events: sql`(select coalesce(jsonb_agg(jsonb_build_object(
      'type', 'feature-potentially-stale-on', 'project', w0.project, 'feature_name', w0.name,
      'data', jsonb_build_object('name', w0.name, 'potentiallyStale', true),
      'tags', coalesce((select jsonb_agg(jsonb_build_object('type', t.tag_type, 'value', t.tag_value) order by t.tag_type, t.tag_value) from feature_tags t where t.feature_name = w0.name), '[]'),
      'label', 'Flag potentially stale',
      'summary', '**' || ${sql.placeholder('createdBy')}::text || '** marked **' || w0.name || '** as potentially stale'
    ) order by w0.name), '[]') from w0)`,
  returning: sql<number>`(select count(*)::int from u0)`,
})

/** Runs the potentially-stale job at `now`: how many flags it marked (one event each) and how many it cleared. */
export async function markPotentiallyStale(db: Db, at: Date): Promise<{ marked: number; cleared: number }> {
  const { written, returned } = await run(db, SYSTEM_ACTOR, at, { now: at.toISOString() })
  return { marked: written, cleared: returned ?? 0 }
}
