import { noAccess } from './errors.js'
import type { Principal } from './principal.js'

/** Permission names, as Unleash spells them. ADMIN implies every other one. */
export const Permission = {
  ADMIN: 'ADMIN',
  CREATE_PROJECT: 'CREATE_PROJECT',
  UPDATE_PROJECT: 'UPDATE_PROJECT',
  DELETE_PROJECT: 'DELETE_PROJECT',
  CREATE_ENVIRONMENT: 'CREATE_ENVIRONMENT',
  UPDATE_ENVIRONMENT: 'UPDATE_ENVIRONMENT',
  DELETE_ENVIRONMENT: 'DELETE_ENVIRONMENT',
  CREATE_FEATURE: 'CREATE_FEATURE',
  UPDATE_FEATURE: 'UPDATE_FEATURE',
  DELETE_FEATURE: 'DELETE_FEATURE',
  UPDATE_FEATURE_ENVIRONMENT: 'UPDATE_FEATURE_ENVIRONMENT',
  CREATE_FEATURE_STRATEGY: 'CREATE_FEATURE_STRATEGY',
  UPDATE_FEATURE_STRATEGY: 'UPDATE_FEATURE_STRATEGY',
  DELETE_FEATURE_STRATEGY: 'DELETE_FEATURE_STRATEGY',
  UPDATE_FEATURE_ENVIRONMENT_VARIANTS: 'UPDATE_FEATURE_ENVIRONMENT_VARIANTS',
  UPDATE_FEATURE_VARIANTS: 'UPDATE_FEATURE_VARIANTS',
  SKIP_CHANGE_REQUEST: 'SKIP_CHANGE_REQUEST',
  CREATE_SEGMENT: 'CREATE_SEGMENT',
  UPDATE_SEGMENT: 'UPDATE_SEGMENT',
  DELETE_SEGMENT: 'DELETE_SEGMENT',
  CREATE_CONTEXT_FIELD: 'CREATE_CONTEXT_FIELD',
  UPDATE_CONTEXT_FIELD: 'UPDATE_CONTEXT_FIELD',
  DELETE_CONTEXT_FIELD: 'DELETE_CONTEXT_FIELD',
  CREATE_STRATEGY: 'CREATE_STRATEGY',
  UPDATE_STRATEGY: 'UPDATE_STRATEGY',
  DELETE_STRATEGY: 'DELETE_STRATEGY',
  // Granted by no built-in role but Admin, as in Unleash.
  CREATE_TAG_TYPE: 'CREATE_TAG_TYPE',
  UPDATE_TAG_TYPE: 'UPDATE_TAG_TYPE',
  DELETE_TAG_TYPE: 'DELETE_TAG_TYPE',
  CREATE_CLIENT_API_TOKEN: 'CREATE_CLIENT_API_TOKEN',
  READ_CLIENT_API_TOKEN: 'READ_CLIENT_API_TOKEN',
  DELETE_CLIENT_API_TOKEN: 'DELETE_CLIENT_API_TOKEN',
  CREATE_FRONTEND_API_TOKEN: 'CREATE_FRONTEND_API_TOKEN',
  READ_FRONTEND_API_TOKEN: 'READ_FRONTEND_API_TOKEN',
  DELETE_FRONTEND_API_TOKEN: 'DELETE_FRONTEND_API_TOKEN',
} as const

export type PermissionName = (typeof Permission)[keyof typeof Permission]

/** What a permission applies to: nothing (instance-wide), a project, or an environment of a project. */
export interface PermissionScope {
  project?: string
  environment?: string
}

/** What the project role Member may do in its project: change flags, their strategies and variants. */
const MEMBER_PERMISSIONS: PermissionName[] = [
  Permission.CREATE_FEATURE,
  Permission.UPDATE_FEATURE,
  Permission.DELETE_FEATURE,
  Permission.UPDATE_FEATURE_ENVIRONMENT,
  Permission.CREATE_FEATURE_STRATEGY,
  Permission.UPDATE_FEATURE_STRATEGY,
  Permission.DELETE_FEATURE_STRATEGY,
  Permission.UPDATE_FEATURE_ENVIRONMENT_VARIANTS,
  Permission.UPDATE_FEATURE_VARIANTS,
]

const PROJECT_PERMISSIONS: PermissionName[] = [
  Permission.UPDATE_PROJECT,
  ...MEMBER_PERMISSIONS,
  Permission.CREATE_CLIENT_API_TOKEN,
  Permission.READ_CLIENT_API_TOKEN,
  Permission.DELETE_CLIENT_API_TOKEN,
  Permission.CREATE_FRONTEND_API_TOKEN,
  Permission.READ_FRONTEND_API_TOKEN,
  Permission.DELETE_FRONTEND_API_TOKEN,
]

/** The permissions each built-in project role grants in the projects where a user holds it. */
export const projectRolePermissions: Record<string, ReadonlySet<PermissionName>> = {
  Owner: new Set([...PROJECT_PERMISSIONS, Permission.DELETE_PROJECT]),
  Member: new Set(MEMBER_PERMISSIONS),
}

/** The permissions each built-in root role grants everywhere. Owner and Member as a root role grant their project permissions in every project. */
export const rootRolePermissions: Record<string, ReadonlySet<PermissionName>> = {
  Admin: new Set([Permission.ADMIN]),
  Editor: new Set([
    Permission.CREATE_PROJECT,
    Permission.CREATE_SEGMENT,
    Permission.UPDATE_SEGMENT,
    Permission.DELETE_SEGMENT,
    // As in Unleash, whose Editor root role manages context fields.
    Permission.CREATE_CONTEXT_FIELD,
    Permission.UPDATE_CONTEXT_FIELD,
    Permission.DELETE_CONTEXT_FIELD,
    // As in Unleash, whose Editor root role manages strategy definitions.
    Permission.CREATE_STRATEGY,
    Permission.UPDATE_STRATEGY,
    Permission.DELETE_STRATEGY,
    ...PROJECT_PERMISSIONS,
  ]),
  Viewer: new Set(),
  Owner: projectRolePermissions.Owner!,
  Member: projectRolePermissions.Member!,
}

const NONE: ReadonlySet<PermissionName> = new Set()

/**
 * A user's permissions are those of their root role, plus, for a permission on a project, those of
 * their roles in that project (loaded with the principal, so this stays synchronous).
 */
export function hasPermission(principal: Principal, permission: PermissionName, scope: PermissionScope = {}): boolean {
  if (principal.kind !== 'user' && principal.kind !== 'admin-token') return false
  const granted = rootRolePermissions[principal.rootRole] ?? NONE
  if (granted.has(Permission.ADMIN) || granted.has(permission)) return true
  if (principal.kind !== 'user' || scope.project === undefined) return false
  return (principal.projectRoles?.get(scope.project) ?? []).some((role) => projectRolePermissions[role]?.has(permission) ?? false)
}

/** Throws 403 NoAccessError naming the missing permission (and the environment) unless the caller has it. */
export function requirePermission(principal: Principal, permission: PermissionName, scope: PermissionScope = {}): void {
  if (hasPermission(principal, permission, scope)) return
  const where = scope.environment ? ` defined for environment=${scope.environment}` : ''
  const project = scope.project ? ` in project=${scope.project}` : ''
  throw noAccess(`You need permission=${permission}${where}${project} to perform this action`)
}
