import { request, type IncomingHttpHeaders } from 'node:http'
import { expect } from 'vitest'

/**
 * A caller of a running server's admin API with `token` (tests that start the Node server on a port, for SDKs): the
 * answer's parsed body; a status of 300 or more fails the test, naming the request and the answer.
 */
export function adminCaller(baseUrl: () => string, token: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    expect(res.status, `${method} ${path}: ${text}`).toBeLessThan(300)
    return text ? JSON.parse(text) : undefined
  }
}

/** Polls until `check` passes (or the time is up, then fails with its last error). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    try {
      return await check()
    } catch (error) {
      if (Date.now() > until) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

/**
 * One request over HTTP/1.1 to the server at `base`, the path sent as it is (a URL would drop an empty query):
 * the answer's status, headers (parsed, and as raw lines: names as sent, in order, repeats kept) and body.
 */
export function rawRequest(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string> | string[]; body?: string } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; rawHeaders: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base)
    const req = request({ hostname, port, path, headers: options.headers, method: options.method ?? 'GET' }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, rawHeaders: res.rawHeaders, body }))
    })
    req.on('error', reject)
    req.end(options.body)
  })
}
