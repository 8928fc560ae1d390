import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Hono } from 'hono'
import { getPath } from 'hono/utils/url'
import { serveStatic } from '@hono/node-server/serve-static'
import { isAppPath } from './app-paths.js'
import { CONSOLE_HEADERS } from './console-headers.js'

/** Where `npm run console:build` puts the web console. */
export const CONSOLE_DIST = fileURLToPath(new URL('../console/dist', import.meta.url))

type Fetch = (request: Request, env?: {} | Record<string, unknown>) => Response | Promise<Response>

/**
 * The Node home's front door: the app's paths (and every request that is not a GET or HEAD) go to the app
 * exactly as before; any other GET is a file of the web console, or its index.html so the console's own
 * routes load on a reload. Hashed assets are cached for a year; index.html is revalidated on every load. Each file
 * goes as its brotli or gzip twin (written at build, scripts/precompress-console.ts) when the client accepts it.
 * Kept out of app.ts: the worker serves the same files from Workers static assets.
 */
export function withConsole(appFetch: Fetch, root: string = CONSOLE_DIST): Fetch {
  if (!existsSync(root)) {
    console.warn(`The web console is not built (${root} is missing): run \`npm run console:build\`. The API is served without it.`)
    return appFetch
  }
  const front = new Hono()
  front.use('*', async (c, next) => {
    await next()
    for (const [name, value] of Object.entries(CONSOLE_HEADERS)) c.header(name, value)
  })
  front.use(
    '/assets/*',
    serveStatic({
      root,
      precompressed: true,
      onFound: (_path, c) => {
        c.header('Cache-Control', 'public, max-age=31536000, immutable')
      },
    }),
  )
  // Workers' header rules for the same files (console/public/_headers), not a page.
  front.get('/_headers', (c) => c.text('Not Found', 404))
  // A missing asset is a 404, not the console's page: a stale index.html must not get HTML for a script.
  front.get('/assets/*', (c) => c.text('Not Found', 404))
  // Files other than index.html outside assets/ (favicon) get a short lifetime: their names carry no hash.
  front.use(
    '*',
    serveStatic({
      root,
      precompressed: true,
      rewriteRequestPath: (path) => (path === '/' ? '/index.html' : path),
      onFound: (path, c) => {
        c.header('Cache-Control', /\/index\.html(\.br|\.gz)?$/.test(path) ? 'no-cache' : 'public, max-age=3600')
      },
    }),
  )
  front.get('*', serveStatic({ root, path: 'index.html', precompressed: true, onFound: (_path, c) => void c.header('Cache-Control', 'no-cache') }))
  // The path as Hono reads it (the app's routes see the same): an SDK poll reaches the app without a second router.
  return (request, env) => ((request.method !== 'GET' && request.method !== 'HEAD') || isAppPath(getPath(request)) ? appFetch(request, env) : front.fetch(request, env))
}
