import { sql, type SQL } from 'drizzle-orm'
import {
  actionSets,
  apiTokens,
  changeRequestChanges,
  changeRequests,
  contextFields,
  environments,
  featureDependencies,
  featureLinks,
  featureEnvironments,
  features,
  featureStrategies,
  featureTags,
  projectEnvironments,
  projects,
  segments,
  strategyDefinitions,
  tags,
  tagTypes,
} from '../../schema/index.js'
import type { Constraint } from '../strategies/schemas.js'
import type { Variant } from '../variants/schemas.js'
import type { ParameterDefinition } from '../strategy-definitions/fit.js'
import { segmentIdsOf } from '../strategies/read.js'
import { flagTagsJson } from '../flags/lock.js'
import { OPEN_STATES } from '../change-requests/schemas.js'
import { isoSql } from './export.js'

/** A project environment as stored: its change-request settings and default strategy. */
export interface StoredProjectEnvironment {
  name: string
  changeRequestsEnabled: boolean
  requiredApprovals: number
  defaultStrategy: Record<string, unknown> | null
}

export interface StoredProject {
  id: string
  name: string
  description: string | null
  mode: string
  defaultStickiness: string
  featureLimit: number | null
  featureNamingPattern: string | null
  featureNamingExample: string | null
  featureNamingDescription: string | null
  archived: boolean
  /** Some API token is scoped to it. */
  tokens: boolean
  /** Whether action sets act in it (dropping it would delete them without their events). */
  actionSets: boolean
  openChangeRequests: boolean
  environments: StoredProjectEnvironment[]
}

export interface StoredStrategy {
  id: string
  environment: string
  name: string
  title: string | null
  disabled: boolean
  sortOrder: number
  parameters: Record<string, string>
  constraints: Constraint[]
  variants: Variant[]
  segments: number[]
}

/** A flag the document names (as a flag, a parent or a tagged flag), with everything an import may replace of it. */
export interface StoredFlag {
  name: string
  project: string
  type: string
  description: string | null
  stale: boolean
  impressionData: boolean
  archived: boolean
  environments: { name: string; enabled: boolean; variants: Variant[] }[]
  strategies: StoredStrategy[]
  tags: { type: string; value: string }[]
  dependencies: { parent: string; enabled: boolean; variants: string[] }[]
  links: { url: string; title: string | null }[]
  children: string[]
}

/** What an import is decided from: the instance's registries, every flag in brief and the flags named in full. */
export interface StoredState {
  environments: { name: string; type: string; sortOrder: number; enabled: boolean; protected: boolean; tokens: boolean }[]
  projects: StoredProject[]
  /** Every flag, archived ones too, with its version (what a check of the read compares). */
  flags: { name: string; project: string; archived: boolean; version: number; openChangeRequests: boolean }[]
  named: StoredFlag[]
  /** The strategies whose ids the document names, wherever they are. */
  strategyIds: { id: string; featureName: string; environment: string }[]
  definitions: { name: string; title: string | null; displayName: string | null; description: string | null; parameters: ParameterDefinition[]; builtIn: boolean; deprecated: boolean; sortOrder: number; usedBy: string[] }[]
  contextFields: { name: string; description: string | null; stickiness: boolean; sortOrder: number; legalValues: { value: string; description?: string | null }[]; project: string | null; usedBy: string[] }[]
  tagTypes: { name: string; description: string | null; icon: string | null; color: string | null }[]
  tags: { type: string; value: string }[]
  /** Every flag's tags when the import may remove some (`drop` of flag tags), else none. */
  featureTags: { featureName: string; type: string; value: string }[]
  segments: { id: number; name: string; description: string | null; project: string | null; constraints: Constraint[]; createdBy: string | null; createdAt: string; usedBy: string[] }[]
}

export interface StateReadOptions {
  /** The flags read in full. */
  names: string[]
  /** The document's strategy ids that are uuids. */
  strategyIds: string[]
  allFeatureTags: boolean
}

const openChangeRequest = sql.raw(`cr.state in (${OPEN_STATES.map((state) => `'${state}'`).join(', ')})`)
const json = (object: SQL, from: SQL, order: string) => sql`(select coalesce(json_agg(${object} order by ${sql.raw(order)}), '[]') ${from})`
/** The flags (by name) whose strategies match `where` (about the strategy `fs`). */
const flagsWhose = (where: SQL) => sql`(select coalesce(json_agg(distinct fs.feature_name order by fs.feature_name), '[]') from ${featureStrategies} fs where ${where})`

/**
 * SQL of the state an import is decided from, as one row of JSON columns. The import's write runs it again in its
 * statement and writes only if it reads the same text: every column is ordered, so the same state reads the same.
 */
export function stateSql(options: StateReadOptions): SQL {
  const names = sql.param(options.names)
  return sql`select
    ${json(
      sql`json_build_object('name', e.name, 'type', e.type, 'sortOrder', e.sort_order, 'enabled', e.enabled, 'protected', e.protected,
        'tokens', exists (select from ${apiTokens} t where t.environment = e.name))`,
      sql`from ${environments} e`,
      'e.name',
    )} as environments,
    ${json(
      sql`json_build_object('id', p.id, 'name', p.name, 'description', p.description, 'mode', p.mode, 'defaultStickiness', p.default_stickiness, 'featureLimit', p.feature_limit,
        'featureNamingPattern', p.feature_naming_pattern, 'featureNamingExample', p.feature_naming_example, 'featureNamingDescription', p.feature_naming_description,
        'archived', p.archived_at is not null,
        'tokens', exists (select from ${apiTokens} t where p.id = any(t.projects)),
        'actionSets', exists (select from ${actionSets} a where a.project = p.id),
        'openChangeRequests', exists (select from ${changeRequests} cr where cr.project = p.id and ${openChangeRequest}),
        'environments', (select coalesce(json_agg(json_build_object('name', pe.environment_name, 'changeRequestsEnabled', pe.change_requests_enabled,
            'requiredApprovals', pe.required_approvals, 'defaultStrategy', pe.default_strategy) order by pe.environment_name), '[]')
          from ${projectEnvironments} pe where pe.project_id = p.id))`,
      sql`from ${projects} p`,
      'p.id',
    )} as projects,
    ${json(
      sql`json_build_object('name', f.name, 'project', f.project, 'archived', f.archived_at is not null, 'version', f.version,
        'openChangeRequests', f.name in (select ch.feature from ${changeRequestChanges} ch join ${changeRequests} cr on cr.id = ch.change_request_id where ${openChangeRequest}))`,
      sql`from ${features} f`,
      'f.name',
    )} as flags,
    ${json(
      sql`json_build_object('name', f.name, 'project', f.project, 'type', f.type, 'description', f.description, 'stale', f.stale, 'impressionData', f.impression_data,
        'archived', f.archived_at is not null,
        'environments', (select coalesce(json_agg(json_build_object('name', fe.environment, 'enabled', fe.enabled, 'variants', fe.variants) order by fe.environment), '[]')
          from ${featureEnvironments} fe where fe.feature_name = f.name),
        'strategies', (select coalesce(json_agg(json_build_object('id', fs.id, 'environment', fs.environment, 'name', fs.strategy_name, 'title', fs.title, 'disabled', fs.disabled,
            'sortOrder', fs.sort_order, 'parameters', fs.parameters, 'constraints', fs.constraints, 'variants', fs.variants, 'segments', ${segmentIdsOf(sql.raw('fs.id'))})
            order by fs.environment, fs.sort_order, fs.created_at, fs.id), '[]')
          from ${featureStrategies} fs where fs.feature_name = f.name),
        'tags', ${flagTagsJson(sql.raw('f.name'))},
        'dependencies', (select coalesce(json_agg(json_build_object('parent', d.parent, 'enabled', d.enabled, 'variants', d.variants) order by d.parent), '[]')
          from ${featureDependencies} d where d.child = f.name),
        'links', (select coalesce(json_agg(json_build_object('url', l.url, 'title', l.title) order by l.created_at, l.id), '[]') from ${featureLinks} l where l.feature_name = f.name),
        'children', (select coalesce(json_agg(d.child order by d.child), '[]') from ${featureDependencies} d where d.parent = f.name))`,
      sql`from ${features} f where f.name = any(${names}::text[])`,
      'f.name',
    )} as named,
    ${json(
      sql`json_build_object('id', fs.id, 'featureName', fs.feature_name, 'environment', fs.environment)`,
      sql`from ${featureStrategies} fs where fs.id = any(${sql.param(options.strategyIds)}::uuid[])`,
      'fs.id',
    )} as "strategyIds",
    ${json(
      sql`json_build_object('name', sd.name, 'title', sd.title, 'displayName', sd.display_name, 'description', sd.description, 'parameters', sd.parameters,
        'builtIn', sd.built_in, 'deprecated', sd.deprecated, 'sortOrder', sd.sort_order, 'usedBy', ${flagsWhose(sql`fs.strategy_name = sd.name`)})`,
      sql`from ${strategyDefinitions} sd`,
      'sd.name',
    )} as definitions,
    ${json(
      sql`json_build_object('name', c.name, 'description', c.description, 'stickiness', c.stickiness, 'sortOrder', c.sort_order, 'legalValues', c.legal_values, 'project', c.project,
        'usedBy', ${flagsWhose(sql`exists (select from jsonb_array_elements(fs.constraints) k where k->>'contextName' = c.name)`)})`,
      sql`from ${contextFields} c`,
      'c.name',
    )} as "contextFields",
    ${json(sql`json_build_object('name', tt.name, 'description', tt.description, 'icon', tt.icon, 'color', tt.color)`, sql`from ${tagTypes} tt`, 'tt.name')} as "tagTypes",
    ${json(sql`json_build_object('type', t.type, 'value', t.value)`, sql`from ${tags} t`, 't.type, t.value')} as tags,
    ${
      options.allFeatureTags
        ? json(sql`json_build_object('featureName', ft.feature_name, 'type', ft.tag_type, 'value', ft.tag_value)`, sql`from ${featureTags} ft`, 'ft.feature_name, ft.tag_type, ft.tag_value')
        : sql`'[]'::json`
    } as "featureTags",
    ${json(
      sql`json_build_object('id', g.id, 'name', g.name, 'description', g.description, 'project', g.project, 'constraints', g.constraints, 'createdBy', g.created_by,
        'createdAt', ${isoSql(sql.raw('g.created_at'))},
        'usedBy', (select coalesce(json_agg(distinct fs.feature_name order by fs.feature_name), '[]') from feature_strategy_segments fss join ${featureStrategies} fs on fs.id = fss.strategy_id where fss.segment_id = g.id))`,
      sql`from ${segments} g`,
      'g.id',
    )} as segments`
}
