import { useQuery } from '@tanstack/react-query'
import { api, ok } from './client'

/** Every query of context fields starts with this key: invalidating it refreshes them all. */
export const CONTEXT_FIELDS_KEY = ['context-fields'] as const

/** The global context fields, or (with `projectId`) a project's own (`GET /api/admin/projects/{projectId}/context`): the context fields page. */
export const useScopedContextFields = (projectId?: string) =>
  useQuery({
    queryKey: projectId ? [...CONTEXT_FIELDS_KEY, 'project', projectId] : CONTEXT_FIELDS_KEY,
    queryFn: () => (projectId ? ok(api.GET('/api/admin/projects/{projectId}/context', { params: { path: { projectId } } })) : ok(api.GET('/api/admin/context'))),
  })

/**
 * The fields constraints may use where they are: in a project (its flags, default strategies and segments), the global
 * fields and the project's own (`include=root`); elsewhere (global segments), the global ones.
 */
export const useUsableContextFields = (projectId?: string | null) =>
  useQuery({
    queryKey: projectId ? [...CONTEXT_FIELDS_KEY, 'usable', projectId] : CONTEXT_FIELDS_KEY,
    queryFn: () => (projectId ? ok(api.GET('/api/admin/projects/{projectId}/context', { params: { path: { projectId }, query: { include: 'root' } } })) : ok(api.GET('/api/admin/context'))),
  })

/** The global fields and every visible project's own (`include=project`): what the playground offers as context. */
export const useAllContextFields = () =>
  useQuery({ queryKey: [...CONTEXT_FIELDS_KEY, 'all'], queryFn: () => ok(api.GET('/api/admin/context', { params: { query: { include: 'project' } } })) })
