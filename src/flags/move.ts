import { sql } from 'drizzle-orm'
import { changeRequestChanges, changeRequests, contextFields, featureDependencies, featureEnvironments, featureStrategies, featureStrategySegments, projectEnvironments, projects, segments } from '../../schema/index.js'
import { queryRows, together, untilUnchanged, type Db } from '../db.js'
import { conflict, notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed } from '../events/store.js'
import type { Author } from '../core/principal.js'
import type { NewEvent } from '../events/types.js'
import { OPEN_STATES } from '../change-requests/schemas.js'
import { checkNamingPattern } from './store.js'
import { flagVersionRead, guardSql, guardValues } from './states.js'

const p = (name: string) => sql.placeholder(name)

/** What moving a flag decides from, besides its version. */
interface MoveExtra {
  /** Environments where the flag has strategies. */
  strategyEnvironments: string[]
  /** Projects of the segments its strategies name (global ones left out). */
  segmentProjects: string[]
  /** The project's own context fields its strategies' constraints use. */
  projectFields: string[]
  linked: boolean
  openChangeRequests: number[]
}

const flagToMove = flagVersionRead<MoveExtra>('flagpost_flag_to_move', {
  extra: sql`
    coalesce((select json_agg(distinct fs.environment) from ${featureStrategies} fs where fs.feature_name = f.name), '[]') as "strategyEnvironments",
    coalesce((select json_agg(distinct s.project) from ${featureStrategies} fs join ${featureStrategySegments} fss on fss.strategy_id = fs.id join ${segments} s on s.id = fss.segment_id
      where fs.feature_name = f.name and s.project is not null), '[]') as "segmentProjects",
    coalesce((select json_agg(distinct cf.name) from ${featureStrategies} fs cross join lateral jsonb_array_elements(fs.constraints) elem
      join ${contextFields} cf on cf.name = elem->>'contextName' where fs.feature_name = f.name and cf.project is not null), '[]') as "projectFields",
    exists (select from ${featureDependencies} d where d.child = f.name or d.parent = f.name) as linked,
    coalesce((select json_agg(distinct cr.id) from ${changeRequestChanges} ch join ${changeRequests} cr on cr.id = ch.change_request_id
      where ch.feature = f.name and cr.state = any(${p('openStates')}::text[])), '[]') as "openChangeRequests"`,
})

/**
 * Moving's write: the flag to the new project (its version check, also checking in SQL what the version does not pin
 * down: the target's environments as read, no dependency, no open change request, no segment or context field of
 * another project),
 * the environments of the target it lacks added (off), those the target lacks dropped, and the event.
 */
const moveFlag = eventsStatement('flagpost_move_flag', {
  alongside: [
    guardSql(
      sql`project = ${p('newProject')}`,
      sql`exists (select from ${projects} pr where pr.id = ${p('newProject')} and pr.archived_at is null
          and pr.feature_naming_pattern is not distinct from ${p('pattern')}::text and pr.feature_limit is not distinct from ${p('limit')}::integer
          and (pr.feature_limit is null or (select count(*) from features f where f.project = pr.id and f.archived_at is null) < pr.feature_limit))
        and (select coalesce(array_agg(pe.environment_name order by pe.environment_name), '{}') from ${projectEnvironments} pe where pe.project_id = ${p('newProject')}) = ${p('targetEnvironments')}::text[]
        and not exists (select from ${featureDependencies} d where d.child = ${p('name')} or d.parent = ${p('name')})
        and not exists (select from ${changeRequestChanges} ch join ${changeRequests} cr on cr.id = ch.change_request_id where ch.feature = ${p('name')} and cr.state = any(${p('openStates')}::text[]))
        and not exists (select from ${featureStrategies} fs join ${featureStrategySegments} fss on fss.strategy_id = fs.id join ${segments} s on s.id = fss.segment_id
          where fs.feature_name = ${p('name')} and s.project is not null and s.project <> ${p('newProject')})
        and not exists (select from ${featureStrategies} fs cross join lateral jsonb_array_elements(fs.constraints) elem join ${contextFields} cf on cf.name = elem->>'contextName'
          where fs.feature_name = ${p('name')} and cf.project is not null and cf.project <> ${p('newProject')})`,
    ),
  ],
  guarded: true,
  unguarded: [
    sql`insert into ${featureEnvironments} (feature_name, environment) select ${p('name')}, e from unnest(${p('targetEnvironments')}::text[]) as e where ${guardPassed} on conflict do nothing`,
    sql`delete from ${featureEnvironments} where feature_name = ${p('name')} and not environment = any(${p('targetEnvironments')}::text[]) and ${guardPassed}`,
  ],
})

/**
 * POST /api/admin/projects/{projectId}/features/{featureName}/changeProject: moves a live flag of the project to another
 * (live) project, whose naming pattern and flag limit it must fit (400). Refused (400) too when the target lacks an environment where the flag has strategies, or when a strategy names a segment of another
 * project or constrains a context field of its project (a project's own fields stay with it); (409) when the flag has dependencies (they stay within a project) or an open change request changes it.
 */
export async function changeProject(db: Db, caller: Author, projectId: string, name: string, newProjectId: string) {
  const { actor, now } = caller
  if (newProjectId === projectId) throw validationError(`Feature flag ${name} is already in project ${projectId}`, [{ path: 'body.newProjectId', message: 'must be another project' }])
  await untilUnchanged(`Feature flag ${name}`, async () => {
    const [[flag], target] = await together(db, [
      (q) => flagToMove(q, { name, openStates: OPEN_STATES }),
      (q) =>
        queryRows<{ environments: string[]; pattern: string | null; limit: number | null; live: number }>(
          q,
          sql`select coalesce(array_agg(pe.environment_name order by pe.environment_name) filter (where pe.environment_name is not null), '{}') as environments,
              pr.feature_naming_pattern as pattern, pr.feature_limit as "limit", (select count(*)::int from features f where f.project = pr.id and f.archived_at is null) as live
            from ${projects} pr left join ${projectEnvironments} pe on pe.project_id = pr.id where pr.id = ${newProjectId} and pr.archived_at is null group by pr.id`,
        ),
    ])
    if (!flag || flag.feature.project !== projectId || flag.feature.archived) throw notFound(`Could not find feature flag ${name} in project ${projectId}`)
    const [project] = target
    if (!project) throw notFound(`Could not find project ${newProjectId}`)
    const { environments } = project
    checkNamingPattern(name, { id: newProjectId, featureNamingPattern: project.pattern, featureNamingExample: null, featureNamingDescription: null })
    if (project.limit !== null && project.live >= project.limit) throw validationError(`Project ${newProjectId} has reached its limit of ${project.limit} flags: archive one or raise the limit`)
    const missing = flag.strategyEnvironments.filter((e) => !environments.includes(e))
    if (missing.length > 0) throw validationError(`Project ${newProjectId} lacks environment(s) ${missing.join(', ')} where ${name} has strategies`, [{ path: 'body.newProjectId', message: `has no environment ${missing.join(', ')}` }])
    const foreign = flag.segmentProjects.filter((s) => s !== newProjectId)
    if (foreign.length > 0) throw validationError(`Strategies of ${name} use segments of project ${foreign.join(', ')}, which project ${newProjectId} cannot use`, [{ path: 'body.newProjectId', message: 'the flag uses segments of another project' }])
    if (flag.projectFields.length > 0)
      throw validationError(`Strategies of ${name} constrain context fields of project ${projectId} (${flag.projectFields.join(', ')}), which project ${newProjectId} cannot use`, [
        { path: 'body.newProjectId', message: 'the flag uses context fields of its project' },
      ])
    if (flag.linked) throw conflict(`Feature flag ${name} has dependencies, which stay within a project: remove them first`)
    if (flag.openChangeRequests.length > 0) throw conflict(`Open change requests (${flag.openChangeRequests.join(', ')}) change ${name}: apply, reject or cancel them first`)
    const event: NewEvent = { type: 'feature-project-change', project: newProjectId, featureName: name, data: { oldProject: projectId, newProject: newProjectId }, preData: { project: projectId }, tags: flag.tags }
    const { written } = await moveFlag(db, actor, now, [event], { ...guardValues(flag), newProject: newProjectId, targetEnvironments: environments, pattern: project.pattern, limit: project.limit, openStates: OPEN_STATES })
    return written > 0 || undefined
  })
}
