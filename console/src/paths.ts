// Addresses of the console's pages, and of the reads started before the console has loaded (early.ts). No imports:
// early.ts, the first script a page runs, takes this module with it.

export const projectPath = (projectId: string) => `/projects/${encodeURIComponent(projectId)}`
/** A project's settings page: its members and roles, environments and change request settings. */
export const projectSettingsPath = (projectId: string) => `${projectPath(projectId)}/settings`
export const flagPath = (projectId: string, flagName: string) => `${projectPath(projectId)}/flags/${encodeURIComponent(flagName)}`

/** What the signed-in user was doing when a 401 sent them to the sign-in page. */
export const SIGN_IN_PATH = '/sign-in'
/** Where a new user's link (`inviteLink` of POST /api/admin/user-admin) and password-reset links lead (the server's NEW_USER_PATH, in src/users/reset-tokens.ts). */
export const NEW_USER_PATH = '/new-user'
/** The page a public invite link opens (`?invite=<secret>`), open to anyone: the server's invite links point here. */
export const SIGN_UP_PATH = '/sign-up'

/** The project a project's page (`/projects/{id}`) shows; undefined for any other address (or a malformed one). */
export function projectOfPath(path: string): string | undefined {
  const match = /^\/projects\/([^/]+)\/?$/.exec(path)
  try {
    return match ? decodeURIComponent(match[1]!) : undefined
  } catch {
    return undefined
  }
}

/** The flag a flag's page (`/projects/{id}/flags/{name}`) shows; undefined for any other address (or a malformed one). */
export function flagOfPath(path: string): { projectId: string; flagName: string } | undefined {
  const match = /^\/projects\/([^/]+)\/flags\/([^/]+)\/?$/.exec(path)
  try {
    return match ? { projectId: decodeURIComponent(match[1]!), flagName: decodeURIComponent(match[2]!) } : undefined
  } catch {
    return undefined
  }
}

/** A page of the project's flag list (the flag search, paged on the server). */
export const FLAG_LIST_PAGE = 50

export type FlagListSort = 'name' | 'created' | 'lastSeen'

/** What the project's flag list shows, kept in the page's address (`?q=&tag=&type=&stale=&sort=&page=`): back, forward and reload keep it. */
export interface FlagListView {
  q: string
  tag: string
  type: string
  stale: '' | 'stale' | 'fresh'
  sort: FlagListSort
  page: number
}

/** The list's view from the address's query string (unknown or malformed values: the defaults). */
export function flagListView(search: string): FlagListView {
  const p = new URLSearchParams(search)
  const sort = p.get('sort')
  const stale = p.get('stale')
  const page = Number(p.get('page') ?? '1')
  return {
    q: p.get('q') ?? '',
    tag: p.get('tag') ?? '',
    type: p.get('type') ?? '',
    stale: stale === 'stale' || stale === 'fresh' ? stale : '',
    sort: sort === 'created' || sort === 'lastSeen' ? sort : 'name',
    page: Number.isInteger(page) && page >= 1 && page <= 100_000 ? page : 1,
  }
}

/** The address's query string of a view (defaults left out). */
export function flagListAddress(view: FlagListView): string {
  const p = new URLSearchParams()
  if (view.q) p.set('q', view.q)
  if (view.tag) p.set('tag', view.tag)
  if (view.type) p.set('type', view.type)
  if (view.stale) p.set('stale', view.stale)
  if (view.sort !== 'name') p.set('sort', view.sort)
  if (view.page > 1) p.set('page', String(view.page))
  const text = p.toString()
  return text ? `?${text}` : ''
}

/** The flag search's query for one page of the project's live flags as the view asks: every filter, the search and the order on the server. */
export function flagListSearch(projectId: string, view: FlagListView): Record<string, string> {
  const order = { name: ['name', 'asc'], created: ['createdAt', 'desc'], lastSeen: ['lastSeenAt', 'desc'] }[view.sort]
  return {
    project: `IS:${projectId}`,
    ...(view.q.trim() ? { query: view.q.trim() } : {}),
    ...(view.tag.trim() ? { tag: `INCLUDE:${view.tag.trim()}` } : {}),
    ...(view.type ? { type: `IS:${view.type}` } : {}),
    ...(view.stale === 'stale' ? { state: 'IS_ANY_OF:stale,potentially-stale' } : view.stale === 'fresh' ? { state: 'IS_NONE_OF:stale,potentially-stale' } : {}),
    sortBy: order[0]!,
    sortOrder: order[1]!,
    limit: String(FLAG_LIST_PAGE),
    offset: String((view.page - 1) * FLAG_LIST_PAGE),
  }
}

/** The flag search's largest page. */
export const FLAGS_PAGE = 1000

/** The flag search's query for a page of a project's flags (live, or `archived`), by name. */
export const projectFlagsSearch = (projectId: string, archived: boolean, offset: number) => ({
  project: `IS:${projectId}`,
  ...(archived ? { archived: 'IS:true' } : {}),
  sortBy: 'name',
  limit: String(FLAGS_PAGE),
  offset: String(offset),
})
