// The physical limit of an SDK poll for bench:compare: a bare Hono route on @hono/node-server, the same Node and
// framework as Flagpost, answering GET /api/client/features with Flagpost's own payload bytes and ETag (304 when
// If-None-Match names it). No authentication, scope, cache or middleware: what is left is HTTP and Hono.
import { readFileSync } from 'node:fs'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'

const body = readFileSync(process.env.BENCH_BARE_BODY_FILE)
const etag = process.env.BENCH_BARE_ETAG
const app = new Hono()
app.get('/api/client/features', (c) =>
  c.req.header('if-none-match') === etag ? c.body(null, 304, { ETag: etag }) : c.body(body, 200, { ETag: etag, 'Content-Type': 'application/json; charset=UTF-8' }),
)
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => console.log(`bare route listening on http://127.0.0.1:${info.port}`))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
