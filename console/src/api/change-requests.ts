import { useQuery } from '@tanstack/react-query'
import { api, ok, type Schemas } from './client'
import { useAllows } from './session'

export type Change = Schemas['changeRequestAddChangeSchema']
export type ChangeRequest = Schemas['changeRequestSchema']

export const changeRequestConfigKey = (projectId: string) => ['change-request-config', projectId] as const
export const changeRequestsKey = (projectId: string) => ['change-requests', projectId] as const

/**
 * Which environments of the project take the caller's changes as a change request: those requiring change
 * requests where the caller may not skip them (src/change-requests/guard.ts decides the same on the server).
 */
export function useChangeRequestEnvironments(projectId: string) {
  const allows = useAllows()
  const config = useQuery({
    queryKey: changeRequestConfigKey(projectId),
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/change-requests/config', { params: { path: { projectId } } })),
    staleTime: 30_000,
  })
  const protectedEnvs = (config.data ?? []).filter((c) => c.changeRequestsEnabled && !allows('SKIP_CHANGE_REQUEST', projectId, c.environment)).map((c) => c.environment)
  // Every environment requiring change requests, whoever asks (what ProtectedBadge shows).
  const requiring = (config.data ?? []).filter((c) => c.changeRequestsEnabled).map((c) => c.environment)
  return { isPending: config.isPending, viaChangeRequest: (environment: string) => protectedEnvs.includes(environment), protectedEnvs, requiresChangeRequests: (environment: string) => requiring.includes(environment) }
}

/** Adds changes to the caller's draft change request of the project and environment (created when there is none). */
export function addToDraft(projectId: string, environment: string, changes: Change[]) {
  return ok(api.POST('/api/admin/projects/{projectId}/environments/{environment}/change-requests', { params: { path: { projectId, environment } }, body: changes }))
}

export const changeRequestPath = (projectId: string, id: number | string) => `/projects/${encodeURIComponent(projectId)}/change-requests/${id}`
export const changeRequestsPath = (projectId: string) => `/projects/${encodeURIComponent(projectId)}/change-requests`

/** Every read of the change requests waiting for the user's approval starts with this key (a review refreshes it). */
export const pendingApprovalsKey = ['pending-approvals'] as const

/**
 * The change requests waiting for the signed-in user's approval across the projects they may read
 * (`GET /api/admin/search/change-requests?requestedApproverId=<their id>`): In review, not theirs, not approved by
 * them, where they may approve. `limit` 1 for the navigation's count (its `total`), more for the page.
 */
export function usePendingApprovals(userId: number | undefined, limit = 1) {
  return useQuery({
    queryKey: [...pendingApprovalsKey, userId, limit],
    queryFn: () => ok(api.GET('/api/admin/search/change-requests', { params: { query: { requestedApproverId: String(userId), limit: String(limit) } } })),
    enabled: userId !== undefined,
    staleTime: 30_000,
    refetchInterval: 60_000,
  })
}
