import { sql, type SQL } from 'drizzle-orm'
import {
  contextFields,
  environments,
  featureDependencies,
  featureLinks,
  featureEnvironments,
  featureLifecycles,
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
import { batch, queryRows, untilUnchanged, yieldToEventLoop, type Db } from '../db.js'
import type { Caller } from '../core/principal.js'
import { recordEvents } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import { tagCreationLocks } from '../tags/registry.js'
import { segmentNameLocks } from '../segments/store.js'
import { stateSql, type StateReadOptions, type StoredState } from './read.js'
import { planImport, type Writes } from './plan.js'
import type { StateImport, StateImportQuery, StateImportResult } from './schemas.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** What the read takes in full: the flags the document names (as flags, parents and tagged flags) and its strategies' ids. */
function readOptionsOf(doc: StateImport, options: StateImportQuery): StateReadOptions {
  const names = new Set([
    ...(doc.features ?? []).map((f) => f.name),
    ...(doc.featureDependencies ?? []).flatMap((d) => [d.child, d.parent]),
    ...(doc.featureTags ?? []).map((t) => t.featureName),
  ])
  const strategyIds = new Set((doc.featureStrategies ?? []).map((s) => s.id).filter((id): id is string => id !== undefined && UUID.test(id)).map((id) => id.toLowerCase()))
  return { names: [...names].sort(), strategyIds: [...strategyIds].sort(), allFeatureTags: options.drop && doc.featureTags !== undefined }
}

/** `list` as rows of `columns` (SQL column definitions) to select from, one JSON parameter whatever its length. */
const rows = (list: unknown[], columns: string) => sql`jsonb_to_recordset(${JSON.stringify(list)}::jsonb) as x (${sql.raw(columns)})`

/**
 * The import's writes, each made only where the state still reads as it was decided from (`held`). The parts of one
 * statement run in no set order and see one snapshot, so no two touch the same row: the plan's lists are disjoint
 * (what is written is neither dropped nor moved on besides), and deletions the foreign keys would also make
 * (a dropped segment's uses) are made explicitly, so that no check at the statement's end finds them still there.
 */
function writesSql(w: Writes, caller: Caller): SQL[] {
  const held = sql.raw('exists (select from w0)')
  const at = sql`${caller.now.toISOString()}::timestamptz`
  const { createdBy, createdByUserId } = caller.actor
  const parts: SQL[] = []
  const when = (list: unknown[], part: () => SQL) => {
    if (list.length > 0) parts.push(part())
  }
  const names = (list: string[]) => sql`${sql.param(list)}::text[]`

  when(w.environments, () => sql`insert into ${environments} (name, type, sort_order, enabled, created_at)
    select x.name, x.type, x."sortOrder", x.enabled, ${at} from ${rows(w.environments, 'name text, type text, "sortOrder" integer, enabled boolean')} where ${held}
    on conflict (name) do update set type = excluded.type, sort_order = excluded.sort_order, enabled = excluded.enabled`)
  // Their projects' settings, flag configuration, change requests and metrics go with them (foreign keys).
  when(w.environmentsDropped, () => sql`delete from ${environments} where name = any(${names(w.environmentsDropped)}) and ${held}`)

  when(w.definitions, () => sql`insert into ${strategyDefinitions} (name, title, display_name, description, parameters, deprecated, sort_order, created_at)
    select x.name, x.title, x."displayName", x.description, x.parameters, x.deprecated, x."sortOrder", ${at}
    from ${rows(w.definitions, 'name text, title text, "displayName" text, description text, parameters jsonb, deprecated boolean, "sortOrder" integer')} where ${held}
    on conflict (name) do update set title = excluded.title, display_name = excluded.display_name, description = excluded.description, parameters = excluded.parameters,
      deprecated = excluded.deprecated, sort_order = excluded.sort_order
    where not ${strategyDefinitions.builtIn}`)
  when(w.definitionsDropped, () => sql`delete from ${strategyDefinitions} where name = any(${names(w.definitionsDropped)}) and not built_in and ${held}`)

  when(w.contextFields, () => sql`insert into ${contextFields} (name, description, stickiness, sort_order, legal_values, created_at, project)
    select x.name, x.description, x.stickiness, x."sortOrder", x."legalValues", ${at}, x.project
    from ${rows(w.contextFields, 'name text, description text, stickiness boolean, "sortOrder" integer, "legalValues" jsonb, project text')} where ${held}
    on conflict (name) do update set description = excluded.description, stickiness = excluded.stickiness, sort_order = excluded.sort_order, legal_values = excluded.legal_values, project = excluded.project`)
  when(w.contextFieldsDropped, () => sql`delete from ${contextFields} where name = any(${names(w.contextFieldsDropped)}) and ${held}`)

  when(w.tagTypes, () => sql`insert into ${tagTypes} (name, description, icon, color, created_at)
    select x.name, x.description, x.icon, x.color, ${at} from ${rows(w.tagTypes, 'name text, description text, icon text, color text')} where ${held}
    on conflict (name) do update set description = excluded.description, icon = excluded.icon, color = excluded.color`)
  // Their tags and flag tags go with them (foreign keys), recorded by drop-tag-types.
  when(w.tagTypesDropped, () => sql`delete from ${tagTypes} where name = any(${names(w.tagTypesDropped)}) and ${held}`)
  when(w.tags, () => sql`insert into ${tags} (type, value, created_at) select x.type, x.value, ${at} from ${rows(w.tags, 'type text, value text')} where ${held} on conflict do nothing`)
  when(w.tagsDropped, () => sql`delete from ${tags} where (type, value) in (select x.type, x.value from ${rows(w.tagsDropped, 'type text, value text')}) and ${held}`)

  when(w.projects, () => sql`insert into ${projects} (id, name, description, mode, default_stickiness, feature_limit, feature_naming_pattern, feature_naming_example, feature_naming_description, created_at)
    select x.id, x.name, x.description, x.mode, x."defaultStickiness", x."featureLimit", x."featureNamingPattern", x."featureNamingExample", x."featureNamingDescription", x."createdAt"
    from ${rows(w.projects, 'id text, name text, description text, mode text, "defaultStickiness" text, "featureLimit" integer, "featureNamingPattern" text, "featureNamingExample" text, "featureNamingDescription" text, "createdAt" timestamptz')}
    where ${held}
    on conflict (id) do update set name = excluded.name, description = excluded.description, mode = excluded.mode, default_stickiness = excluded.default_stickiness,
      feature_limit = excluded.feature_limit, feature_naming_pattern = excluded.feature_naming_pattern, feature_naming_example = excluded.feature_naming_example,
      feature_naming_description = excluded.feature_naming_description, updated_at = ${at}, archived_at = null`)
  // Their environments, members, favorites, segments, context fields and closed change requests go with them (foreign keys).
  when(w.projectsDropped, () => sql`delete from ${projects} where id = any(${names(w.projectsDropped)}) and ${held}`)
  when(w.projectEnvironmentsRemoved, () => sql`delete from ${projectEnvironments}
    where (project_id, environment_name) in (select x.project, x.name from ${rows(w.projectEnvironmentsRemoved, 'project text, name text')}) and ${held}`)
  when(w.projectEnvironments, () => sql`insert into ${projectEnvironments} (project_id, environment_name, change_requests_enabled, required_approvals, default_strategy)
    select x.project, x.name, x."changeRequestsEnabled", x."requiredApprovals", x."defaultStrategy"
    from ${rows(w.projectEnvironments, 'project text, name text, "changeRequestsEnabled" boolean, "requiredApprovals" integer, "defaultStrategy" jsonb')} where ${held}
    on conflict (project_id, environment_name) do update set change_requests_enabled = excluded.change_requests_enabled, required_approvals = excluded.required_approvals,
      default_strategy = excluded.default_strategy`)

  when(w.segments, () => sql`insert into ${segments} (id, name, description, project, constraints, created_at, created_by)
    select x.id, x.name, x.description, x.project, x.constraints, x."createdAt", x."createdBy"
    from ${rows(w.segments, 'id integer, name text, description text, project text, constraints jsonb, "createdAt" timestamptz, "createdBy" text')} where ${held}
    on conflict (id) do update set name = excluded.name, description = excluded.description, project = excluded.project, constraints = excluded.constraints`)
  when(w.segmentsDropped, () => sql`delete from ${featureStrategySegments} where segment_id = any(${sql.param(w.segmentsDropped)}::int[]) and ${held}`)
  when(w.segmentsDropped, () => sql`delete from ${segments} where id = any(${sql.param(w.segmentsDropped)}::int[]) and ${held}`)

  // Their configuration, tags, dependencies, lifecycle, favorites and metrics go with them; their events stay.
  when(w.flagsDropped, () => sql`delete from ${features} where name = any(${names(w.flagsDropped)}) and ${held}`)
  when(w.flags, () => sql`insert into ${features} (name, project, type, description, stale, impression_data, created_at, created_by, created_by_user_id)
    select x.name, x.project, x.type, x.description, x.stale, x."impressionData", x."createdAt", ${createdBy}::text, ${createdByUserId}::integer
    from ${rows(w.flags, 'name text, project text, type text, description text, stale boolean, "impressionData" boolean, "createdAt" timestamptz')} where ${held}
    on conflict (name) do update set project = excluded.project, type = excluded.type, description = excluded.description, stale = excluded.stale,
      impression_data = excluded.impression_data, archived_at = null, version = ${features.version} + 1`)
  when(w.flagsArchived, () => sql`insert into ${features} (name, project, type, description, stale, impression_data, created_at, created_by, created_by_user_id, archived_at)
    select x.name, x.project, x.type, x.description, x.stale, x."impressionData", x."createdAt", ${createdBy}::text, ${createdByUserId}::integer, x."archivedAt"
    from ${rows(w.flagsArchived, 'name text, project text, type text, description text, stale boolean, "impressionData" boolean, "createdAt" timestamptz, "archivedAt" timestamptz')}
    where ${held} on conflict (name) do nothing`)
  when(w.flagsArchived, () => sql`insert into ${featureLifecycles} (feature_name, stage, entered_stage_at)
    select x.name, 'archived', x."archivedAt" from ${rows(w.flagsArchived, 'name text, "archivedAt" timestamptz')} where ${held} on conflict do nothing`)
  const created = w.flags.filter((f) => !f.known)
  when(created, () => sql`insert into ${featureLifecycles} (feature_name, stage, entered_stage_at) select x.name, 'initial', ${at} from ${rows(created, 'name text')} where ${held} on conflict do nothing`)
  when(w.flagsRevived, () => sql`delete from ${featureLifecycles} where feature_name = any(${names(w.flagsRevived)}) and stage = 'archived' and ${held}`)
  when(w.flagEnvironmentsRemoved, () => sql`delete from ${featureEnvironments}
    where (feature_name, environment) in (select x.feature, x.environment from ${rows(w.flagEnvironmentsRemoved, 'feature text, environment text')}) and ${held}`)
  when(w.flagEnvironmentsRemoved, () => sql`delete from ${featureStrategies}
    where (feature_name, environment) in (select x.feature, x.environment from ${rows(w.flagEnvironmentsRemoved, 'feature text, environment text')}) and ${held}`)
  when(w.flagEnvironments, () => sql`insert into ${featureEnvironments} (feature_name, environment, enabled, variants)
    select x.feature, x.environment, x.enabled, x.variants from ${rows(w.flagEnvironments, 'feature text, environment text, enabled boolean, variants jsonb')} where ${held}
    on conflict (feature_name, environment) do update set enabled = excluded.enabled, variants = excluded.variants`)
  when(w.flagEnvironmentsAdded, () => sql`insert into ${featureEnvironments} (feature_name, environment)
    select x.feature, x.environment from ${rows(w.flagEnvironmentsAdded, 'feature text, environment text')} where ${held} on conflict do nothing`)
  when(w.strategiesRemoved, () => sql`delete from ${featureStrategies} where id = any(${sql.param(w.strategiesRemoved)}::uuid[]) and ${held}`)
  when(w.strategies, () => sql`insert into ${featureStrategies} (id, feature_name, environment, strategy_name, title, disabled, sort_order, parameters, constraints, variants, created_at)
    select x.id, x.feature, x.environment, x.name, x.title, x.disabled, x."sortOrder", x.parameters, x.constraints, x.variants, x."createdAt"
    from ${rows(w.strategies, 'id uuid, feature text, environment text, name text, title text, disabled boolean, "sortOrder" integer, parameters jsonb, constraints jsonb, variants jsonb, "createdAt" timestamptz')}
    where ${held}
    on conflict (id) do update set feature_name = excluded.feature_name, environment = excluded.environment, strategy_name = excluded.strategy_name, title = excluded.title,
      disabled = excluded.disabled, sort_order = excluded.sort_order, parameters = excluded.parameters, constraints = excluded.constraints, variants = excluded.variants,
      created_at = excluded.created_at`)
  const strategyIds = w.strategies.map((s) => s.id)
  when(strategyIds, () => sql`delete from ${featureStrategySegments} where strategy_id = any(${sql.param(strategyIds)}::uuid[]) and ${held}
    and (strategy_id, segment_id) not in (select x.strategy, x.segment from ${rows(w.strategySegments, 'strategy uuid, segment integer')})`)
  when(w.strategySegments, () => sql`insert into ${featureStrategySegments} (strategy_id, segment_id)
    select x.strategy, x.segment from ${rows(w.strategySegments, 'strategy uuid, segment integer')} where ${held} on conflict do nothing`)

  const written = w.flags.map((f) => f.name)
  when(written, () => sql`delete from ${featureDependencies} where child = any(${names(written)}) and ${held}
    and (child, parent) not in (select x.child, x.parent from ${rows(w.dependencies, 'child text, parent text')})`)
  // A written flag's links by slot: the slots kept are overwritten, the others deleted (the parts run in no set order).
  when(written, () => sql`delete from ${featureLinks} where feature_name = any(${names(written)}) and ${held}
    and (feature_name, slot) not in (select x.feature, x.slot from ${rows(w.links, 'feature text, slot smallint')})`)
  when(w.links, () => sql`insert into ${featureLinks} (id, feature_name, slot, url, title, created_at)
    select gen_random_uuid()::text, x.feature, x.slot, x.url, x.title, ${at} + x.slot * interval '1 millisecond' from ${rows(w.links, 'feature text, slot smallint, url text, title text')} where ${held}
    on conflict (feature_name, slot) do update set url = excluded.url, title = excluded.title, created_at = excluded.created_at`)
  when(w.dependencies, () => sql`insert into ${featureDependencies} (child, parent, enabled, variants)
    select x.child, x.parent, x.enabled, x.variants from ${rows(w.dependencies, 'child text, parent text, enabled boolean, variants jsonb')} where ${held}
    on conflict (child, parent) do update set enabled = excluded.enabled, variants = excluded.variants`)
  when(w.featureTagsRemoved, () => sql`delete from ${featureTags}
    where (feature_name, tag_type, tag_value) in (select x.feature, x.type, x.value from ${rows(w.featureTagsRemoved, 'feature text, type text, value text')}) and ${held}`)
  when(w.featureTags, () => sql`insert into ${featureTags} (feature_name, tag_type, tag_value, created_at)
    select x.feature, x.type, x.value, ${at} from ${rows(w.featureTags, 'feature text, type text, value text')} where ${held} on conflict do nothing`)
  when(w.versions, () => sql`update ${features} set version = version + 1 where name = any(${names(w.versions)}) and ${held}`)
  return parts
}

/** Holds off every change to the registries an import reads, until it commits (other writers of them check what they read against it). */
const registryLocks = [
  (q: Db) => q.execute(sql`select name from ${environments} order by name for no key update`),
  (q: Db) => q.execute(sql`select id from ${projects} order by id for no key update`),
  (q: Db) => q.execute(sql`select name from ${strategyDefinitions} order by name for no key update`),
  (q: Db) => q.execute(sql`select name from ${contextFields} order by name for no key update`),
  (q: Db) => q.execute(sql`select name from ${tagTypes} order by name for no key update`),
  (q: Db) => q.execute(sql`select id from ${segments} order by id for no key update`),
]

/**
 * POST /api/admin/state/import: one read of what the import is decided from (the registries, every flag with its
 * version, the flags the document names in full), new segments' ids taken when it creates some, the decision
 * (src/state/plan.ts: every rule, with one 400 naming every problem; `check` is handed the environments requiring
 * change requests whose flags it changes), then one batch: the registries' and the flags' locks, the locks of new
 * tags and segment names, and one statement writing every change and every event only if the read gives the same
 * text again (read again otherwise). Nothing is written when the document changes nothing.
 */
/** Writes another feature makes in the import's statement, only where the import's gate holds (`guardPassed`), with their events. */
export interface AlongsideImport {
  events: NewEvent[]
  writes: SQL[]
}

export async function importState(db: Db, caller: Caller, doc: StateImport, options: StateImportQuery, check: (protectedIn: { project: string; environment: string }[]) => void, alongside?: AlongsideImport): Promise<StateImportResult> {
  const { actor, now } = caller
  const readOptions = readOptionsOf(doc, options)
  return untilUnchanged('The instance', async () => {
    const [read] = await queryRows<{ snapshot: string }>(db, sql`select row_to_json(s)::text as snapshot from (${stateSql(readOptions)}) s`)
    const snapshot = read!.snapshot
    const state = JSON.parse(snapshot) as StoredState
    // The read, the plan and the write are each bounded; between them the process answers others.
    await yieldToEventLoop()
    const known = new Set(state.segments.map((s) => s.name))
    const newSegments = new Set((doc.segments ?? []).map((s) => s.name).filter((n) => !known.has(n))).size
    const allocated =
      newSegments === 0
        ? []
        : (await queryRows<{ id: number }>(db, sql`select nextval(pg_get_serial_sequence('segments', 'id'))::int as id from generate_series(1, ${newSegments})`)).map((r) => Number(r.id))
    const plan = planImport(doc, options, state, actor, now, allocated)
    check(plan.protectedIn)
    if (alongside) plan.events.push(...alongside.events)
    if (plan.events.length === 0) return { ...plan.result, events: 0 }
    await yieldToEventLoop()
    const gate = sql`select 1 from (${stateSql(readOptions)}) s where row_to_json(s)::text = ${snapshot}`
    const answers = await batch(db, [
      ...registryLocks,
      (q) => q.execute(sql`select name from ${features} where name = any(${sql.param(plan.locks.flags)}::text[]) order by name for update`),
      (q) => tagCreationLocks(q, plan.locks.tags),
      (q) => segmentNameLocks(q, plan.locks.segmentNames),
      (q) => recordEvents(q, actor, now, plan.events, { alongside: [gate], guarded: true, unguarded: [...writesSql(plan.writes, caller), ...(alongside?.writes ?? [])] }),
    ])
    const written = answers[answers.length - 1] as number
    return written > 0 ? { ...plan.result, events: written } : undefined
  })
}
