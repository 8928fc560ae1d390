import { sql, type SQL } from 'drizzle-orm'
import { contextFields } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { validationError } from '../core/errors.js'

/** What the rule reads of a stored (normalized) constraint: `values` for multi-value operators, `value` for the others. */
export interface ConstrainedValues {
  contextName: string
  values: string[]
  value?: string
}

/**
 * What constraints may not use where they are: a value their context field does not list as legal, or (no `value`)
 * a context field of another project.
 */
export interface IllegalValue {
  contextName: string
  value?: string
}

/**
 * SQL of what `constraints` (SQL of a JSON list of stored constraints) of `project` (the project of the flag, default
 * strategy or segment they belong to; null for a global segment) may not use, as a JSON list in the order named, `[]`
 * when nothing: a context field of another project (`{ contextName }`: a project's fields are its own), and the values
 * a field with legal values does not allow (`{ contextName, value }`): such a field accepts only those, in `values`
 * and `value` alike, whatever the operator (as Unleash checks them). A field without any, or no field of that name,
 * accepts anything.
 */
export const illegalValuesSql = (constraints: SQL | unknown, project: unknown): SQL<IllegalValue[]> => sql`(
  select coalesce(jsonb_agg(x.problem order by x.n, x.m), '[]'::jsonb) from (
    select c.n, 0::bigint as m, jsonb_build_object('contextName', cf.name) as problem
    from jsonb_array_elements(${constraints}::jsonb) with ordinality as c (item, n)
    join ${contextFields} cf on cf.name = c.item->>'contextName' and cf.project is not null and cf.project is distinct from ${project}::text
    union all
    select c.n, v.n, jsonb_build_object('contextName', cf.name, 'value', v.value)
    from jsonb_array_elements(${constraints}::jsonb) with ordinality as c (item, n)
    join ${contextFields} cf on cf.name = c.item->>'contextName' and jsonb_array_length(cf.legal_values) > 0 and (cf.project is null or cf.project = ${project}::text)
    cross join lateral jsonb_array_elements_text(
      coalesce(c.item->'values', '[]'::jsonb) || case when jsonb_typeof(c.item->'value') = 'string' then jsonb_build_array(c.item->'value') else '[]'::jsonb end
    ) with ordinality as v (value, n)
    where not exists (select from jsonb_array_elements(cf.legal_values) lv where lv->>'value' = v.value)) x)`

/** SQL that is true when `constraints` of `project` use nothing illegalValuesSql names: a write's check. */
export const legalValuesSql = (constraints: SQL | unknown, project: unknown): SQL<boolean> => sql`(${illegalValuesSql(constraints, project)} = '[]'::jsonb)`

/**
 * The 400 naming each value and its field, and each field of another project; `project` is where the constraints
 * are (null: a global segment), `path` where they were in the request (`body.constraints`).
 */
export function illegalValuesError(illegal: IllegalValue[], project: string | null, path = 'body.constraints') {
  const values = illegal.filter((i) => i.value !== undefined).map((i) => `"${i.value}" is not a legal value of context field ${i.contextName}`)
  const where = project === null ? 'by global segments' : `in project ${project}`
  const foreign = [...new Set(illegal.filter((i) => i.value === undefined).map((i) => i.contextName))].map((name) => `context field ${name} belongs to another project and cannot be used ${where}`)
  const message = [
    ...(values.length > 0 ? [`Constraint values must be legal values of their context field: ${values.join('; ')}`] : []),
    ...(foreign.length > 0 ? [`Constraints can use only global context fields and those of their own project: ${foreign.join('; ')}`] : []),
  ].join('. ')
  return validationError(message, [...values, ...foreign].map((m) => ({ path, message: m })))
}

/** Throws the 400 of illegalValuesError when constraints of `project` use what illegalValuesSql names: one read (none without constraints). */
export async function checkLegalValues(db: Db, constraints: readonly ConstrainedValues[], project: string | null, path?: string): Promise<void> {
  if (constraints.length === 0) return
  const [row] = await queryRows<{ illegal: IllegalValue[] }>(db, sql`select ${illegalValuesSql(JSON.stringify(constraints), project)} as illegal`)
  if (row && row.illegal.length > 0) throw illegalValuesError(row.illegal, project, path)
}
