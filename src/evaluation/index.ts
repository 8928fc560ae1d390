/**
 * The flag-evaluation engine: pure (no I/O, no clock reads below the entry points), shared by the
 * SDK-facing APIs and the playground. Results agree with Unleash's official SDKs and client
 * specification. Prepare once (`prepareRuleset`), evaluate many times.
 */
export { evaluate, getVariant, isEnabled, prepareFlag, prepareRuleset, type PreparedFlag, type PreparedRuleset } from './engine.js'
// For OFREP's reasons (src/ofrep/evaluate.ts): no strategy at all.
export { NO_STRATEGIES } from './engine.js'
// For OFREP's reasons (src/ofrep/evaluate.ts): which strategy decided.
export { evaluateWithStrategy } from './engine.js'
export type { PreparedStrategy } from './strategies.js'
export type { PreparedVariants } from './variants.js'
export { evaluateDetailed, shownSizeOf } from './detailed.js'
export {
  applyClientFeaturesDelta,
  fromClientFeatures,
  type ClientFeature,
  type ClientFeaturesDelta,
  type ClientFeaturesDeltaEvent,
  type ClientFeaturesPayload,
  type ClientSegment,
} from './client-features.js'
export {
  compileRegex,
  compileWholeTextRegex,
  DEFAULT_REGEX_MAX_PROGRAM,
  RegexMeter,
  regexMaxProgram,
  regexProblem,
  regexConstraintProblem,
  regexNeverMatches,
  RegexWorkExceeded,
  regexWorkDone,
  cachedRegex,
  COMPILE_STEPS_PER_INSTRUCTION,
  regexCacheStats,
  setRegexMaxProgram,
  type CompiledRegex,
} from './regex.js'
export { normalizedStrategyValue, normalizedVariantValue } from './hashing.js'
export { DISABLED_VARIANT, DISABLED_VARIANT_FEATURE_ON } from './variants.js'
export type * from './types.js'
// For action sets' filters (src/actions/filters.ts): a signal's payload tested as a context.
export { prepareConstraint, type PreparedConstraint } from './constraints.js'
export { coerceVersion, compareVersions, isValidVersion, parseVersion, type Version } from './semver.js'
