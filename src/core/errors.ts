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

/**
 * What a log may show of an error: a failed query's error carries the values it was sent (webhook secrets,
 * e-mails, token hashes), so the log gets the statement and the database's message, never the values.
 */
export function loggable(error: unknown): unknown {
  if (!(error instanceof Error) || !('query' in error) || !('params' in error)) return error
  const cause = error.cause instanceof Error ? error.cause.message : String(error.cause ?? '')
  return `Failed query (values not logged): ${String(error.query)}${cause ? `: ${cause}` : ''}`
}
