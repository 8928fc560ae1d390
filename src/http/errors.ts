import { z } from '@hono/zod-openapi'

/** Every error kind the API answers with, and its status. The names are the interface spec's, spelled exactly. */
export const errorStatus = {
  ValidationError: 400,
  AuthenticationRequired: 401,
  NoAccessError: 403,
  NotFoundError: 404,
  NameExistsError: 409,
  ConflictError: 409,
  PayloadTooLargeError: 413,
  ContentTypeerror: 415,
  TooManyRequestsError: 429,
  InternalError: 500,
} as const

export type ErrorName = keyof typeof errorStatus
export type ErrorStatus = (typeof errorStatus)[ErrorName]

export interface ErrorDetail {
  path: string
  message: string
}

export class ApiError extends Error {
  readonly status: ErrorStatus
  constructor(
    override readonly name: ErrorName,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message)
    this.status = errorStatus[name]
  }
}

export const validationError = (message: string, details?: ErrorDetail[]) => new ApiError('ValidationError', message, details)
export const notFound = (message: string) => new ApiError('NotFoundError', message)
export const nameExists = (message: string) => new ApiError('NameExistsError', message)
export const conflict = (message: string) => new ApiError('ConflictError', message)
export const noAccess = (message: string) => new ApiError('NoAccessError', message)

export function errorBody(error: ApiError) {
  return {
    id: crypto.randomUUID(),
    name: error.name,
    message: error.message,
    ...(error.details ? { details: error.details } : {}),
  }
}

export const ErrorSchema = z
  .object({
    id: z.string().openapi({ description: 'The id of this error instance' }),
    name: z.string().openapi({ description: 'The kind of error', example: 'ValidationError' }),
    message: z.string().openapi({ description: 'What went wrong' }),
    details: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .openapi({ description: 'For validation errors: each problem and where it is' }),
  })
  .openapi('errorSchema')

const describe = (description: string) => ({ description, content: { 'application/json': { schema: ErrorSchema } } })

/** The error responses routes document, by status. */
export const errorResponses = {
  400: describe('ValidationError: the request does not match the expected schema'),
  401: describe('AuthenticationRequired: credentials missing or invalid'),
  403: describe('NoAccessError: credentials valid, permission missing'),
  404: describe('NotFoundError: the resource does not exist'),
  409: describe('NameExistsError or ConflictError: the change clashes with what exists'),
  413: describe('PayloadTooLargeError: the request body is larger than 1 MB'),
  415: describe('ContentTypeerror: only application/json is accepted'),
  429: describe('TooManyRequestsError: too many requests from this address; try again after `Retry-After` seconds'),
} as const

export function pickErrors<K extends keyof typeof errorResponses>(...statuses: K[]): Pick<typeof errorResponses, K> {
  return Object.fromEntries(statuses.map((s) => [s, errorResponses[s]])) as Pick<typeof errorResponses, K>
}

/** Postgres error codes we turn into client errors instead of a 500. */
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
