import { Duplex } from 'node:stream'
import { constants, createBrotliCompress, createGzip } from 'node:zlib'

type Fetch = (request: Request, env?: {} | Record<string, unknown>) => Response | Promise<Response>

/** Answers shorter than this go as they are: compressing them saves less than the headers it adds. */
export const COMPRESS_MIN_BYTES = 1024

// Text the app answers with; never an event stream (SSE must reach the client event by event, not held in a compressor).
const COMPRESSIBLE = /^\s*(application\/(json|[\w.+-]+\+json|javascript|yaml|xml)|text\/(?!event-stream)[\w.+-]+)\s*(;|$)/i

/** The encoding the client prefers among brotli and gzip (`Accept-Encoding`, q-values honoured; `q=0` refuses), or none. */
export function chosenEncoding(accept: string | null): 'br' | 'gzip' | undefined {
  if (!accept) return undefined
  const weights = new Map<string, number>()
  for (const part of accept.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean)
    weights.set(name!.trim(), q ? Number(q[1]) : 1)
  }
  const br = weightOf(weights, 'br')
  const gzip = weightOf(weights, 'gzip')
  if (br <= 0 && gzip <= 0) return undefined
  return br >= gzip ? 'br' : 'gzip'
}

// A q-value that is no number (`q=.`) counts as 0: the encoding is not accepted.
function weightOf(weights: Map<string, number>, name: string): number {
  const weight = weights.get(name) ?? (name !== 'identity' ? (weights.get('*') ?? 0) : 0)
  return weight > 0 ? weight : 0
}

const varyOnEncoding = (headers: Headers) => {
  const vary = headers.get('vary')
  if (!vary || !/(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(vary)) headers.set('vary', vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding')
}

/**
 * The body of @hono/node-server's light answer when it holds text or bytes whole (its cache record: status, body,
 * headers), else undefined (then the body is read as a stream, as for any other answer).
 */
function heldBody(response: Response): string | Uint8Array | undefined {
  const cache = Object.getOwnPropertySymbols(response).find((symbol) => symbol.description === 'cache')
  const held: unknown = cache && (response as unknown as Record<symbol, unknown>)[cache]
  if (!Array.isArray(held)) return undefined
  const body: unknown = held[1]
  return typeof body === 'string' || body instanceof Uint8Array ? body : undefined
}

const UNCOMPRESSED_STATUSES = new Set([204, 206, 304])

/** From this size (or when the size is unknown: a streamed answer) an answer is compressed at the fast level. */
export const FAST_COMPRESSION_FROM_BYTES = 1024 * 1024

/**
 * Brotli quality 4 / gzip 6 for an answer under FAST_COMPRESSION_FROM_BYTES: most of brotli's gain on JSON at a few
 * milliseconds per megabyte (11, the default, costs a hundred times more). Larger answers and streamed ones (the advanced
 * playground's, up to 32 MiB) take quality 1 / gzip 1: about 0.5 ms a megabyte instead of 3 (a 16 MB answer at Unleash's
 * limit of evaluations cost 45 ms of compression on top of its 25 ms of evaluation), still 30–40 times smaller than JSON.
 */
export function compressionLevel(size: number | undefined): 'fast' | 'dense' {
  return size === undefined || size >= FAST_COMPRESSION_FROM_BYTES ? 'fast' : 'dense'
}

const compressor = (encoding: 'br' | 'gzip', level: 'fast' | 'dense') =>
  encoding === 'br'
    ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: level === 'fast' ? 1 : 4 } })
    : createGzip({ level: level === 'fast' ? 1 : 6 })

/**
 * The Node home's compression of the app's answers (the worker's are compressed by Cloudflare): JSON and text of at
 * least COMPRESS_MIN_BYTES, in brotli or gzip as the client asks, streamed (a streamed answer, the advanced
 * playground's, stays streamed). Answers already encoded (the console's precompressed files), event streams, HEAD,
 * 204/206/304 and `Cache-Control: no-transform` pass unchanged. An answer's size is known from its first bytes:
 * at most COMPRESS_MIN_BYTES are read before deciding.
 */
export function withCompression(appFetch: Fetch): Fetch {
  return async (request, env) => {
    const response = await appFetch(request, env)
    // Status and headers first: reading `body` turns node-server's light answer into a full one (an SDK poll's 304 paid that).
    if (request.method === 'HEAD' || UNCOMPRESSED_STATUSES.has(response.status)) return response
    const type = response.headers.get('content-type')
    if (
      !type ||
      !COMPRESSIBLE.test(type) ||
      response.headers.has('content-encoding') ||
      /(^|,)\s*no-transform\s*(,|$)/i.test(response.headers.get('cache-control') ?? '')
    )
      return response
    const length = response.headers.get('content-length')
    if (length !== null && Number(length) < COMPRESS_MIN_BYTES) return response
    const encoding = chosenEncoding(request.headers.get('accept-encoding'))
    const held = heldBody(response)
    // A client that takes no encoding gets a body held whole as it is (one write, with its length), marked as varying
    // when a client asking for one would have had it compressed. Reading `body` would make it a stream (two writes).
    if (!encoding && held !== undefined) {
      if ((typeof held === 'string' ? Buffer.byteLength(held) : held.byteLength) >= COMPRESS_MIN_BYTES) varyOnEncoding(response.headers)
      return response
    }
    // The level's size: a held text's length in characters is near enough (and costs no scan of it).
    const size = length !== null ? Number(length) : held?.length
    if (!response.body) return response
    const headers = new Headers(response.headers)
    const vary = headers.get('vary')
    varyOnEncoding(headers)
    const reader = response.body.getReader()
    const head: Uint8Array[] = []
    let read = 0
    let done = false
    while (read < COMPRESS_MIN_BYTES) {
      const chunk = await reader.read()
      if (chunk.done) {
        done = true
        break
      }
      head.push(chunk.value)
      read += chunk.value.byteLength
    }
    const init = { status: response.status, statusText: response.statusText, headers }
    if (done && read < COMPRESS_MIN_BYTES) {
      const body = new Uint8Array(read)
      let at = 0
      for (const chunk of head) {
        body.set(chunk, at)
        at += chunk.byteLength
      }
      headers.delete('vary')
      if (vary) headers.set('vary', vary)
      headers.set('content-length', String(read))
      return new Response(body, init)
    }
    const whole = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of head) controller.enqueue(chunk)
        if (done) controller.close()
      },
      async pull(controller) {
        if (done) return
        const chunk = await reader.read()
        if (chunk.done) controller.close()
        else controller.enqueue(chunk.value)
      },
      cancel: (reason) => reader.cancel(reason),
    })
    if (!encoding) return new Response(whole, init)
    headers.delete('content-length')
    headers.set('content-encoding', encoding)
    return new Response(whole.pipeThrough(Duplex.toWeb(compressor(encoding, compressionLevel(size))) as unknown as { readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> }), init)
  }
}
