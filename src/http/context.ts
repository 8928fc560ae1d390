import type { Context } from 'hono'
import type { Db } from '../db.js'
import type { Clock } from '../core/clock.js'
import type { Caller, Principal } from '../core/principal.js'

/**
 * What every request carries. Features add their own variables next to their code (Hono's way:
 * `declare module 'hono' { interface ContextVariableMap { … } }`), and createApp sets them.
 */
export interface AppVariables {
  db: Db
  clock: Clock
  /** Who the request is from (set by the authentication middleware of its API). */
  principal: Principal
  /** The principal, its audit identity and the request's time, fixed once when it is authenticated. */
  caller: Caller
  /**
   * Forgets the principals this app remembers (createApp's): for a change of who may do what that the write routes'
   * rule does not see (single sign-on's group sync, made by the GET of its callback).
   */
  forgetPrincipals: () => void
  /** Which address the client is at (the app's home says how: src/http/client-address.ts); read it with clientAddressOf. */
  clientAddress: (c: Context) => string | undefined
  /** Why this process should take no traffic now (shutting down, background work not running), or undefined: GET /ready. */
  notReady: () => string | undefined
  /** Set once the request has checked the change-request rule of its route (see adminRoute). */
  changeRequestRuleConsulted?: boolean
}

export interface AppEnv {
  // Bindings are whatever the entry passes to app.fetch (Workers env, or nothing on Node).
  Bindings: Record<string, unknown>
  Variables: AppVariables
}

export type AppContext = Context<AppEnv>

/**
 * Sets a header on the answer a middleware's `next()` made (with `append`, adds a value to it). On the answer's own
 * headers: `c.header` after the answer is made copies the whole answer (node-server's light 304 of an SDK poll lost its
 * fast path so); an answer whose headers are immutable (one fetched from elsewhere) is copied as `c.header` does.
 */
export function setAnswerHeader(c: Context, name: string, value: string, options: { append?: boolean } = {}): void {
  try {
    if (options.append) c.res.headers.append(name, value)
    else c.res.headers.set(name, value)
  } catch {
    c.header(name, value, options)
  }
}
