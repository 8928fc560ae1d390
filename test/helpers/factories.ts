import { expect } from 'vitest'
import type { TestApp } from './app.js'
import { createSignedInUser, type TestUser } from './users.js'

/** Whoever makes the request: the test app (its admin token) or a signed-in user. */
export interface Caller {
  call: (method: string, path: string, options?: { body?: unknown }) => ReturnType<TestApp['call']>
}

// A count per test file: files that share a process (the node project runs without isolation) name as if alone.
const counters = new Map<string, number>()
/** A name no other test of this file has used: `${prefix}-${n}`. */
export const fresh = (prefix: string) => {
  const file = expect.getState().testPath ?? ''
  const n = (counters.get(file) ?? 0) + 1
  counters.set(file, n)
  return `${prefix}-${n}`
}

/** Sends a request that must succeed (2xx), failing with the request and the answer otherwise. */
export async function ok(as: Caller, method: string, path: string, body?: unknown) {
  const res = await as.call(method, path, { body })
  expect(res.status >= 200 && res.status < 300, `${method} ${path} answered ${res.status}: ${res.text}`).toBe(true)
  return res
}

/** A new project; its id is fresh unless given. */
export async function createProject(as: Caller, body: { id?: string; name?: string; [key: string]: unknown } = {}): Promise<string> {
  const id = body.id ?? fresh('project')
  return (await ok(as, 'POST', '/api/admin/projects', { name: id, ...body, id })).body.id
}

/** A new flag (its name fresh unless given), off everywhere. */
export async function createFlag(as: Caller, body: { name?: string; [key: string]: unknown } = {}, project = 'default') {
  return (await ok(as, 'POST', `/api/admin/projects/${project}/features`, { ...body, name: body.name ?? fresh('flag') })).body
}

/** Adds a strategy (`default` unless given) to a flag in one environment. */
export async function addStrategy(as: Caller, flag: string, environment: string, body: Record<string, unknown> = { name: 'default' }, project = 'default') {
  return (await ok(as, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`, body)).body
}

/** Switches a flag on in one environment. */
export async function enableFlag(as: Caller, flag: string, environment: string, project = 'default') {
  return (await ok(as, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/${environment}/on`)).body
}

/** A new segment (its name fresh unless given, no constraints unless given). */
export async function createSegment(as: Caller, body: { name?: string; constraints?: unknown[]; [key: string]: unknown } = {}) {
  return (await ok(as, 'POST', '/api/admin/segments', { constraints: [], ...body, name: body.name ?? fresh('segment') })).body
}

/** A new global environment (its name fresh unless given). */
export async function createEnvironment(as: Caller, body: { name?: string; type?: string; [key: string]: unknown } = {}) {
  return (await ok(as, 'POST', '/api/admin/environments', { type: 'development', ...body, name: body.name ?? fresh('env') })).body
}

/** A new API token (its name fresh unless given); the answer holds its secret. */
export async function createToken(as: Caller, body: { tokenName?: string; type: string; [key: string]: unknown }) {
  return (await ok(as, 'POST', '/api/admin/api-tokens', { ...body, tokenName: body.tokenName ?? fresh('token') })).body
}

/** A new signed-in user with a fresh name. */
/** A fresh project with one flag on (its default strategy) in `environment`, and a client token for that project. */
export async function flagOnWithClientToken(as: Caller, environment = 'development') {
  const project = await createProject(as)
  const flag = (await createFlag(as, {}, project)).name as string
  await enableFlag(as, flag, environment, project)
  const token = (await createToken(as, { type: 'client', environment, projects: [project] })).secret as string
  return { project, flag, token }
}

export function createUser(t: TestApp, rootRole: string | number = 'Editor', extra: Record<string, unknown> = {}): Promise<TestUser> {
  return createSignedInUser(t, fresh('user'), rootRole, extra)
}

/** A new signed-in user with a fresh name and the e-mail `<name>@example.com`, which their events carry. */
export async function createUserWithEmail(t: TestApp, rootRole: string | number = 'Editor', extra: Record<string, unknown> = {}): Promise<TestUser & { email: string }> {
  const username = fresh('user')
  const email = `${username}@example.com`
  return { ...(await createSignedInUser(t, username, rootRole, { email, ...extra })), email }
}

const PROJECT_ROLES = { Owner: 4, Member: 5 } as const

/** Gives a user a project role (Member unless told). */
export async function addToProject(as: Caller, project: string, userId: number, role: keyof typeof PROJECT_ROLES = 'Member') {
  return ok(as, 'POST', `/api/admin/projects/${project}/access`, { roles: [PROJECT_ROLES[role]], users: [userId] })
}

/** Registers a tag type (tags of an unknown type are refused); one that exists already is fine. */
export async function ensureTagType(as: Caller, name: string) {
  const res = await as.call('POST', '/api/admin/tag-types', { body: { name } })
  expect([201, 409], `POST /api/admin/tag-types answered ${res.status}: ${res.text}`).toContain(res.status)
}

/** A 403 NoAccessError naming SKIP_CHANGE_REQUEST in `environment`: the direct change needs a change request there. */
export function expectSkipNeeded(res: { status: number; body: any; text: string }, environment = 'production') {
  expect(res.status, res.text).toBe(403)
  expect(res.body).toMatchObject({ name: 'NoAccessError' })
  expect(res.body.message).toContain('SKIP_CHANGE_REQUEST')
  expect(res.body.message).toContain(`environment=${environment}`)
}
