import { noAccess } from './errors.js'
import type { Grants, HeldPermissions, Principal } from './principal.js'

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
  // A project's own context fields (create, change, delete), as Unleash's project Owner role holds it.
  UPDATE_PROJECT_CONTEXT: 'UPDATE_PROJECT_CONTEXT',
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
  // A project's own client and frontend tokens (`/api/admin/projects/{projectId}/api-tokens`).
  READ_PROJECT_API_TOKEN: 'READ_PROJECT_API_TOKEN',
  CREATE_PROJECT_API_TOKEN: 'CREATE_PROJECT_API_TOKEN',
  DELETE_PROJECT_API_TOKEN: 'DELETE_PROJECT_API_TOKEN',
} as const

export type PermissionName = (typeof Permission)[keyof typeof Permission]

/** Where a permission applies, as Unleash types it: instance-wide, in a project, or in an environment of a project. */
export type PermissionType = 'root' | 'project' | 'environment'

/**
 * Every permission Flagpost enforces, with the level it applies at and its display name (Unleash's where it has the
 * permission). `GET /api/admin/permissions` lists them, numbered in this order (so new ones go last), and custom roles
 * hold them: root-custom roles the root ones, custom (project) roles the project and environment ones.
 */
export const PERMISSION_INFO = {
  ADMIN: { type: 'root', displayName: 'Admin' },
  CREATE_PROJECT: { type: 'root', displayName: 'Create projects' },
  UPDATE_PROJECT: { type: 'project', displayName: 'Update the project (settings, environments, members and roles)' },
  DELETE_PROJECT: { type: 'project', displayName: 'Delete the project' },
  CREATE_ENVIRONMENT: { type: 'root', displayName: 'Create environments' },
  UPDATE_ENVIRONMENT: { type: 'root', displayName: 'Update environments' },
  DELETE_ENVIRONMENT: { type: 'root', displayName: 'Delete environments' },
  CREATE_FEATURE: { type: 'project', displayName: 'Create feature flags' },
  UPDATE_FEATURE: { type: 'project', displayName: 'Update feature flags' },
  DELETE_FEATURE: { type: 'project', displayName: 'Archive and delete feature flags' },
  UPDATE_FEATURE_ENVIRONMENT: { type: 'environment', displayName: 'Enable/disable flags' },
  CREATE_FEATURE_STRATEGY: { type: 'environment', displayName: 'Create activation strategies' },
  UPDATE_FEATURE_STRATEGY: { type: 'environment', displayName: 'Update activation strategies' },
  DELETE_FEATURE_STRATEGY: { type: 'environment', displayName: 'Delete activation strategies' },
  UPDATE_FEATURE_ENVIRONMENT_VARIANTS: { type: 'environment', displayName: 'Update variants' },
  UPDATE_FEATURE_VARIANTS: { type: 'project', displayName: 'Create/edit variants' },
  SKIP_CHANGE_REQUEST: { type: 'environment', displayName: 'Skip change request process' },
  CREATE_SEGMENT: { type: 'root', displayName: 'Create segments' },
  UPDATE_SEGMENT: { type: 'root', displayName: 'Edit segments' },
  DELETE_SEGMENT: { type: 'root', displayName: 'Delete segments' },
  CREATE_CONTEXT_FIELD: { type: 'root', displayName: 'Create context fields' },
  UPDATE_CONTEXT_FIELD: { type: 'root', displayName: 'Update context fields' },
  DELETE_CONTEXT_FIELD: { type: 'root', displayName: 'Delete context fields' },
  CREATE_STRATEGY: { type: 'root', displayName: 'Create strategy types' },
  UPDATE_STRATEGY: { type: 'root', displayName: 'Update strategy types' },
  DELETE_STRATEGY: { type: 'root', displayName: 'Delete strategy types' },
  CREATE_TAG_TYPE: { type: 'root', displayName: 'Create tag types' },
  UPDATE_TAG_TYPE: { type: 'root', displayName: 'Update tag types' },
  DELETE_TAG_TYPE: { type: 'root', displayName: 'Delete tag types' },
  CREATE_CLIENT_API_TOKEN: { type: 'root', displayName: 'Create CLIENT API tokens' },
  READ_CLIENT_API_TOKEN: { type: 'root', displayName: 'Read CLIENT API tokens' },
  DELETE_CLIENT_API_TOKEN: { type: 'root', displayName: 'Delete CLIENT API tokens' },
  CREATE_FRONTEND_API_TOKEN: { type: 'root', displayName: 'Create FRONTEND API tokens' },
  READ_FRONTEND_API_TOKEN: { type: 'root', displayName: 'Read FRONTEND API tokens' },
  DELETE_FRONTEND_API_TOKEN: { type: 'root', displayName: 'Delete FRONTEND API tokens' },
  UPDATE_PROJECT_CONTEXT: { type: 'project', displayName: 'Create/edit project context' },
  READ_PROJECT_API_TOKEN: { type: 'project', displayName: 'Read api tokens for a specific project' },
  CREATE_PROJECT_API_TOKEN: { type: 'project', displayName: 'Create api tokens for a specific project' },
  DELETE_PROJECT_API_TOKEN: { type: 'project', displayName: 'Delete api tokens for a specific project' },
} as const satisfies Record<PermissionName, { type: PermissionType; displayName: string }>

export const isPermissionName = (name: string): name is PermissionName => Object.hasOwn(PERMISSION_INFO, name)

/** What a permission applies to: nothing (instance-wide), a project, or an environment of a project. */
export interface PermissionScope {
  project?: string
  environment?: string
}

/** What the project role Member may do in its project: change flags, their strategies and variants, and (as in Unleash) manage the project's API tokens. */
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
  Permission.READ_PROJECT_API_TOKEN,
  Permission.CREATE_PROJECT_API_TOKEN,
  Permission.DELETE_PROJECT_API_TOKEN,
]

const PROJECT_PERMISSIONS: PermissionName[] = [
  Permission.UPDATE_PROJECT,
  ...MEMBER_PERMISSIONS,
  Permission.UPDATE_PROJECT_CONTEXT,
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

const ENVIRONMENT_SEPARATOR = '\u0000'
const inEnvironment = (permission: string, environment: string) => `${permission}${ENVIRONMENT_SEPARATOR}${environment}`

/** A held permission as a name and, when it holds in one environment only, that environment. */
export function heldPermission(key: string): { permission: string; environment?: string } {
  const at = key.indexOf(ENVIRONMENT_SEPARATOR)
  return at < 0 ? { permission: key } : { permission: key.slice(0, at), environment: key.slice(at + 1) }
}

/** A role a user holds: instance-wide (`project` null) or in a project; a custom role with its permissions (name, environment or null). */
export interface HeldRole {
  project: string | null
  name: string
  type: string
  permissions?: readonly (readonly [string, string | null])[]
}

/** The built-in role types; the others (root-custom, custom) hold the permissions stored with them. */
export const BUILT_IN_ROLE_TYPES: readonly string[] = ['root', 'project']

/** The permissions a role grants where it is held (see HeldPermissions). */
export function permissionsOfRole(role: HeldRole): string[] {
  if (BUILT_IN_ROLE_TYPES.includes(role.type)) {
    const table = role.project === null ? rootRolePermissions : projectRolePermissions
    return [...(table[role.name] ?? [])]
  }
  return (role.permissions ?? []).map(([permission, environment]) => (environment ? inEnvironment(permission, environment) : permission))
}

const OWNER_ROLE = 'Owner'
const EVERY_PROJECT = '*'

/** The grants of the roles a user holds: resolved once, when the principal is loaded, so every check is synchronous. */
export function grantsOf(held: readonly HeldRole[]): Grants {
  const root = new Set<string>()
  const projects = new Map<string, Set<string>>()
  const owns = new Set<string>()
  for (const role of held) {
    let into = root
    if (role.project !== null) {
      into = projects.get(role.project) ?? new Set()
      projects.set(role.project, into)
    }
    for (const key of permissionsOfRole(role)) into.add(key)
    if (role.type === 'project' && role.name === OWNER_ROLE) owns.add(role.project ?? EVERY_PROJECT)
  }
  return { root, projects, owns }
}

/** Whether the principal owns the project (the built-in Owner role there, directly or through a group, or as root role). */
export function ownsProject(principal: Principal, project: string): boolean {
  return principal.kind === 'user' && (principal.grants.owns.has(project) || principal.grants.owns.has(EVERY_PROJECT))
}

/** The grants of one built-in root role, and nothing else. */
export const rootRoleGrants = (rootRole: string): Grants => grantsOf([{ project: null, name: rootRole, type: 'root' }])

const holds = (held: HeldPermissions | undefined, permission: string, environment: string | undefined) =>
  held !== undefined && (held.has(Permission.ADMIN) || held.has(permission) || (environment !== undefined && held.has(inEnvironment(permission, environment))))

/**
 * Whether the principal holds the permission: an admin token, or a user whose grants hold it instance-wide or (for a
 * permission on a project) in that project. A permission held in one environment only counts when the check names
 * that environment.
 */
export function hasPermission(principal: Principal, permission: PermissionName, scope: PermissionScope = {}): boolean {
  if (principal.kind === 'admin-token') return true
  if (principal.kind !== 'user') return false
  const { root, projects } = principal.grants
  if (holds(root, permission, scope.environment)) return true
  return scope.project !== undefined && holds(projects.get(scope.project), permission, scope.environment)
}

/** The permissions a caller holds in a project (instance-wide ones included), as `HeldPermissions`: what it may pass on there. */
export function heldInProject(principal: Principal, project: string): HeldPermissions {
  if (principal.kind !== 'user') return principal.kind === 'admin-token' ? new Set([Permission.ADMIN]) : new Set()
  return new Set([...principal.grants.root, ...(principal.grants.projects.get(project) ?? [])])
}

/** Whether holding `held` covers `key` (a held permission): ADMIN covers all, a permission held in every environment covers it in one. */
export function covers(held: HeldPermissions, key: string): boolean {
  const { permission, environment } = heldPermission(key)
  return held.has(Permission.ADMIN) || held.has(permission) || (environment !== undefined && held.has(key))
}

/**
 * Whether the caller holds `permission` instance-wide or in at least one project (a project Owner's UPDATE_PROJECT):
 * for what serves a project-scoped task without naming the project.
 */
export function hasPermissionInSomeProject(principal: Principal, permission: PermissionName): boolean {
  if (hasPermission(principal, permission)) return true
  if (principal.kind !== 'user') return false
  return [...principal.grants.projects.values()].some((held) => holds(held, permission, undefined))
}

/** Throws 403 NoAccessError naming the missing permission (and the environment) unless the caller has it. */
export function requirePermission(principal: Principal, permission: PermissionName, scope: PermissionScope = {}): void {
  if (hasPermission(principal, permission, scope)) return
  const where = scope.environment ? ` defined for environment=${scope.environment}` : ''
  const project = scope.project ? ` in project=${scope.project}` : ''
  throw noAccess(`You need permission=${permission}${where}${project} to perform this action`)
}

/** Throws 403 NoAccessError naming the missing permission unless the caller holds it instance-wide or in some project. */
export function requirePermissionInSomeProject(principal: Principal, permission: PermissionName): void {
  if (!hasPermissionInSomeProject(principal, permission)) throw noAccess(`You need permission=${permission} in at least one project to perform this action`)
}
