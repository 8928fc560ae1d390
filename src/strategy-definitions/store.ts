import { asc, eq, sql } from 'drizzle-orm'
import { features, featureStrategies, projectEnvironments, strategyDefinitions } from '../../schema/index.js'
import { queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
import { conflict, nameExists, notFound, validationError } from '../core/errors.js'
import { eventsStatement } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import type { ParameterDefinition } from './fit.js'
import type { CreateStrategyDefinition, StrategyDefinition, UpdateStrategyDefinition } from './schemas.js'

type Row = typeof strategyDefinitions.$inferSelect

/** A definition as answered and as its events carry it. */
function definitionOf(row: Row): StrategyDefinition {
  return {
    title: row.title,
    name: row.name,
    displayName: row.displayName,
    description: row.description,
    editable: !row.builtIn,
    deprecated: row.deprecated,
    // In one key order (jsonb keeps its own), so that a definition compares equal to itself.
    parameters: (row.parameters as ParameterDefinition[]).map((p) => ({ name: p.name, type: p.type, description: p.description, required: p.required })),
  }
}

/** The stored form of parameters: description and required filled in (as Unleash's UI reads them). */
const parametersOf = (input: CreateStrategyDefinition['parameters']): ParameterDefinition[] =>
  input.map((p) => ({ name: p.name, type: p.type, description: p.description ?? '', required: p.required ?? false }))

/** GET /api/admin/strategies: every definition, built-in ones first (by Unleash's sort order), then by name. */
export async function listStrategyDefinitions(db: Db) {
  const rows = await db.select().from(strategyDefinitions).orderBy(asc(strategyDefinitions.sortOrder), asc(strategyDefinitions.name))
  return { version: 1 as const, strategies: rows.map(definitionOf) }
}

const noSuchStrategy = (name: string) => notFound(`Could not find strategy with name ${name}`)

/** GET /api/admin/strategies/{name}. */
export async function getStrategyDefinition(db: Db, name: string): Promise<StrategyDefinition> {
  const [row] = await db.select().from(strategyDefinitions).where(eq(strategyDefinitions.name, name))
  if (!row) throw noSuchStrategy(name)
  return definitionOf(row)
}

const p = (name: string) => sql.placeholder(name)

/** Creating a definition while its name is free: the insert decides, so one statement is the whole write. */
const createStatement = eventsStatement('flagpost_create_strategy_definition', {
  alongside: [
    sql`insert into ${strategyDefinitions} (name, title, description, parameters, created_at)
      values (${p('name')}::text, ${p('title')}::text, ${p('description')}::text, ${p('parameters')}::jsonb, ${p('createdAt')}::timestamptz)
      on conflict (name) do nothing
      returning name`,
  ],
  guarded: true,
})

/** POST /api/admin/strategies: one statement that creates the definition and its `strategy-created` only while its name is free. */
export async function createStrategyDefinition(db: Db, caller: Author, input: CreateStrategyDefinition): Promise<StrategyDefinition> {
  const { actor, now } = caller
  const definition: StrategyDefinition = {
    title: input.title ?? null,
    name: input.name,
    displayName: null,
    description: input.description ?? null,
    editable: true,
    deprecated: false,
    parameters: parametersOf(input.parameters),
  }
  const { written } = await createStatement(db, actor, now, [{ type: 'strategy-created', data: definition }], {
    name: definition.name,
    title: definition.title,
    description: definition.description,
    parameters: JSON.stringify(definition.parameters),
  })
  if (written === 0) throw nameExists(`Strategy with name ${input.name} already exist!`)
  return definition
}

/** Writing a definition read as `snapshot`, only while it is still exactly so. */
const updateStatement = eventsStatement('flagpost_update_strategy_definition', {
  alongside: [
    sql`update ${strategyDefinitions} set title = ${p('title')}::text, description = ${p('description')}::text, parameters = ${p('parameters')}::jsonb, deprecated = ${p('deprecated')}::boolean
      where name = ${p('name')}::text and ${rowText(strategyDefinitions)} = ${p('snapshot')}::text
      returning name`,
  ],
  guarded: true,
})

/**
 * A change of a definition computed from a read of it (404 when there is none), written with its event in one
 * statement made only while the definition is as read; read again otherwise. `change` answers the definition after it,
 * or undefined when nothing changes (then nothing is written: no event without a change).
 */
async function changeDefinition(db: Db, caller: Author, name: string, type: NewEvent['type'], change: (before: StrategyDefinition) => StrategyDefinition | undefined): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Strategy ${name}`, async () => {
    const [found] = await db.select({ row: strategyDefinitions, snapshot: rowText(strategyDefinitions) }).from(strategyDefinitions).where(eq(strategyDefinitions.name, name))
    if (!found) throw noSuchStrategy(name)
    const before = definitionOf(found.row)
    const after = change(before)
    if (after === undefined || JSON.stringify(after) === JSON.stringify(before)) return true
    const { written } = await updateStatement(db, actor, now, [{ type, data: after, preData: before }], {
      name,
      snapshot: found.snapshot,
      title: after.title,
      description: after.description,
      parameters: JSON.stringify(after.parameters),
      deprecated: after.deprecated,
    })
    return written === 0 ? undefined : true
  })
}

const builtIn = (name: string, what: string) => validationError(`Cannot ${what} strategy ${name}: it is built in`, [{ path: 'params.name', message: `${name} is a built-in strategy` }])

/**
 * PUT /api/admin/strategies/{name}: replaces the parameters; title and description are kept when absent (as Unleash
 * leaves what the body does not name). A built-in strategy cannot be changed (400). Emits `strategy-updated`.
 */
export async function updateStrategyDefinition(db: Db, caller: Author, name: string, input: UpdateStrategyDefinition): Promise<void> {
  await changeDefinition(db, caller, name, 'strategy-updated', (before) => {
    if (!before.editable) throw builtIn(name, 'change')
    return {
      ...before,
      title: input.title === undefined ? (before.title ?? null) : input.title,
      description: input.description === undefined ? before.description : input.description,
      parameters: parametersOf(input.parameters),
    }
  })
}

/** POST …/{strategyName}/deprecate and …/reactivate: built-in strategies too, as in Unleash. No event when nothing changes. */
export async function setDeprecated(db: Db, caller: Author, name: string, deprecated: boolean): Promise<void> {
  await changeDefinition(db, caller, name, deprecated ? 'strategy-deprecated' : 'strategy-reactivated', (before) => (before.deprecated === deprecated ? undefined : { ...before, deprecated }))
}

/** The live flags with a strategy of that name (placeholder or value `name`). */
const flagsUsing = (name: unknown) =>
  sql`select distinct f.name from ${featureStrategies} fs join ${features} f on f.name = fs.feature_name and f.archived_at is null where fs.strategy_name = ${name}::text`
/** The project environments whose default strategy has that name. */
const defaultStrategiesUsing = (name: unknown) =>
  sql`select pe.project_id || '/' || pe.environment_name as name from ${projectEnvironments} pe where pe.default_strategy->>'name' = ${name}::text`

/** Deleting a custom definition read as `snapshot` that nothing uses. */
const deleteStatement = eventsStatement('flagpost_delete_strategy_definition', {
  alongside: [
    sql`delete from ${strategyDefinitions}
      where name = ${p('name')}::text and not built_in and ${rowText(strategyDefinitions)} = ${p('snapshot')}::text
        and not exists (${flagsUsing(p('name'))}) and not exists (${defaultStrategiesUsing(p('name'))})
      returning name`,
  ],
  guarded: true,
})

const listed = (what: string, names: string[]) => (names.length === 0 ? [] : [`${what} ${names.slice(0, 20).join(', ')}${names.length > 20 ? ` and ${names.length - 20} more` : ''}`])

/**
 * DELETE /api/admin/strategies/{name}: deletes a custom definition nothing uses. A built-in one is a 400; one used by a
 * strategy of a live flag or by a project's default strategy a 409 ConflictError naming them (Unleash checks neither).
 * A read, then one statement that deletes only while the definition is as read and still unused. Emits `strategy-deleted`.
 */
export async function deleteStrategyDefinition(db: Db, caller: Author, name: string): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Strategy ${name}`, async () => {
    const [[found], flags, defaults] = await together(db, [
      (q) => q.select({ row: strategyDefinitions, snapshot: rowText(strategyDefinitions) }).from(strategyDefinitions).where(eq(strategyDefinitions.name, name)),
      (q) => queryRows<{ name: string }>(q, sql`${flagsUsing(name)} order by 1`),
      (q) => queryRows<{ name: string }>(q, sql`${defaultStrategiesUsing(name)} order by 1`),
    ])
    if (!found) throw noSuchStrategy(name)
    if (found.row.builtIn) throw builtIn(name, 'delete')
    const uses = [...listed('the flags', flags.map((f) => f.name)), ...listed('the default strategies of (project/environment)', defaults.map((d) => d.name))]
    if (uses.length > 0) throw conflict(`Strategy ${name} is in use by ${uses.join('; and by ')}: remove those strategies first (or deprecate it)`)
    const event: NewEvent = { type: 'strategy-deleted', data: { name }, preData: definitionOf(found.row) }
    const { written } = await deleteStatement(db, actor, now, [event], { name, snapshot: found.snapshot })
    return written === 0 ? undefined : true
  })
}
