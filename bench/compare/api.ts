// A small JSON client for the admin APIs of both servers.
export type Api = <T = any>(method: string, path: string, body?: unknown) => Promise<T>

export function apiClient(baseUrl: string, token: string): Api {
  return async (method, path, body) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`)
    return text ? JSON.parse(text) : undefined
  }
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` at a time. */
export async function inParallel(count: number, concurrency: number, task: (i: number) => Promise<unknown>) {
  let next = 0
  const worker = async () => {
    while (next < count) await task(next++)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}
