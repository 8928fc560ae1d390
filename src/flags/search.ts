import { sql, type SQL } from 'drizzle-orm'
import { containsPattern, queryRows, type Db } from '../db.js'
import { validationError } from '../core/errors.js'
import { SYSTEM_USER_ID } from '../core/principal.js'
import { avatarUrl } from '../users/avatar.js'
import { stageRankOf } from './lifecycle.js'
import { LIFECYCLE_STAGES } from './schemas.js'
import type { FeatureSearchQuery, SearchFeatures } from './search-schemas.js'

/*
 * The flag search (GET /api/admin/search/features), as Unleash 8's: filters with Unleash's operators, a page in the
 * order asked for, and the total of matches. One statement: the page's flags are chosen by their names first (the
 * filters and the order), and only those are gathered as JSON (environments, tags, segments, lifecycle).
 */

type Operator = 'IS' | 'IS_NOT' | 'IS_ANY_OF' | 'IS_NONE_OF'
type ListOperator = 'INCLUDE' | 'DO_NOT_INCLUDE' | 'INCLUDE_ALL_OF' | 'INCLUDE_ANY_OF' | 'EXCLUDE_IF_ANY_OF' | 'EXCLUDE_ALL'

const bad = (parameter: string, message: string) => validationError(`${parameter}: ${message}`, [{ path: `query.${parameter}`, message }])

/** `OP:a,b` → the operator and its values (trimmed, none empty: 400 otherwise). */
function parse<O extends string>(parameter: string, filter: string): { operator: O; values: string[] } {
  const at = filter.indexOf(':')
  const values = [...new Set(filter.slice(at + 1).split(',').map((v) => v.trim()).filter((v) => v !== ''))]
  if (values.length === 0) throw bad(parameter, 'names no value')
  return { operator: filter.slice(0, at) as O, values }
}

const including = (operator: Operator) => operator === 'IS' || operator === 'IS_ANY_OF'
const textArray = (values: readonly unknown[]) => sql`${sql.param([...values])}::text[]`

/** `column` compared with the values as the operator says. */
function compared(column: SQL, { operator, values }: { operator: Operator; values: unknown[] }, cast = sql`::text[]`): SQL {
  const array = sql`${sql.param(values)}${cast}`
  return including(operator) ? sql`${column} = any(${array})` : sql`${column} <> all(${array})`
}

/**
 * The flag's current stage is one of `stages` (a flag with no stage yet is `initial`). The flags in a stage are found
 * once, not a stage read per flag: a set of the latest stages of every flag is cheaper than 10,000 lookups.
 */
function inLatestStage(stages: string[]): SQL {
  const later = sql`exists (select 1 from feature_lifecycles n where n.feature_name = l.feature_name
    and (n.entered_stage_at > l.entered_stage_at or (n.entered_stage_at = l.entered_stage_at and ${stageRankOf('n.stage')} > ${stageRankOf('l.stage')})))`
  const latest = sql`f.name in (select l.feature_name from feature_lifecycles l where l.stage = any(${textArray(stages)}) and not ${later})`
  return stages.includes('initial') ? sql`(${latest} or not exists (select 1 from feature_lifecycles l where l.feature_name = f.name))` : latest
}
const lastSeen = sql.raw('(select max(fe.last_seen_at) from feature_environments fe where fe.feature_name = f.name)')
const favoriteOf = (principal: string) => sql`exists (select 1 from favorite_features ff where ff.principal = ${principal} and ff.feature_name = f.name)`
const dayOf = (filter: string) => {
  const at = filter.indexOf(':')
  return { before: filter.slice(0, at) === 'IS_BEFORE', day: sql`${`${filter.slice(at + 1)}T00:00:00.000Z`}::timestamptz` }
}

/** A `tag` or `segment` filter: `matching(values)` is SQL of the flag's matching tags or segments (rows of one column `v`). */
function listCondition(parameter: string, filter: string, matching: (values: string[]) => SQL): SQL {
  const { operator, values } = parse<ListOperator>(parameter, filter)
  const found = matching(values)
  const all = sql`(select count(distinct v) from (${found}) m) = ${values.length}`
  switch (operator) {
    case 'INCLUDE':
    case 'INCLUDE_ANY_OF':
      return sql`exists (${found})`
    case 'DO_NOT_INCLUDE':
    case 'EXCLUDE_IF_ANY_OF':
      return sql`not exists (${found})`
    case 'INCLUDE_ALL_OF':
      return all
    case 'EXCLUDE_ALL':
      return sql`not (${all})`
  }
}

function tagsMatching(values: string[]): SQL {
  const pairs = values.map((v) => {
    const at = v.indexOf(':')
    if (at <= 0 || at === v.length - 1) throw bad('tag', `"${v}" is not type:value`)
    return `${v.slice(0, at).trim()}:${v.slice(at + 1).trim()}`
  })
  return sql`select t.tag_type || ':' || t.tag_value as v from feature_tags t where t.feature_name = f.name and t.tag_type || ':' || t.tag_value = any(${textArray(pairs)})`
}

const segmentsMatching = (values: string[]) =>
  sql`select sg.name as v from feature_strategies s join feature_strategy_segments fss on fss.strategy_id = s.id join segments sg on sg.id = fss.segment_id
    where s.feature_name = f.name and sg.name = any(${textArray(values)})`

const STATES = { active: sql`not f.stale`, stale: sql`f.stale`, 'potentially-stale': sql`(not f.stale and f.potentially_stale)` } as const

/** Which flags lifecycle and archived select, as Unleash: `archived=IS:true` wins; `lifecycle` names `archived` for archived flags. */
function lifecycleAndArchived(q: FeatureSearchQuery): SQL[] {
  const archived = q.archived === 'IS:true'
  if (!q.lifecycle) return [archived ? sql`f.archived_at is not null` : sql`f.archived_at is null`]
  const { operator, values } = parse<Operator>('lifecycle', q.lifecycle)
  const unknown = values.filter((v) => !(LIFECYCLE_STAGES as readonly string[]).includes(v))
  if (unknown.length > 0) throw bad('lifecycle', `unknown stage(s) ${unknown.join(', ')}; one of ${LIFECYCLE_STAGES.join(', ')}`)
  const includesArchived = values.includes('archived')
  const stages = values.filter((v) => v !== 'archived')
  const inStages = inLatestStage(stages)
  if (including(operator)) {
    if (archived) return [sql`f.archived_at is not null`, ...(!includesArchived && stages.length > 0 ? [inStages] : [])]
    if (includesArchived) return [stages.length > 0 ? sql`(${inStages} or f.archived_at is not null)` : sql`f.archived_at is not null`]
    return [inStages, sql`f.archived_at is null`]
  }
  if (archived && !includesArchived) return [sql`f.archived_at is not null`]
  return [...(stages.length > 0 ? [sql`not ${inLatestStage(stages)}`] : []), sql`f.archived_at is null`]
}

/** The conditions on `f` (a row of features) that the query's filters make. */
export function searchConditions(q: FeatureSearchQuery, principal: string): SQL[] {
  const where = lifecycleAndArchived(q)
  const terms = [...new Set((q.query ?? '').split(',').map((t) => t.trim().toLowerCase()).filter((t) => t !== ''))]
  if (terms.length > 0) {
    const patterns = terms.map(containsPattern)
    // The same expression as the trigram index features_search_text_idx.
    // As sets (each found once, by the trigram index for the text), not tested flag by flag.
    const text = sql.join(patterns.map((p) => sql`lower(g.name || ' ' || coalesce(g.description, '')) like ${p}`), sql` or `)
    where.push(sql`(f.name in (select g.name from features g where ${text})
      or f.name in (select t.feature_name from feature_tags t where lower(t.tag_type || ':' || t.tag_value) like any(${textArray(patterns)})))`)
  }
  if (q.project) where.push(compared(sql`f.project`, parse<Operator>('project', q.project)))
  if (q.type) where.push(compared(sql`f.type`, parse<Operator>('type', q.type)))
  if (q.createdBy) {
    const parsed = parse<Operator>('createdBy', q.createdBy)
    if (parsed.values.some((v) => !/^-?\d{1,9}$/.test(v))) throw bad('createdBy', 'takes user ids (whole numbers)')
    where.push(compared(sql`f.created_by_user_id`, { ...parsed, values: parsed.values.map(Number) }, sql`::int[]`))
  }
  if (q.state) {
    const { operator, values } = parse<Operator>('state', q.state)
    const unknown = values.filter((v) => !(v in STATES))
    if (unknown.length > 0) throw bad('state', `unknown state(s) ${unknown.join(', ')}; one of active, stale, potentially-stale`)
    const any = sql`(${sql.join(values.map((v) => STATES[v as keyof typeof STATES]), sql` or `)})`
    where.push(including(operator) ? any : sql`not ${any}`)
  }
  if (q.tag) where.push(listCondition('tag', q.tag, tagsMatching))
  if (q.segment) where.push(listCondition('segment', q.segment, segmentsMatching))
  if (q.createdAt) {
    const { before, day } = dayOf(q.createdAt)
    where.push(before ? sql`f.created_at < ${day}` : sql`f.created_at >= ${day}`)
  }
  if (q.lastSeenAt) {
    const { before, day } = dayOf(q.lastSeenAt)
    where.push(before ? sql`${lastSeen} < ${day}` : sql`${lastSeen} >= ${day}`)
  }
  if (q.favorite) {
    const values = new Set(parse('favorite', q.favorite).values)
    if (values.size === 1) where.push(values.has('true') ? favoriteOf(principal) : sql`not ${favoriteOf(principal)}`)
  }
  const statuses = q.status === undefined ? [] : Array.isArray(q.status) ? q.status : [q.status]
  if (statuses.length > 0) {
    const matches = statuses.map((s) => {
      const [environment, state, ...rest] = s.split(':')
      if (!environment || (state !== 'enabled' && state !== 'disabled') || rest.length > 0) throw bad('status', `"${s}" is not <environment>:enabled or <environment>:disabled`)
      return sql`exists (select 1 from feature_environments fe where fe.feature_name = f.name and fe.environment = ${environment} and fe.enabled = ${state === 'enabled'})`
    })
    where.push(sql`(${sql.join(matches, sql` or `)})`)
  }
  return where
}

/** The order Unleash ranks flags in: favorites first if asked, the sort key, then creation and name. */
function orderOf(q: FeatureSearchQuery, principal: string): SQL {
  const direction = sql.raw(q.sortOrder === 'desc' ? 'desc' : 'asc')
  const keys: SQL[] = q.favoritesFirst === 'true' ? [sql`${favoriteOf(principal)} desc`] : []
  const sortBy = q.sortBy ?? 'createdAt'
  const columns: Record<string, string> = { name: 'f.name', type: 'f.type', stale: 'f.stale', project: 'f.project' }
  if (sortBy.startsWith('environment:')) {
    const environment = sortBy.slice('environment:'.length)
    keys.push(sql`(select fe.enabled from feature_environments fe where fe.feature_name = f.name and fe.environment = ${environment}) ${direction} nulls last`, sql`f.created_at asc`)
  } else if (sortBy === 'lastSeenAt') keys.push(sql`${lastSeen} ${direction} nulls last`, sql`f.created_at asc`)
  else if (columns[sortBy]) keys.push(sql`${sql.raw(columns[sortBy]!)} ${direction}`, sql`f.created_at asc`)
  else keys.push(sql`f.created_at ${direction}`)
  keys.push(sql`f.name asc`)
  return sql.join(keys, sql`, `)
}

const iso = (column: string) => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`)

/** One flag of the page as JSON, from `f` (a row of features). */
const flagJson = (principal: string) => sql`json_build_object(
  'name', f.name, 'type', f.type, 'description', f.description, 'project', f.project, 'stale', f.stale, 'potentiallyStale', f.potentially_stale,
  'impressionData', f.impression_data, 'createdAt', ${iso('f.created_at')}, 'archivedAt', ${iso('f.archived_at')},
  'favorite', ${favoriteOf(principal)},
  'dependencyType', case when exists (select 1 from feature_dependencies d where d.parent = f.name) then 'parent'
    when exists (select 1 from feature_dependencies d where d.child = f.name) then 'child' end,
  'environments', coalesce((select json_agg(json_build_object(
      'name', fe.environment, 'environment', fe.environment, 'featureName', f.name, 'type', env.type, 'enabled', fe.enabled,
      'sortOrder', env.sort_order, 'variantCount', jsonb_array_length(fe.variants), 'lastSeenAt', ${iso('fe.last_seen_at')},
      'hasStrategies', exists (select 1 from feature_strategies s where s.feature_name = f.name and s.environment = fe.environment),
      'hasEnabledStrategies', exists (select 1 from feature_strategies s where s.feature_name = f.name and s.environment = fe.environment and not s.disabled)
    ) order by env.sort_order, env.name)
    from feature_environments fe join environments env on env.name = fe.environment where fe.feature_name = f.name), '[]'),
  'segments', coalesce((select json_agg(distinct sg.name) from feature_strategies s join feature_strategy_segments fss on fss.strategy_id = s.id
    join segments sg on sg.id = fss.segment_id where s.feature_name = f.name), '[]'),
  'tags', coalesce((select json_agg(json_build_object('value', t.tag_value, 'type', t.tag_type) order by t.tag_type, t.tag_value) from feature_tags t where t.feature_name = f.name), '[]'),
  'lifecycle', (select json_build_object('stage', l.stage, 'status', l.status, 'enteredStageAt', ${iso('l.entered_stage_at')})
    from feature_lifecycles l where l.feature_name = f.name order by l.entered_stage_at desc, ${stageRankOf('l.stage')} desc limit 1),
  'createdBy', json_build_object('id', coalesce(f.created_by_user_id, ${SYSTEM_USER_ID}), 'name', f.created_by))`

type FoundFlag = Omit<SearchFeatures['features'][number], 'lifecycle' | 'createdBy'> & {
  lifecycle: { stage: SearchFeatures['features'][number]['lifecycle']['stage']; status: string | null; enteredStageAt: string } | null
  createdBy: { id: number; name: string }
}

/**
 * The flags matching the query that the caller may read (projects in `hidden` are left out in SQL, so `total` counts
 * only those), one page of them in the order asked for, and the total: one statement.
 */
export async function searchFeatures(db: Db, q: FeatureSearchQuery, viewer: { principal: string; hidden: readonly string[] }): Promise<SearchFeatures> {
  const where = searchConditions(q, viewer.principal)
  if (viewer.hidden.length > 0) where.push(sql`f.project <> all(${textArray(viewer.hidden)})`)
  const matching = sql.join(where, sql` and `)
  // The page's flags are ordered again by the same keys (the last one, the name, is unique), now only those few.
  const order = orderOf(q, viewer.principal)
  const [row] = await queryRows<{ total: number; features: FoundFlag[] }>(
    db,
    sql`with page as (select f.name from features f where ${matching} order by ${order} limit ${q.limit} offset ${q.offset})
    select (select count(*)::int from features f where ${matching}) as total,
      coalesce((select json_agg(${flagJson(viewer.principal)} order by ${order}) from page p join features f on f.name = p.name), '[]') as features`,
  )
  const features = await Promise.all(
    (row?.features ?? []).map(async ({ lifecycle, createdBy, ...flag }) => ({
      ...flag,
      lifecycle: lifecycle
        ? { stage: lifecycle.stage, ...(lifecycle.status ? { status: lifecycle.status } : {}), enteredStageAt: lifecycle.enteredStageAt }
        : { stage: 'initial' as const, enteredStageAt: flag.createdAt ?? '' },
      createdBy: { id: createdBy.id, name: createdBy.name || 'unknown', imageUrl: await avatarUrl(createdBy.name) },
    })),
  )
  return { features, total: row?.total ?? 0 }
}
