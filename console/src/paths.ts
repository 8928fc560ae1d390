// Addresses of the console's pages, and of the reads started before the console has loaded (early.ts). No imports:
// early.ts, the first script a page runs, takes this module with it.

export const projectPath = (projectId: string) => `/projects/${encodeURIComponent(projectId)}`
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
