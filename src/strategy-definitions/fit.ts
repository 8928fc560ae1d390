import { eq, sql, type SQL, type SQLWrapper } from 'drizzle-orm'
import { strategyDefinitions } from '../../schema/index.js'
import type { Db } from '../db.js'
import { validationError } from '../core/errors.js'

// How a flag strategy (or a project's default strategy) fits the definition of its name: the rule in JS (which names
// the problem) and the same rule in SQL (which a write's statement checks, so it costs no round trip).

export const PARAMETER_TYPES = ['string', 'percentage', 'list', 'number', 'boolean'] as const
export type ParameterType = (typeof PARAMETER_TYPES)[number]

export interface ParameterDefinition {
  name: string
  type: ParameterType
  description: string
  required: boolean
}

/**
 * What a strategy write names: its name, its parameters, and what the strategy was before (an update, or a document
 * restoring what was stored): a value written back as it was stored is never refused for that value.
 */
export interface StrategyUse {
  name: string
  parameters: Record<string, string>
  previousName?: string | null
  previousParameters?: Record<string, string> | null
}

const NUMBER = /^-?[0-9]+(\.[0-9]+)?$/
const PERCENTAGE = /^[0-9]{1,3}$/

/** Why `value` does not fit a parameter's type (undefined when it does); an empty value is left to `required`. */
function valueProblem(type: string, value: string): string | undefined {
  if (type === 'number') return NUMBER.test(value) ? undefined : 'a number'
  if (type === 'percentage') return PERCENTAGE.test(value) && Number(value) <= 100 ? undefined : 'a whole number from 0 to 100'
  if (type === 'boolean') return value === 'true' || value === 'false' ? undefined : 'true or false'
  // string, and list (a comma-separated string: any string is one).
  return undefined
}

/**
 * The problems of the parameters of a strategy with a custom definition: a required one missing or empty, or a value
 * not of its type. Built-in strategies are checked by their schema (src/strategies/schemas.ts) only, as before
 * definitions existed; parameters the definition does not name are kept, as in Unleash.
 */
export function parameterProblems(strategy: string, definition: ParameterDefinition[], parameters: Record<string, string>, previous?: Record<string, string> | null): string[] {
  return definition.flatMap((d) => {
    const value = parameters[d.name] ?? ''
    if (previous && (previous[d.name] ?? '') === value) return []
    if (value === '') return d.required ? [`parameter ${d.name} of strategy ${strategy} is required`] : []
    const expected = valueProblem(d.type, value)
    return expected ? [`parameter ${d.name} of strategy ${strategy} must be ${expected} (${d.type}), got "${value}"`] : []
  })
}

/**
 * SQL that is true when the strategy (SQL of its name, its parameters as JSON, the name it had and its parameters
 * then) fits a definition: one of that name exists (deprecated or not: deprecation only hides a type from the
 * console's choices, as in Unleash), and, if custom, has no parameter missing or of the wrong type that it did not
 * already have so (the rule of parameterProblems).
 */
export function definitionFitsSql(name: SQLWrapper, parameters: SQLWrapper, previousName: SQLWrapper, previousParameters: SQLWrapper): SQL<boolean> {
  return sql`exists (select from ${strategyDefinitions} sd where sd.name = ${name}::text
    and (sd.built_in or not exists (
      select from jsonb_array_elements(sd.parameters) dp cross join lateral (select coalesce(${parameters}::jsonb->>(dp->>'name'), '') as v) pv
      where not coalesce(sd.name = ${previousName}::text and coalesce(${previousParameters}::jsonb->>(dp->>'name'), '') = pv.v, false)
      and case when pv.v = '' then coalesce((dp->>'required')::boolean, false)
        else case dp->>'type'
          when 'number' then pv.v !~ '^-?[0-9]+([.][0-9]+)?$'
          when 'percentage' then case when pv.v ~ '^[0-9]{1,3}$' then pv.v::int > 100 else true end
          when 'boolean' then pv.v not in ('true', 'false')
          else false end end)))`
}

/** The 400 of a strategy that does not fit its definition, or undefined when it fits. `path` says where the strategy was. */
export function misfit(definition: { name: string; builtIn: boolean; parameters: unknown } | undefined, use: StrategyUse, path = 'body') {
  if (!definition) return validationError(`Could not find strategy type with name ${use.name}`, [{ path: `${path}.name`, message: `strategy ${use.name} is not defined (see /api/admin/strategies)` }])
  if (definition.builtIn) return undefined
  const previous = use.previousName === use.name ? use.previousParameters : undefined
  const problems = parameterProblems(use.name, definition.parameters as ParameterDefinition[], use.parameters, previous)
  return problems.length === 0 ? undefined : validationError(`Invalid parameters: ${problems.join('; ')}`, problems.map((message) => ({ path: `${path}.parameters`, message })))
}

/** Throws the 400 of `misfit` when the strategy does not fit its definition: one read. */
export async function checkDefinition(db: Db, use: StrategyUse, path?: string): Promise<void> {
  const [definition] = await db.select().from(strategyDefinitions).where(eq(strategyDefinitions.name, use.name))
  const problem = misfit(definition, use, path)
  if (problem) throw problem
}
