import { cors } from 'hono/cors'
import type { Context, MiddlewareHandler } from 'hono'
import { setAnswerHeader } from '../http/context.js'

/**
 * CORS for the frontend API only (browsers call it directly; the admin and client APIs stay same-origin).
 * Preflights are answered before authentication, since browsers send them without the token.
 *
 * Preflights are hono's `cors`. Other requests get the same headers (`Access-Control-Allow-Origin` when the origin is
 * allowed, `Access-Control-Expose-Headers: ETag`, `Vary: Origin` appended) set on the answer's own headers once it is
 * made: hono's sets them on a provisional answer before the route runs and appends `Vary` with `c.header` after it,
 * which made Hono copy the route's answer twice, each copy a Web `Response` with a stream for a body (about a tenth of
 * a frontend API request's CPU on Node).
 */
export function frontendCors(originsOf: (c: Context) => Promise<string[]>): MiddlewareHandler {
  // The deployment's origins (FLAGPOST_FRONTEND_CORS_ORIGINS), or those an admin stored (POST /api/admin/ui-config/cors).
  const allowedOrigin = async (origin: string, c: Context) => {
    const origins = await originsOf(c)
    if (origins.length === 0 || origins.includes('*')) return '*'
    // Compared as origins: a list stored before origins were normalised (`https://Shop.example.com/`) still matches.
    return origins.some((o) => normaliseOrigin(o) === origin) ? origin : null
  }
  const preflight = cors({ origin: allowedOrigin, allowMethods: ['GET', 'POST', 'OPTIONS'], exposeHeaders: [EXPOSED_HEADERS], maxAge: 86_400 })
  return async (c, next) => {
    if (c.req.method === 'OPTIONS') return preflight(c, next)
    const allowed = await allowedOrigin(c.req.header('origin') || '', c)
    await next()
    if (allowed) setAnswerHeader(c, 'Access-Control-Allow-Origin', allowed)
    setAnswerHeader(c, 'Access-Control-Expose-Headers', EXPOSED_HEADERS)
    setAnswerHeader(c, 'Vary', 'Origin', { append: true })
  }
}

const EXPOSED_HEADERS = 'ETag'

/**
 * One CORS origin as browsers send it in `Origin`: `*`, or a URL's lower-case scheme, host and port with no path (a trailing
 * slash is dropped). Undefined when the value is no origin, has a path, is not http(s), or names a wildcard host
 * (`https://*.example.com`): Unleash matches origins exactly, so such a value would be stored and never match.
 */
export function normaliseOrigin(value: string): string | undefined {
  if (value === '*') return '*'
  if (value.includes('*')) return undefined
  try {
    const url = new URL(value)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
    if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined
    if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\/?$/i.test(value.trim())) return undefined
    return url.origin
  } catch {
    return undefined
  }
}

/** Parses FLAGPOST_FRONTEND_CORS_ORIGINS: comma-separated origins, `*` (the default) for any. */
export function parseCorsOrigins(value: string | undefined): string[] {
  const origins = (value ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      const origin = normaliseOrigin(o)
      if (origin === undefined) throw new Error(`FLAGPOST_FRONTEND_CORS_ORIGINS: ${JSON.stringify(o)} is not \`*\` or an origin such as https://example.com (no path, no wildcard host)`)
      return origin
    })
  return origins.length === 0 ? ['*'] : origins
}
