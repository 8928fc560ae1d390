import { cors } from 'hono/cors'
import type { Context, MiddlewareHandler } from 'hono'

/**
 * CORS for the frontend API only (browsers call it directly; the admin and client APIs stay same-origin).
 * Preflights are answered before authentication, since browsers send them without the token.
 */
export function frontendCors(originsOf: (c: Context) => Promise<string[]>): MiddlewareHandler {
  return cors({
    // The deployment's origins (FLAGPOST_FRONTEND_CORS_ORIGINS), or those an admin stored (POST /api/admin/ui-config/cors).
    origin: async (origin, c) => {
      const origins = await originsOf(c)
      if (origins.length === 0 || origins.includes('*')) return '*'
      return origins.includes(origin) ? origin : null
    },
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
