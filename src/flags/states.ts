import { sql, type SQL } from 'drizzle-orm'
import { features } from '../../schema/index.js'
import { Lru } from '../core/lru.js'
import { statement, type Db } from '../db.js'
import type { EventTag, NewEvent } from '../events/types.js'
import { ApiError } from '../core/errors.js'
import { readFeatureForChange, type Viewer } from './read.js'
import { flagTagsJson, type FeatureRow } from './lock.js'
import type { Feature } from './schemas.js'

// Optimistic writes. A write of a flag is one statement: it changes the flag and writes its events only if
// the flag is still at the version the write computed its change from (the version check), and reads what the answer
// needs besides that state. The version moves on with every writer that takes the flag's lock (see
// src/flags/lock.ts) and with every optimistic write, so a version check that passes proves that the flag's
// metadata, tags, environments, strategies, variants and lifecycle stage are what the change was computed
// from, and the answer is that state with the change. What the version does not pin down (favorites, when SDKs
// last saw the flag, collaborators, dependencies) the statement reads (`unversionedPartsJson`).
//
// The state a change is computed from is the flag as this app last saw it (kept per app: per process on Node,
// per isolate on Workers); when the app has none, or the version check finds it out of date, the flag is read afresh
// and the write tried once more; a flag changed again in between is written under its lock. A state out of
// date thus costs a failed attempt, never a wrong write.

/** The part of a flag that PATCH /api/admin/projects/{projectId}/features/{featureName} changes, and that its metadata events carry. */
export type Metadata = Pick<Feature, 'name' | 'project' | 'description' | 'type' | 'stale' | 'impressionData' | 'archived'>

export function metadataOf(flag: FeatureRow | Feature): Metadata {
  const archived = 'archived' in flag ? flag.archived : flag.archivedAt !== null
  return { name: flag.name, project: flag.project, description: flag.description, type: flag.type as Metadata['type'], stale: flag.stale, impressionData: flag.impressionData, archived }
}

/**
 * The flag as of a version: what the optimistic writes compute their changes from, and the answer of a write
 * once the parts its version does not pin down are read again (`asWrittenBy`).
 */
export interface FlagState {
  version: number
  /** Epoch milliseconds of the flag's creation: with the name, which flag this is. */
  createdAtMs: number
  feature: Feature
  /** The default strategy of each of the project's environments as stored (JSON, or null), as read with the flag: not versioned with it. */
  defaultStrategies: Record<string, unknown>
}

/** The flags' states this app knows, by name, weighed by their size as read (roughly bytes). */
export type FlagStates = Lru<string, { state: FlagState; weight: number }>

export const createFlagStates = (): FlagStates => new Lru({ maxEntries: 5_000, maxWeight: 16 * 1024 * 1024 })

/** The tags of a flag as its events carry them. */
export const eventTagsOf = (feature: Feature): EventTag[] => feature.tags.map((t) => ({ type: t.type, value: t.value }))

const p = (name: string) => sql.placeholder(name)

// Which flag, at which version: the conditions of the version check (placeholders: see guardSql).
const atVersion = sql`name = ${p('name')} and project = ${p('project')} and archived_at is null and version = ${p('version')}
      and (extract(epoch from created_at) * 1000)::float8 = ${p('createdAtMs')}`

/**
 * SQL of the version check (the first change alongside the events of an optimistic write): moves the live flag of the
 * project to its next version, with `set` (more assignments), only if it is still at the state's version.
 * Placeholders: `name`, `project`, `version`, `createdAtMs` (`guardValues`).
 */
export function guardSql(set?: SQL, also?: SQL): SQL {
  return sql`update ${features} set ${set ? sql`${set}, ` : sql``}version = version + 1
    where ${atVersion}${also ? sql` and ${also}` : sql``}
    returning name`
}

/**
 * SQL that is true while the live flag of the project is still at the state's version, for a write of a part of
 * the flag its version does not pin down (a favorite) whose events carry parts it does (the tags). It moves no
 * version; placeholders as guardSql's.
 */
export const unchangedSql = sql`exists (select from ${features} where ${atVersion})`

export const guardValues = (state: Pick<FlagState, 'version' | 'createdAtMs'> & { feature: Pick<Metadata, 'name' | 'project'> }) => ({
  name: state.feature.name,
  project: state.feature.project,
  version: state.version,
  createdAtMs: state.createdAtMs,
})

/**
 * A flag as the writes of one of its parts read it (tags, lifecycle, dependencies, favorites, archiving): its
 * metadata, its tags as its events carry them, and the version and creation instant its version check compares.
 * Lighter than readFeatureForChange, which reads everything a flag's answer holds.
 */
export interface FlagVersion {
  version: number
  createdAtMs: number
  feature: Metadata
  tags: EventTag[]
}

interface FlagVersionRow extends Omit<Metadata, 'type'> {
  type: string
  version: number
  createdAtMs: number
  tags: EventTag[]
}

/**
 * The flags `where` names (SQL about `f`, a row of features; by default the placeholder `name`) as FlagVersions,
 * archived ones too, with `extra` columns (SQL about `f`, aliased), in the statement `statementName`, built once.
 */
export function flagVersionRead<E extends object = Record<never, never>>(statementName: string, parts: { extra?: SQL; where?: SQL } = {}) {
  const run = statement<FlagVersionRow & E>(
    statementName,
    () => sql`
      select f.name, f.project, f.description, f.type, f.stale, f.impression_data as "impressionData", f.archived_at is not null as archived, f.version,
        (extract(epoch from f.created_at) * 1000)::float8 as "createdAtMs",
        ${flagTagsJson(sql.raw('f.name'))} as tags
        ${parts.extra ? sql`, ${parts.extra}` : sql``}
      from ${features} f where ${parts.where ?? sql`f.name = ${p('name')}`}`,
  )
  return async (db: Db, values: Record<string, unknown>): Promise<(FlagVersion & E)[]> =>
    (await run(db, values)).map(({ name, project, description, type, stale, impressionData, archived, version, createdAtMs, tags, ...extra }) => ({
      ...(extra as E),
      version,
      createdAtMs,
      feature: { name, project, description, type: type as Metadata['type'], stale, impressionData, archived },
      tags,
    }))
}

const flagVersionNamed = flagVersionRead('flagpost_flag_version')

/** The flag named, archived or not, as a FlagVersion; undefined when there is none. */
export const readFlagVersion = async (db: Db, name: string): Promise<FlagVersion | undefined> => (await flagVersionNamed(db, { name }))[0]

type EnvironmentChange = Partial<Pick<Feature['environments'][number], 'enabled' | 'variants' | 'strategies'>>

/** What a write changed, applied to the state it was computed from: the flag's state at the next version. */
export function nextState(state: FlagState, change: { metadata?: Partial<Metadata>; environments?: Map<string, EnvironmentChange>; lifecycle?: Feature['lifecycle'] }): FlagState {
  const environments = state.feature.environments.map((e) => {
    const changed = change.environments?.get(e.name)
    if (!changed) return e
    const strategies = changed.strategies ?? e.strategies
    return { ...e, ...changed, variantCount: (changed.variants ?? e.variants).length, hasStrategies: strategies.length > 0, hasEnabledStrategies: strategies.some((s) => !s.disabled) }
  })
  const feature = {
    ...state.feature,
    ...change.metadata,
    environments,
    enabled: environments.some((e) => e.enabled),
    variants: environments[0]?.variants ?? [],
    lifecycle: change.lifecycle ?? state.feature.lifecycle,
  }
  return { ...state, version: state.version + 1, feature }
}

export interface OptimisticWrite<T> {
  /** The answer from a fresh read alone (when there is nothing to change), if any. */
  fromRead?(feature: Feature): T | undefined
  /**
   * Writes the change computed from `state` in one guarded statement; undefined when the version check failed or the
   * change cannot be made optimistically (for the state given). With `next`, the state the write left.
   */
  write(state: FlagState, next: (state: FlagState) => void): Promise<T | undefined>
  /** The change made under the flag's lock, in a transaction of its own. */
  locked(): Promise<T>
}

/**
 * Runs an optimistic write of a live flag of the project: from the state this app knows, else (or when that
 * is out of date) from a fresh read, else under the flag's lock. 404 when the flag is not live in the project.
 */
export async function writeOptimistically<T>(db: Db, states: FlagStates | undefined, target: { projectId: string; featureName: string }, viewer: Viewer, steps: OptimisticWrite<T>): Promise<T> {
  let weight = 0
  const remember = (state: FlagState) => states?.set(target.featureName, { state, weight }, weight)
  const entry = states?.get(target.featureName)
  const known = entry?.state
  if (known && known.feature.project === target.projectId) {
    weight = entry.weight
    try {
      const done = await steps.write(known, remember)
      if (done !== undefined) return done
    } catch (error) {
      // Computed from a state out of date, a change can be refused for what is no longer so: read afresh.
      if (!(error instanceof ApiError)) throw error
    }
    states?.delete(target.featureName)
  }
  const state = await readFeatureForChange(db, target.projectId, target.featureName, viewer)
  // Weighed once, as read: a write changes a flag's size little.
  weight = states ? 2 * JSON.stringify(state.feature).length : 0
  remember(state)
  const answer = steps.fromRead?.(state.feature)
  if (answer !== undefined) return answer
  const done = await steps.write(state, remember)
  if (done !== undefined) return done
  states?.delete(target.featureName)
  return steps.locked()
}

declare module 'hono' {
  interface ContextVariableMap {
    /** What optimistic writes know of the flags. */
    flagStates: FlagStates
  }
}

/** Archiving's event: `metadata` as it is when archived (a patch may change it in the same write). */
export const archivedEvent = (metadata: Metadata, tags: EventTag[]): NewEvent => ({
  type: 'feature-archived',
  project: metadata.project,
  featureName: metadata.name,
  data: { ...metadata, archived: true },
  preData: { ...metadata, archived: false },
  tags,
})
