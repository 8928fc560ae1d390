import createClient from 'openapi-fetch'
import type { components, paths } from './schema'
import { takeEarly } from '../early'

export type Schemas = components['schemas']

export { NEW_USER_PATH, SIGN_IN_PATH, SIGN_UP_PATH } from '../paths'

/**
 * The console's only way to the server: the public admin API, typed from its OpenAPI document, with the
 * session cookie the sign-in set (same origin). A 401 anywhere but the sign-in itself ends on the sign-in page.
 */
export const api = createClient<paths>({
  baseUrl: window.location.origin,
  credentials: 'same-origin',
  // A read started before the console loaded (early.ts) answers the first GET of its address.
  fetch: (request) => (request.method === 'GET' && takeEarly(request.url)) || globalThis.fetch(request),
})

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
