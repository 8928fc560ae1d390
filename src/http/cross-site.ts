import type { MiddlewareHandler } from 'hono'
import { noAccess } from '../core/errors.js'

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * Refuses a cross-site write that a browser would send with the session cookie (a form posted from another
 * site: SameSite=Lax cookies still travel on a top-level POST from a sibling subdomain, and a form needs no
 * CORS preflight). Only requests that an Authorization header does not authenticate are judged: a token is
 * never sent by a browser on its own. A browser names where a write comes from (`Sec-Fetch-Site`, and `Origin`
 * on every POST, PUT, PATCH and DELETE); a request that names neither is not a browser's, and passes.
 * Allowed origins: the request's own host, and the configured public URL's.
 */
export function crossSiteWriteGuard(options: { publicUrl?: string }): MiddlewareHandler {
  const publicHost = options.publicUrl ? new URL(options.publicUrl).host : undefined
  return async (c, next) => {
    if (WRITE_METHODS.has(c.req.method) && !c.req.header('authorization')) {
      const site = c.req.header('sec-fetch-site')?.toLowerCase()
      const origin = c.req.header('origin')
      if (site !== undefined && site !== 'same-origin' && site !== 'none') throw crossSite()
      if (origin !== undefined) {
        const host = hostOf(origin)
        if (host === undefined || (host !== new URL(c.req.url).host && host !== publicHost)) throw crossSite()
      }
    }
    await next()
  }
}

function hostOf(origin: string): string | undefined {
  try {
    return origin === 'null' ? undefined : new URL(origin).host
  } catch {
    return undefined
  }
}

const crossSite = () =>
  noAccess('Cross-site request refused: a signed-in browser may change things only from this site. Scripts and other sites use an API token in the Authorization header.')
