import { addWorkDone, compileRe2, Re2ProgramTooLarge, RegexWorkExceeded, regexWorkDone, type WorkMeter } from './re2-regex.js'

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

/**
 * What compiling the pattern tells: `refused`, its program is over the limit (FLAGPOST_REGEX_MAX_PROGRAM, or RE2's
 * own); `invalid`, RE2 refuses its syntax (lookaround, backreference, ...). Both undefined when it compiles within.
 */
function inspectRegex(pattern: string, caseInsensitive: boolean): { refused?: string; invalid?: string } {
  let compiled: CompiledRegex
  try {
    compiled = compileRegex(pattern, caseInsensitive)
  } catch (error) {
    const message = (error as Error).message || 'invalid pattern'
    return error instanceof Re2ProgramTooLarge ? { refused: `${message} (FLAGPOST_REGEX_MAX_PROGRAM is ${maxProgram})` } : { invalid: message }
  }
  if (compiled.programSize > maxProgram) {
    return { refused: `pattern too large: it compiles to ${compiled.programSize} instructions, more than the limit of ${maxProgram} (FLAGPOST_REGEX_MAX_PROGRAM)` }
  }
  return {}
}

/** Why the pattern is not accepted (not valid RE2, or its program is over the limit), or undefined when it is. */
export function regexProblem(pattern: string, caseInsensitive = false): string | undefined {
  const { refused, invalid } = inspectRegex(pattern, caseInsensitive)
  return refused ?? invalid
}

/**
 * Why a REGEX constraint's pattern is refused: only a program over the limit, which bounds the work every evaluation
 * does. A pattern RE2 refuses otherwise is accepted, as Unleash 8.2 accepts it: the SDKs never match it
 * (regexNeverMatches says why, for validation warnings).
 */
export function regexConstraintProblem(pattern: string, caseInsensitive = false): string | undefined {
  return inspectRegex(pattern, caseInsensitive).refused
}

/** Why the SDKs never match the pattern (RE2 refuses its syntax), or undefined when it compiles. */
export function regexNeverMatches(pattern: string, caseInsensitive = false): string | undefined {
  return inspectRegex(pattern, caseInsensitive).invalid
}

/**
 * The REGEX work of one request: every match draws on one budget, and the first that would go past it throws
 * RegexWorkExceeded, which the routes answer with a 400. With `memo`, a pattern already matched against a text in this
 * request answers from memory: the advanced playground evaluates the same values in thousands of combinations.
 */
export class RegexMeter implements WorkMeter {
  remaining: number
  /** Instructions this request compiled (programs not found in the process-wide cache). */
  compiled = 0
  private readonly memo: Map<CompiledRegex, Map<string, boolean>> | undefined

  constructor(
    readonly budget: number,
    options: { memo?: boolean } = {},
  ) {
    this.remaining = budget
    this.memo = options.memo ? new Map() : undefined
  }

  /**
   * Draws `steps` of work other than matching (every constraint operator charges what it does: see constraints.ts);
   * past the budget it throws RegexWorkExceeded, as a match would.
   */
  charge(steps: number): void {
    addWorkDone(Math.min(steps, this.remaining))
    this.remaining -= steps
    if (this.remaining < 0) {
      this.remaining = 0
      throw new RegexWorkExceeded(this.budget)
    }
  }

  private evaluations: WeakMap<object, Map<object, unknown>> | undefined

  /** What this request has already worked out for a context (the engine keeps parents' evaluations there). */
  evaluationsOf(context: object): Map<object, unknown> {
    this.evaluations ??= new WeakMap()
    let found = this.evaluations.get(context)
    if (found === undefined) this.evaluations.set(context, (found = new Map()))
    return found
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

/**
 * What compiling one instruction costs, in matching steps: about 0.38 µs (a 4,993-instruction program takes 1.9 ms),
 * where a matching step takes about 0.007 µs.
 */
export const COMPILE_STEPS_PER_INSTRUCTION = 50

/**
 * The instructions the process keeps compiled (about 100 bytes each): a program is shared by every flag, segment and
 * payload that holds the same pattern, and the least recently used go first. 500,000 is about 50 MB.
 */
export const REGEX_CACHE_MAX_INSTRUCTIONS = 500_000

type CacheEntry = CompiledRegex | Error
const programs = new Map<string, CacheEntry>()
let cachedInstructions = 0
let compiles = 0

const sizeOf = (entry: CacheEntry) => (entry instanceof Error ? 1 : entry.programSize)

/**
 * The compiled program of a REGEX constraint's pattern, from the process-wide cache or compiled now. Compiling draws
 * on the request's meter (COMPILE_STEPS_PER_INSTRUCTION a instruction, charged before as the pattern's length and after
 * as the program's size), so a request meeting thousands of patterns never compiled stops at its budget. Throws the
 * pattern's syntax error (cached too) or RegexWorkExceeded.
 */
export function cachedRegex(pattern: string, caseInsensitive: boolean, meter?: RegexMeter): CompiledRegex {
  const key = (caseInsensitive ? 'i:' : 's:') + pattern
  let entry = programs.get(key)
  if (entry !== undefined) {
    // Most recently used last: a Map iterates in insertion order.
    programs.delete(key)
    programs.set(key, entry)
  } else {
    meter?.charge(pattern.length)
    try {
      entry = compileRegex(pattern, caseInsensitive)
    } catch (error) {
      entry = error instanceof Error ? error : new Error(String(error))
    }
    compiles++
    const size = sizeOf(entry)
    if (meter !== undefined) meter.compiled += size
    programs.set(key, entry)
    cachedInstructions += size
    for (const [oldKey, old] of programs) {
      if (cachedInstructions <= REGEX_CACHE_MAX_INSTRUCTIONS || oldKey === key) break
      programs.delete(oldKey)
      cachedInstructions -= sizeOf(old)
    }
    meter?.charge(size * COMPILE_STEPS_PER_INSTRUCTION)
  }
  if (entry instanceof Error) throw entry
  return entry
}

/** Patterns compiled by cachedRegex since the process started: tests count compiles with it. */
export const regexCacheStats = () => ({ programs: programs.size, instructions: cachedInstructions, compiles })
