import { sql, type SQL } from 'drizzle-orm'
import { contextFields, features, featureStrategies, projectEnvironments, projects, segments } from '../../schema/index.js'
import { queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { conflict, nameExists, notFound, validationError } from '../core/errors.js'
import { eventsStatement } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import type { ContextField, CreateContextField, LegalValue, UpdateContextField } from './schemas.js'

/*
 * A context field is global (`project` null: /api/admin/context) or a project's own (/api/admin/projects/{projectId}/context).
 * Names are unique across both, as in Unleash. A project's field exists for its project alone: only constraints of that
 * project's flags, default strategies and segments may use it (src/context-fields/legal-values.ts), only its routes
 * change it, and it goes with the project. The routes under /api/admin/context write global fields only (Unleash's let
 * them write a project's too); they read a project's field where its project is visible to the caller.
 */

type Row = typeof contextFields.$inferSelect

/** Which fields a write acts on: the global ones (null) or one project's. */
export type FieldScope = string | null

/** A legal value as answered and stored: `description` only when it has one. */
const legalValueOf = (v: LegalValue): LegalValue => (v.description === undefined || v.description === null ? { value: v.value } : { value: v.value, description: v.description })

/** A field as answered and as its events carry it: `project` only for a project's own field, as Unleash answers. */
function fieldOf(row: Row): ContextField {
  return {
    name: row.name,
    description: row.description,
    stickiness: row.stickiness,
    sortOrder: row.sortOrder,
    createdAt: row.createdAt.toISOString(),
    legalValues: (row.legalValues as LegalValue[]).map(legalValueOf),
    ...(row.project === null ? {} : { project: row.project }),
  }
}

/** A row as `to_jsonb(cf)` answers it (one shape on every driver). */
function rowOf(raw: Record<string, unknown>): Row {
  return {
    name: raw.name as string,
    description: raw.description as string | null,
    stickiness: raw.stickiness as boolean,
    sortOrder: raw.sort_order as number,
    legalValues: raw.legal_values,
    createdAt: new Date(raw.created_at as string),
    project: raw.project as string | null,
  }
}

/** A strategy constraint on the field (of the strategy row `fs`). */
const constrains = (name: unknown) => sql`exists (select from jsonb_array_elements(fs.constraints) elem where elem->>'contextName' = ${name}::text)`
/** Constraints (SQL of a JSON list) on the field. */
const listConstrains = (list: SQL, name: unknown) => sql`exists (select from jsonb_array_elements(${list}) elem where elem->>'contextName' = ${name}::text)`

/** SQL keeping the fields (`cf`) the caller may read: global ones, and those of projects not hidden from them. */
const visibleField = (hidden: readonly string[]) => (hidden.length === 0 ? sql`true` : sql`(cf.project is null or cf.project <> all(${sql.param([...hidden])}::text[]))`)

const noSuchProject = (project: string) => notFound(`Could not find project ${project}`)

/** Which fields a list answers: the global ones, a project's, and what `include` adds (Unleash's `project` and `root`). */
export interface ListScope {
  project: FieldScope
  include?: string | undefined
  /** The private projects the caller may not read. */
  hidden: readonly string[]
}

/**
 * GET /api/admin/context and /api/admin/projects/{projectId}/context: the fields of the scope by sortOrder, then name,
 * with how many live flags (and their projects) have a strategy constraining each (a project's field counts its
 * project's flags only): one grouped derived table, whatever the number of fields. 404 for an unknown project.
 */
export async function listContextFields(db: Db, scope: ListScope): Promise<ContextField[]> {
  const include = scope.include?.toLowerCase()
  const which =
    scope.project === null
      ? include === 'project'
        ? visibleField(scope.hidden)
        : sql`cf.project is null`
      : include === 'root'
        ? sql`(cf.project is null or cf.project = ${scope.project})`
        : sql`cf.project = ${scope.project}`
  const [fields, rows, found] = await together(db, [
    (q) => queryRows<{ row: Record<string, unknown> }>(q, sql`select to_jsonb(cf) as row from ${contextFields} cf where ${which} order by cf.sort_order, cf.name`),
    (q) =>
      queryRows<{ name: string; used_in_features: number; used_in_projects: number }>(
        q,
        sql`select c.name, count(distinct f.name)::int as used_in_features, count(distinct f.project)::int as used_in_projects
          from ${featureStrategies} fs
          join ${features} f on f.name = fs.feature_name and f.archived_at is null
          cross join lateral (select distinct elem->>'contextName' as name from jsonb_array_elements(fs.constraints) elem) c
          join ${contextFields} cf on cf.name = c.name and (cf.project is null or cf.project = f.project) and ${which}
          group by c.name`,
      ),
    (q) => (scope.project === null ? Promise.resolve([{ id: '' }]) : q.select({ id: projects.id }).from(projects).where(sql`${projects.id} = ${scope.project}`)),
  ])
  if (found.length === 0) throw noSuchProject(scope.project!)
  const usage = new Map(rows.map((r) => [r.name, r]))
  return fields.map(({ row }) => {
    const field = fieldOf(rowOf(row))
    return { ...field, usedInFeatures: usage.get(field.name)?.used_in_features ?? 0, usedInProjects: usage.get(field.name)?.used_in_projects ?? 0 }
  })
}

const noSuchField = (name: string, project: FieldScope) =>
  notFound(project === null ? `Could not find context field with name ${name}` : `Could not find context field ${name} in project ${project}`)

/**
 * GET /api/admin/context/{contextField} (`project` null: a global field, or a project's where its project is not
 * hidden from the caller) and GET /api/admin/projects/{projectId}/context/{contextField} (that project's field).
 */
export async function getContextField(db: Db, name: string, project: FieldScope, hidden: readonly string[] = []): Promise<ContextField> {
  const which = project === null ? visibleField(hidden) : sql`cf.project = ${project}`
  const [found] = await queryRows<{ row: Record<string, unknown> }>(db, sql`select to_jsonb(cf) as row from ${contextFields} cf where cf.name = ${name} and ${which}`)
  if (!found) throw noSuchField(name, project)
  return fieldOf(rowOf(found.row))
}

/**
 * GET …/context/{contextField}/strategies: the strategies of live flags with a constraint on the field (as Unleash
 * answers: none for an unknown field), without those of private projects the caller may not read; under a project,
 * its flags' only.
 */
export async function strategiesUsing(db: Db, name: string, hidden: readonly string[], project: FieldScope = null) {
  const visible = hidden.length === 0 ? sql`true` : sql`f.project <> all(${sql.param([...hidden])}::text[])`
  const inProject = project === null ? sql`true` : sql`f.project = ${project}`
  const rows = await queryRows<{ id: string; featureName: string; projectId: string; environment: string; strategyName: string }>(
    db,
    sql`select fs.id::text as id, fs.feature_name as "featureName", f.project as "projectId", fs.environment, fs.strategy_name as "strategyName"
      from ${featureStrategies} fs join ${features} f on f.name = fs.feature_name
      where f.archived_at is null and ${constrains(name)} and ${visible} and ${inProject}
      order by fs.feature_name, fs.environment, fs.sort_order, fs.id`,
  )
  return { strategies: rows }
}

const taken = (name: string) => nameExists(`A context field named ${name} already exists`)
const usedOutside = (name: string, project: string) =>
  nameExists(`The name ${name} is used by constraints outside project ${project} (of other projects' flags or default strategies, or of segments not of ${project}): a project's context field is its own, so choose another name`)

/**
 * SQL true while no constraint outside `project` (a placeholder or value; SQL null: none) names `name`: of another
 * project's flags (archived ones too: they may be revived) or default strategies, or of a segment not of the project.
 * A project's field must not take a name others use, or their constraints would name a field they may not use.
 */
const unusedOutside = (name: unknown, project: unknown) => sql`(${project}::text is null or (
  not exists (select from ${featureStrategies} fs join ${features} f on f.name = fs.feature_name where f.project <> ${project}::text and ${constrains(name)})
  and not exists (select from ${segments} s where s.project is distinct from ${project}::text and ${listConstrains(sql`s.constraints`, name)})
  and not exists (select from ${projectEnvironments} pe where pe.project_id <> ${project}::text and ${listConstrains(sql`coalesce(pe.default_strategy->'constraints', '[]'::jsonb)`, name)})))`

/** SQL true when `project` (a placeholder or value; SQL null: a global field) is null or a live project. */
const projectLive = (project: unknown) => sql`(${project}::text is null or exists (select from ${projects} pr where pr.id = ${project}::text and pr.archived_at is null))`

/**
 * POST …/context/validate: the name is valid (the route's schema) and free (409 NameExistsError otherwise); under a
 * project, also used by no constraint outside it (see unusedOutside).
 */
export async function validateContextFieldName(db: Db, name: string, project: FieldScope = null): Promise<void> {
  const [row] = await queryRows<{ taken: boolean; unused: boolean }>(
    db,
    sql`select exists (select from ${contextFields} where name = ${name}) as taken, ${unusedOutside(name, project)} as unused`,
  )
  if (row!.taken) throw taken(name)
  if (!row!.unused) throw usedOutside(name, project!)
}

const p = (name: string) => sql.placeholder(name)

/** Creating a field while its name is free (and, for a project's, its project live and the name unused outside it): the insert decides, so one statement is the whole write. */
const createStatement = eventsStatement<{ taken: boolean; live: boolean; unused: boolean }>('flagpost_create_context_field', {
  alongside: [
    sql`insert into ${contextFields} (name, description, stickiness, sort_order, legal_values, created_at, project)
      select ${p('name')}::text, ${p('description')}::text, ${p('stickiness')}::boolean, ${p('sortOrder')}::integer, ${p('legalValues')}::jsonb, ${p('createdAt')}::timestamptz, ${p('project')}::text
      where ${projectLive(p('project'))} and ${unusedOutside(p('name'), p('project'))}
      on conflict (name) do nothing
      returning name`,
  ],
  guarded: true,
  returning: sql`json_build_object('taken', exists (select from ${contextFields} where name = ${p('name')}::text), 'live', ${projectLive(p('project'))}, 'unused', ${unusedOutside(p('name'), p('project'))})`,
})

/** The `project` of a body must agree with the route's: absent or null for a global field, else the path's project. */
function checkBodyProject(given: string | null | undefined, project: FieldScope) {
  if (given === undefined || given === null || given === project) return
  const message =
    project === null
      ? `A project's context fields are written through /api/admin/projects/${given}/context: here, project must be absent or null`
      : `project must be absent, null or ${project} (the project of the path)`
  throw validationError(message, [{ path: 'body.project', message }])
}

/**
 * POST /api/admin/context and /api/admin/projects/{projectId}/context: one statement that creates the field and its
 * `context-field-created` only while its name is free (409), and for a project's field, while the project is live
 * (404: an archived project refuses writes) and no constraint outside it uses the name (409).
 */
export async function createContextField(db: Db, caller: Author, input: CreateContextField, project: FieldScope = null): Promise<ContextField> {
  const { actor, now } = caller
  checkBodyProject(input.project, project)
  const field: ContextField = {
    name: input.name,
    description: input.description ?? null,
    stickiness: input.stickiness ?? false,
    // Unleash stores an absent sort order as 0.
    sortOrder: input.sortOrder ?? 0,
    createdAt: now.toISOString(),
    legalValues: (input.legalValues ?? []).map(legalValueOf),
    ...(project === null ? {} : { project }),
  }
  const { written, returned } = await createStatement(db, actor, now, [{ type: 'context-field-created', project, data: field }], {
    name: field.name,
    description: field.description,
    stickiness: field.stickiness,
    sortOrder: field.sortOrder,
    legalValues: JSON.stringify(field.legalValues),
    project,
  })
  if (written === 0) {
    if (returned!.taken) throw taken(input.name)
    if (!returned!.live) throw noSuchProject(project!)
    throw usedOutside(input.name, project!)
  }
  return field
}

/** Writing a field read as `snapshot` (which pins its project), only while it is still exactly so and its project, if any, is live. */
const updateStatement = eventsStatement('flagpost_update_context_field', {
  alongside: [
    sql`update ${contextFields} set description = ${p('description')}::text, stickiness = ${p('stickiness')}::boolean, sort_order = ${p('sortOrder')}::integer, legal_values = ${p('legalValues')}::jsonb
      where name = ${p('name')}::text and ${rowText(contextFields)} = ${p('snapshot')}::text and ${projectLive(sql`${contextFields.project}`)}
      returning name`,
  ],
  guarded: true,
})

/** The field of the scope named, as read for a write (with its row's text, and whether its project is live); 404 when there is none or its project is archived. */
async function readForWrite(db: Db, name: string, project: FieldScope) {
  // `cf::text` is the row's text as rowText(contextFields) makes it in the write.
  const [found] = await queryRows<{ row: Record<string, unknown>; snapshot: string; live: boolean }>(
    db,
    sql`select to_jsonb(cf) as row, cf::text as snapshot, ${projectLive(sql`cf.project`)} as live
      from ${contextFields} cf where cf.name = ${name} and cf.project is not distinct from ${project}::text`,
  )
  if (!found) throw noSuchField(name, project)
  if (!found.live) throw noSuchProject(project!)
  return { row: rowOf(found.row), snapshot: found.snapshot }
}

/**
 * A change of a field of the scope computed from a read of it (404 when there is none, or its project is archived),
 * written with `context-field-updated` in one statement made only while the field is as read; read again otherwise.
 * `change` answers the field after it, or undefined when nothing changes (then nothing is written: no event without a
 * change).
 */
async function changeField(db: Db, caller: Author, name: string, project: FieldScope, change: (before: ContextField) => ContextField | undefined): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Context field ${name}`, async () => {
    const found = await readForWrite(db, name, project)
    const before = fieldOf(found.row)
    const after = change(before)
    if (after === undefined || JSON.stringify(after) === JSON.stringify(before)) return true
    const event: NewEvent = { type: 'context-field-updated', project, data: after, preData: before }
    const { written } = await updateStatement(db, actor, now, [event], {
      name,
      snapshot: found.snapshot,
      description: after.description,
      stickiness: after.stickiness,
      sortOrder: after.sortOrder,
      legalValues: JSON.stringify(after.legalValues),
    })
    return written === 0 ? undefined : true
  })
}

/**
 * PUT …/context/{contextField}: replaces stickiness (false when absent) and legal values (none when absent), as Unleash
 * does; description and sortOrder are kept when absent.
 */
export async function updateContextField(db: Db, caller: Author, name: string, input: UpdateContextField, project: FieldScope = null): Promise<void> {
  checkBodyProject(input.project, project)
  await changeField(db, caller, name, project, (before) => ({
    ...before,
    description: input.description === undefined ? before.description : input.description,
    stickiness: input.stickiness ?? false,
    sortOrder: input.sortOrder ?? before.sortOrder,
    legalValues: (input.legalValues ?? []).map(legalValueOf),
  }))
}

/** POST …/context/{contextField}/legal-values: adds a legal value, or replaces the description of the one with its value. */
export async function putLegalValue(db: Db, caller: Author, name: string, legal: LegalValue, project: FieldScope = null): Promise<void> {
  const value = legalValueOf(legal)
  await changeField(db, caller, name, project, (before) => {
    const at = before.legalValues.findIndex((v) => v.value === value.value)
    const legalValues = at === -1 ? [...before.legalValues, value] : before.legalValues.map((v, i) => (i === at ? value : v))
    return { ...before, legalValues }
  })
}

/**
 * DELETE …/context/{contextField}/legal-values/{legalValue}: removes a legal value. As in Unleash, constraints using it
 * are neither checked nor changed (they keep working; a later write of them must drop it). An unknown value changes
 * nothing.
 */
export async function deleteLegalValue(db: Db, caller: Author, name: string, value: string, project: FieldScope = null): Promise<void> {
  await changeField(db, caller, name, project, (before) => {
    const legalValues = before.legalValues.filter((v) => v.value !== value)
    return legalValues.length === before.legalValues.length ? undefined : { ...before, legalValues }
  })
}

/*
 * What uses a field (`name`) of `project` (null: a global field, used anywhere; else only what is of that project, the
 * only place its field may be used): placeholders or values.
 */
/** The live flags with a strategy constraining the field. */
const flagsUsing = (name: unknown, project: unknown) =>
  sql`select distinct f.name from ${featureStrategies} fs join ${features} f on f.name = fs.feature_name and f.archived_at is null
    where ${constrains(name)} and (${project}::text is null or f.project = ${project}::text)`
/** The segments with a constraint on the field. */
const segmentsUsing = (name: unknown, project: unknown) =>
  sql`select s.name from ${segments} s where ${listConstrains(sql`s.constraints`, name)} and (${project}::text is null or s.project = ${project}::text)`
/** The project environments whose default strategy has a constraint on the field. */
const defaultStrategiesUsing = (name: unknown, project: unknown) =>
  sql`select pe.project_id || '/' || pe.environment_name as name from ${projectEnvironments} pe
    where ${listConstrains(sql`coalesce(pe.default_strategy->'constraints', '[]'::jsonb)`, name)} and (${project}::text is null or pe.project_id = ${project}::text)`

/** Deleting a field read as `snapshot` that nothing uses, while its project, if any, is live. */
const deleteStatement = eventsStatement('flagpost_delete_context_field', {
  alongside: [
    sql`delete from ${contextFields}
      where name = ${p('name')}::text and ${rowText(contextFields)} = ${p('snapshot')}::text and ${projectLive(sql`${contextFields.project}`)}
        and not exists (${flagsUsing(p('name'), p('project'))}) and not exists (${segmentsUsing(p('name'), p('project'))}) and not exists (${defaultStrategiesUsing(p('name'), p('project'))})
      returning name`,
  ],
  guarded: true,
})

const listed = (what: string, names: string[]) => (names.length === 0 ? [] : [`${what} ${names.slice(0, 20).join(', ')}${names.length > 20 ? ` and ${names.length - 20} more` : ''}`])

/**
 * DELETE …/context/{contextField}: deletes a field no constraint uses. One in use by a strategy of a live flag (as in
 * Unleash: archived flags do not count), by a segment or by a project's default strategy is a 409 ConflictError naming
 * them. Built-in fields may be deleted too, as in Unleash. A read, then one statement that deletes only while the field
 * is as read and still unused.
 */
export async function deleteContextField(db: Db, caller: Author, name: string, project: FieldScope = null): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Context field ${name}`, async () => {
    const [found, flags, usedBySegments, defaults] = await together(db, [
      (q) => readForWrite(q, name, project),
      (q) => queryRows<{ name: string }>(q, sql`${flagsUsing(name, project)} order by 1`),
      (q) => queryRows<{ name: string }>(q, sql`${segmentsUsing(name, project)} order by 1`),
      (q) => queryRows<{ name: string }>(q, sql`${defaultStrategiesUsing(name, project)} order by 1`),
    ])
    const uses = [
      ...listed('the strategies of flags', flags.map((f) => f.name)),
      ...listed('segments', usedBySegments.map((s) => s.name)),
      ...listed('the default strategies of (project/environment)', defaults.map((d) => d.name)),
    ]
    if (uses.length > 0) throw conflict(`Context field ${name} is in use by ${uses.join('; and by ')}: remove those constraints first`)
    const event: NewEvent = { type: 'context-field-deleted', project, data: null, preData: fieldOf(found.row) }
    const { written } = await deleteStatement(db, actor, now, [event], { name, snapshot: found.snapshot, project })
    return written === 0 ? undefined : true
  })
}

/** A project's own fields as events carry them, with their rows' text: what deleting the project deletes with it. */
export async function projectFieldsForDeletion(db: Db, project: string) {
  const rows = await queryRows<{ row: Record<string, unknown>; snapshot: string }>(
    db,
    sql`select to_jsonb(cf) as row, cf::text as snapshot from ${contextFields} cf where cf.project = ${project} order by cf.name`,
  )
  return rows.map((r) => ({ field: fieldOf(rowOf(r.row)), snapshot: r.snapshot }))
}

/** SQL true while the project's own fields are, by name, those read (`snapshots`: their rows' text, a placeholder or value). */
export const projectFieldsAsRead = (project: unknown, snapshots: unknown) =>
  sql`(select coalesce(array_agg(cf::text order by cf.name), '{}') from ${contextFields} cf where cf.project = ${project}::text) = ${snapshots}::text[]`
