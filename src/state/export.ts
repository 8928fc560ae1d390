import { sql, type SQL } from 'drizzle-orm'
import {
  contextFields,
  environments,
  featureDependencies,
  featureLinks,
  featureEnvironments,
  features,
  featureStrategies,
  featureStrategySegments,
  featureTags,
  projectEnvironments,
  projects,
  segments,
  strategyDefinitions,
  tags,
  tagTypes,
} from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { STATE_VERSION, type StateDocument, type StateExportQuery } from './schemas.js'

/** A timestamp as the API writes one (ISO 8601, UTC, milliseconds), whatever the session's time zone. */
export const isoSql = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
const iso = (column: string) => isoSql(sql.raw(column))

/** One JSON list (`[]` when empty) of `object` over `from`, in `order`. */
const list = (object: SQL, from: SQL, order: string) => sql`(select coalesce(json_agg(${object} order by ${sql.raw(order)}), '[]') ${from})`

/** The parts of the document, each read only when the query asks for it. */
function parts(query: StateExportQuery): SQL[] {
  const wanted: SQL[] = []
  const add = (key: string, value: SQL) => wanted.push(sql`${key}::text, ${value}`)
  const flags = query.featureToggles
  // The configuration of live flags only; archived flags (of live projects) with their metadata and archivedAt.
  const live = sql.raw('f.archived_at is null')
  if (flags) {
    add(
      'features',
      list(
        sql`json_build_object('name', f.name, 'description', f.description, 'type', f.type, 'project', f.project, 'stale', f.stale, 'impressionData', f.impression_data,
          'createdAt', ${iso('f.created_at')}, 'archived', f.archived_at is not null, 'archivedAt', ${iso('f.archived_at')})`,
        sql`from ${features} f where ${live} or f.project in (select id from ${projects} where archived_at is null)`,
        'f.name',
      ),
    )
    add(
      'featureStrategies',
      list(
        sql`json_build_object('id', s.id, 'featureName', s.feature_name, 'projectId', f.project, 'environment', s.environment, 'strategyName', s.strategy_name, 'title', s.title,
          'parameters', s.parameters, 'constraints', s.constraints, 'variants', s.variants, 'sortOrder', s.sort_order, 'disabled', s.disabled, 'createdAt', ${iso('s.created_at')})`,
        sql`from ${featureStrategies} s join ${features} f on f.name = s.feature_name where ${live}`,
        's.feature_name, s.environment, s.sort_order, s.created_at, s.id',
      ),
    )
    add(
      'featureEnvironments',
      list(
        sql`json_build_object('featureName', fe.feature_name, 'environment', fe.environment, 'enabled', fe.enabled, 'variants', fe.variants)`,
        sql`from ${featureEnvironments} fe join ${features} f on f.name = fe.feature_name where ${live}`,
        'fe.feature_name, fe.environment',
      ),
    )
    add(
      'featureDependencies',
      list(
        sql`json_build_object('child', d.child, 'parent', d.parent, 'enabled', d.enabled, 'variants', d.variants)`,
        sql`from ${featureDependencies} d join ${features} f on f.name = d.child where ${live}`,
        'd.child, d.parent',
      ),
    )
    add(
      'featureLinks',
      list(
        sql`json_build_object('featureName', l.feature_name, 'url', l.url, 'title', l.title)`,
        sql`from ${featureLinks} l join ${features} f on f.name = l.feature_name where ${live}`,
        'l.feature_name, l.created_at, l.id',
      ),
    )
    if (query.tags) {
      add(
        'featureTags',
        list(
          sql`json_build_object('featureName', ft.feature_name, 'tagType', ft.tag_type, 'tagValue', ft.tag_value)`,
          sql`from ${featureTags} ft join ${features} f on f.name = ft.feature_name where ${live}`,
          'ft.feature_name, ft.tag_type, ft.tag_value',
        ),
      )
    }
    if (query.segments) {
      add(
        'featureStrategySegments',
        list(
          sql`json_build_object('featureStrategyId', fss.strategy_id, 'segmentId', fss.segment_id)`,
          sql`from ${featureStrategySegments} fss join ${featureStrategies} s on s.id = fss.strategy_id join ${features} f on f.name = s.feature_name where ${live}`,
          'fss.strategy_id, fss.segment_id',
        ),
      )
    }
  }
  if (query.strategies) {
    add(
      'strategies',
      list(
        sql`json_build_object('name', sd.name, 'title', sd.title, 'displayName', sd.display_name, 'description', sd.description,
          'parameters', (select coalesce(json_agg(json_build_object('name', p->>'name', 'type', p->>'type', 'description', coalesce(p->>'description', ''), 'required', coalesce((p->>'required')::boolean, false)) order by n), '[]')
            from jsonb_array_elements(sd.parameters) with ordinality as x (p, n)),
          'deprecated', sd.deprecated, 'editable', true, 'sortOrder', sd.sort_order)`,
        sql`from ${strategyDefinitions} sd where not sd.built_in`,
        'sd.sort_order, sd.name',
      ),
    )
  }
  if (query.projects) {
    add(
      'projects',
      list(
        sql`json_build_object('id', p.id, 'name', p.name, 'description', p.description, 'mode', p.mode, 'defaultStickiness', p.default_stickiness, 'featureLimit', p.feature_limit,
          'featureNamingPattern', p.feature_naming_pattern, 'featureNamingExample', p.feature_naming_example, 'featureNamingDescription', p.feature_naming_description,
          'createdAt', ${iso('p.created_at')}, 'updatedAt', ${iso('p.updated_at')},
          'environments', (select coalesce(json_agg(json_build_object('name', pe.environment_name, 'changeRequestsEnabled', pe.change_requests_enabled,
              'requiredApprovals', pe.required_approvals, 'defaultStrategy', pe.default_strategy) order by e.sort_order, e.name), '[]')
            from ${projectEnvironments} pe join ${environments} e on e.name = pe.environment_name where pe.project_id = p.id))`,
        // Live projects, as the project list: an archived one holds no live flag.
        sql`from ${projects} p where p.archived_at is null`,
        'p.id',
      ),
    )
  }
  if (query.tags) {
    add('tagTypes', list(sql`json_build_object('name', tt.name, 'description', tt.description, 'icon', tt.icon, 'color', tt.color)`, sql`from ${tagTypes} tt`, 'tt.name'))
    add('tags', list(sql`json_build_object('type', t.type, 'value', t.value)`, sql`from ${tags} t`, 't.type, t.value'))
  }
  if (query.environments) {
    add(
      'environments',
      list(sql`json_build_object('name', e.name, 'type', e.type, 'sortOrder', e.sort_order, 'enabled', e.enabled, 'protected', e.protected)`, sql`from ${environments} e`, 'e.sort_order, e.name'),
    )
  }
  if (query.segments) {
    add(
      'segments',
      list(
        sql`json_build_object('id', g.id, 'name', g.name, 'description', g.description, 'project', g.project, 'constraints', g.constraints, 'createdBy', g.created_by, 'createdAt', ${iso('g.created_at')})`,
        sql`from ${segments} g`,
        'g.id',
      ),
    )
  }
  if (query.contextFields) {
    add(
      'contextFields',
      list(
        // A project's own field names its project (absent for a global one), as the flag export does.
        sql`jsonb_build_object('name', c.name, 'description', c.description, 'stickiness', c.stickiness, 'sortOrder', c.sort_order, 'legalValues', c.legal_values)
          || case when c.project is null then '{}'::jsonb else jsonb_build_object('project', c.project) end`,
        sql`from ${contextFields} c`,
        'c.sort_order, c.name',
      ),
    )
  }
  return wanted
}

/**
 * GET /api/admin/state/export: the instance's configuration in one read (one statement, one snapshot), each part
 * as Postgres aggregates it, the parts the query leaves out absent (so that importing the document with `drop`
 * drops none of them). Secrets and who may do what are no part of it: no API tokens, users, project members,
 * integrations or settings. Records nothing, as Unleash's.
 */
export async function exportState(db: Db, query: StateExportQuery): Promise<StateDocument> {
  const wanted = parts(query)
  if (wanted.length === 0) return { version: STATE_VERSION }
  const [row] = await queryRows<{ document: Omit<StateDocument, 'version'> }>(db, sql`select json_build_object(${sql.join(wanted, sql`, `)}) as document`)
  return { version: STATE_VERSION, ...row!.document }
}
