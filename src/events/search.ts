import { and, eq, gte, inArray, lt, or, sql, type SQL } from 'drizzle-orm'
import { events } from '../../schema/index.js'
import { containsPattern, queryRows, statement, type Db } from '../db.js'
import { validationError } from '../core/errors.js'
import { countRow, keepCountCache, readCount, sameWhere, totalOf, type SearchWhere } from './count-cache.js'
import { Lru } from '../core/lru.js'
import type { EventSearchQuery } from './schemas.js'
import { isEventType, type EventType } from './types.js'
import { nonAdminAccessCondition, type EventAccess } from './access.js'
import { textMatches } from './text-index.js'

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


const dayStart = (filter: string) => new Date(`${filter.slice(3)}T00:00:00.000Z`)
/** The start of the day after `to` (`IS:yyyy-MM-dd`: its whole day is included); none after 9999-12-31, which every event is before. */
function dayAfter(to: string): Date | undefined {
  const end = new Date(dayStart(to).getTime() + 86_400_000)
  return end.getUTCFullYear() > 9999 ? undefined : end
}

export function searchConditions(q: Omit<EventSearchQuery, 'offset' | 'limit'>): { where: SQL[]; text?: { set: SQL; row: SQL } } {
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
  const end = q.to ? dayAfter(q.to) : undefined
  if (end) where.push(lt(events.createdAt, end))
  if (q.from && q.to && dayStart(q.from) > dayStart(q.to)) throw validationError('from must not be after to', [{ path: 'query.from', message: 'must not be after to' }])
  const text = q.query?.trim().toLowerCase()
  return { where, ...(text ? { text: textMatches(containsPattern(text), { trigrams: text.length >= 3 }) } : {}) }
}

/**
 * The fields of eventView, from a row `e` of events: json_agg of this record names each field after its
 * column. Answers are sent as the JSON text Postgres makes: parsing the rows into objects and serializing
 * them again cost Node more than the whole query. to_char's MS truncates to milliseconds, as Date does.
 */
const eventFields = sql.raw(
  `select e.id, to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt", e.type, e.created_by as "createdBy", ` +
    `e.created_by_user_id as "createdByUserId", e.environment, e.project, e.feature_name as "featureName", e.data, e.pre_data as "preData", ` +
    `e.tags, e.label, e.summary`,
)

/** A scalar subquery: one page of the events matching `where`, newest first (created_at, then id), as a JSON array. */
function pageColumn(where: SQL | undefined, page: { offset: unknown; limit: unknown }): SQL {
  return sql`(select coalesce(json_agg(v order by e.created_at desc, e.id desc), '[]')::text
    from (select * from ${events} ${where ? sql`where ${where}` : sql``} order by ${events.createdAt} desc, ${events.id} desc limit ${page.limit} offset ${page.offset}) e
    cross join lateral (${eventFields}) v)`
}

/** Names a set of filters in the count cache. */
const filterKeyOf = (filters: Omit<EventSearchQuery, 'offset' | 'limit'>) =>
  JSON.stringify(Object.entries(filters).filter(([, v]) => v !== undefined && v !== '').sort(([a], [b]) => a.localeCompare(b)))

/** A cached total counts what its caller may read: callers who may read less count under their own key. */
const withAccess = (filterKey: string, access: EventAccess) => (access.key === '' ? filterKey : `${filterKey}|${access.key}`)

/*
 * Pages of events as sent, per app: building a page's JSON is most of a search's work, and a page changes only when
 * its set of matches does. Events are never changed or deleted (an event is appended in the transaction of its
 * change), and for most callers whether an event matches depends only on the event and on values fixed by the
 * cache key (the filters, the caller's hidden projects and admin-only types: access.key). Then the matches of a
 * key only grow, and every snapshot sees those of an earlier one: two exact totals (countRow) that are equal
 * count the same set, and a set has one page per offset and limit. So a search sends its cached total along, and
 * its statement builds the page only when the total it counts differs. Not for callers from whom deleted private
 * projects' past lives are hidden: a `project-deleted` event hides older events, so their matches also shrink,
 * and one new event can leave the total as it was with another set.
 */

/** A page's `events` JSON and the exact total it was read with, by filterKey (with access), offset and limit. */
export type EventPages = Lru<string, { events: string; total: number }>

export const createEventPages = (): EventPages => new Lru({ maxEntries: 1_000, maxWeight: 16 * 1024 * 1024 })

/** The event search (GET /api/admin/search/events): newest first (created_at, then id), with the total number of matches. The answer's JSON text. */
export async function searchEventsJson(db: Db, pages: EventPages | undefined, q: EventSearchQuery, access: EventAccess, now: Date): Promise<string> {
  const { offset, limit, ...given } = q
  // Matched trimmed and in lower case: so named in the count cache too (`E` and ` e` are the search `e`).
  const filters = given.query === undefined ? given : { ...given, query: given.query.trim().toLowerCase() }
  const { where: conditions, text } = searchConditions(filters)
  // Which index serves a combination of filters best depends on its values: how common a project or type is,
  // and when its events happened (a project whose events are all old is found by its own index, not by walking
  // the newest events or a common type's). A generic plan of a prepared statement cannot know that, so such
  // searches are planned for their values on every call. Where one plan is right whatever the values (no
  // filter; one flag, project or type, and days), the statement is prepared: see preparedSearch.
  const prepared = text ? undefined : conditions.length === 0 ? { reads: everyEvent, values: {} } : preparedSearch(filters)
  const where: SearchWhere = text
    ? { set: and(...conditions, text.set, access.condition), row: and(...conditions, text.row, access.condition), text: true }
    : sameWhere(and(...conditions, access.condition))
  const { events, total } = await pageAndTotal(db, pages, withAccess(filterKeyOf(filters), access), where, { offset, limit }, access, now, prepared)
  return `{"events":${events},"total":${total}}`
}

/**
 * A flag's events (GET /api/admin/events/{featureName}), newest first, and how many it has in all. The answer's JSON text. The total is
 * the search's for `feature=IS:<name>` (same condition, same cached count).
 */
export async function featureEventsJson(db: Db, pages: EventPages | undefined, featureName: string, page: { offset: number; limit: number }, access: EventAccess, now: Date): Promise<string> {
  const filterKey = withAccess(filterKeyOf({ feature: `IS:${featureName}` }), access)
  const prepared = { reads: flagEvents, values: { feature: featureName } }
  const { events: list, total } = await pageAndTotal(db, pages, filterKey, sameWhere(and(eq(events.featureName, featureName), access.condition)), page, access, now, prepared)
  return `{"version":1,"toggleName":${JSON.stringify(featureName)},"events":${list},"totalEvents":${total}}`
}

/**
 * One page of the events matching `where` and their total, as columns `events` (JSON text) and `count` (see countRow).
 * `events` is null when the total is `expected` (the page is then the one cached with it, see EventPages): Postgres
 * runs a scalar subquery in a CASE only when its branch is taken.
 */
const pageAndTotalSql = (filterKey: unknown, where: SearchWhere, page: { offset: unknown; limit: unknown }, expected: unknown) =>
  sql`select case when t.total = ${expected}::bigint then null
      ${where.text ? sql`when t.total * ${sql.raw(String(COMMON_TEXT))} > t.max_id then ${pageColumn(where.row, page)}` : sql``}
      else ${pageColumn(where.set, page)} end as events, t.count
    from ${countRow(filterKey, where)} t`

/**
 * Free text that one event in this many matches, or more, is common: its page is found by walking the newest events
 * and checking each (a few dozen reads for a page), not by finding every match through the trigram index first.
 */
const COMMON_TEXT = 20

// Read through subqueries: a plan made for a limit of 50 looked cheaper than the generic one (which guesses a tenth
// of the table), so Postgres planned the search without filters on every call, for longer than it ran.
const pagePlaceholders = { offset: sql`(select ${sql.placeholder('offset')}::int)`, limit: sql`(select ${sql.placeholder('limit')}::int)` }

/**
 * `pageAndTotalSql` of the events matching `where` (SQL with placeholders) as prepared statements: one for
 * admins, who read every event, and one for everyone else (see nonAdminAccessCondition).
 */
function preparedReads(name: string, where?: SQL) {
  const read = (statementName: string, access: SQL | undefined) =>
    statement<PageAndTotal>(statementName, () => pageAndTotalSql(sql.placeholder('filterKey'), sameWhere(and(where, access)), pagePlaceholders, sql.placeholder('expected')))
  return { admin: read(name, undefined), nonAdmin: read(`${name}_for_non_admins`, nonAdminAccessCondition()) }
}

type PageAndTotal = { events: string | null; count: string }

const everyEvent = preparedReads('flagpost_event_search')
const flagEvents = preparedReads('flagpost_feature_events', eq(events.featureName, sql.placeholder('feature')))

/** The filters a prepared search may have, and the column each compares (one value). */
const ONE_VALUE_FILTERS = { feature: events.featureName, project: events.project, type: events.type } as const
type OneValueFilter = keyof typeof ONE_VALUE_FILTERS

/** Prepared searches by shape (which one-value filter, whether from, whether to), made on first use. */
const searchShapes = new Map<string, ReturnType<typeof preparedReads>>()

/**
 * The prepared reads of a search whose plan does not depend on its values, and their values; undefined for every
 * other search. Those are the searches by at most one of feature, project and type with one value, and by days
 * (from, to, or both): each is a range of one index, `(column, created_at, id)` or `(created_at, id)`, that holds
 * exactly the matches in the answer's order, so the plan made for any values is the plan for all. The conditions
 * are searchConditions' (one value: `=`; `to` includes its whole day), as placeholders. Called after
 * searchConditions, which refuses what is invalid.
 */
function preparedSearch(filters: Omit<EventSearchQuery, 'offset' | 'limit'>): { reads: ReturnType<typeof preparedReads>; values: Record<string, unknown> } | undefined {
  let column: OneValueFilter | undefined
  let value: string | undefined
  for (const [name, filter] of Object.entries(filters) as [keyof typeof filters, string | undefined][]) {
    if (filter === undefined || filter === '' || name === 'from' || name === 'to') continue
    if (!(name in ONE_VALUE_FILTERS) || column !== undefined) return undefined
    const values = valuesOf(filter)
    if (values.length !== 1) return undefined
    column = name as OneValueFilter
    value = values[0]
  }
  const { from } = filters
  const end = filters.to ? dayAfter(filters.to) : undefined
  const to = end ? filters.to : undefined
  if (column === 'feature' && !from && !to) return { reads: flagEvents, values: { feature: value } }
  const shape = [column ?? 'days', from ? 'from' : '', to ? 'to' : ''].filter(Boolean).join('_')
  let reads = searchShapes.get(shape)
  if (!reads) {
    const where = and(
      column ? eq(ONE_VALUE_FILTERS[column], sql.placeholder('value')) : undefined,
      from ? gte(events.createdAt, sql.placeholder('from')) : undefined,
      to ? lt(events.createdAt, sql.placeholder('to')) : undefined,
    )
    reads = preparedReads(`flagpost_event_search_${shape}`, where)
    searchShapes.set(shape, reads)
  }
  return {
    reads,
    values: {
      ...(column ? { value } : {}),
      ...(from ? { from: dayStart(from).toISOString() } : {}),
      ...(end ? { to: end.toISOString() } : {}),
    },
  }
}

/**
 * One page of the events matching `where` (JSON text) and their total, in one statement; keeps the total's cache
 * and, for callers whose matches only grow, the page's (see EventPages). With `prepared` (reads that select what
 * `where` does), it runs as the read for the caller's access. An admin with hidden projects has neither (eventAccess
 * is never given one: admins see every project).
 */
async function pageAndTotal(
  db: Db,
  pages: EventPages | undefined,
  filterKey: string,
  where: SearchWhere,
  page: { offset: number; limit: number },
  access: EventAccess,
  now: Date,
  prepared?: { reads: ReturnType<typeof preparedReads>; values: Record<string, unknown> },
) {
  const pageKey = pages && !access.pastLivesHidden ? `${filterKey}\n${page.offset}\n${page.limit}` : undefined
  const cached = pageKey === undefined ? undefined : pages!.get(pageKey)
  // -1 when nothing is kept: no total equals it, so the page is built.
  const expected = cached?.total ?? -1
  const values = { ...prepared?.values, filterKey, offset: page.offset, limit: page.limit, expected }
  const [row] =
    prepared && !access.admin
      ? await prepared.reads.nonAdmin(db, { ...values, hiddenProjects: [...access.hiddenProjects], pastLivesHidden: access.pastLivesHidden })
      : prepared && access.hiddenProjects.length === 0
        ? await prepared.reads.admin(db, values)
        : await queryRows<PageAndTotal>(db, pageAndTotalSql(filterKey, where, page, expected))
  const count = readCount(row!.count)
  await keepCountCache(db, filterKey, where, count, now)
  const total = totalOf(count)
  if (row!.events === null) return { events: cached!.events, total }
  // Weighed as held in memory: up to two bytes a character.
  if (pageKey !== undefined) pages!.set(pageKey, { events: row!.events, total }, 2 * row!.events.length)
  return { events: row!.events, total }
}

declare module 'hono' {
  interface ContextVariableMap {
    /** Pages of event searches and flags' events, with the totals they were read with. */
    eventPages: EventPages
  }
}
