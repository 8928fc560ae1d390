import * as z from './zod.js'
import type { ApiError, ErrorName } from '../core/errors.js'

/** The one place an error kind becomes an HTTP status. */
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
  ServiceUnavailableError: 503,
  InternalError: 500,
} as const satisfies Record<ErrorName, number>

export type ErrorStatus = (typeof errorStatus)[ErrorName]

export const statusOf = (error: ApiError): ErrorStatus => errorStatus[error.name]

export function errorBody(error: ApiError) {
  return {
    ...error.extra,
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
    type: z.string().optional().openapi({ description: 'A 401 of the admin API without credentials: the kind of sign-in (`password`)' }),
    path: z.string().optional().openapi({ description: 'A 401 of the admin API without credentials: where to sign in with a password', example: '/auth/simple/login' }),
    defaultHidden: z.boolean().optional().openapi({ description: 'A 401 of the admin API without credentials: true when password sign-in is switched off' }),
    options: z
      .array(z.object({ type: z.string(), message: z.string(), path: z.string() }))
      .optional()
      .openapi({ description: 'A 401 of the admin API without credentials: the other ways to sign in (single sign-on), each a path to open in the browser' }),
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
  429: describe('TooManyRequestsError: over a limit (per address, token or account, as the route says); try again after `Retry-After` seconds'),
} as const

export function pickErrors<K extends keyof typeof errorResponses>(...statuses: K[]): Pick<typeof errorResponses, K> {
  return Object.fromEntries(statuses.map((s) => [s, errorResponses[s]])) as Pick<typeof errorResponses, K>
}
