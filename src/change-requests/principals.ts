import type { Db } from '../db.js'
import type { Principal } from '../core/principal.js'
import { adminTokenPrincipal } from '../api-tokens/store.js'
import { loadUserPrincipal } from '../users/principal.js'

/**
 * Who a stored principal key (`user:<id>`, `token:<id>`: a schedule's author, an approval's giver) is now, with what
 * they may do now: undefined once the user is deleted or the token deleted or expired.
 */
export async function principalOfKey(db: Db, key: string, now: Date): Promise<Principal | undefined> {
  const [kind, id] = key.split(':')
  const numeric = Number(id)
  if (!Number.isInteger(numeric)) return undefined
  return kind === 'user' ? loadUserPrincipal(db, numeric) : kind === 'token' ? adminTokenPrincipal(db, numeric, now) : undefined
}
