import type { Db } from '../db.js'
import type { Principal } from '../core/principal.js'
import { Permission, projectRolePermissions, rootRolePermissions } from '../core/permissions.js'
import { avatarUrl } from './avatar.js'
import { ADMIN_ROLE_ID, getUser } from './store.js'

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
  const root = [...(rootRolePermissions[principal.rootRole] ?? [])].map((permission) => ({ permission }))
  const perProject = [...(principal.projectRoles ?? [])].flatMap(([project, roleNames]) => [
    ...new Set(roleNames.flatMap((role) => [...(projectRolePermissions[role] ?? [])])),
  ].map((permission) => ({ permission, project })))
  return { user: await getUser(db, principal.userId), permissions: [...root, ...perProject], feedback: [], splash: {} }
}
