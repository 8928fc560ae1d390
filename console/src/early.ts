import { NEW_USER_PATH, SIGN_IN_PATH, SIGN_UP_PATH, flagListSearch, flagListView, flagOfPath, projectOfPath } from './paths'

/*
 * The reads a page shows first, started while the browser reads the console's HTML (index.html runs this before the
 * console's own code), not once that code has arrived and run: the signed-in user on every page but the sign-in,
 * sign-up and new user's pages, on a project's page its overview and the page of flags its address asks for, and on a
 * flag's page the flag (its environments' cards are drawn from it). The API client takes
 * each answer once, for a GET of the same address (`takeEarly`), so it passes through the client as any other (a 401
 * still leads to the sign-in); what was not started here, or is asked again, or later than EARLY_FOR_MS, goes to the
 * network as usual.
 */

const EARLY_FOR_MS = 10_000
const started = new Map<string, Promise<Response>>()
const startedAt = performance.now()

/** An address as the same read however its query is written: path, then the parameters sorted. */
function addressOf(url: string): string {
  const { pathname, searchParams } = new URL(url, location.origin)
  return `${pathname}?${[...searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join('&')}`
}

function start(path: string, query: Record<string, string> = {}) {
  const url = `${path}${Object.keys(query).length > 0 ? `?${new URLSearchParams(query)}` : ''}`
  started.set(addressOf(url), fetch(url, { credentials: 'same-origin' }))
}

/** The answer started early for a GET of `url`, once; undefined when none was, it was taken, or it is too old to show. */
export function takeEarly(url: string): Promise<Response> | undefined {
  const address = addressOf(url)
  const answer = started.get(address)
  started.delete(address)
  return answer && performance.now() - startedAt < EARLY_FOR_MS ? answer : undefined
}

const path = location.pathname
if (path !== SIGN_IN_PATH && path !== NEW_USER_PATH && path !== SIGN_UP_PATH) {
  start('/api/admin/user')
  const projectId = projectOfPath(path)
  if (projectId !== undefined) {
    start(`/api/admin/projects/${encodeURIComponent(projectId)}/overview`)
    start('/api/admin/search/features', flagListSearch(projectId, flagListView(location.search)))
  }
  const flag = flagOfPath(path)
  if (flag !== undefined) start(`/api/admin/projects/${encodeURIComponent(flag.projectId)}/features/${encodeURIComponent(flag.flagName)}`)
}

// The colour scheme before the first paint (Mantine sets the same attribute once it runs): the one picked with the
// header's switch (Mantine's localStorage key), else the system's.
try {
  const picked = localStorage.getItem('mantine-color-scheme-value')
  const scheme = picked === 'light' || picked === 'dark' ? picked : matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'
  document.documentElement.setAttribute('data-mantine-color-scheme', scheme)
} catch {
  // No storage (a private window's policy): Mantine decides when it runs.
}
