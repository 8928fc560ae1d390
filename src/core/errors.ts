/**
 * The error contract, free of any transport: services throw an `ApiError` naming its kind; the HTTP layer
 * (src/http/errors.ts) is the one place that turns a kind into a status and a body.
 */

/** Every error kind the API answers with. The names are the interface spec's, spelled exactly. */
export const ERROR_NAMES = [
  'ValidationError',
  'AuthenticationRequired',
  'NoAccessError',
  'NotFoundError',
  'NameExistsError',
  'ConflictError',
  'PayloadTooLargeError',
  'ContentTypeerror',
  'TooManyRequestsError',
  // Maintenance mode refusing a write.
  'ServiceUnavailableError',
  'InternalError',
] as const

export type ErrorName = (typeof ERROR_NAMES)[number]

export interface ErrorDetail {
  path: string
  message: string
}

export class ApiError extends Error {
  constructor(
    override readonly name: ErrorName,
    message: string,
    readonly details?: ErrorDetail[],
    /** More fields of the error's body (the admin API's 401 says how to sign in, as Unleash's does). */
    readonly extra?: Record<string, unknown>,
  ) {
    super(message)
  }
}

export const validationError = (message: string, details?: ErrorDetail[]) => new ApiError('ValidationError', message, details)
export const notFound = (message: string) => new ApiError('NotFoundError', message)
export const nameExists = (message: string) => new ApiError('NameExistsError', message)
export const conflict = (message: string) => new ApiError('ConflictError', message)
export const noAccess = (message: string) => new ApiError('NoAccessError', message)

/** Postgres error codes that are the client's mistake: they become client errors instead of a 500. */
export function fromDatabaseError(error: unknown): ApiError | undefined {
  const code = (error as { code?: unknown } | null)?.code ?? (error as { cause?: { code?: unknown } } | null)?.cause?.code
  if (code === '23505') return nameExists('A resource with that name or id already exists')
  if (code === '23503') return validationError('The request refers to something that does not exist')
  if (code === '22P02' || code === '22003' || code === '22007' || code === '22008') return validationError('A value in the request is out of range or malformed')
  return undefined
}

/** A Postgres error (any driver): its SQLSTATE and the names it carries. */
interface DatabaseError extends Error {
  code: string
  constraint?: string
  table?: string
  column?: string
  schema?: string
  dataType?: string
}

const isDatabaseError = (error: unknown): error is DatabaseError => {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && 'severity' in (error as object)
}

/**
 * `message` with its quoted values blanked: a quoted part that is one of `names` stays; from the first that is not, all
 * up to the message's last quote goes (Postgres does not escape a quote inside a value, so a value may hold quotes).
 */
function blankQuoted(message: string, names: ReadonlySet<string | undefined>): string {
  let kept = ''
  let from = 0
  for (;;) {
    const open = message.indexOf('"', from)
    if (open < 0) return kept + message.slice(from)
    const close = message.indexOf('"', open + 1)
    if (close >= 0 && names.has(message.slice(open + 1, close))) {
      kept += message.slice(from, close + 1)
      from = close + 1
      continue
    }
    const last = message.lastIndexOf('"')
    return kept + message.slice(from, open) + '"…"' + (last > open ? message.slice(last + 1) : '')
  }
}

/**
 * A database error as a log may show it: its message with every quoted part blanked but the names the error
 * carries (constraint, table, column, type), its SQLSTATE and constraint. Never its `detail` (a unique violation's
 * `Key (name)=(value)`) nor `where`: Postgres quotes values there and in some messages (`invalid input syntax for
 * type integer: "…"`).
 */
function describeDatabaseError(error: DatabaseError): string {
  const names = new Set([error.constraint, error.table, error.column, error.schema, error.dataType].filter((name) => typeof name === 'string' && name !== ''))
  const message = blankQuoted(error.message, names)
  return `${message} (code ${error.code}${error.constraint ? `, constraint ${error.constraint}` : ''})`
}

/**
 * What a log may show of an error: a failed query's error carries the values it was sent (webhook secrets,
 * e-mails, token hashes), and the database's error may quote one, so the log gets the statement, the SQLSTATE and
 * the names the database gave, never a value. Other errors are logged as they are.
 */
export function loggable(error: unknown): unknown {
  if (isDatabaseError(error)) return `Database error (values not logged): ${describeDatabaseError(error)}`
  if (!(error instanceof Error) || !('query' in error) || !('params' in error)) return error
  const cause = isDatabaseError(error.cause) ? describeDatabaseError(error.cause) : error.cause instanceof Error ? error.cause.message : String(error.cause ?? '')
  return `Failed query (values not logged): ${String(error.query)}${cause ? `: ${cause}` : ''}`
}
