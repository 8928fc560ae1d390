import { sql } from 'drizzle-orm'
import { featureDependencies, features } from '../../schema/index.js'
import { untilUnchanged, type Db } from '../db.js'
import { notFound, validationError } from '../core/errors.js'
import { eventsStatement, guardPassed } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { flagVersionRead, guardSql, guardValues, type FlagVersion } from '../flags/states.js'
import type { CreateDependency } from './schemas.js'

interface Dependency {
  feature: string
  enabled: boolean
  variants: string[]
}

const p = (name: string) => sql.placeholder(name)

// Dependencies are no part of a flag's version (src/flags/states.ts), but every write of them moves the version of
// the child on, and adding one that of the parent too: the version checks of two writes linking the same flag
// cannot both pass, so what each checked (a parent has no parent, a child no children) still holds when it writes.

/**
 * The flags `child` and `parent` (placeholders) as dependency writes read them: with their dependencies (by parent)
 * and their first child, if any.
 */
const flagsForDependency = flagVersionRead<{ dependencies: Dependency[]; firstChild: string | null }>('flagpost_flags_for_dependency', {
  extra: sql`coalesce((select json_agg(json_build_object('feature', d.parent, 'enabled', d.enabled, 'variants', d.variants) order by d.parent) from ${featureDependencies} d where d.child = f.name), '[]') as dependencies,
    (select d.child from ${featureDependencies} d where d.parent = f.name order by d.child limit 1) as "firstChild"`,
  where: sql`f.name in (${p('child')}, ${p('parent')})`,
})

/** The child as read, when it is a live flag of the project; 404 otherwise. */
function liveChild<F extends FlagVersion>(flags: F[], projectId: string, child: string): F {
  const flag = flags.find((f) => f.feature.name === child)
  if (!flag || flag.feature.project !== projectId || flag.feature.archived) throw notFound(`Could not find feature flag ${child} in project ${projectId}`)
  return flag
}

const atVersions = (prefix: string) =>
  sql`(name = ${p(`${prefix}Name`)} and project = ${p('project')} and archived_at is null and version = ${p(`${prefix}Version`)} and (extract(epoch from created_at) * 1000)::float8 = ${p(`${prefix}CreatedAtMs`)})`

/**
 * Adding a dependency: the version checks of both flags (one update taking their rows in name order, as every lock
 * of several flags is taken, so requests linking the same flags the other way round never deadlock; w1 passes only
 * if both were at the versions read), the dependency on another parent dropped, this one written, and the event.
 */
const addDependencyStatement = eventsStatement('flagpost_add_dependency', {
  alongside: [
    sql`update ${features} set version = version + 1
      where name in (select name from ${features} where name in (${p('childName')}, ${p('parentName')}) order by name for update)
        and (${atVersions('child')} or ${atVersions('parent')})
      returning name`,
    sql`select 1 from w0 having count(*) = 2`,
    sql`insert into ${featureDependencies} (child, parent, enabled, variants) select ${p('childName')}, ${p('parentName')}, ${p('enabled')}::boolean, ${p('variants')}::jsonb where exists (select from w1)
      on conflict (child, parent) do update set enabled = excluded.enabled, variants = excluded.variants
      returning child`,
  ],
  guarded: true,
  unguarded: [sql`delete from ${featureDependencies} where child = ${p('childName')} and parent <> ${p('parentName')} and exists (select from w1)`],
})

/**
 * POST /api/admin/projects/{projectId}/features/{child}/dependencies: makes `child` depend on `input.feature`. As in
 * Unleash a flag has one parent: adding a dependency on another parent replaces the current one, and re-adding the
 * same parent replaces its enabled/variants. Both flags are read, then written in one statement checked against
 * both their versions (read again when either moved).
 */
export async function addDependency(db: Db, caller: Author, projectId: string, child: string, input: CreateDependency): Promise<void> {
  const { actor, now } = caller
  const parent = input.feature
  const enabled = input.enabled ?? true
  const dependency = { feature: parent, enabled, variants: enabled ? [...new Set(input.variants ?? [])] : [] }
  await untilUnchanged(`Feature flag ${child}`, async () => {
    const flags = await flagsForDependency(db, { child, parent })
    const childFlag = liveChild(flags, projectId, child)
    if (parent === child) throw validationError('A feature flag cannot depend on itself', [{ path: 'body.feature', message: 'must name another flag' }])
    const parentFlag = flags.find((f) => f.feature.name === parent)
    if (!parentFlag || parentFlag.feature.archived) throw validationError(`The parent flag ${parent} does not exist or is archived`, [{ path: 'body.feature', message: `no live flag named ${parent}` }])
    if (parentFlag.feature.project !== projectId) {
      throw validationError(`The parent flag ${parent} is in project ${parentFlag.feature.project}: a flag can only depend on a flag of its own project (${projectId})`, [
        { path: 'body.feature', message: 'must be a flag of the same project' },
      ])
    }
    const [grandparent] = parentFlag.dependencies
    if (grandparent) throw validationError(`${parent} itself depends on ${grandparent.feature}: dependencies cannot be chained, so ${parent} cannot be a parent`)
    if (childFlag.firstChild) throw validationError(`${childFlag.firstChild} depends on ${child}: dependencies cannot be chained, so ${child} cannot get a parent`)

    const before = childFlag.dependencies.find((d) => d.feature === parent) ?? childFlag.dependencies.find((d) => d.feature !== parent) ?? null
    const event: NewEvent = { type: 'feature-dependency-added', project: projectId, featureName: child, data: dependency, preData: before, tags: childFlag.tags }
    const versions = (prefix: string, flag: FlagVersion) => ({ [`${prefix}Name`]: flag.feature.name, [`${prefix}Version`]: flag.version, [`${prefix}CreatedAtMs`]: flag.createdAtMs })
    const { written } = await addDependencyStatement(db, actor, now, [event], {
      ...versions('child', childFlag),
      ...versions('parent', parentFlag),
      project: projectId,
      enabled: dependency.enabled,
      variants: JSON.stringify(dependency.variants),
    })
    return written > 0 || undefined
  })
}

/** Removing the child's dependency on `parent`, or (`parent` null) all of them, with the event, if the child is at the version read. */
const removeDependenciesStatement = eventsStatement('flagpost_remove_dependencies', {
  alongside: [guardSql(), sql`delete from ${featureDependencies} where child = ${p('name')} and (parent = ${p('parent')}::text or ${p('parent')}::text is null) and ${guardPassed} returning child`],
  guarded: true,
})

/** DELETE …/features/{child}/dependencies/{parent}: 404 when the child does not depend on it. Read, then written as addDependency. */
export async function removeDependency(db: Db, caller: Author, projectId: string, child: string, parent: string): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Feature flag ${child}`, async () => {
    const flag = liveChild(await flagsForDependency(db, { child, parent }), projectId, child)
    const removed = flag.dependencies.find((d) => d.feature === parent)
    if (!removed) throw notFound(`Feature flag ${child} does not depend on ${parent}`)
    const event: NewEvent = { type: 'feature-dependency-removed', project: projectId, featureName: child, data: null, preData: removed, tags: flag.tags }
    const { written } = await removeDependenciesStatement(db, actor, now, [event], { ...guardValues(flag), parent })
    return written > 0 || undefined
  })
}

/** DELETE …/features/{child}/dependencies: removes every parent of the flag; an event only when there was one. */
export async function removeDependencies(db: Db, caller: Author, projectId: string, child: string): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Feature flag ${child}`, async () => {
    const flag = liveChild(await flagsForDependency(db, { child, parent: child }), projectId, child)
    if (flag.dependencies.length === 0) return true
    // An event's preData is an object: the dependencies that went, under a name.
    const event: NewEvent = { type: 'feature-dependencies-removed', project: projectId, featureName: child, data: null, preData: { dependencies: flag.dependencies }, tags: flag.tags }
    const { written } = await removeDependenciesStatement(db, actor, now, [event], { ...guardValues(flag), parent: null })
    return written > 0 || undefined
  })
}
