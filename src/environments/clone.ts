import { sql } from 'drizzle-orm'
import { environments, featureEnvironments, features, featureStrategies, featureStrategySegments, projectEnvironments, projects } from '../../schema/index.js'
import { queryRows, untilUnchanged } from '../db.js'
import type { Db } from '../db.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import { eventsStatement } from '../events/store.js'
import type { Author } from '../core/principal.js'
import type { EventTag, NewEvent } from '../events/types.js'
import { segmentIdsOf } from '../strategies/read.js'
import type { CloneEnvironment, Environment } from './schemas.js'
import { flagTagsJson } from '../flags/lock.js'

const p = (name: string) => sql.placeholder(name)
const made = sql.raw('exists (select from w0)')

/**
 * The new environment, made only if its name is free, the source's projects are still those read and every flag
 * copied is still at the version read; with it (only then) the projects' settings, the flags' switches, variants,
 * strategies and their segments, copied as read, and the copied flags' versions moved on (their states gain an
 * environment).
 */
const cloneStatement = eventsStatement('flagpost_clone_environment', {
  alongside: [
    sql`insert into ${environments} (name, type, enabled, protected, sort_order, created_at)
      select ${p('name')}, ${p('type')}, true, false, ${p('sortOrder')}::int, ${p('createdAt')}::timestamptz
      where (select count(*) from ${features} f join jsonb_to_recordset(${p('versions')}::jsonb) as v (name text, version integer) on v.name = f.name and v.version = f.version) = jsonb_array_length(${p('versions')}::jsonb)
        and (select coalesce(array_agg(pe.project_id order by pe.project_id), '{}') from ${projectEnvironments} pe where pe.environment_name = ${p('source')} and pe.project_id = any(${p('projects')}::text[])) = ${p('projects')}::text[]
      on conflict do nothing
      returning name`,
  ],
  guarded: true,
  unguarded: [
    sql`insert into ${projectEnvironments} (project_id, environment_name, change_requests_enabled, required_approvals, default_strategy)
      select pe.project_id, ${p('name')}, pe.change_requests_enabled, pe.required_approvals, pe.default_strategy from ${projectEnvironments} pe
      where pe.environment_name = ${p('source')} and pe.project_id = any(${p('projects')}::text[]) and ${made}`,
    sql`insert into ${featureEnvironments} (feature_name, environment, enabled, variants)
      select x.name, ${p('name')}, x.enabled, x.variants from jsonb_to_recordset(${p('flags')}::jsonb) as x (name text, enabled boolean, variants jsonb) where ${made}`,
    sql`insert into ${featureStrategies} (id, feature_name, environment, strategy_name, title, disabled, sort_order, parameters, constraints, variants, created_at)
      select x.id, x."featureName", ${p('name')}, x.name, x.title, x.disabled, x."sortOrder", x.parameters, x.constraints, x.variants, ${p('createdAt')}::timestamptz
      from jsonb_to_recordset(${p('strategies')}::jsonb) as x (id uuid, "featureName" text, name text, title text, disabled boolean, "sortOrder" integer, parameters jsonb, constraints jsonb, variants jsonb)
      where ${made}`,
    sql`insert into ${featureStrategySegments} (strategy_id, segment_id)
      select x.id, s.value::int from jsonb_to_recordset(${p('strategies')}::jsonb) as x (id uuid, segments jsonb), jsonb_array_elements_text(x.segments) s where ${made}`,
    sql`update ${features} set version = ${features.version} + 1 where name in (
      select f.name from ${features} f where f.name in (select x.name from jsonb_to_recordset(${p('versions')}::jsonb) as x (name text)) and ${made} order by f.name for update)`,
  ],
})

interface SourceFlag {
  name: string
  project: string
  version: number
  enabled: boolean
  variants: unknown[]
  tags: EventTag[]
}
interface SourceStrategy {
  id: string
  featureName: string
  name: string
  title: string | null
  disabled: boolean
  sortOrder: number
  parameters: Record<string, string>
  constraints: unknown[]
  variants: unknown[]
  segments: number[]
}
interface SourceProject {
  project: string
  changeRequestsEnabled: boolean
  requiredApprovals: number
}

/**
 * POST /api/admin/environments/{name}/clone: a new environment copying the source's configuration in the projects
 * named (every live project with the source when none are). A read (404 for an unknown source, 409 for a taken name,
 * 400 for a project named that is unknown or lacks the source), then one statement. Records `environment-created`,
 * then, as if each were made by hand, `project-environment-added` per project and, per flag, `feature-strategy-add`
 * per strategy, `feature-environment-variants-updated` where it has variants and `feature-environment-enabled` where it is on.
 */
export async function cloneEnvironment(db: Db, caller: Author, source: string, input: CloneEnvironment): Promise<Environment> {
  const { actor, now } = caller
  const named = input.projects ? [...new Set(input.projects)].sort() : null
  return untilUnchanged(`Environment ${source}`, async () => {
    const scope = sql`pe.environment_name = ${source} and p.archived_at is null ${named ? sql`and pe.project_id = any(${sql.param(named)}::text[])` : sql``}`
    const [read] = await queryRows<{ sortOrder: number | null; taken: boolean; projects: SourceProject[]; flags: SourceFlag[]; strategies: SourceStrategy[] }>(
      db,
      sql`with scope as (select pe.project_id, pe.change_requests_enabled, pe.required_approvals from ${projectEnvironments} pe join ${projects} p on p.id = pe.project_id where ${scope})
      select (select sort_order from ${environments} where name = ${source}) as "sortOrder",
        exists (select from ${environments} where name = ${input.name}) as taken,
        (select coalesce(json_agg(json_build_object('project', s.project_id, 'changeRequestsEnabled', s.change_requests_enabled, 'requiredApprovals', s.required_approvals) order by s.project_id), '[]') from scope s) as projects,
        (select coalesce(json_agg(json_build_object('name', f.name, 'project', f.project, 'version', f.version, 'enabled', fe.enabled, 'variants', fe.variants,
            'tags', ${flagTagsJson(sql.raw('f.name'))}) order by f.name), '[]')
          from ${features} f join ${featureEnvironments} fe on fe.feature_name = f.name and fe.environment = ${source} where f.project in (select project_id from scope)) as flags,
        (select coalesce(json_agg(json_build_object('id', fs.id, 'featureName', fs.feature_name, 'name', fs.strategy_name, 'title', fs.title, 'disabled', fs.disabled, 'sortOrder', fs.sort_order,
            'parameters', fs.parameters, 'constraints', fs.constraints, 'variants', fs.variants, 'segments', ${segmentIdsOf(sql.raw('fs.id'))}) order by fs.feature_name, fs.sort_order, fs.created_at, fs.id), '[]')
          from ${featureStrategies} fs join ${features} f on f.name = fs.feature_name where fs.environment = ${source} and f.project in (select project_id from scope)) as strategies`,
    )
    if (read!.sortOrder === null) throw notFound(`Could not find environment ${source}`)
    if (read!.taken) throw nameExists(`An environment named ${input.name} already exists`)
    const projectIds = read!.projects.map((pr) => pr.project)
    const missing = (named ?? []).filter((id) => !projectIds.includes(id))
    if (missing.length > 0) throw validationError(`Project(s) ${missing.join(', ')} do not exist or do not have environment ${source}`, missing.map((id) => ({ path: 'body.projects', message: `project ${id} has no environment ${source}` })))

    const environment: Environment = { name: input.name, type: input.type, enabled: true, protected: false, sortOrder: read!.sortOrder, projectCount: projectIds.length, apiTokenCount: 0 }
    const copies = read!.strategies.map((s) => ({ ...s, id: crypto.randomUUID() }))
    const flagOf = new Map(read!.flags.map((f) => [f.name, f]))
    const about = (f: SourceFlag) => ({ project: f.project, featureName: f.name, environment: input.name, tags: f.tags })
    const events: NewEvent[] = [
      { type: 'environment-created', environment: input.name, data: { ...environment, clonedFrom: source } },
      ...read!.projects.map((pr): NewEvent => ({ type: 'project-environment-added', project: pr.project, environment: input.name, data: { environment: input.name, changeRequestsEnabled: pr.changeRequestsEnabled, requiredApprovals: pr.requiredApprovals } })),
      ...copies.map((s): NewEvent => {
        const { id, name, title, disabled, featureName, sortOrder, segments, constraints, variants, parameters } = s
        return { type: 'feature-strategy-add', ...about(flagOf.get(s.featureName)!), data: { id, name, title, disabled, featureName, sortOrder, segments, constraints, variants, parameters }, preData: null }
      }),
      ...read!.flags.filter((f) => f.variants.length > 0).map((f): NewEvent => ({ type: 'feature-environment-variants-updated', ...about(f), data: { variants: f.variants }, preData: { variants: [] } })),
      ...read!.flags.filter((f) => f.enabled).map((f): NewEvent => ({ type: 'feature-environment-enabled', ...about(f), data: { enabled: true }, preData: { enabled: false } })),
    ]
    const { written } = await cloneStatement(db, actor, now, events, {
      name: input.name,
      type: input.type,
      sortOrder: read!.sortOrder,
      source,
      projects: projectIds,
      versions: JSON.stringify(read!.flags.map((f) => ({ name: f.name, version: f.version }))),
      flags: JSON.stringify(read!.flags.map((f) => ({ name: f.name, enabled: f.enabled, variants: f.variants }))),
      strategies: JSON.stringify(copies),
    })
    return written > 0 ? environment : undefined
  })
}
