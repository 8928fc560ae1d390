import { compileRe2, RegexWorkExceeded, regexWorkDone, type WorkMeter } from './re2-regex.js'

export { RegexWorkExceeded, regexWorkDone }

/**
 * The REGEX operator's patterns: RE2 syntax (what the Unleash SDKs use) matched in linear time, never
 * JavaScript's backtracking RegExp, since patterns come from admins and inputs from end users. The
 * server validates constraints with the same function, so it accepts exactly what the engine runs.
 *
 * The matcher is our own (re2-regex.ts) rather than the re2js library: re2js costs about 45 KiB of the
 * worker's 250 KiB gzipped budget, the matcher about 6; both are held to the same tests.
 *
 * Linear is not cheap: a match takes up to (program size × input length) steps, so both are bounded. A
 * pattern's program is limited when it is saved (regexProblem), and a request's matching by a RegexMeter.
 */
export interface CompiledRegex {
  /** Whether the pattern matches anywhere in the text; with a meter, drawing the steps from it (RegexWorkExceeded past it). */
  test(text: string, meter?: WorkMeter): boolean
  /** Instructions in the compiled program. */
  readonly programSize: number
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

/**
 * The largest program a saved pattern may compile to (FLAGPOST_REGEX_MAX_PROGRAM). A realistic pattern is a few
 * dozen instructions; a 1,000-character alternation of user ids about 1,500; `[a-z]{1,1000}` 2,001. What goes past
 * this are counted repetitions of groups, `(a|b|…|t){1000}` (39,002), whose only use is to make matching slow.
 */
export const DEFAULT_REGEX_MAX_PROGRAM = 5_000
let maxProgram = DEFAULT_REGEX_MAX_PROGRAM

/**
 * Sets the program limit of regexProblem. One value per process: the zod schemas that validate constraints are
 * module data, so createApp sets it from its deps (the last app made in a process decides, which only tests see).
 */
export function setRegexMaxProgram(limit: number): void {
  maxProgram = limit
}
export const regexMaxProgram = () => maxProgram

/** Why the pattern is not accepted (not valid RE2, or its program is over the limit), or undefined when it is. */
export function regexProblem(pattern: string, caseInsensitive = false): string | undefined {
  let compiled: CompiledRegex
  try {
    compiled = compileRegex(pattern, caseInsensitive)
  } catch (error) {
    return (error as Error).message || 'invalid pattern'
  }
  if (compiled.programSize > maxProgram) {
    return `pattern too large: it compiles to ${compiled.programSize} instructions, more than the limit of ${maxProgram} (FLAGPOST_REGEX_MAX_PROGRAM)`
  }
  return undefined
}

/**
 * The REGEX work of one request: every match draws on one budget, and the first that would go past it throws
 * RegexWorkExceeded, which the routes answer with a 400. With `memo`, a pattern already matched against a text in this
 * request answers from memory: the advanced playground evaluates the same values in thousands of combinations.
 */
export class RegexMeter implements WorkMeter {
  remaining: number
  private readonly memo: Map<CompiledRegex, Map<string, boolean>> | undefined

  constructor(
    readonly budget: number,
    options: { memo?: boolean } = {},
  ) {
    this.remaining = budget
    this.memo = options.memo ? new Map() : undefined
  }

  test(regex: CompiledRegex, text: string): boolean {
    const memo = this.memo
    if (memo === undefined) return regex.test(text, this)
    let results = memo.get(regex)
    if (results === undefined) memo.set(regex, (results = new Map()))
    let result = results.get(text)
    if (result === undefined) {
      result = regex.test(text, this)
      results.set(text, result)
    }
    return result
  }
}
