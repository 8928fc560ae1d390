import { asc, eq, sql } from 'drizzle-orm'
import { contextFields, features, featureStrategies, projectEnvironments, segments } from '../../schema/index.js'
import { queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { conflict, nameExists, notFound } from '../core/errors.js'
import { eventsStatement } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import type { ContextField, CreateContextField, LegalValue, UpdateContextField } from './schemas.js'

type Row = typeof contextFields.$inferSelect

/** A legal value as answered and stored: `description` only when it has one. */
const legalValueOf = (v: LegalValue): LegalValue => (v.description === undefined || v.description === null ? { value: v.value } : { value: v.value, description: v.description })

/** A field as answered and as its events carry it. */
function fieldOf(row: Row): ContextField {
  return {
    name: row.name,
    description: row.description,
    stickiness: row.stickiness,
    sortOrder: row.sortOrder,
    createdAt: row.createdAt.toISOString(),
    legalValues: (row.legalValues as LegalValue[]).map(legalValueOf),
  }
}

/** A strategy constraint on the field (of the strategy row `fs`). */
const constrains = (name: unknown) => sql`exists (select from jsonb_array_elements(fs.constraints) elem where elem->>'contextName' = ${name}::text)`

/**
 * GET /api/admin/context: every field by sortOrder, then name, with how many live flags (and their projects) have a
 * strategy constraining it: one grouped derived table, whatever the number of fields.
 */
export async function listContextFields(db: Db): Promise<ContextField[]> {
  const [fields, rows] = await together(db, [
    (q) => q.select().from(contextFields).orderBy(asc(contextFields.sortOrder), asc(contextFields.name)),
    (q) =>
      queryRows<{ name: string; used_in_features: number; used_in_projects: number }>(
        q,
        sql`select c.name, count(distinct f.name)::int as used_in_features, count(distinct f.project)::int as used_in_projects
          from ${featureStrategies} fs
          join ${features} f on f.name = fs.feature_name and f.archived_at is null
          cross join lateral (select distinct elem->>'contextName' as name from jsonb_array_elements(fs.constraints) elem) c
          group by c.name`,
      ),
  ])
  const usage = new Map(rows.map((r) => [r.name, r]))
  return fields.map((row) => ({ ...fieldOf(row), usedInFeatures: usage.get(row.name)?.used_in_features ?? 0, usedInProjects: usage.get(row.name)?.used_in_projects ?? 0 }))
}

const noSuchField = (name: string) => notFound(`Could not find context field with name ${name}`)

/** GET /api/admin/context/{contextField}. */
export async function getContextField(db: Db, name: string): Promise<ContextField> {
  const [row] = await db.select().from(contextFields).where(eq(contextFields.name, name))
  if (!row) throw noSuchField(name)
  return fieldOf(row)
}

/**
 * GET /api/admin/context/{contextField}/strategies: the strategies of live flags with a constraint on the field (as
 * Unleash answers: none for an unknown field), without those of private projects the caller may not read.
 */
export async function strategiesUsing(db: Db, name: string, hidden: readonly string[]) {
  const visible = hidden.length === 0 ? sql`true` : sql`f.project <> all(${sql.param([...hidden])}::text[])`
  const rows = await queryRows<{ id: string; featureName: string; projectId: string; environment: string; strategyName: string }>(
    db,
    sql`select fs.id::text as id, fs.feature_name as "featureName", f.project as "projectId", fs.environment, fs.strategy_name as "strategyName"
      from ${featureStrategies} fs join ${features} f on f.name = fs.feature_name
      where f.archived_at is null and ${constrains(name)} and ${visible}
      order by fs.feature_name, fs.environment, fs.sort_order, fs.id`,
  )
  return { strategies: rows }
}

const taken = (name: string) => nameExists(`A context field named ${name} already exists`)

/** POST /api/admin/context/validate: the name is valid (the route's schema) and free (409 NameExistsError otherwise). */
export async function validateContextFieldName(db: Db, name: string): Promise<void> {
  const [row] = await db.select({ name: contextFields.name }).from(contextFields).where(eq(contextFields.name, name))
  if (row) throw taken(name)
}

const p = (name: string) => sql.placeholder(name)

/** Creating a field while its name is free: the insert decides, so one statement is the whole write. */
const createStatement = eventsStatement('flagpost_create_context_field', {
  alongside: [
    sql`insert into ${contextFields} (name, description, stickiness, sort_order, legal_values, created_at)
      values (${p('name')}::text, ${p('description')}::text, ${p('stickiness')}::boolean, ${p('sortOrder')}::integer, ${p('legalValues')}::jsonb, ${p('createdAt')}::timestamptz)
      on conflict (name) do nothing
      returning name`,
  ],
  guarded: true,
})

/** POST /api/admin/context: one statement that creates the field and its `context-field-created` only while its name is free. */
export async function createContextField(db: Db, caller: Author, input: CreateContextField): Promise<ContextField> {
  const { actor, now } = caller
  const field: ContextField = {
    name: input.name,
    description: input.description ?? null,
    stickiness: input.stickiness ?? false,
    // Unleash stores an absent sort order as 0.
    sortOrder: input.sortOrder ?? 0,
    createdAt: now.toISOString(),
    legalValues: (input.legalValues ?? []).map(legalValueOf),
  }
  const { written } = await createStatement(db, actor, now, [{ type: 'context-field-created', data: field }], {
    name: field.name,
    description: field.description,
    stickiness: field.stickiness,
    sortOrder: field.sortOrder,
    legalValues: JSON.stringify(field.legalValues),
  })
  if (written === 0) throw taken(input.name)
  return field
}

/** Writing a field read as `snapshot`, only while it is still exactly so. */
const updateStatement = eventsStatement('flagpost_update_context_field', {
  alongside: [
    sql`update ${contextFields} set description = ${p('description')}::text, stickiness = ${p('stickiness')}::boolean, sort_order = ${p('sortOrder')}::integer, legal_values = ${p('legalValues')}::jsonb
      where name = ${p('name')}::text and ${rowText(contextFields)} = ${p('snapshot')}::text
      returning name`,
  ],
  guarded: true,
})

/**
 * A change of a field computed from a read of it (404 when there is none), written with `context-field-updated` in
 * one statement made only while the field is as read; read again otherwise. `change` answers the field after it,
 * or undefined when nothing changes (then nothing is written: no event without a change).
 */
async function changeField(db: Db, caller: Author, name: string, change: (before: ContextField) => ContextField | undefined): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Context field ${name}`, async () => {
    const [found] = await db.select({ row: contextFields, snapshot: rowText(contextFields) }).from(contextFields).where(eq(contextFields.name, name))
    if (!found) throw noSuchField(name)
    const before = fieldOf(found.row)
    const after = change(before)
    if (after === undefined || JSON.stringify(after) === JSON.stringify(before)) return true
    const event: NewEvent = { type: 'context-field-updated', data: after, preData: before }
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
 * PUT /api/admin/context/{contextField}: replaces stickiness (false when absent) and legal values (none when absent),
 * as Unleash does; description and sortOrder are kept when absent.
 */
export async function updateContextField(db: Db, caller: Author, name: string, input: UpdateContextField): Promise<void> {
  await changeField(db, caller, name, (before) => ({
    ...before,
    description: input.description === undefined ? before.description : input.description,
    stickiness: input.stickiness ?? false,
    sortOrder: input.sortOrder ?? before.sortOrder,
    legalValues: (input.legalValues ?? []).map(legalValueOf),
  }))
}

/** POST /api/admin/context/{contextField}/legal-values: adds a legal value, or replaces the description of the one with its value. */
export async function putLegalValue(db: Db, caller: Author, name: string, legal: LegalValue): Promise<void> {
  const value = legalValueOf(legal)
  await changeField(db, caller, name, (before) => {
    const at = before.legalValues.findIndex((v) => v.value === value.value)
    const legalValues = at === -1 ? [...before.legalValues, value] : before.legalValues.map((v, i) => (i === at ? value : v))
    return { ...before, legalValues }
  })
}

/**
 * DELETE /api/admin/context/{contextField}/legal-values/{legalValue}: removes a legal value. As in Unleash, constraints
 * using it are neither checked nor changed (they keep working; a later write of them must drop it). An unknown value
 * changes nothing.
 */
export async function deleteLegalValue(db: Db, caller: Author, name: string, value: string): Promise<void> {
  await changeField(db, caller, name, (before) => {
    const legalValues = before.legalValues.filter((v) => v.value !== value)
    return legalValues.length === before.legalValues.length ? undefined : { ...before, legalValues }
  })
}

/** The live flags with a strategy constraining the field (placeholder or value `name`). */
const flagsUsing = (name: unknown) => sql`select distinct f.name from ${featureStrategies} fs join ${features} f on f.name = fs.feature_name and f.archived_at is null where ${constrains(name)}`
/** The segments with a constraint on the field. */
const segmentsUsing = (name: unknown) => sql`select s.name from ${segments} s where exists (select from jsonb_array_elements(s.constraints) elem where elem->>'contextName' = ${name}::text)`
/** The project environments whose default strategy has a constraint on the field. */
const defaultStrategiesUsing = (name: unknown) =>
  sql`select pe.project_id || '/' || pe.environment_name as name from ${projectEnvironments} pe where exists (select from jsonb_array_elements(pe.default_strategy->'constraints') elem where elem->>'contextName' = ${name}::text)`

/** Deleting a field read as `snapshot` that nothing uses. */
const deleteStatement = eventsStatement('flagpost_delete_context_field', {
  alongside: [
    sql`delete from ${contextFields}
      where name = ${p('name')}::text and ${rowText(contextFields)} = ${p('snapshot')}::text
        and not exists (${flagsUsing(p('name'))}) and not exists (${segmentsUsing(p('name'))}) and not exists (${defaultStrategiesUsing(p('name'))})
      returning name`,
  ],
  guarded: true,
})

const listed = (what: string, names: string[]) => (names.length === 0 ? [] : [`${what} ${names.slice(0, 20).join(', ')}${names.length > 20 ? ` and ${names.length - 20} more` : ''}`])

/**
 * DELETE /api/admin/context/{contextField}: deletes a field no constraint uses. One in use by a strategy of a live flag
 * (as in Unleash: archived flags do not count), by a segment or by a project's default strategy is a 409 ConflictError
 * naming them. Built-in fields may be deleted too, as in Unleash. A read, then one statement that deletes only while
 * the field is as read and still unused.
 */
export async function deleteContextField(db: Db, caller: Author, name: string): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Context field ${name}`, async () => {
    const [[found], flags, usedBySegments, defaults] = await together(db, [
      (q) => q.select({ row: contextFields, snapshot: rowText(contextFields) }).from(contextFields).where(eq(contextFields.name, name)),
      (q) => queryRows<{ name: string }>(q, sql`${flagsUsing(name)} order by 1`),
      (q) => queryRows<{ name: string }>(q, sql`${segmentsUsing(name)} order by 1`),
      (q) => queryRows<{ name: string }>(q, sql`${defaultStrategiesUsing(name)} order by 1`),
    ])
    if (!found) throw noSuchField(name)
    const uses = [
      ...listed('the strategies of flags', flags.map((f) => f.name)),
      ...listed('segments', usedBySegments.map((s) => s.name)),
      ...listed('the default strategies of (project/environment)', defaults.map((d) => d.name)),
    ]
    if (uses.length > 0) throw conflict(`Context field ${name} is in use by ${uses.join('; and by ')}: remove those constraints first`)
    const event: NewEvent = { type: 'context-field-deleted', data: null, preData: fieldOf(found.row) }
    const { written } = await deleteStatement(db, actor, now, [event], { name, snapshot: found.snapshot })
    return written === 0 ? undefined : true
  })
}
