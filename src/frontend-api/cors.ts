import { cors } from 'hono/cors'
import type { MiddlewareHandler } from 'hono'

/**
 * CORS for the frontend API only (browsers call it directly; the admin and client APIs stay same-origin).
 * Preflights are answered before authentication, since browsers send them without the token.
 */
export function frontendCors(origins: string[]): MiddlewareHandler {
  const any = origins.length === 0 || origins.includes('*')
  return cors({
    origin: any ? '*' : origins,
    allowMethods: ['GET', 'POST', 'OPTIONS'],
    exposeHeaders: ['ETag'],
    maxAge: 86_400,
  })
}

/** Parses FLAGPOST_FRONTEND_CORS_ORIGINS: comma-separated origins, `*` (the default) for any. */
export function parseCorsOrigins(value: string | undefined): string[] {
  const origins = (value ?? '')
    .split(',')
    .map((o) => o.trim().replace(/\/+$/, ''))
    .filter(Boolean)
  return origins.length === 0 ? ['*'] : origins
}
