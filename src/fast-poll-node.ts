import type { IncomingMessage, ServerResponse } from 'node:http'
import { CLIENT_FEATURES_PATH, type FastPoll } from './client-api/fast-poll.js'

/** A Host node-server takes as it is (its own test): any other goes its way, which may refuse it. */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/

/** The request headers the fast path reads, each of which must come once (a repeat goes the routed way). */
const READ = new Set(['host', 'authorization', 'if-none-match', 'unleash-client-spec', 'x-request-id'])
const READ_LENGTHS = new Set([...READ].map((name) => name.length))

/**
 * The unchanged SDK poll answered from Node's request itself, before @hono/node-server makes a Web `Request` of it, runs
 * the fetch handler's promise and writes the `Response`: the same 304 (`writeHead` with the same header record, then
 * `end`, as node-server writes it), the same log line and metrics (client-api/fast-poll.ts decides and records).
 * Returns false, having done nothing, for anything else: then node-server and the app answer it.
 *
 * Only `GET /api/client/features` in origin form, exactly (no query, no absolute form), with a plain Host, and each header
 * it reads sent once: Node keeps only the first of repeated `Authorization` or `Host` lines where a Web `Headers` joins
 * them, so any repeat is left to the routed way, which reads them as the app always has.
 */
export function nodeFastPolls(fastPoll: FastPoll): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    if (request.method !== 'GET' || request.url !== CLIENT_FEATURES_PATH || request.httpVersionMajor !== 1) return false
    // Node's `headers` object would be built for this request alone: the raw lines are read once instead.
    const raw = request.rawHeaders
    const read: Record<string, string> = {}
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!
      // Only names as long as one read here are lowered and compared.
      if (!READ_LENGTHS.has(name.length)) continue
      const lower = name.toLowerCase()
      if (!READ.has(lower)) continue
      if (read[lower] !== undefined) return false
      read[lower] = raw[i + 1]!
    }
    if (read.host === undefined || !PLAIN_HOST.test(read.host)) return false
    const headers = fastPoll.answer((name) => read[name])
    if (headers === undefined) return false
    response.writeHead(304, headers)
    response.end()
    return true
  }
}
