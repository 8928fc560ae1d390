import type { Db } from '../db.js'
import type { Principal } from '../core/principal.js'
import { heldPermission, Permission } from '../core/permissions.js'
import { avatarUrl } from './avatar.js'
import { ADMIN_ROLE_ID, getAccount } from './store.js'
import { promptsOf } from './prompts.js'

/** `GET /api/admin/user`: the caller and what they may do; an admin token is described as a service account. */
export async function describeCaller(db: Db, principal: Principal) {
  if (principal.kind !== 'user') {
    const name = principal.name
    return {
      user: {
        id: -1337,
        isAPI: true,
        name,
        username: name,
        imageUrl: await avatarUrl(name),
        loginAttempts: 0,
        rootRole: ADMIN_ROLE_ID,
        seenAt: null,
        createdAt: new Date(0).toISOString(),
        accountType: 'Service Account' as const,
        permissions: [],
        scimId: null,
      },
      permissions: [{ permission: Permission.ADMIN }],
      feedback: [],
      splash: {},
    }
  }
  // Root roles' permissions (the user's own and their groups'), then each project's; an environment where one holds in one environment only.
  const root = [...principal.grants.root].map(heldPermission)
  const perProject = [...principal.grants.projects].flatMap(([project, held]) => [...held].map((key) => ({ ...heldPermission(key), project })))
  const [user, prompts] = await Promise.all([getAccount(db, principal.userId), promptsOf(db, principal.userId)])
  return { user, permissions: [...root, ...perProject], ...prompts }
}
