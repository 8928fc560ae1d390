import { and, count, desc, eq, gt, gte, inArray, lt, or, sql, type SQL } from 'drizzle-orm'
import { eventCountCache, events } from '../../schema/index.js'
import type { Db } from '../db.js'
import { validationError } from '../http/errors.js'
import type { EventSearchQuery } from './schemas.js'
import { isEventType, type EventType } from './types.js'

type EventRow = typeof events.$inferSelect

export function eventView(row: EventRow) {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    type: row.type as EventType,
    createdBy: row.createdBy,
    createdByUserId: row.createdByUserId,
    environment: row.environment,
    project: row.project,
    featureName: row.featureName,
    data: row.data as Record<string, unknown> | null,
    preData: row.preData as Record<string, unknown> | null,
    tags: row.tags as { type: string; value: string }[],
    label: row.label,
    summary: row.summary,
  }
}
export type EventView = ReturnType<typeof eventView>

/** `IS:a` → ['a']; `IS_ANY_OF:a,b` → ['a', 'b']. */
function valuesOf(filter: string): string[] {
  const [operator, ...rest] = filter.split(':')
  const value = rest.join(':')
  return operator === 'IS' ? [value] : [...new Set(value.split(',').filter((v) => v !== ''))]
}

const anyOf = (column: typeof events.featureName | typeof events.project | typeof events.type, values: string[]) =>
  values.length === 1 ? eq(column, values[0]!) : inArray(column, values)

// The same expression as the trigram index events_search_text_idx (migration 0004), so the index is used.
const searchText = sql`lower(coalesce(${events.data}::text, '') || ' ' || coalesce(${events.preData}::text, '') || ' ' || ${events.tags}::text)`

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

const dayStart = (filter: string) => new Date(`${filter.slice(3)}T00:00:00.000Z`)

export function searchConditions(q: Omit<EventSearchQuery, 'offset' | 'limit'>): SQL[] {
  const where: SQL[] = []
  if (q.feature) where.push(anyOf(events.featureName, valuesOf(q.feature)))
  if (q.project) where.push(anyOf(events.project, valuesOf(q.project)))
  if (q.type) {
    const types = valuesOf(q.type)
    const unknown = types.filter((t) => !isEventType(t))
    if (unknown.length > 0) throw validationError(`type: unknown event type(s) ${unknown.join(', ')}`, [{ path: 'query.type', message: `unknown event type(s) ${unknown.join(', ')}` }])
    where.push(anyOf(events.type, types))
  }
  if (q.createdBy) {
    const values = valuesOf(q.createdBy)
    const ids = values.filter((v) => /^-?\d{1,9}$/.test(v)).map(Number)
    const names = values.filter((v) => !/^-?\d{1,9}$/.test(v))
    const matches: SQL[] = []
    if (ids.length > 0) matches.push(inArray(events.createdByUserId, ids))
    if (names.length > 0) matches.push(inArray(events.createdBy, names))
    where.push(or(...matches)!)
  }
  if (q.from) where.push(gte(events.createdAt, dayStart(q.from)))
  if (q.to) where.push(lt(events.createdAt, new Date(dayStart(q.to).getTime() + 86_400_000)))
  if (q.from && q.to && dayStart(q.from) > dayStart(q.to)) throw validationError('from must not be after to', [{ path: 'query.from', message: 'must not be after to' }])
  const text = q.query?.trim()
  if (text) where.push(sql`${searchText} like ${`%${escapeLike(text.toLowerCase())}%`}`)
  return where
}

// Totals below this are cheap to count every time and are not cached.
const CACHE_FROM = 10_000
// A cached total is recounted once this many newer events would have to be counted on top of it.
const RECOUNT_AFTER = 100_000

/**
 * The exact number of events matching `where`. Large totals are cached with the id they count up to,
 * and only newer events are counted on top. A total is cached only when no other transaction was
 * writing while it was counted: then every event with a lower id was already visible, and every
 * later event gets a higher id (the sequence only grows), so "cached + newer" is exact.
 */
async function countMatches(db: Db, filterKey: string, where: SQL | undefined): Promise<number> {
  const [cached] = await db
    .select({ n: eventCountCache.n, newer: sql<number>`(select count(*) from ${events} where ${and(where, gt(events.id, eventCountCache.upToId))})`.mapWith(Number) })
    .from(eventCountCache)
    .where(eq(eventCountCache.filterKey, filterKey))
  if (cached && cached.newer < RECOUNT_AFTER) return cached.n + cached.newer
  // One statement sees one snapshot: the count, the newest id and whether another transaction was
  // writing all describe the same moment (no transaction needed around it).
  const [row] = await db
    .select({
      n: count(),
      upToId: sql<number>`(select coalesce(max(${events.id}), 0) from ${events})`.mapWith(Number),
      quiet: sql<boolean>`(select count(*) = 0 from pg_snapshot_xip(pg_current_snapshot()))`,
    })
    .from(events)
    .where(where)
  const n = row?.n ?? 0
  if (row && row.quiet && n >= CACHE_FROM) {
    await db
      .insert(eventCountCache)
      .values({ filterKey, upToId: row.upToId, n })
      .onConflictDoUpdate({ target: eventCountCache.filterKey, set: { upToId: row.upToId, n, computedAt: sql`now()` }, setWhere: sql`${eventCountCache.upToId} < ${row.upToId}` })
  }
  return n
}

/** Operation 7: newest first (created_at, then id), with the total number of matches. */
export async function searchEvents(db: Db, q: EventSearchQuery) {
  const { offset, limit, ...filters } = q
  const where = and(...searchConditions(filters))
  const filterKey = JSON.stringify(Object.entries(filters).filter(([, v]) => v !== undefined && v !== '').sort(([a], [b]) => a.localeCompare(b)))
  const [rows, total] = await Promise.all([
    db.select().from(events).where(where).orderBy(desc(events.createdAt), desc(events.id)).limit(limit).offset(offset),
    countMatches(db, filterKey, where),
  ])
  return { events: rows.map(eventView), total }
}

/** Operation 5: a flag's events, newest first, and how many it has in all. */
export async function featureEvents(db: Db, featureName: string, page: { offset: number; limit: number }) {
  const where = eq(events.featureName, featureName)
  // The page and the total in one query: the window count covers every match, before the limit.
  const rows = await db
    .select({ event: events, total: sql<number>`count(*) over ()`.mapWith(Number) })
    .from(events)
    .where(where)
    .orderBy(desc(events.createdAt), desc(events.id))
    .limit(page.limit)
    .offset(page.offset)
  const total = rows[0]?.total ?? (page.offset > 0 ? ((await db.select({ n: count() }).from(events).where(where))[0]?.n ?? 0) : 0)
  return { version: 1, toggleName: featureName, events: rows.map((r) => eventView(r.event)), totalEvents: total }
}
