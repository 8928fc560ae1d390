import { buildOnce } from '../client-api/in-flight.js'
import { Lru } from '../core/lru.js'
import { isNewer, readRevision, type Revision } from '../client-api/revision.js'
import type { Db } from '../db.js'
import { responseEnvironment, type ResponseEnvironment } from './advanced-response.js'
import { prepareEnvironment } from './evaluate.js'
import { loadPlaygroundData, type PlaygroundScope } from './loader.js'

/*
 * Loading the flags (six queries, a few hundred rows) and preparing them took most of an advanced
 * playground request that evaluates 200 flags for a handful of contexts, and every request made the
 * same evaluations again. So the prepared evaluators of a scope (environments and projects) are kept
 * per configuration revision, with the evaluations they share by signature: a request reads the
 * revision (one small query) and, when nothing changed, only evaluates. Every change to what the
 * playground reads (flags, strategies, variants, segments, dependencies, projects, environments)
 * writes an event, which moves the revision, so a kept scope is never served after a change.
 */

/** One scope as the playground evaluates it, at one revision. */
export interface PreparedScope {
  revision: Revision
  environments: ResponseEnvironment[]
  unknownEnvironments: string[]
  unknownProjects: string[]
}

export interface PreparedScopes {
  entries: Lru<string, PreparedScope>
  building: Map<string, Promise<PreparedScope>>
}

/** Scopes kept per app: a few (most callers ask for one), bounded by the weight of their data and shared evaluations. */
const MAX_SCOPES = 16
const MAX_WEIGHT = 64 * 1024 * 1024
/** Bytes of shared evaluations one kept scope may hold: more than a few thousand distinct evaluations of 200 flags. */
const FRAGMENT_BYTES = 8 * 1024 * 1024

export function createPreparedScopes(): PreparedScopes {
  return { entries: new Lru({ maxEntries: MAX_SCOPES, maxWeight: MAX_WEIGHT }), building: new Map() }
}

const scopeKey = (scope: PlaygroundScope) => JSON.stringify([scope.environments, scope.projects])

/**
 * The scope's evaluators at the current revision: kept ones when nothing changed since they were
 * prepared, otherwise read and prepared once (concurrent requests share the work where the runtime
 * allows waiting on another request's promise: `shareInFlight`, false on Workers).
 */
export async function preparedScope(scopes: PreparedScopes, db: Db, scope: PlaygroundScope, shareInFlight: boolean): Promise<PreparedScope> {
  const key = scopeKey(scope)
  const revision = await readRevision(db)
  const kept = scopes.entries.get(key)
  // A scope prepared at a newer revision than this request read (another request read after a change) is as good.
  if (kept && (kept.revision.key === revision.key || isNewer(kept.revision, revision))) return kept
  return buildOnce(scopes.building, `${key}@${revision.key}`, shareInFlight, () => prepare(scopes, db, scope, key))
}

async function prepare(scopes: PreparedScopes, db: Db, scope: PlaygroundScope, key: string): Promise<PreparedScope> {
  // One snapshot, with the revision it is current for: a change committed while the flags are read
  // cannot be half in a scope kept until the next change.
  const data = await loadPlaygroundData(db, scope)
  const { revision } = data
  const prepared: PreparedScope = {
    revision,
    environments: data.environments.map((env) => responseEnvironment(env.name, prepareEnvironment(env.flags, data.segments, env.name, { bytes: FRAGMENT_BYTES }))),
    unknownEnvironments: data.unknownEnvironments,
    unknownProjects: data.unknownProjects,
  }
  const current = scopes.entries.get(key)
  if (!current || isNewer(revision, current.revision)) {
    // The prepared flags weigh a few times their JSON; the shared evaluations are counted at their bound.
    const weight = JSON.stringify(data).length * 4 + FRAGMENT_BYTES * data.environments.length
    scopes.entries.set(key, prepared, weight)
  }
  return prepared
}
