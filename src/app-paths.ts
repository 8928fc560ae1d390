/**
 * The paths the app answers. Every other GET belongs to the web console: one of its built files, or its
 * index.html (a single-page app routes in the browser). The Node server (console-node.ts) and wrangler.toml's
 * `run_worker_first` both route by this list; a test holds wrangler.toml to it and every OpenAPI path inside it.
 */
export const APP_PATHS = ['/api/*', '/auth/*', '/edge/*', '/health', '/ready', '/docs', '/docs/*', '/logout', '/invite/*', '/ofrep/*'] as const

/** Whether the app (not the console) answers `path`: a `/x/*` entry takes `/x` and everything under `/x/`. */
export function isAppPath(path: string): boolean {
  return APP_PATHS.some((pattern) => (pattern.endsWith('/*') ? path === pattern.slice(0, -2) || path.startsWith(pattern.slice(0, -1)) : path === pattern))
}
