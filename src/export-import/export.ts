import { sql } from 'drizzle-orm'
import { contextFields, environments, featureDependencies, featureLinks, featureEnvironments, features, featureStrategies, featureStrategySegments, featureTags, segments, tagTypes } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { segmentIdsOf } from '../strategies/read.js'
import type { ExportQuery, ExportResult } from './schemas.js'

/** Which flags an export takes, in Unleash's order of precedence: a tag's value, names, a project, else every flag. */
function selection(query: ExportQuery) {
  if (query.tag !== undefined) return sql`exists (select from ${featureTags} t where t.feature_name = f.name and t.tag_value = ${query.tag})`
  if (query.features && query.features.length > 0) return sql`f.name = any(${sql.param(query.features)}::text[])`
  if (query.project !== undefined) return sql`f.project = ${query.project}`
  return sql`true`
}

/** A strategy or its variants naming a context field (in a constraint or as stickiness), or a flag environment's variants. */
const usesField = sql`exists (select from picked_strategies s where s.parameters->>'stickiness' = c.name
      or exists (select from jsonb_array_elements(s.constraints) k where k->>'contextName' = c.name)
      or exists (select from jsonb_array_elements(s.variants) v where v->>'stickiness' = c.name))
    or exists (select from picked_environments e, jsonb_array_elements(e.variants) v where v->>'stickiness' = c.name
      or exists (select from jsonb_array_elements(coalesce(v->'overrides', '[]')) o where o->>'contextName' = c.name))`

/**
 * POST /api/admin/features-batch/export: the flags selected that the caller may see, live and archived (`archived`, so
 * that an import recreates them archived) (those of private projects
 * hidden from them are left out, as unknown names are), with what importing them elsewhere needs from the
 * environment asked: their strategies (with segment ids), switches and variants, tags and the tag types used, the
 * segments and context fields the strategies and variants use, their dependencies and their links. One read, then
 * `features-exported` with the export as its data (as Unleash records it).
 */
export async function exportFeatures(db: Db, caller: Author, hidden: readonly string[], query: ExportQuery): Promise<ExportResult> {
  const env = query.environment
  const [read] = await queryRows<ExportResult & { environmentExists: boolean }>(
    db,
    sql`with picked as (
        select f.* from ${features} f where f.project <> all(${sql.param([...hidden])}::text[]) and ${selection(query)}),
      picked_strategies as (
        select fs.*, ${segmentIdsOf(sql.raw('fs.id'))} as segment_ids from ${featureStrategies} fs join picked on picked.name = fs.feature_name where fs.environment = ${env}),
      picked_environments as (
        select fe.* from ${featureEnvironments} fe join picked on picked.name = fe.feature_name where fe.environment = ${env}),
      picked_tags as (
        select ft.* from ${featureTags} ft join picked on picked.name = ft.feature_name)
      select exists (select from ${environments} where name = ${env}) as "environmentExists",
        (select coalesce(json_agg(json_build_object('name', f.name, 'type', f.type, 'description', f.description, 'project', f.project, 'stale', f.stale,
          'impressionData', f.impression_data, 'archived', f.archived_at is not null) order by f.name), '[]') from picked f) as features,
        (select coalesce(json_agg(json_build_object('id', s.id, 'name', s.strategy_name, 'title', s.title, 'disabled', s.disabled, 'featureName', s.feature_name,
          'sortOrder', s.sort_order, 'segments', s.segment_ids, 'constraints', s.constraints, 'variants', s.variants, 'parameters', s.parameters)
          order by s.feature_name, s.sort_order, s.created_at, s.id), '[]') from picked_strategies s) as "featureStrategies",
        (select coalesce(json_agg(json_build_object('name', e.feature_name, 'featureName', e.feature_name, 'environment', e.environment, 'enabled', e.enabled, 'variants', e.variants)
          order by e.feature_name), '[]') from picked_environments e) as "featureEnvironments",
        (select coalesce(json_agg(jsonb_build_object('name', c.name, 'description', c.description, 'stickiness', c.stickiness, 'sortOrder', c.sort_order, 'legalValues', c.legal_values)
            || case when c.project is null then '{}'::jsonb else jsonb_build_object('project', c.project) end
          order by c.sort_order, c.name), '[]') from ${contextFields} c where ${usesField} and (c.project is null or c.project in (select project from picked))) as "contextFields",
        (select coalesce(json_agg(json_build_object('featureName', t.feature_name, 'tagType', t.tag_type, 'tagValue', t.tag_value) order by t.feature_name, t.tag_type, t.tag_value), '[]')
          from picked_tags t) as "featureTags",
        (select coalesce(json_agg(json_build_object('id', g.id, 'name', g.name) order by g.id), '[]') from ${segments} g
          where g.id in (select fss.segment_id from ${featureStrategySegments} fss join picked_strategies s on s.id = fss.strategy_id)) as segments,
        (select coalesce(json_agg(json_build_object('name', tt.name, 'description', tt.description, 'icon', tt.icon, 'color', tt.color) order by tt.name), '[]') from ${tagTypes} tt
          where tt.name in (select tag_type from picked_tags)) as "tagTypes",
        (select coalesce(json_agg(json_build_object('feature', d.child, 'dependencies', d.parents) order by d.child), '[]') from (
          select d.child, json_agg(json_build_object('feature', d.parent, 'enabled', d.enabled, 'variants', d.variants) order by d.parent) as parents
          from ${featureDependencies} d join picked on picked.name = d.child group by d.child) d) as dependencies,
        (select coalesce(json_agg(json_build_object('feature', l.feature_name, 'links', l.links) order by l.feature_name), '[]') from (
          select l.feature_name, json_agg(json_build_object('url', l.url, 'title', l.title) order by l.created_at, l.id) as links
          from ${featureLinks} l join picked on picked.name = l.feature_name group by l.feature_name) l) as links`,
  )
  const { environmentExists, ...result } = read!
  if (!environmentExists) throw notFound(`Could not find environment ${env}`)
  // The export's event is its only write: the statement takes its transaction id before it draws the event's id, as
  // every other write's change does, so the event-count cache's quiet test sees it (src/events/count-cache.ts).
  await recordEvents(db, caller.actor, caller.now, [{ type: 'features-exported', data: result }], { alongside: [sql`select pg_current_xact_id()`], guarded: true })
  return result
}
