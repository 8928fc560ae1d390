import { useQuery } from '@tanstack/react-query'
import { api, ok, type Schemas } from './client'

async function fetchMe() {
  return ok(api.GET('/api/admin/user'))
}

export const ME_KEY = ['me'] as const

/** The signed-in user and their permissions (`GET /api/admin/user`). */
export function useMe() {
  return useQuery({ queryKey: ME_KEY, queryFn: fetchMe, staleTime: 60_000, retry: false })
}

type Permission = Schemas['permissionSchema']

/**
 * Whether the permissions allow `permission` (in `project`, when given): ADMIN allows everything, a permission
 * without a project holds everywhere, one with a project only there (and likewise for an environment, when asked).
 */
export function allows(permissions: Permission[] | undefined, permission: string, project?: string, environment?: string): boolean {
  return (permissions ?? []).some(
    (p) =>
      p.permission === 'ADMIN' ||
      (p.permission === permission && (!p.project || p.project === project) && (!environment || !p.environment || p.environment === environment)),
  )
}

/** A hook form of `allows` for the signed-in user. */
export function useAllows() {
  const me = useMe()
  return (permission: string, project?: string, environment?: string) => allows(me.data?.permissions, permission, project, environment)
}

export type User = Schemas['userSchema']

/** Whether the permissions allow `permission` in at least one place (instance-wide or some project). */
export function allowsSomewhere(permissions: Permission[] | undefined, permission: string): boolean {
  return (permissions ?? []).some((p) => p.permission === 'ADMIN' || p.permission === permission)
}

/** How a user is named on screen: their name, else their username or e-mail, else their id. */
export const userName = (u: { id: number; name: string | null; username: string | null; email?: string | null }) => u.name || u.username || u.email || `user ${u.id}`
