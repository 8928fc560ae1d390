import { and, eq, isNull, sql } from 'drizzle-orm'
import { featureDependencies, featureEnvironments, featureLifecycles, features, featureStrategies, featureStrategySegments, projectEnvironments, projects } from '../../schema/index.js'
import { batch, together, untilUnchanged, type Db } from '../db.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import { eventsStatement } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Caller } from '../core/principal.js'
import { loadFeature, readFeatureForChange } from './read.js'
import { checkNamingPattern } from './store.js'
import type { Feature } from './schemas.js'

const p = (name: string) => sql.placeholder(name)

/**
 * Cloning in one statement: the copy (made only while the project is live, under its flag limit and with the rules
 * its name was checked against, the name free, and the source still at the version it was copied from), its
 * environments (every one off, with the source's variants), strategies and their segments, dependencies and
 * lifecycle, and the events. `returned` tells which condition failed.
 */
const cloneStatement = eventsStatement<{ taken: boolean; live: boolean; sameRules: boolean; sourceAsRead: boolean }>('flagpost_clone_flag', {
  alongside: [
    sql`insert into ${features} (name, project, type, description, impression_data, created_at, created_by, created_by_user_id)
      select ${p('name')}, pr.id, ${p('type')}, ${p('description')}, ${p('impressionData')}::boolean, ${p('createdAt')}::timestamptz, ${p('createdBy')}::text, ${p('createdByUserId')}::integer
      from ${projects} pr
      where pr.id = ${p('project')} and pr.archived_at is null
        and pr.feature_naming_pattern is not distinct from ${p('pattern')}::text and pr.feature_limit is not distinct from ${p('limit')}::integer
        and (pr.feature_limit is null or (select count(*) from ${features} f where f.project = pr.id and f.archived_at is null) < pr.feature_limit)
        and exists (select from ${features} s where s.name = ${p('source')} and s.project = pr.id and s.archived_at is null and s.version = ${p('version')}
          and (extract(epoch from s.created_at) * 1000)::float8 = ${p('createdAtMs')})
      on conflict do nothing
      returning name`,
  ],
  guarded: true,
  unguarded: [
    sql`insert into ${featureEnvironments} (feature_name, environment, enabled, variants)
      select w0.name, pe.environment_name, false, coalesce(v.variants, '[]'::jsonb) from w0 join ${projectEnvironments} pe on pe.project_id = ${p('project')}
      left join jsonb_to_recordset(${p('variants')}::jsonb) as v (environment text, variants jsonb) on v.environment = pe.environment_name`,
    sql`insert into ${featureStrategies} (id, feature_name, environment, strategy_name, title, disabled, sort_order, parameters, constraints, variants, created_at)
      select s.id, w0.name, s.environment, s.name, s.title, s.disabled, s."sortOrder", s.parameters, s.constraints, s.variants, ${p('createdAt')}::timestamptz
      from w0, jsonb_to_recordset(${p('strategies')}::jsonb) as s (id uuid, environment text, name text, title text, disabled boolean, "sortOrder" integer, parameters jsonb, constraints jsonb, variants jsonb)`,
    sql`insert into ${featureStrategySegments} (strategy_id, segment_id)
      select x.id, x.segment from w0, jsonb_to_recordset(${p('strategySegments')}::jsonb) as x (id uuid, segment integer)`,
    sql`insert into ${featureDependencies} (child, parent, enabled, variants)
      select w0.name, d.feature, d.enabled, d.variants from w0, jsonb_to_recordset(${p('dependencies')}::jsonb) as d (feature text, enabled boolean, variants jsonb)`,
    sql`insert into ${featureLifecycles} (feature_name, stage, entered_stage_at) select w0.name, 'initial', ${p('createdAt')}::timestamptz from w0`,
  ],
  returning: sql`json_build_object(
    'taken', exists (select 1 from ${features} where name = ${p('name')}),
    'live', exists (select 1 from ${projects} where id = ${p('project')} and archived_at is null),
    'sameRules', exists (select 1 from ${projects} where id = ${p('project')} and feature_naming_pattern is not distinct from ${p('pattern')}::text and feature_limit is not distinct from ${p('limit')}::integer),
    'sourceAsRead', exists (select from ${features} s where s.name = ${p('source')} and s.version = ${p('version')}))`,
})

/** The copy's strategies: the source's, each with a new id, `groupId` the copy's name when asked. */
function copiedStrategies(source: Feature, name: string, replaceGroupId: boolean) {
  return source.environments.flatMap((env) =>
    env.strategies.map((s) => ({
      ...s,
      id: crypto.randomUUID(),
      featureName: name,
      environment: env.name,
      parameters: replaceGroupId && s.parameters && 'groupId' in s.parameters ? { ...s.parameters, groupId: name } : s.parameters,
    })),
  )
}

/**
 * POST /api/admin/projects/{projectId}/features/{featureName}/clone: a copy of a live flag of the project, in the same
 * project, under a new name (checked as a new flag's is): its metadata, each environment's strategies (with their
 * segments) and variants, and its dependencies; every environment off, a new lifecycle, no tags, favorites or
 * metrics. Written in one batch: the project's lock (as creating a flag takes it), then one statement.
 */
export async function cloneFeature(db: Db, caller: Caller, projectId: string, sourceName: string, input: { name: string; replaceGroupId?: boolean | undefined }): Promise<Feature> {
  const { actor, now, key: principal } = caller
  return untilUnchanged(`Feature flag ${sourceName}`, async () => {
    const [state, [project]] = await together(db, [
      (q) => readFeatureForChange(q, projectId, sourceName, { principal, now }),
      (q) => q.select().from(projects).where(and(eq(projects.id, projectId), isNull(projects.archivedAt))),
    ])
    if (!project) throw notFound(`Could not find project ${projectId}`)
    checkNamingPattern(input.name, project)
    const source = state.feature
    const name = input.name
    const strategies = copiedStrategies(source, name, input.replaceGroupId ?? true)
    const metadata = { name, project: projectId, description: source.description, type: source.type, stale: false, impressionData: source.impressionData, archived: false }
    const common = { project: projectId, featureName: name }
    const events: NewEvent[] = [
      { ...common, type: 'feature-created', data: metadata },
      ...strategies.map(({ environment, ...s }): NewEvent => ({ ...common, type: 'feature-strategy-add', environment, data: s, preData: null })),
      ...source.environments.filter((e) => e.variants.length > 0).map((e): NewEvent => ({ ...common, type: 'feature-environment-variants-updated', environment: e.name, data: e.variants, preData: [] })),
      ...source.dependencies.map((d): NewEvent => ({ ...common, type: 'feature-dependency-added', data: d, preData: null })),
    ]
    const values = {
      name,
      source: sourceName,
      project: projectId,
      type: source.type,
      description: source.description,
      impressionData: source.impressionData,
      pattern: project.featureNamingPattern,
      limit: project.featureLimit,
      version: state.version,
      createdAtMs: state.createdAtMs,
      variants: JSON.stringify(source.environments.map((e) => ({ environment: e.name, variants: e.variants }))),
      strategies: JSON.stringify(strategies),
      strategySegments: JSON.stringify(strategies.flatMap((s) => s.segments.map((segment) => ({ id: s.id, segment })))),
      dependencies: JSON.stringify(source.dependencies),
    }
    const [, created, feature] = await batch(db, [
      (q) => q.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).for('update'),
      (q) => cloneStatement(q, actor, now, events, values),
      (q) => loadFeature(q, name, { principal, now }),
    ])
    if (created.written > 0) return feature!
    const why = created.returned!
    if (why.taken) throw nameExists(`A feature flag named ${name} already exists (flag names are unique across projects and the archive)`)
    if (!why.live) throw notFound(`Could not find project ${projectId}`)
    if (!why.sourceAsRead || !why.sameRules) return undefined
    throw validationError(`Project ${projectId} has reached its limit of ${project.featureLimit} flags: archive one or raise the limit`)
  })
}
