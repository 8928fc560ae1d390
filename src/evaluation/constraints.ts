import { compareVersions, parseVersion, type Version } from './semver.js'
import { memoize } from '../memoize.js'
import { constraintFieldGetter, currentTimeOf, type FieldGetter } from './context-fields.js'
import { addressMatcher } from './ip-ranges.js'
import { cachedRegex, RegexWorkExceeded } from './regex.js'
import type { ConstraintDefinition, DetailedConstraint, EvaluateOptions, EvaluationContext } from './types.js'

/** `options` carries what the evaluation is held to (the request's REGEX meter). */
export type ContextTest = (context: EvaluationContext, now: number, options?: EvaluateOptions) => boolean

export interface PreparedConstraint {
  readonly definition: ConstraintDefinition
  /** The constraint's result, inversion included. */
  readonly test: ContextTest
  /** Whether the result depends on the current time. */
  readonly usesTime: boolean
  /** The playground's detail of the constraint failing and passing: made once, on first use (see detailed.ts), then shared. */
  shown: readonly [DetailedConstraint, DetailedConstraint] | undefined
}

const never: ContextTest = () => false

/** The SDKs drop empty values and trim the others. */
const cleanValues = (values: readonly string[] | null | undefined): string[] => (values ?? []).filter((v) => !!v).map((v) => v.trim())

/** A context's version: strict semver not starting with v, as the Node SDK accepts it (it trims what follows). */
function parseSemver(text: string): Version | null {
  return text.startsWith('v') ? null : parseVersion(text)
}

// Contexts carry few distinct versions (app versions), tested by many constraints: each is parsed once.
const contextVersion = memoize(parseSemver, 1_000)

function inOperator(get: FieldGetter, values: Set<string>, negate: boolean): ContextTest {
  // NOT_IN holds for a missing field: the field's (absent) value is not in the list.
  return (context, now, options) => {
    const value = get(context, now)
    options?.regexMeter?.charge(1)
    return (value !== undefined && values.has(value)) !== negate
  }
}

function stringOperator(get: FieldGetter, operator: string, values: string[], caseInsensitive: boolean): ContextTest {
  const wanted = caseInsensitive ? values.map((v) => v.toLowerCase()) : values
  const matches =
    operator === 'STR_STARTS_WITH' ? (value: string, v: string) => value.startsWith(v)
    : operator === 'STR_ENDS_WITH' ? (value: string, v: string) => value.endsWith(v)
    : (value: string, v: string) => value.includes(v)
  return (context, now, options) => {
    let value = get(context, now)
    if (value === undefined) return false
    // Each value is a scan of the context value: a step per character, as a REGEX pays.
    options?.regexMeter?.charge(wanted.length * (value.length + 1) + (caseInsensitive ? value.length : 0))
    if (caseInsensitive) value = value.toLowerCase()
    for (let i = 0; i < wanted.length; i++) if (matches(value, wanted[i]!)) return true
    return false
  }
}

function numberOperator(get: FieldGetter, operator: string, target: number): ContextTest {
  if (Number.isNaN(target)) return never
  const compare =
    operator === 'NUM_EQ' ? (n: number) => n === target
    : operator === 'NUM_GT' ? (n: number) => n > target
    : operator === 'NUM_GTE' ? (n: number) => n >= target
    : operator === 'NUM_LT' ? (n: number) => n < target
    : (n: number) => n <= target
  return (context, now, options) => {
    const value = get(context, now)
    if (value !== undefined) options?.regexMeter?.charge(1 + value.length)
    // Number() as the SDKs do: '' and missing are never a number here, ' 12 ' is 12.
    return value !== undefined && compare(Number(value))
  }
}

/** DATE_ operators compare the context's currentTime whatever field they name, as the Node SDK does. */
function dateOperator(after: boolean, target: number): ContextTest {
  if (Number.isNaN(target)) return never
  // A comparison of two numbers, charged as an IN check is: thousands of them are work too.
  return after
    ? (context, now, options) => {
        options?.regexMeter?.charge(DATE_STEPS)
        return currentTimeOf(context, now) > target
      }
    : (context, now, options) => {
        options?.regexMeter?.charge(DATE_STEPS)
        return currentTimeOf(context, now) < target
      }
}

/** Steps a DATE_ check draws: a call, a field read and a comparison (bench:evaluation-work's DATE scenario sets it). */
const DATE_STEPS = 2

function semverOperator(get: FieldGetter, operator: string, target: Version | null): ContextTest {
  if (!target) return never
  const accept =
    operator === 'SEMVER_EQ' ? (c: number) => c === 0
    : operator === 'SEMVER_GT' ? (c: number) => c > 0
    : operator === 'SEMVER_GTE' ? (c: number) => c >= 0
    : operator === 'SEMVER_LT' ? (c: number) => c < 0
    : (c: number) => c <= 0
  return (context, now, options) => {
    const value = get(context, now)
    if (!value) return false
    options?.regexMeter?.charge(1 + value.length)
    const version = contextVersion(value)
    return version !== null && accept(compareVersions(version, target))
  }
}

function baseTest(c: ConstraintDefinition, get: FieldGetter): ContextTest | undefined {
  const value = c.value ?? undefined
  switch (c.operator) {
    case 'IN':
    case 'NOT_IN':
      return inOperator(get, new Set(cleanValues(c.values)), c.operator === 'NOT_IN')
    case 'STR_STARTS_WITH':
    case 'STR_ENDS_WITH':
    case 'STR_CONTAINS':
      return stringOperator(get, c.operator, cleanValues(c.values), c.caseInsensitive === true)
    case 'NUM_EQ':
    case 'NUM_GT':
    case 'NUM_GTE':
    case 'NUM_LT':
    case 'NUM_LTE':
      return numberOperator(get, c.operator, value === undefined ? NaN : Number(value))
    case 'DATE_AFTER':
    case 'DATE_BEFORE':
      return dateOperator(c.operator === 'DATE_AFTER', value === undefined ? NaN : Date.parse(value))
    case 'SEMVER_EQ':
    case 'SEMVER_GT':
    case 'SEMVER_GTE':
    case 'SEMVER_LT':
    case 'SEMVER_LTE':
      // The constraint's own version may start with v (the SDK's semver takes it so).
      return semverOperator(get, c.operator, value === undefined ? null : parseVersion(value))
    case 'REGEX': {
      // A missing or invalid pattern matches nothing, and inverted it matches everything: the Node SDK
      // catches re2js's compile error as a non-match before it applies `inverted`.
      if (value === undefined) return never
      const pattern = value
      const caseInsensitive = c.caseInsensitive === true
      // Compiled on first use, through the process-wide cache (regex.ts): a payload holding thousands of patterns
      // compiles none up front, each program is shared by every flag and payload holding its pattern, and compiling
      // draws on the request's meter. Not kept here, so the cache's bound is the memory's.
      return (context, now, options) => {
        const text = get(context, now)
        if (text === undefined) return false
        const meter = options?.regexMeter
        let regex
        try {
          regex = cachedRegex(pattern, caseInsensitive, meter)
        } catch (error) {
          if (error instanceof RegexWorkExceeded) throw error
          return false
        }
        return meter === undefined ? regex.test(text) : meter.test(regex, text)
      }
    }
    case 'IN_CIDR': {
      const ranges = cleanValues(c.values)
      const matcher = addressMatcher(ranges)
      return (context, now, options) => {
        const address = get(context, now)
        if (address !== undefined) options?.regexMeter?.charge(ranges.length + address.length)
        return address !== undefined && matcher.matches(address)
      }
    }
    default:
      return undefined
  }
}

/** Operators whose preparation is a pass over their list of values (trimmed, lowercased, a set or address ranges made). */
const LIST_OPERATORS = new Set(['IN', 'NOT_IN', 'STR_STARTS_WITH', 'STR_ENDS_WITH', 'STR_CONTAINS', 'IN_CIDR'])
/** What preparing one listed value takes, in matching steps (a trim and a set insertion: about 70 ns). */
export const PREPARE_STEPS_PER_VALUE = 10

/**
 * Parses a constraint once into a test. A missing context field makes every operator false except
 * NOT_IN; `inverted` then negates the result, whether the field was there or not (as the Node SDK
 * and Unleash's own playground do). An unknown operator is false, inverted or not; a REGEX that does
 * not compile is false, so inverted it is true (as the Node SDK has it).
 *
 * A list of values is prepared on the constraint's first test, charged to that test's meter: preparing a payload held
 * 900 constraints of 250 values (57 ms) for the first frontend request, uncharged. Past the budget the request is a
 * 400 and the constraint is left unprepared; what earlier requests prepared is kept, so each request's share is bounded.
 */
export function prepareConstraint(definition: ConstraintDefinition): PreparedConstraint {
  const get = constraintFieldGetter(definition.contextName)
  const inverted = definition.inverted === true
  const usesTime = definition.contextName === 'currentTime' || definition.operator.startsWith('DATE_')
  if (!LIST_OPERATORS.has(definition.operator)) {
    const base = baseTest(definition, get)
    const test: ContextTest = base === undefined ? never : inverted ? (context, now, options) => !base(context, now, options) : base
    return { definition, test, usesTime, shown: undefined }
  }
  let base: ContextTest | undefined
  const test: ContextTest = (context, now, options) => {
    if (base === undefined) {
      options?.regexMeter?.charge((definition.values?.length ?? 0) * PREPARE_STEPS_PER_VALUE)
      base = baseTest(definition, get)!
    }
    return base(context, now, options) !== inverted
  }
  return { definition, test, usesTime, shown: undefined }
}
