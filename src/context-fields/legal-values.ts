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

/** A value a constraint uses that its context field does not list as legal. */
export interface IllegalValue {
  contextName: string
  value: string
}

/**
 * SQL of the values in `constraints` (SQL of a JSON list of stored constraints) that their context field does not
 * allow: a field with legal values accepts only those, in `values` and `value` alike, whatever the operator (as
 * Unleash checks them); a field without any, or no field of that name, accepts anything. A JSON list of
 * `{ contextName, value }`, in the order named; `[]` when every value is legal.
 */
export const illegalValuesSql = (constraints: SQL | unknown): SQL<IllegalValue[]> => sql`(
  select coalesce(jsonb_agg(jsonb_build_object('contextName', c.item->>'contextName', 'value', v.value) order by c.n, v.n), '[]'::jsonb)
  from jsonb_array_elements(${constraints}::jsonb) with ordinality as c (item, n)
  join ${contextFields} cf on cf.name = c.item->>'contextName' and jsonb_array_length(cf.legal_values) > 0
  cross join lateral jsonb_array_elements_text(
    coalesce(c.item->'values', '[]'::jsonb) || case when jsonb_typeof(c.item->'value') = 'string' then jsonb_build_array(c.item->'value') else '[]'::jsonb end
  ) with ordinality as v (value, n)
  where not exists (select from jsonb_array_elements(cf.legal_values) lv where lv->>'value' = v.value))`

/** SQL that is true when every value of `constraints` is legal (see illegalValuesSql): a write's check. */
export const legalValuesSql = (constraints: SQL | unknown): SQL<boolean> => sql`(${illegalValuesSql(constraints)} = '[]'::jsonb)`

/** The 400 naming each value and its field; `path` says where the constraints were (`body.constraints`). */
export function illegalValuesError(illegal: IllegalValue[], path = 'body.constraints') {
  const named = illegal.map((i) => `"${i.value}" is not a legal value of context field ${i.contextName}`)
  return validationError(`Constraint values must be legal values of their context field: ${named.join('; ')}`, named.map((message) => ({ path, message })))
}

/** Throws the 400 of illegalValuesError when a constraint uses a value its context field does not allow: one read (none without constraints). */
export async function checkLegalValues(db: Db, constraints: readonly ConstrainedValues[], path?: string): Promise<void> {
  if (constraints.length === 0) return
  const [row] = await queryRows<{ illegal: IllegalValue[] }>(db, sql`select ${illegalValuesSql(JSON.stringify(constraints))} as illegal`)
  if (row && row.illegal.length > 0) throw illegalValuesError(row.illegal, path)
}
