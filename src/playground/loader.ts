import { and, asc, eq, inArray, isNull, or, sql, type SQL } from 'drizzle-orm'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'
import { environments, featureDependencies, featureEnvironments, features, featureStrategies, featureStrategySegments, projectEnvironments, projects, segments } from '../../schema/index.js'
import { segmentIdsOf } from '../strategies/read.js'
import { batch, type Db } from '../db.js'
import { readRevision, type Revision } from '../client-api/revision.js'
import type { DependencyDefinition, FlagDefinition, SegmentDefinition, StrategyDefinition } from '../evaluation/index.js'
import type { Constraint, StrategyInput } from '../strategies/schemas.js'
import type { Variant } from '../variants/schemas.js'

export interface PlaygroundStrategy extends StrategyDefinition {
  id: string
  sortOrder: number
}

/** One flag in one environment, as the engine takes it, with its project. */
export interface PlaygroundFlag extends FlagDefinition {
  projectId: string
  strategies: PlaygroundStrategy[]
  variants: Variant[]
  dependencies: DependencyDefinition[]
}

export interface PlaygroundData {
  /** Per requested environment, every live flag of the requested projects, by name. */
  environments: { name: string; flags: PlaygroundFlag[] }[]
  segments: SegmentDefinition[]
  unknownEnvironments: string[]
  unknownProjects: string[]
  /** The configuration revision the data is current for (read in the same snapshot). */
  revision: Revision
  /** The default strategy of the project environment named by the scope's `defaultStrategyOf`. */
  defaultStrategy: StrategyInput | null
}

export interface PlaygroundScope {
  projects: '*' | string[]
  environments: string[]
  /** Segments to load besides those the flags' strategies use (the preview's new strategies may use others). */
  segmentIds?: number[]
  /** A project environment whose default strategy to read too (what enabling a flag with none adds). */
  defaultStrategyOf?: { projectId: string; environment: string }
}

/**
 * Reads what the playground evaluates with seven set-based queries, however many flags there are, in one
 * read-only snapshot (one batch): the revision, environments and projects (to name unknown ones), live flags,
 * their environment rows, strategies (disabled ones too: the playground shows them) with segment ids,
 * dependencies, and the segments those strategies use; and the default strategy the scope asks for. A flag
 * without a row for an environment is off there.
 */
export async function loadPlaygroundData(db: Db, scope: PlaygroundScope): Promise<PlaygroundData> {
  const envNames = [...new Set(scope.environments)]
  const projectIds = scope.projects === '*' ? undefined : [...new Set(scope.projects)]
  const flagFilter: SQL[] = [isNull(features.archivedAt)]
  // No project at all: no flag (the queries still run, for the revision and the default strategy).
  if (projectIds) flagFilter.push(projectIds.length > 0 ? inArray(features.project, projectIds) : sql`false`)
  /** Joins the live flags of the requested projects on a column holding a flag name. */
  const liveFlag = (column: AnyPgColumn) => and(eq(features.name, column), ...flagFilter)
  const defaultStrategyOf = scope.defaultStrategyOf

  const [revision, envRows, projectRows, flagRows, feRows, strategyRows, dependencyRows, segmentRows, defaultStrategy] = await batch(
    db,
    [
      (q) => readRevision(q),
      (q) => q.select({ name: environments.name }).from(environments).where(inArray(environments.name, envNames)),
      (q) => (projectIds?.length ? q.select({ id: projects.id }).from(projects).where(and(inArray(projects.id, projectIds), isNull(projects.archivedAt))) : Promise.resolve([])),
      (q) => q.select({ name: features.name, project: features.project }).from(features).where(and(...flagFilter)).orderBy(asc(features.name)),
      (q) => q
        .select({ featureName: featureEnvironments.featureName, environment: featureEnvironments.environment, enabled: featureEnvironments.enabled, variants: featureEnvironments.variants })
        .from(featureEnvironments)
        .innerJoin(features, liveFlag(featureEnvironments.featureName))
        .where(inArray(featureEnvironments.environment, envNames)),
      (q) => q
        .select({
          id: featureStrategies.id,
          featureName: featureStrategies.featureName,
          environment: featureStrategies.environment,
          name: featureStrategies.name,
          title: featureStrategies.title,
          disabled: featureStrategies.disabled,
          sortOrder: featureStrategies.sortOrder,
          parameters: featureStrategies.parameters,
          constraints: featureStrategies.constraints,
          variants: featureStrategies.variants,
          segments: segmentIdsOf(featureStrategies.id),
        })
        .from(featureStrategies)
        .innerJoin(features, liveFlag(featureStrategies.featureName))
        .where(inArray(featureStrategies.environment, envNames))
        .orderBy(asc(featureStrategies.sortOrder), asc(featureStrategies.createdAt), asc(featureStrategies.id)),
      (q) => q
        .select({ child: featureDependencies.child, parent: featureDependencies.parent, enabled: featureDependencies.enabled, variants: featureDependencies.variants })
        .from(featureDependencies)
        .innerJoin(features, liveFlag(featureDependencies.child)),
      (q) => q
        .select({ id: segments.id, name: segments.name, constraints: segments.constraints })
        .from(segments)
        .where(
          or(
            inArray(segments.id, scope.segmentIds?.length ? scope.segmentIds : [-1]),
            inArray(
              segments.id,
              q
                .select({ id: featureStrategySegments.segmentId })
                .from(featureStrategySegments)
                .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegments.strategyId))
                .innerJoin(features, liveFlag(featureStrategies.featureName))
                .where(inArray(featureStrategies.environment, envNames)),
            ),
          ),
        ),
      (q) => (defaultStrategyOf ? loadDefaultStrategy(q, defaultStrategyOf.projectId, defaultStrategyOf.environment) : Promise.resolve(null)),
    ],
    // One snapshot, so the data and its revision agree: a change committed meanwhile is in neither or both.
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  )

  const feByKey = new Map(feRows.map((r) => [`${r.featureName}\u0000${r.environment}`, r]))
  const strategiesByKey = new Map<string, PlaygroundStrategy[]>()
  for (const s of strategyRows) {
    const key = `${s.featureName}\u0000${s.environment}`
    let list = strategiesByKey.get(key)
    if (!list) strategiesByKey.set(key, (list = []))
    list.push({
      id: s.id,
      name: s.name,
      ...(s.title ? { title: s.title } : {}),
      disabled: s.disabled,
      sortOrder: s.sortOrder,
      parameters: s.parameters as Record<string, string>,
      constraints: s.constraints as Constraint[],
      segments: s.segments.map(Number),
      variants: s.variants as Variant[],
    })
  }
  const dependenciesOf = new Map<string, DependencyDefinition[]>()
  for (const d of dependencyRows) {
    const list = dependenciesOf.get(d.child) ?? []
    list.push({ feature: d.parent, enabled: d.enabled, variants: d.variants as string[] })
    dependenciesOf.set(d.child, list)
  }

  return {
    environments: envNames.map((env) => ({
      name: env,
      flags: flagRows.map((f): PlaygroundFlag => {
        const fe = feByKey.get(`${f.name}\u0000${env}`)
        const strategies = fe ? (strategiesByKey.get(`${f.name}\u0000${env}`) ?? []) : []
        return {
          name: f.name,
          projectId: f.project,
          // As the client API serves it: an environment without strategies is never on for everyone.
          enabled: (fe?.enabled ?? false) && strategies.length > 0,
          strategies,
          variants: (fe?.variants ?? []) as Variant[],
          dependencies: dependenciesOf.get(f.name) ?? [],
        }
      }),
    })),
    segments: segmentRows.map((s) => ({ id: s.id, name: s.name, constraints: s.constraints as Constraint[] })),
    unknownEnvironments: envNames.filter((name) => !envRows.some((e) => e.name === name)),
    unknownProjects: (projectIds ?? []).filter((id) => !projectRows.some((p) => p.id === id)),
    revision,
    defaultStrategy,
  }
}

/** The default strategy configured for the project environment, if any (what enabling a flag with none adds). */
export async function loadDefaultStrategy(db: Db, projectId: string, environment: string): Promise<StrategyInput | null> {
  const [row] = await db
    .select({ defaultStrategy: projectEnvironments.defaultStrategy })
    .from(projectEnvironments)
    .where(and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environment, environment)))
  return (row?.defaultStrategy as StrategyInput | null | undefined) ?? null
}
