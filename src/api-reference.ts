import { CONSOLE_HEADERS } from './console-headers.js'

/** Where the API reference's scripts and styles are: Swagger UI's files, built next to the web console's (console/vite.config.ts). */
export const API_REFERENCE_FILES = '/api-reference'

const escapeAttribute = (value: string) => value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;')

/**
 * The page of `GET /docs`: the API reference on the OpenAPI document at `documentPath`. It loads only files of its own
 * origin (served as the console's files: static assets on Workers, console/dist on Node), no inline script, so it runs
 * under the console's CSP on the origin of the session cookie, and offline. Before the script runs (or when the console is
 * not built) it says where the document is.
 */
export function apiReferencePage(documentPath: string): string {
  const document = escapeAttribute(documentPath)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flagpost API</title>
<link rel="stylesheet" href="${API_REFERENCE_FILES}/swagger-ui.css">
</head>
<body>
<div id="api-reference" data-document="${document}"><p>The API reference is loading. The OpenAPI document is at <a href="${document}">${document}</a>.</p></div>
<script src="${API_REFERENCE_FILES}/swagger-ui-bundle.js"></script>
<script src="${API_REFERENCE_FILES}/init.js"></script>
</body>
</html>
`
}

/** The headers of the page: the console's (its CSP: scripts of this origin only; no framing), revalidated on every load. */
export const API_REFERENCE_HEADERS: Record<string, string> = { ...CONSOLE_HEADERS, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' }
