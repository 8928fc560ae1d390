import type { Context } from 'hono'
import { validationError } from '../core/errors.js'

/**
 * What one evaluating request may make the server do: every route that evaluates a context the caller sent (the
 * playgrounds, the frontend API) checks its values with checkContextValues and matches REGEX constraints under a
 * RegexMeter (evaluation/regex.ts) of `regexWorkBudget` steps. A match costs up to (program size × text length) steps, so both factors and their sum
 * over a request are bounded; the program size is bounded where patterns are saved (evaluation/regex.ts).
 */
export interface EvaluationLimits {
  /** The longest context value (FLAGPOST_CONTEXT_VALUE_MAX_LENGTH), in UTF-16 code units as JavaScript counts a string. */
  contextValueMaxLength: number
  /** The evaluation work one request may take, in REGEX matching steps (FLAGPOST_EVALUATION_WORK_BUDGET, formerly FLAGPOST_REGEX_WORK_BUDGET). */
  regexWorkBudget: number
}

/** Values longer than this are not identifiers but documents: 1,000 is what the frontend API used to cut them to. */
export const DEFAULT_CONTEXT_VALUE_MAX_LENGTH = 1_000

/**
 * REGEX matching steps per request: on this project's reference machine 120,000 to 230,000 steps take a millisecond
 * of CPU (bench/regex.ts), so about 10–17 ms; a realistic request takes a few thousand.
 */
export const DEFAULT_REGEX_WORK_BUDGET = 2_000_000

export const DEFAULT_EVALUATION_LIMITS: EvaluationLimits = Object.freeze({
  contextValueMaxLength: DEFAULT_CONTEXT_VALUE_MAX_LENGTH,
  regexWorkBudget: DEFAULT_REGEX_WORK_BUDGET,
})

declare module 'hono' {
  interface ContextVariableMap {
    evaluationLimits: EvaluationLimits
  }
}

const limitsOf = (c: Context): EvaluationLimits => c.get('evaluationLimits') ?? DEFAULT_EVALUATION_LIMITS

/**
 * Refuses a context with a value longer than the limit (400, naming the field and the limit). `values` are the
 * context's fields as the engine will see them: `[path, value]`, e.g. `['context.userId', '…']`, and the names of
 * properties and custom fields, `[path, name, 'name']`: a name is held to the same limit.
 */
export function checkContextValues(c: Context, values: Iterable<readonly [path: string, value: string | undefined, what?: 'name']>): void {
  const max = limitsOf(c).contextValueMaxLength
  for (const [path, value, what] of values) {
    if (value !== undefined && value.length > max) {
      const message =
        what === 'name'
          ? `${path}: a property name is ${value.length} characters long, more than the limit of ${max} for a context value or name (FLAGPOST_CONTEXT_VALUE_MAX_LENGTH)`
          : `${path} is ${value.length} characters long, more than the limit of ${max} for a context value (FLAGPOST_CONTEXT_VALUE_MAX_LENGTH)`
      throw validationError(message, [{ path, message: `must be at most ${max} characters` }])
    }
  }
}

/**
 * Refuses a context (as the engine takes it, or as the playground's body holds it) with a top-level string or a
 * property longer than the limit; the paths start with `prefix` (`context.` for a body's `context`).
 */
export function checkContext(c: Context, context: { properties?: Record<string, unknown> | null | undefined }, prefix = ''): void {
  checkContextValues(c, contextEntries(context, prefix))
}

function* contextEntries(context: { properties?: Record<string, unknown> | null | undefined }, prefix: string): Generator<readonly [string, string | undefined, 'name'?]> {
  for (const [key, value] of Object.entries(context)) if (key !== 'properties' && typeof value === 'string') yield [`${prefix}${key}`, value]
  for (const [key, value] of Object.entries(context.properties ?? {})) {
    yield [`${prefix}properties`, key, 'name'] as const
    if (typeof value === 'string') yield [`${prefix}properties.${key.slice(0, 100)}`, value]
  }
}

/**
 * FLAGPOST_REGEX_MAX_PROGRAM, FLAGPOST_CONTEXT_VALUE_MAX_LENGTH and FLAGPOST_REGEX_WORK_BUDGET as createApp's
 * `evaluation` (unset: the defaults); anything but a whole number of at least 1 is refused at start.
 */
export function evaluationLimitsFromEnv(env: Record<string, unknown>): Partial<EvaluationLimits> & { regexMaxProgram?: number } {
  const read = (name: string): number | undefined => {
    const value = env[name]
    if (value === undefined || value === '') return undefined
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1, got "${String(value)}"`)
    return n
  }
  const limits: Partial<EvaluationLimits> & { regexMaxProgram?: number } = {}
  const regexMaxProgram = read('FLAGPOST_REGEX_MAX_PROGRAM')
  const contextValueMaxLength = read('FLAGPOST_CONTEXT_VALUE_MAX_LENGTH')
  // The budget covers every operator's work now; the old name stays an alias.
  const regexWorkBudget = read('FLAGPOST_EVALUATION_WORK_BUDGET') ?? read('FLAGPOST_REGEX_WORK_BUDGET')
  if (regexMaxProgram !== undefined) limits.regexMaxProgram = regexMaxProgram
  if (contextValueMaxLength !== undefined) limits.contextValueMaxLength = contextValueMaxLength
  if (regexWorkBudget !== undefined) limits.regexWorkBudget = regexWorkBudget
  return limits
}
