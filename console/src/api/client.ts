import createClient from 'openapi-fetch'
import type { components, paths } from './schema'

export type Schemas = components['schemas']

/** What the signed-in user was doing when a 401 sent them to the sign-in page. */
export const SIGN_IN_PATH = '/sign-in'
/** Where a new user's link (`inviteLink` of POST /api/admin/user-admin) and password-reset links lead (the server's NEW_USER_PATH, in src/users/reset-tokens.ts). */
export const NEW_USER_PATH = '/new-user'

/** The page an invite link opens (`?invite=<secret>`), open to anyone: the server's invite links point here. */
export const SIGN_UP_PATH = '/sign-up'

/**
 * The console's only way to the server: the public admin API, typed from its OpenAPI document, with the
 * session cookie the sign-in set (same origin). A 401 anywhere but the sign-in itself ends on the sign-in page.
 */
export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' })

let onUnauthenticated: (() => void) | undefined
export function whenUnauthenticated(handler: () => void) {
  onUnauthenticated = handler
}

api.use({
  onResponse({ request, response }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/auth/')) onUnauthenticated?.()
    return undefined
  },
})

/** An error answer of the API: its status and the `message` of its body (with validation details). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorName?: string,
  ) {
    super(message)
  }
}

interface ErrorBody {
  name?: string
  message?: string
  details?: { message?: string; description?: string }[]
}

function errorMessage(body: unknown, response: Response): { message: string; name?: string } {
  const b = (body ?? {}) as ErrorBody
  const details = (b.details ?? []).map((d) => d.message ?? d.description).filter((m): m is string => !!m && m !== b.message)
  const base = b.message ?? `${response.status} ${response.statusText || 'error'}`
  return { message: details.length > 0 ? `${base}: ${details.join('; ')}` : base, ...(b.name ? { name: b.name } : {}) }
}

/** The data of a successful answer; any other answer is thrown as an ApiError carrying the body's message. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call
  if (!response.ok) {
    const { message, name } = errorMessage(error, response)
    throw new ApiError(response.status, message, name)
  }
  return data as T
}
