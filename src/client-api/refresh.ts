import type { Context } from 'hono'
import type { Db } from '../db.js'
import type { AppEnv } from '../http/context.js'
import { loggable } from '../core/errors.js'
import { loadPayload } from './load.js'
import { readDefaultEnvironment, type ClientScope } from './payload.js'
import { isNewer, type Revision } from './revision.js'
import type { SdkState } from './state.js'

/** A run older than this died with its request (Workers give `waitUntil` 30 s after the response): another may start. */
const RUN_TIMEOUT_MS = 30_000

/** The host the request came to: the Workers Cache API keeps entries per host of the zone. */
export const originOf = (c: Context<AppEnv>) => new URL(c.req.url).origin

/**
 * Stale-while-revalidate, after an answer from what this process holds: asks for the revision to be
 * checked after the response (at most once per `revisionTtlMs` per process) and for what was asked here
 * (a scope's payload, the admin tokens' default environment) to be brought to it, so the next request
 * finds it current. One run at a time per process, in the background of the request that starts it;
 * requests that ask while it runs add to what it does and never wait on it (on Workers a promise of
 * another request may never settle).
 */
export function refreshAfterResponse(c: Context<AppEnv>, what: { scope: ClientScope; key: string } | 'default-environment'): void {
  const sdk = c.var.sdk
  const pending = sdk.refresh
  if (what === 'default-environment') pending.defaultEnvironment = true
  else pending.scopes.set(what.key, { scope: what.scope, origin: originOf(c) })
  const startedAt = Date.now()
  if (pending.runningSince !== undefined && startedAt - pending.runningSince < RUN_TIMEOUT_MS) return
  pending.runningSince = startedAt
  sdk.background(c, (db) =>
    refresh(sdk, db)
      .catch((error: unknown) => console.error('refreshing SDK payloads failed:', loggable(error)))
      .finally(() => {
        if (pending.runningSince === startedAt) pending.runningSince = undefined
      }),
  )
}

async function refresh(sdk: SdkState, db: Db): Promise<void> {
  const pending = sdk.refresh
  let checked = false
  while (pending.scopes.size > 0 || pending.defaultEnvironment) {
    const generation = sdk.revisions.generation
    const known = sdk.revisions.known()
    let revision: Revision
    if (known?.fresh) revision = known.revision
    else if (!checked && sdk.revisions.claimCheck()) {
      checked = true
      revision = await sdk.revisions.current(db)
    } else {
      // Checked less than a ttl ago (and it failed), or already once in this run: the next request asks again.
      pending.scopes.clear()
      pending.defaultEnvironment = false
      return
    }
    const scopes = [...pending.scopes]
    pending.scopes.clear()
    if (pending.defaultEnvironment) {
      pending.defaultEnvironment = false
      const remembered = sdk.defaultEnvironment
      if (remembered && (remembered.revisionKey !== revision.key || remembered.generation !== generation)) {
        const name = await readDefaultEnvironment(db)
        if (generation === sdk.revisions.generation) sdk.defaultEnvironment = { revisionKey: revision.key, generation, name }
      }
    }
    // One scope after the other: a handful per process, and each load is a transaction of its own.
    for (const [key, { scope, origin }] of scopes) {
      const held = sdk.payloads.get(key)
      if (held && held.generation === generation && !isNewer(revision, held.revision)) continue
      await loadPayload(sdk, db, scope, key, revision, origin)
    }
  }
}
