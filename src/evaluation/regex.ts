import { compileRe2 } from './re2-regex.js'

/**
 * The REGEX operator's patterns: RE2 syntax (what the Unleash SDKs use) matched in linear time, never
 * JavaScript's backtracking RegExp, since patterns come from admins and inputs from end users. The
 * server validates constraints with the same function, so it accepts exactly what the engine runs.
 *
 * The matcher is our own (re2-regex.ts) rather than the re2js library: re2js costs about 45 KiB of the
 * worker's 250 KiB gzipped budget, the matcher about 6; both are held to the same tests.
 */
export interface CompiledRegex {
  /** Whether the pattern matches anywhere in the text. */
  test(text: string): boolean
}

/** Compiles an RE2 pattern; throws on invalid syntax. */
export function compileRegex(pattern: string, caseInsensitive = false): CompiledRegex {
  return compileRe2(pattern, { caseInsensitive })
}

/**
 * Compiles an RE2 pattern that must match a whole text: a project's flag naming pattern. Names come
 * from users and patterns from project owners, so they get the same linear-time matcher.
 */
export function compileWholeTextRegex(pattern: string): CompiledRegex {
  return compileRe2(pattern, { wholeText: true })
}

/** Why the pattern is not valid RE2, or undefined when it compiles. */
export function regexProblem(pattern: string): string | undefined {
  try {
    compileRegex(pattern)
    return undefined
  } catch (error) {
    return (error as Error).message || 'invalid pattern'
  }
}
