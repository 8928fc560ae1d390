import type { MiddlewareHandler } from 'hono'
import { ApiError } from '../core/errors.js'
import { errorBody } from '../http/errors.js'
import { limitKeysOf } from '../http/client-address.js'
import { addressWindow } from '../http/address-window.js'

export interface SignInRateLimit {
  /** Sign-in attempts one address may make in a minute; default 10, as Unleash. 0: no limit. */
  perMinute?: number
}

const WINDOW_MS = 60_000
/** Addresses remembered at once: a flood of addresses forgets the oldest, it never grows memory without bound. */
const MAX_ADDRESSES = 10_000

/**
 * Limits sign-in attempts per client address over a sliding minute, before any password is hashed: 429
 * TooManyRequestsError with `Retry-After` (seconds) past the limit. The count lives in the process (on
 * Workers, in the isolate); the account lockout (src/auth/login.ts), counted in the database, holds across
 * all of them.
 */
export function signInRateLimit(options: SignInRateLimit, clock: () => Date): MiddlewareHandler {
  const perMinute = options.perMinute ?? 10
  const attempts = addressWindow(WINDOW_MS, MAX_ADDRESSES)
  return async (c, next) => {
    // An unknown address (no socket: a test's app.request) is not limited.
    const keys = limitKeysOf(c, perMinute)
    if (keys.length === 0 || perMinute <= 0) return next()
    const retryAfter = attempts(keys, clock().getTime())
    if (retryAfter !== undefined) {
      const error = new ApiError('TooManyRequestsError', `Too many sign-in attempts from this address: try again in ${retryAfter} seconds`)
      return c.json(errorBody(error), 429, { 'Retry-After': String(retryAfter) })
    }
    await next()
  }
}

/** FLAGPOST_SIGN_IN_RATE_LIMIT as a count (default 10); anything but a whole number is refused at start. */
export function signInPerMinute(value: string | undefined): number {
  if (value === undefined || value === '') return 10
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0) throw new Error(`FLAGPOST_SIGN_IN_RATE_LIMIT must be a whole number, got "${value}"`)
  return n
}
