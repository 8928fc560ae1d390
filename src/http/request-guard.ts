import type { Context, MiddlewareHandler, Next } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { ApiError, validationError } from '../core/errors.js'

export const MAX_BODY_BYTES = 1024 * 1024
const MAX_JSON_DEPTH = 32
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

const tooLarge = (maxBytes: number) => new ApiError('PayloadTooLargeError', `The request body is larger than ${maxBytes} bytes`)

const limitBody = (maxBytes: number) =>
  bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw tooLarge(maxBytes)
    },
  })

/*
 * The two guards reject what Postgres or the handlers would choke on, before any route runs:
 * malformed percent-encoding, NUL bytes, lone surrogates, non-JSON bodies, over-deep or non-finite
 * JSON. Routes then see only well-formed input, and bad input never reaches the database as a 500.
 */

export const urlGuard: MiddlewareHandler = async (c, next) => {
  checkUrl(c.req.url)
  await next()
}

/**
 * Runs after authentication, so an anonymous caller learns nothing from how its body is judged. Bodies are at most
 * MAX_BODY_BYTES, but on the paths `largerBodies` names (a restore of a whole instance), at most what it says; on the
 * paths `documentChecks` names, the parsed body is also held to that check (it throws the 4xx).
 */
export function bodyGuard(options: { largerBodies?: Record<string, number>; documentChecks?: Record<string, (body: unknown) => void> } = {}): MiddlewareHandler {
  const checks = new Map(Object.entries(options.documentChecks ?? {}))
  const limits = new Map(Object.entries(options.largerBodies ?? {}).map(([path, maxBytes]) => [path, { maxBytes, limit: limitBody(maxBytes) }]))
  const standard = { maxBytes: MAX_BODY_BYTES, limit: limitBody(MAX_BODY_BYTES) }
  return async (c, next) => {
    if (!METHODS_WITH_BODY.has(c.req.method)) return next()
    const { maxBytes, limit } = limits.get(c.req.path) ?? standard
    const length = c.req.header('content-length')
    const chunked = c.req.header('transfer-encoding') !== undefined
    // A declared length (the HTTP parser holds the body to it) is judged from the header, without wrapping the
    // body in a counting stream: on Node the body is then read straight from the socket, a good part of a small
    // write's cost otherwise. A chunked body is counted as it arrives. On Node (the request's IncomingMessage is
    // in the bindings), a request with neither header has no body at all.
    if (length !== undefined && !chunked) {
      if (Number(length) > maxBytes) throw tooLarge(maxBytes)
      return checkBody(c, next, checks.get(c.req.path))
    }
    if (length === undefined && !chunked && isNodeRequest(c)) return next()
    return limit(c, () => checkBody(c, next, checks.get(c.req.path)))
  }
}

const isNodeRequest = (c: Context) => typeof (c.env as { incoming?: unknown } | undefined)?.incoming === 'object'

/** `check`: the path's own bound on the parsed document (its size counted before any schema walks it). */
async function checkBody(c: Context, next: Next, check?: (body: unknown) => void) {
  const text = await c.req.text()
  if (text.length > 0) {
    const contentType = (c.req.header('content-type') ?? '').split(';')[0]!.trim()
    if (!JSON_MEDIA_TYPE.test(contentType)) {
      throw new ApiError('ContentTypeerror', `Unsupported content type "${contentType || '(none)'}": only application/json is accepted`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      throw validationError(`Malformed JSON in request body: ${(error as Error).message}`)
    }
    checkJsonValue(parsed)
    check?.(parsed)
  }
  await next()
}

function checkUrl(url: string) {
  // Without percent-encoding or a raw NUL, nothing decodes to what the checks below refuse (most requests: SDK polls).
  if (!url.includes('%') && !url.includes('\u0000')) return
  const { pathname, search } = new URL(url)
  const parts = [pathname, ...search.slice(1).split('&').map((p) => p.replaceAll('+', ' '))]
  for (const part of parts) {
    let decoded: string
    try {
      decoded = decodeURIComponent(part)
    } catch {
      throw validationError(`Malformed percent-encoding in the URL: ${part.slice(0, 100)}`)
    }
    checkString(decoded, part === pathname ? 'path' : 'query')
  }
}

function checkString(value: string, where: string) {
  if (value.includes('\u0000')) throw validationError(`NUL characters are not allowed (in ${where})`)
  if (!value.isWellFormed()) throw validationError(`Invalid Unicode (a lone surrogate) is not allowed (in ${where})`)
}

/** Walks the parsed body without recursion, so hostile nesting cannot blow the stack. */
function checkJsonValue(root: unknown) {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value: root, depth: 0, path: '' }]
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!
    if (typeof value === 'string') checkString(value, `body${path}`)
    else if (typeof value === 'number' && !Number.isFinite(value)) throw validationError(`Number out of range in body${path}`)
    else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_JSON_DEPTH) throw validationError(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels`)
      for (const [key, child] of Object.entries(value)) {
        checkString(key, `body${path}`)
        stack.push({ value: child, depth: depth + 1, path: `${path}/${key}` })
      }
    }
  }
}

/**
 * For an operation that takes no body: one that is not empty is a 400. (Declaring an empty body schema
 * instead makes the validator look for a body by opening the request's stream, costly on Node.)
 */
export async function requireNoBody(c: Context): Promise<void> {
  if ((await c.req.text()).length > 0) throw validationError('This operation takes no body', [{ path: 'body', message: 'must be empty' }])
}
