import { queryOptions, type QueryClient } from '@tanstack/react-query'
import { api, ok, type Schemas } from './client'
import { FLAGS_PAGE, flagListSearch, projectFlagsSearch, type FlagListView } from '../paths'

export type ProjectFlag = Schemas['featureSearchResponseSchema']

/** Everything read about one project starts with this key: invalidating it refreshes the overview and the flags. */
export const projectKey = (projectId: string) => ['project', projectId] as const

// Read at start-up while the user's permissions are read, then shown: not asked again as the page mounts.
const FRESH_MS = 5_000

/** The project without its flags (`GET …/overview`): statistics, health, environments; archived projects too. */
export const projectOverviewQuery = (projectId: string) =>
  queryOptions({
    queryKey: [...projectKey(projectId), 'overview'] as const,
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/overview', { params: { path: { projectId } } })),
    staleTime: FRESH_MS,
  })

/**
 * Every flag of the project, by name (the flag search: live ones, or `archived` ones): a first page, then the rest
 * asked for together once the first says how many there are.
 */
export const projectFlagsQuery = (projectId: string, archived = false) =>
  queryOptions({
    queryKey: [...projectKey(projectId), archived ? 'archived-flags' : 'flags'] as const,
    queryFn: async (): Promise<ProjectFlag[]> => {
      const page = (offset: number) => ok(api.GET('/api/admin/search/features', { params: { query: projectFlagsSearch(projectId, archived, offset) } }))
      const first = await page(0)
      const offsets: number[] = []
      for (let offset = FLAGS_PAGE; offset < first.total; offset += FLAGS_PAGE) offsets.push(offset)
      const pages = [first, ...(await Promise.all(offsets.map(page)))]
      // Pages read one after another can overlap when flags are created meanwhile: each flag once.
      const byName = new Map(pages.flatMap((p) => p.features.map((f) => [f.name, f] as const)))
      return [...byName.values()]
    },
    staleTime: FRESH_MS,
  })

/** Every page of the project's flag list read (and kept) under this key: a switch updates its row in each. */
export const flagListKey = (projectId: string) => [...projectKey(projectId), 'flag-list'] as const

/** One page of the project's live flags as the view asks (filters, search, order, page: all on the server) and the total of matches. */
export const flagListQuery = (projectId: string, view: FlagListView) =>
  queryOptions({
    queryKey: [...flagListKey(projectId), flagListSearch(projectId, view)] as const,
    queryFn: () => ok(api.GET('/api/admin/search/features', { params: { query: flagListSearch(projectId, view) } })),
    staleTime: FRESH_MS,
  })

/** A flag's switch in one environment as the write answered it, in every page of the list read: no list read again. */
export function switchedInList(queryClient: QueryClient, projectId: string, flagName: string, environment: string, enabled: boolean) {
  queryClient.setQueriesData<{ features: ProjectFlag[]; total: number }>({ queryKey: flagListKey(projectId) }, (data) =>
    data && {
      ...data,
      features: data.features.map((f) => (f.name === flagName ? { ...f, environments: f.environments.map((e) => (e.name === environment ? { ...e, enabled } : e)) } : f)),
    },
  )
}

/** Asks for what the project page shows first, before the page itself has loaded. */
export function prefetchProject(queryClient: QueryClient, projectId: string, view: FlagListView) {
  void queryClient.prefetchQuery(projectOverviewQuery(projectId))
  void queryClient.prefetchQuery(flagListQuery(projectId, view))
}
