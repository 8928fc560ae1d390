import type { Context, MiddlewareHandler } from 'hono'
import { matchedRoutes } from 'hono/route'
import type { Principal } from '../core/principal.js'
import { setAnswerHeader } from './context.js'
import { loggable } from '../core/errors.js'

// Request logs: one line per answered request (LOG_LEVEL info or debug), in JSON for a log pipeline or pretty for a
// terminal (LOG_FORMAT). A line names the route template, never the path or query (they carry flag names, tokens in
// misused URLs, user input), and the principal by kind and id, never a secret, a cookie or a header's value.

export type LogLevel = 'error' | 'warn' | 'info' | 'debug'
export type LogFormat = 'json' | 'pretty'

export interface LogOptions {
  format: LogFormat
  level: LogLevel
  /** Where a line goes (default: console.log for info and debug, console.error for warn and error). */
  write?: (line: string, level: LogLevel) => void
}

const LEVELS: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 }
const LOG_LEVELS = Object.keys(LEVELS) as LogLevel[]

/** LOG_FORMAT and LOG_LEVEL (default pretty and warn: no line per request, as Unleash logs none by default). */
export function readLogOptions(env: { LOG_FORMAT?: string; LOG_LEVEL?: string }): LogOptions {
  const format = (env.LOG_FORMAT ?? 'pretty').toLowerCase()
  const level = (env.LOG_LEVEL ?? 'warn').toLowerCase()
  if (format !== 'json' && format !== 'pretty') throw new Error(`LOG_FORMAT must be json or pretty, got "${env.LOG_FORMAT}"`)
  if (!LOG_LEVELS.includes(level as LogLevel)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`)
  return { format, level: level as LogLevel }
}

/** A request id a client may choose: bounded, and only characters that cannot break a log line or a header. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void
  enabled(level: LogLevel): boolean
}

/**
 * What JSON.stringify leaves raw that a log viewer may still read as a line break or a command: line and paragraph
 * separators, DEL and the C1 controls (CSI), bidirectional overrides and isolates. Escaped as \\uXXXX (valid JSON).
 */
const UNPRINTABLE = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
const printable = (line: string) => line.replace(UNPRINTABLE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)

export function createLogger(options: LogOptions): Logger {
  const write = options.write ?? ((line: string, level: LogLevel) => (LEVELS[level] <= LEVELS.warn ? console.error(line) : console.log(line)))
  const enabled = (level: LogLevel) => LEVELS[level] <= LEVELS[options.level]
  return {
    enabled,
    log(level, message, fields = {}) {
      if (!enabled(level)) return
      const time = new Date().toISOString()
      if (options.format === 'json') write(printable(JSON.stringify({ time, level, msg: message, ...fields })), level)
      else write(printable(`${time} ${level.toUpperCase().padEnd(5)} ${message}${Object.entries(fields).map(([k, v]) => ` ${k}=${JSON.stringify(v ?? null)}`).join('')}`), level)
    },
  }
}

/** Where nothing else is given (a job run alone, tests): errors and warnings only, pretty. */
export const DEFAULT_LOGGER: Logger = createLogger({ format: 'pretty', level: 'warn' })

/** An error as log fields: its message and stack, on one line in either format (a failed query: its SQL, never its values). */
export function errorFields(error: unknown): { error: string; stack?: string } {
  const safe = loggable(error)
  const message = safe instanceof Error ? safe.message : String(safe)
  if (!(error instanceof Error) || !error.stack) return { error: message }
  // The frames only: the stack's first lines repeat the message, which for a failed query holds its values.
  const frames = error.stack.split('\n').filter((line) => /^\s+at /.test(line))
  return { error: message, stack: [`${error.name}: ${message}`, ...frames].join('\n') }
}

/** The template of the route that answered (Hono's matched route, never the raw path), or `unmatched`. */
export const routeTemplateOf = (c: Context): string => matchedRoutes(c).findLast((r) => r.method !== 'ALL')?.path ?? 'unmatched'

export const principalFields = (principal: Principal | undefined) =>
  !principal ? {} : principal.kind === 'user' ? { principal: 'user', principalId: principal.userId } : { principal: principal.kind, principalId: principal.tokenId }

declare module 'hono' {
  interface ContextVariableMap {
    /** The request's id (X-Request-Id as the client sent it when well formed, else made here); answered in X-Request-Id. */
    requestId: string
    /** The app's logger (LOG_FORMAT, LOG_LEVEL): every line through it is one line, its fields escaped. */
    logger: Logger
  }
}

declare module 'hono' {
  interface ContextVariableMap {
    /** The answer made with X-Request-Id already among its headers, if one was (`answerWithRequestId`). */
    answeredWithRequestId: Response
  }
}

/**
 * An answer without a body whose headers are all known when it is made (the SDK polls' 304), with the request's
 * X-Request-Id among them, in one plain record: node-server writes such an answer without building a `Headers`
 * object, which adding the id afterwards (or two headers through `c.body`) makes it do (≈ 10 µs of CPU a poll).
 */
export function answerWithRequestId(c: Context, status: 304, headers: Record<string, string>): Response {
  const requestId = c.get('requestId') as string | undefined
  const response = new Response(null, { status, headers: requestId === undefined ? headers : { ...headers, 'x-request-id': requestId } })
  if (requestId !== undefined) c.set('answeredWithRequestId', response)
  return response
}

/**
 * Gives every request an id (answered in X-Request-Id) and, at LOG_LEVEL info, logs it once answered: time, id, route
 * template, method, status, duration and who (kind and id). Unexpected errors are logged by the app's error handler.
 */
export function requestLog(logger: Logger): MiddlewareHandler {
  const logRequests = logger.enabled('info')
  return async (c: Context, next) => {
    const requestId = requestIdOf(c.req.header('x-request-id'))
    c.set('requestId', requestId)
    const start = logRequests ? performance.now() : 0
    await next()
    if (c.get('answeredWithRequestId') !== c.res) setAnswerHeader(c, 'X-Request-Id', requestId)
    if (logRequests) logRequest(logger, requestId, c.req.method, routeTemplateOf(c), c.res.status, start, c.get('principal') as Principal | undefined)
  }
}

/** The request's id: the client's X-Request-Id when well formed, else a new one. */
export const requestIdOf = (sent: string | null | undefined): string => (sent != null && CLIENT_REQUEST_ID.test(sent) ? sent : crypto.randomUUID())

/** The line of one answered request (the SDK poll answered before the router writes the same one: client-api/fast-poll.ts). */
export function logRequest(logger: Logger, requestId: string, method: string, route: string, status: number, start: number, principal: Principal | undefined): void {
  logger.log('info', 'request', {
    requestId,
    method: method.length <= 10 ? method : 'OTHER',
    route,
    status,
    durationMs: Math.round((performance.now() - start) * 10) / 10,
    ...principalFields(principal),
  })
}
