import type { Result, Router } from 'hono/router'
import { RegExpRouter } from 'hono/router/reg-exp-router'
import { SmartRouter } from 'hono/router/smart-router'
import { TrieRouter } from 'hono/router/trie-router'

/** Paths longer than this are matched every time: a memo of made-up long paths would only hold memory. */
const MEMO_PATH_MAX = 256

/**
 * Hono's router with the last matches remembered by method and path. The app's route table has paths Hono's
 * RegExpRouter cannot compile (a middleware's `/api/admin/archive/:featureName` beside the route
 * `/api/admin/archive/revive/:featureName`, and others), so Hono falls back to its TrieRouter, which walks the
 * tree on every request: 5 µs for an SDK poll, 18 µs for a flag's admin path, on a table of a thousand routes.
 * A path answers the same match until a route is added (which forgets them all); Hono only reads a match.
 * Bounded: when full, the memo starts again, so a client sending ever new paths costs what it did without it.
 */
export class MemoRouter<T> implements Router<T> {
  readonly name = 'MemoRouter'
  readonly #router: Router<T>
  readonly #max: number
  #matches = new Map<string, Result<T>>()

  constructor(router: Router<T> = new SmartRouter({ routers: [new RegExpRouter(), new TrieRouter()] }), max = 1000) {
    this.#router = router
    this.#max = max
  }

  add(method: string, path: string, handler: T): void {
    this.#matches.clear()
    this.#router.add(method, path, handler)
  }

  match(method: string, path: string): Result<T> {
    if (path.length > MEMO_PATH_MAX) return this.#router.match(method, path)
    const key = method + path
    let result = this.#matches.get(key)
    if (result === undefined) {
      result = this.#router.match(method, path)
      if (this.#matches.size >= this.#max) this.#matches = new Map()
      this.#matches.set(key, result)
    }
    return result
  }
}
