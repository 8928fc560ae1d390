/**
 * The headers of every response of the web console (its page and its files), on both homes: the Node server
 * sets them (console-node.ts); Workers static assets take them from console/public/_headers, which a test holds
 * equal to this list. The console may not be framed (a framed console could be clicked into switching flags),
 * runs only its own scripts, and talks only to its own origin.
 */
export const CONSOLE_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
}
