import * as z from '../http/zod.js'
import { isValidVersion as validVersion } from '../evaluation/index.js'
import { regexConstraintProblem, regexNeverMatches } from '../evaluation/index.js'
import { addressMatcher } from '../evaluation/ip-ranges.js'
import { StrategyVariantInputSchema, VariantSchema } from '../variants/schemas.js'

export const CONSTRAINT_OPERATORS = [
  'NOT_IN', 'IN', 'STR_ENDS_WITH', 'STR_STARTS_WITH', 'STR_CONTAINS',
  'NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE',
  'DATE_AFTER', 'DATE_BEFORE', 'SEMVER_EQ', 'SEMVER_GT', 'SEMVER_LT', 'SEMVER_GTE', 'SEMVER_LTE',
  'REGEX', 'IN_CIDR',
] as const
export type ConstraintOperator = (typeof CONSTRAINT_OPERATORS)[number]

const MULTI_VALUE: ReadonlySet<ConstraintOperator> = new Set(['NOT_IN', 'IN', 'STR_ENDS_WITH', 'STR_STARTS_WITH', 'STR_CONTAINS', 'IN_CIDR'])

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/


/**
 * What the SDKs make of an accepted constraint that a user may not expect: a REGEX pattern RE2 refuses never matches
 * (so inverted it always holds), an IN_CIDR entry that is no address or range is skipped. Said by the validation
 * routes (constraints/validate, features-batch/validate) and the console's constraint editor, never refused.
 */
export function constraintWarnings(c: { operator: string; value?: string | undefined; values?: readonly string[] | undefined; inverted?: boolean | undefined; caseInsensitive?: boolean | undefined }): string[] {
  if (c.operator === 'REGEX' && c.value !== undefined && c.value !== '') {
    const invalid = regexNeverMatches(c.value, c.caseInsensitive === true)
    if (invalid === undefined) return []
    return [`REGEX pattern "${c.value}" is not valid RE2 syntax (${invalid}): SDKs never match it${c.inverted === true ? ', so the inverted constraint always holds' : ''}`]
  }
  if (c.operator === 'IN_CIDR') {
    // Judged by the engine's own parser (an entry it reads holds a range), so the warning names exactly what is skipped.
    return (c.values ?? []).filter((v) => v.trim() !== '' && addressMatcher([v]).size === 0).map((v) => `IN_CIDR entry "${v}" is no IP address or CIDR range: SDKs skip it`)
  }
  return []
}

/** Why a single value is wrong for the operator, or undefined when it is fine. */
function singleValueProblem(operator: ConstraintOperator, value: string): string | undefined {
  if (operator.startsWith('NUM_')) return value.trim() !== '' && Number.isFinite(Number(value)) ? undefined : `${operator} needs a number, got "${value}"`
  if (operator.startsWith('DATE_')) return ISO_DATE.test(value) && !Number.isNaN(Date.parse(value)) ? undefined : `${operator} needs an ISO 8601 date, got "${value}"`
  if (operator.startsWith('SEMVER_')) return validVersion(value) ? undefined : `${operator} needs a semantic version, got "${value}"`
  if (operator === 'REGEX') {
    // Compiled as the engine compiles it (RE2 syntax). Every path a constraint enters by (strategies, segments, change
    // requests, default strategies, import, state restore) parses it here, so the program limit
    // (FLAGPOST_REGEX_MAX_PROGRAM) holds on all of them. A pattern RE2 refuses is accepted, as Unleash 8.2 accepts it:
    // it never matches (constraintWarnings says so where a constraint is validated).
    const problem = regexConstraintProblem(value)
    return problem === undefined ? undefined : `REGEX pattern "${value}" is refused: ${problem}`
  }
  return undefined
}

/**
 * Unleash's resource limits on what a strategy or segment may hold (Unleash 8.2's defaults and environment variables,
 * read at start: see resourceLimitsFromEnv). Unleash refuses past them, so refusing is compatible; they bound the work
 * one stored strategy makes every evaluation do. One value per process, like the REGEX program limit: the schemas
 * below are module data, and createApp sets them from its deps.
 */
export interface ResourceLimits {
  /** Strategies per flag environment (UNLEASH_FEATURE_ENVIRONMENT_STRATEGIES_LIMIT). */
  featureEnvironmentStrategies: number
  /** Constraints per strategy (UNLEASH_CONSTRAINTS_LIMIT). */
  constraints: number
  /** Values per constraint (UNLEASH_CONSTRAINT_VALUES_LIMIT). */
  constraintValues: number
  /** Values across a segment's constraints (UNLEASH_SEGMENT_VALUES_LIMIT). */
  segmentValues: number
  /** Segments per strategy (UNLEASH_STRATEGY_SEGMENTS_LIMIT). */
  strategySegments: number
}
export const DEFAULT_RESOURCE_LIMITS: Readonly<ResourceLimits> = Object.freeze({ featureEnvironmentStrategies: 30, constraints: 30, constraintValues: 250, segmentValues: 1000, strategySegments: 5 })
const limits: ResourceLimits = { ...DEFAULT_RESOURCE_LIMITS }
export const resourceLimits = (): Readonly<ResourceLimits> => limits
export function setResourceLimits(next: Partial<ResourceLimits>): void {
  Object.assign(limits, DEFAULT_RESOURCE_LIMITS, next)
}
const RESOURCE_LIMIT_VARIABLES: Record<keyof ResourceLimits, string> = {
  featureEnvironmentStrategies: 'UNLEASH_FEATURE_ENVIRONMENT_STRATEGIES_LIMIT',
  constraints: 'UNLEASH_CONSTRAINTS_LIMIT',
  constraintValues: 'UNLEASH_CONSTRAINT_VALUES_LIMIT',
  segmentValues: 'UNLEASH_SEGMENT_VALUES_LIMIT',
  strategySegments: 'UNLEASH_STRATEGY_SEGMENTS_LIMIT',
}
/** Unleash's variables as createApp's `resourceLimits`; anything but a whole number of at least 1 is refused at start. */
export function resourceLimitsFromEnv(env: Record<string, unknown>): Partial<ResourceLimits> {
  const found: Partial<ResourceLimits> = {}
  for (const [key, name] of Object.entries(RESOURCE_LIMIT_VARIABLES) as [keyof ResourceLimits, string][]) {
    const value = env[name]
    if (value === undefined || value === '') continue
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1, got "${String(value)}"`)
    found[key] = n
  }
  return found
}
/** Unleash's ExceedsLimitError message (answered as a ValidationError: the error map has no other 400). */
export const exceedsLimit = (resource: string, limit: number) => `Failed to create ${resource}. You can't create more than the established limit of ${limit}.`

export const ConstraintInputSchema = z
  .object({
    contextName: z.string().min(1).max(100),
    operator: z.enum(CONSTRAINT_OPERATORS),
    caseInsensitive: z.boolean().optional(),
    inverted: z.boolean().optional(),
    values: z.array(z.string().max(1000)).max(10_000).optional(),
    value: z
      .string()
      .max(1000)
      .optional()
      .openapi({
        description:
          'The single value of NUM_, DATE_, SEMVER_ and REGEX operators. A REGEX pattern is RE2 syntax and may compile to at most FLAGPOST_REGEX_MAX_PROGRAM instructions (5,000 by default: ' +
          'realistic patterns take a few dozen; `(a|b|…){1000}` takes tens of thousands and only makes matching slow).',
      }),
  })
  .superRefine((c, ctx) => {
    if ((c.values?.length ?? 0) > limits.constraintValues) {
      ctx.addIssue({ code: 'custom', path: ['values'], message: exceedsLimit(`constraint values for ${c.contextName}`, limits.constraintValues) })
    }
    if (MULTI_VALUE.has(c.operator)) {
      // An empty list is accepted, as Unleash accepts it (IN then never holds, NOT_IN always does); so is an IN_CIDR
      // entry that is no address or range, which the SDKs skip (constraintWarnings says so).
    } else if (c.value === undefined || c.value === '') {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `${c.operator} needs a single value in value` })
    } else {
      const problem = singleValueProblem(c.operator, c.value)
      if (problem) ctx.addIssue({ code: 'custom', path: ['value'], message: problem })
    }
  })
  .openapi('constraintSchema')

export type ConstraintInput = z.infer<typeof ConstraintInputSchema>

/** A strategy's constraints, at most the constraints limit (every path a strategy enters by parses this). */
export const StrategyConstraintsSchema = z.array(ConstraintInputSchema).max(100).superRefine((cs, ctx) => {
  if (cs.length > limits.constraints) ctx.addIssue({ code: 'custom', message: exceedsLimit('constraints', limits.constraints) })
})

/** A segment's constraints, at most the segment values limit across them (every path a segment enters by parses this). */
export const SegmentConstraintsSchema = z.array(ConstraintInputSchema).max(1000).superRefine((cs, ctx) => {
  const values = cs.reduce((sum, c) => sum + (c.values?.length ?? 0), 0)
  if (values > limits.segmentValues) ctx.addIssue({ code: 'custom', message: exceedsLimit('segment values', limits.segmentValues) })
})

/** A strategy's segments, at most the strategy segments limit. */
export const StrategySegmentsSchema = z.array(z.number().int().min(1).max(2147483647)).max(100).superRefine((ids, ctx) => {
  if (ids.length > limits.strategySegments) ctx.addIssue({ code: 'custom', message: exceedsLimit('strategy segments', limits.strategySegments) })
})

export const ConstraintSchema = z.object({
  contextName: z.string(),
  operator: z.enum(CONSTRAINT_OPERATORS),
  caseInsensitive: z.boolean(),
  inverted: z.boolean(),
  values: z.array(z.string()),
  value: z.string().optional(),
})
export type Constraint = z.infer<typeof ConstraintSchema>

/** The stored form: flags filled in, `values` for multi-value operators, `value` for single-value ones. */
export function normalizeConstraint(c: ConstraintInput): Constraint {
  const multi = MULTI_VALUE.has(c.operator)
  return {
    contextName: c.contextName,
    operator: c.operator,
    caseInsensitive: c.caseInsensitive ?? false,
    inverted: c.inverted ?? false,
    values: multi ? (c.values ?? []) : [],
    ...(multi ? {} : { value: c.value }),
  }
}

export const ParametersSchema = z.record(z.string().max(100), z.string().max(10_000)).openapi('parametersSchema')

const percentage = (name: string) => (value: string | undefined) =>
  value === undefined || (/^\d{1,3}$/.test(value) && Number(value) <= 100) ? undefined : `${name} must be a whole number from 0 to 100, got "${value}"`
const ROLLOUT_PARAMETERS: Record<string, (params: Record<string, string>) => string | undefined> = {
  flexibleRollout: (p) => percentage('rollout')(p.rollout),
  gradualRolloutUserId: (p) => percentage('percentage')(p.percentage),
  gradualRolloutSessionId: (p) => percentage('percentage')(p.percentage),
  gradualRolloutRandom: (p) => percentage('percentage')(p.percentage),
}

const strategyFields = {
  name: z.string().min(1).max(100).regex(/^[A-Za-z0-9_.-]+$/, 'strategy name may contain letters, digits and _ . - only').openapi({ description: 'The strategy type, e.g. flexibleRollout' }),
  // Unleash stores any length (a text column); the body limit bounds it.
  title: z.string().nullable().optional(),
  disabled: z.boolean().nullable().optional(),
  sortOrder: z.number().int().min(-2147483648).max(2147483647).optional(),
  constraints: StrategyConstraintsSchema.optional(),
  variants: z.array(StrategyVariantInputSchema).max(100).optional(),
  parameters: ParametersSchema.optional(),
  segments: StrategySegmentsSchema.optional(),
}

const checkParameters = (s: { name: string; parameters?: Record<string, string> | undefined }, ctx: z.RefinementCtx) => {
  const problem = ROLLOUT_PARAMETERS[s.name]?.(s.parameters ?? {})
  if (problem) ctx.addIssue({ code: 'custom', path: ['parameters'], message: problem })
}

export const CreateStrategySchema = z.object(strategyFields).superRefine(checkParameters).openapi('createFeatureStrategySchema')
export const UpdateStrategySchema = z.object(strategyFields).superRefine(checkParameters).openapi('updateFeatureStrategySchema')
export type StrategyInput = z.infer<typeof CreateStrategySchema>

export const StrategySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    title: z.string().nullable(),
    disabled: z.boolean(),
    featureName: z.string(),
    sortOrder: z.number().int(),
    segments: z.array(z.number().int()),
    constraints: z.array(ConstraintSchema),
    variants: z.array(VariantSchema),
    parameters: z.record(z.string(), z.string()),
  })
  .openapi('featureStrategySchema')
export type Strategy = z.infer<typeof StrategySchema>

export const SetSortOrderSchema = z
  .array(z.object({ id: z.string().uuid(), sortOrder: z.number().int().min(-2147483648).max(2147483647) }))
  .max(1000)
  .openapi('setStrategySortOrderSchema')
