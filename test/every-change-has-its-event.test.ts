import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, addToProject, createEnvironment, createFlag, createProject, createSegment, createToken, createUserWithEmail, enableFlag, fresh, ok, ensureTagType } from './helpers/factories.js'
import { createPat, PASSWORD } from './helpers/users.js'

/*
 * Sends every route that changes state, each to what its case made for it (fresh, through the API), and
 * checks the events it writes. The route list comes from the OpenAPI document, so a new write route
 * without a case here fails the first test.
 */

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
  // Flags here are tagged with the tag type `team`, which (as in Unleash) must exist first.
  await ensureTagType(t, 'team')
})
afterAll(() => t.close())

/** Who makes a request, when not the test-admin token: its token or cookie, and the name its events carry. */
interface Who {
  token: string | null
  headers?: Record<string, string>
  actor: string
}
/** The request a case sends, once what it acts on exists. */
interface Sent {
  path: string
  body?: unknown
  as?: Who
}

interface Case {
  route: string
  /** Makes what the request acts on (fresh, through the API) and returns the request; what it makes is not counted. */
  request: () => Promise<Sent>
  events: string[]
  /** Waits for background work the route hands over (SDK reports are folded after the response). */
  settle?: () => Promise<void>
}

const features = (project: string) => `/api/admin/projects/${project}/features`
const environmentOf = (project: string, flag: string, environment: string) => `${features(project)}/${flag}/environments/${environment}`
/** A fresh project and a fresh flag in it. */
async function flagInProject(body: Record<string, unknown> = {}) {
  const project = await createProject(t, body)
  return { project, flag: (await createFlag(t, {}, project)).name as string }
}
/** A fresh project with two flags, the child depending on the parent. */
async function childDependingOnParent() {
  const { project, flag: parent } = await flagInProject()
  const child = (await createFlag(t, {}, project)).name as string
  await ok(t, 'POST', `${features(project)}/${child}/dependencies`, { feature: parent })
  return { project, parent, child }
}
/** A fresh project with a third environment (a fresh one) besides development and production. */
async function projectWithStaging() {
  const staging = (await createEnvironment(t, { type: 'preproduction' })).name as string
  return { project: await createProject(t, { environments: ['development', 'production', staging] }), staging }
}
/** A fresh project that requires change requests in production, with a flag. */
const guardedFlag = () => flagInProject({ changeRequestEnvironments: [{ name: 'production' }] })
/** A draft change request on a guarded flag, by `token` (the test-admin token unless given). */
async function draft(token?: string) {
  const { project, flag } = await guardedFlag()
  const res = await t.call('POST', `/api/admin/projects/${project}/environments/production/change-requests`, { body: { feature: flag, action: 'patchVariant', payload: { variants: [{ name: 'x' }] } }, token })
  expect(res.status, res.text).toBe(200)
  return { project, flag, id: res.body.id as number }
}
/** A draft's first change, as its path. */
async function draftChange(more = false) {
  const created = await draft()
  const path = `/api/admin/projects/${created.project}/change-requests/${created.id}`
  if (more) await ok(t, 'POST', `/api/admin/projects/${created.project}/environments/production/change-requests`, { feature: created.flag, action: 'updateEnabled', payload: { enabled: true } })
  const view = (await ok(t, 'GET', path)).body
  return { ...created, path, changePath: `${path}/changes/${view.features[0].changes[0].id}` }
}
/** A change request by another admin token, In review, so that test-admin may approve it. */
async function reviewedByAnother() {
  const other = (await createToken(t, { type: 'admin' })).secret as string
  const created = await draft(other)
  expect((await t.call('PUT', `/api/admin/projects/${created.project}/change-requests/${created.id}/state`, { body: { state: 'In review' }, token: other })).status).toBe(200)
  return created
}
/** A fresh signal endpoint with a token: its id and name, the token's id and the token. */
async function signalEndpoint() {
  const endpoint = (await ok(t, 'POST', '/api/admin/signal-endpoints', { name: fresh('alerts') })).body
  const token = (await ok(t, 'POST', `/api/admin/signal-endpoints/${endpoint.id}/tokens`, { name: 'grafana' })).body
  return { id: endpoint.id as number, name: endpoint.name as string, tokenId: token.id as number, token: token.token as string }
}

/** A fresh project with a flag (off), a signal endpoint with a token, and a service account (an Editor) to act. */
async function killSwitch() {
  const { project, flag } = await flagInProject()
  const endpoint = await signalEndpoint()
  const actor = (await ok(t, 'POST', '/api/admin/service-account', { username: fresh('bot'), name: 'Bot', rootRole: 2 })).body as { id: number; username: string }
  lastKillSwitch = { project, flag, endpoint, actor }
  return lastKillSwitch
}
let lastKillSwitch: { project: string; flag: string; endpoint: Awaited<ReturnType<typeof signalEndpoint>>; actor: { id: number; username: string } } | undefined
/** An action set for the last kill switch made: its flag on in development when its endpoint gets a signal. */
const actionSetBody = async () => {
  const { flag, endpoint, actor } = lastKillSwitch!
  return { name: fresh('kill'), actorId: actor.id, match: { source: 'signal-endpoint', sourceId: endpoint.id, payload: {} }, actions: [{ action: 'TOGGLE_FEATURE_ON', sortOrder: 1, executionParams: { environment: 'development', featureName: flag } }] }
}
/** A fresh kill switch with its action set. */
async function actionSet() {
  const made = await killSwitch()
  const id = (await ok(t, 'POST', `/api/admin/projects/${made.project}/actions`, await actionSetBody())).body.id as number
  return { ...made, id }
}

/** A fresh service account (a Viewer), by id. */
const serviceAccount = async (rootRole = 3): Promise<number> => (await ok(t, 'POST', '/api/admin/service-account', { username: fresh('bot'), name: 'Bot', rootRole })).body.id

/** A signed-in user with an e-mail, the name their events carry. */
async function userWithEmail() {
  const user = await createUserWithEmail(t)
  return { ...user, as: { token: null, headers: { cookie: user.cookie }, actor: user.email } satisfies Who }
}

/** A fresh banner, enabled unless told. */
const inviteLink = async () => (await ok(t, 'POST', '/api/admin/invite-link/tokens', { name: fresh('invite'), expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).body as { secret: string }
const createBanner = async (body: Record<string, unknown> = {}) => (await ok(t, 'POST', '/api/admin/banners', { message: fresh('Maintenance'), ...body })).body as { id: number }

/** A fresh custom strategy definition with one parameter. */
const strategyDefinition = async () => (await ok(t, 'POST', '/api/admin/strategies', { name: fresh('tenant'), parameters: [{ name: 'ids', type: 'list' }] })).body.name as string
/** A fresh context field with the legal value gold. */
const contextField = async () => (await ok(t, 'POST', '/api/admin/context', { name: fresh('tier'), legalValues: [{ value: 'gold' }] })).body.name as string
/** A fresh project with a fresh field of its own, with the legal value gold. */
async function projectContextField() {
  const project = await createProject(t)
  const name = (await ok(t, 'POST', `/api/admin/projects/${project}/context`, { name: fresh('plan'), legalValues: [{ value: 'gold' }] })).body.name as string
  return { project, name }
}
/** A disabled webhook (it delivers nothing). */
const createAddon = async () =>
  (await ok(t, 'POST', '/api/admin/addons', { provider: 'webhook', enabled: false, parameters: { url: 'https://hooks.example.com/x' }, events: ['feature-created'] })).body as { id: number }
/** A fresh project with a user (with an e-mail) as its Member. */
async function projectMember() {
  const project = await createProject(t)
  const userId = (await userWithEmail()).id
  await addToProject(t, project, userId)
  return { project, userId }
}

/** A fresh custom project role allowed to change flags. */
const customRole = async () => (await ok(t, 'POST', '/api/admin/roles', { name: fresh('releaser'), permissions: [{ name: 'UPDATE_FEATURE' }] })).body.roles.id as number
/** A fresh group with one member. */
const createGroup = async () => (await ok(t, 'POST', '/api/admin/groups', { name: fresh('team'), users: [{ user: { id: (await userWithEmail()).id } }] })).body.id as number
/** A fresh project where a fresh group holds the Member role. */
async function projectGroup() {
  const project = await createProject(t)
  const groupId = await createGroup()
  await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [], groups: [groupId] })
  return { project, groupId }
}

/** SDK reports are stored on the request and folded (with application-created for a new application) in the background. */
const reportsFolded = () =>
  vi.waitFor(async () => expect(await t.query('select count(*)::int as n from client_metrics_inbox')).toEqual([{ n: 0 }]), { timeout: 5_000, interval: 20 })
const sdkBucket = (flag: string) => ({ start: new Date().toISOString(), stop: new Date().toISOString(), toggles: { [flag]: { yes: 1, no: 0, variants: {} } } })
/** An application the test-admin token registered (and its report folded), and a flag it reports on. */
async function registeredApplication() {
  const appName = fresh('cart-service')
  await ok(t, 'POST', '/api/client/register', { appName, instanceId: 'a', strategies: ['default'], interval: 15000, started: new Date().toISOString() })
  await reportsFolded()
  return { appName, flag: (await createFlag(t)).name as string }
}
/** A frontend token, and an application already registered, so reporting to it creates nothing. */
async function asFrontend() {
  const token = await createToken(t, { type: 'frontend', environment: 'development' })
  return { ...(await registeredApplication()), as: { token: token.secret as string, actor: token.tokenName as string } satisfies Who }
}

const cases: Case[] = [
  { route: 'PUT /api/admin/environments/{name}', request: async () => ({ path: `/api/admin/environments/${(await createEnvironment(t)).name}`, body: { type: 'test', sortOrder: 5 } }), events: ['environment-updated'] },
  {
    route: 'PUT /api/admin/environments/sort-order',
    request: async () => ({ path: '/api/admin/environments/sort-order', body: { [(await createEnvironment(t, { sortOrder: 1 })).name]: 2, [(await createEnvironment(t, { sortOrder: 1 })).name]: 3 } }),
    events: ['environment-updated', 'environment-updated'],
  },
  { route: 'POST /api/admin/environments/{name}/off', request: async () => ({ path: `/api/admin/environments/${(await createEnvironment(t)).name}/off` }), events: ['environment-updated'] },
  { route: 'POST /api/admin/environments/{name}/on', request: async () => ({ path: `/api/admin/environments/${(await createEnvironment(t, { enabled: false })).name}/on` }), events: ['environment-updated'] },
  {
    route: 'POST /api/admin/environments/{name}/clone',
    request: async () => {
      const { project, staging } = await projectWithStaging()
      const flag = (await createFlag(t, {}, project)).name as string
      await enableFlag(t, flag, staging, project)
      return { path: `/api/admin/environments/${staging}/clone`, body: { name: fresh('copy'), type: 'test', projects: [project] } }
    },
    // The copy is recorded as if made by hand: the project's environment, the flag's strategy and its switch.
    events: ['environment-created', 'project-environment-added', 'feature-strategy-add', 'feature-environment-enabled'],
  },
  {
    route: 'DELETE /api/admin/environments/{name}',
    request: async () => {
      const { name } = await createEnvironment(t)
      await createToken(t, { type: 'backend', environment: name })
      return { path: `/api/admin/environments/${name}` }
    },
    // Its tokens go with it, each with its event.
    events: ['api-token-deleted', 'environment-deleted'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/environments/{environment}',
    request: async () => {
      const { project, staging } = await projectWithStaging()
      return { path: `/api/admin/projects/${project}/environments/${staging}` }
    },
    events: ['project-environment-removed'],
  },
  { route: 'POST /api/admin/environments', request: async () => ({ path: '/api/admin/environments', body: { name: fresh('staging'), type: 'preproduction' } }), events: ['environment-created'] },
  {
    route: 'POST /api/admin/projects',
    request: async () => ({ path: '/api/admin/projects', body: { id: fresh('shop'), name: 'Shop', environments: ['development', 'production'] } }),
    events: ['project-created'],
  },
  { route: 'PUT /api/admin/projects/{projectId}', request: async () => ({ path: `/api/admin/projects/${await createProject(t)}`, body: { name: 'Shop!' } }), events: ['project-updated'] },
  { route: 'POST /api/admin/projects/archive/{projectId}', request: async () => ({ path: `/api/admin/projects/archive/${await createProject(t)}` }), events: ['project-archived'] },
  {
    route: 'POST /api/admin/projects/revive/{projectId}',
    request: async () => {
      const project = await createProject(t)
      await ok(t, 'POST', `/api/admin/projects/archive/${project}`)
      return { path: `/api/admin/projects/revive/${project}` }
    },
    events: ['project-revived'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}',
    request: async () => {
      const { project, flag } = await flagInProject()
      await ok(t, 'DELETE', `${features(project)}/${flag}`)
      await createToken(t, { type: 'client', environment: 'development', projects: [project] })
      await ok(t, 'POST', `/api/admin/projects/${project}/context`, { name: fresh('plan') })
      return { path: `/api/admin/projects/${project}` }
    },
    events: ['feature-deleted', 'context-field-deleted', 'api-token-deleted', 'project-deleted'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/environments',
    request: async () => {
      const staging = (await createEnvironment(t, { type: 'preproduction' })).name
      // A project created without a list would have every environment, the new one included.
      return { path: `/api/admin/projects/${await createProject(t, { environments: ['development', 'production'] })}/environments`, body: { environment: staging } }
    },
    events: ['project-environment-added'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/environments/{environment}/default-strategy',
    request: async () => {
      const { project, staging } = await projectWithStaging()
      return { path: `/api/admin/projects/${project}/environments/${staging}/default-strategy`, body: { name: 'default' } }
    },
    events: ['default-strategy-updated'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/environments/{environment}/default-strategy',
    request: async () => {
      const { project, staging } = await projectWithStaging()
      return { path: `/api/admin/projects/${project}/environments/${staging}/default-strategy`, body: { name: 'flexibleRollout' } }
    },
    events: ['default-strategy-updated'],
  },
  { route: 'POST /api/admin/api-tokens', request: async () => ({ path: '/api/admin/api-tokens', body: { tokenName: fresh('sdk'), type: 'backend', environment: 'development' } }), events: ['api-token-created'] },
  {
    route: 'PUT /api/admin/api-tokens/{token}',
    request: async () => ({ path: `/api/admin/api-tokens/${encodeURIComponent((await createToken(t, { type: 'frontend', environment: 'development' })).secret)}`, body: { expiresAt: '2099-01-01T00:00:00Z' } }),
    events: ['api-token-updated'],
  },
  {
    route: 'DELETE /api/admin/api-tokens/{token}',
    request: async () => ({ path: `/api/admin/api-tokens/${encodeURIComponent((await createToken(t, { type: 'backend', environment: 'development' })).secret)}` }),
    events: ['api-token-deleted'],
  },
  { route: 'POST /api/admin/projects/{projectId}/api-tokens', request: async () => ({ path: `/api/admin/projects/${await createProject(t)}/api-tokens`, body: { tokenName: fresh('sdk'), type: 'frontend' } }), events: ['api-token-created'] },
  {
    route: 'DELETE /api/admin/projects/{projectId}/api-tokens/{token}',
    request: async () => {
      const project = await createProject(t)
      const { secret } = (await ok(t, 'POST', `/api/admin/projects/${project}/api-tokens`, { tokenName: fresh('sdk'), type: 'client' })).body
      return { path: `/api/admin/projects/${project}/api-tokens/${encodeURIComponent(secret)}` }
    },
    events: ['api-token-deleted'],
  },
  {
    route: 'POST /api/admin/segments',
    request: async () => ({ path: '/api/admin/segments', body: { name: fresh('beta'), constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }] } }),
    events: ['segment-created'],
  },
  {
    route: 'PUT /api/admin/segments/{id}',
    request: async () => {
      const segment = await createSegment(t, { constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }] })
      return { path: `/api/admin/segments/${segment.id}`, body: { name: segment.name, constraints: [] } }
    },
    events: ['segment-updated'],
  },
  { route: 'POST /api/admin/projects/{projectId}/features', request: async () => ({ path: features(await createProject(t)), body: { name: fresh('cart') } }), events: ['feature-created'] },
  {
    route: 'PATCH /api/admin/projects/{projectId}/features/{featureName}',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${features(project)}/${flag}`, body: [{ op: 'replace', path: '/stale', value: true }] }
    },
    events: ['feature-metadata-updated', 'feature-stale-on'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${environmentOf(project, flag, 'development')}/on` }
    },
    events: ['feature-strategy-add', 'feature-environment-enabled'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off',
    request: async () => {
      const { project, flag } = await flagInProject()
      await enableFlag(t, flag, 'development', project)
      return { path: `${environmentOf(project, flag, 'development')}/off` }
    },
    events: ['feature-environment-disabled'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${environmentOf(project, flag, 'development')}/strategies`, body: { name: 'userWithId', parameters: { userIds: '1' } } }
    },
    events: ['feature-strategy-add'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}',
    request: async () => {
      const { project, flag } = await flagInProject()
      const strategy = await addStrategy(t, flag, 'development', { name: 'userWithId', parameters: { userIds: '1' } }, project)
      return { path: `${environmentOf(project, flag, 'development')}/strategies/${strategy.id}`, body: { name: 'default' } }
    },
    events: ['feature-strategy-update'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order',
    request: async () => {
      const { project, flag } = await flagInProject()
      await addStrategy(t, flag, 'development', { name: 'userWithId', parameters: { userIds: '1' } }, project)
      return { path: `${environmentOf(project, flag, 'development')}/strategies/set-sort-order`, body: [] }
    },
    events: ['strategy-order-changed'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}',
    request: async () => {
      const { project, flag } = await flagInProject()
      const strategy = await addStrategy(t, flag, 'development', { name: 'default' }, project)
      return { path: `${environmentOf(project, flag, 'development')}/strategies/${strategy.id}` }
    },
    events: ['feature-strategy-remove'],
  },
  {
    route: 'PATCH /api/admin/projects/{projectId}/features/{featureName}/variants',
    request: async () => {
      // One event per environment of the project: three here.
      const { project } = await projectWithStaging()
      const flag = (await createFlag(t, {}, project)).name
      return { path: `${features(project)}/${flag}/variants`, body: [{ op: 'add', path: '/-', value: { name: 'a' } }] }
    },
    events: ['feature-variants-updated', 'feature-variants-updated', 'feature-variants-updated'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${environmentOf(project, flag, 'production')}/variants`, body: [{ name: 'b' }] }
    },
    events: ['feature-environment-variants-updated'],
  },
  {
    route: 'PATCH /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants',
    request: async () => {
      const { project, flag } = await flagInProject()
      await ok(t, 'PUT', `${environmentOf(project, flag, 'production')}/variants`, [{ name: 'b' }])
      return { path: `${environmentOf(project, flag, 'production')}/variants`, body: [{ op: 'replace', path: '/0/name', value: 'c' }] }
    },
    events: ['feature-environment-variants-updated'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/change-requests/config',
    request: async () => ({ path: `/api/admin/projects/${await createProject(t)}/change-requests/config`, body: { environment: 'production', changeRequestsEnabled: true } }),
    events: ['change-request-configuration-updated'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/environments/{environment}/change-requests',
    request: async () => {
      const { project, flag } = await guardedFlag()
      return { path: `/api/admin/projects/${project}/environments/production/change-requests`, body: { feature: flag, action: 'updateEnabled', payload: { enabled: true } } }
    },
    events: ['change-request-created', 'change-added'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/change-requests/{id}/state',
    request: async () => {
      const { project, id } = await draft()
      return { path: `/api/admin/projects/${project}/change-requests/${id}/state`, body: { state: 'In review' } }
    },
    events: ['change-request-sent-to-review'],
  },
  {
    route: 'POST /api/admin/playground/change-request/{id}',
    request: async () => ({ path: `/api/admin/playground/change-request/${(await draft()).id}`, body: { context: { appName: 'web' } } }),
    events: [],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/change-requests/{id}/approve',
    request: async () => {
      const { project, id } = await reviewedByAnother()
      return { path: `/api/admin/projects/${project}/change-requests/${id}/approve` }
    },
    events: ['change-request-approved'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/change-requests/{id}/state',
    request: async () => {
      const { project, id } = await reviewedByAnother()
      await ok(t, 'POST', `/api/admin/projects/${project}/change-requests/${id}/approve`)
      return { path: `/api/admin/projects/${project}/change-requests/${id}/state`, body: { state: 'Applied' } }
    },
    events: ['feature-environment-variants-updated', 'change-request-applied'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/change-requests/{id}/state',
    request: async () => {
      const { project, id } = await reviewedByAnother()
      await ok(t, 'POST', `/api/admin/projects/${project}/change-requests/${id}/approve`)
      return { path: `/api/admin/projects/${project}/change-requests/${id}/state`, body: { state: 'Scheduled', scheduledAt: new Date(Date.now() + 86_400_000).toISOString() } }
    },
    events: ['change-request-scheduled'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}',
    request: async () => {
      const { flag, changePath } = await draftChange()
      return { path: changePath, body: { feature: flag, action: 'patchVariant', payload: { variants: [{ name: 'y' }] } } }
    },
    events: ['change-edited'],
  },
  { route: 'DELETE /api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}', request: async () => ({ path: (await draftChange(true)).changePath }), events: ['change-discarded'] },
  { route: 'DELETE /api/admin/projects/{projectId}/change-requests/{id}', request: async () => ({ path: (await draftChange()).path }), events: ['change-request-discarded'] },
  { route: 'POST /api/admin/playground', request: async () => ({ path: '/api/admin/playground', body: { environment: 'production', context: { appName: 'web' } } }), events: [] },
  { route: 'POST /api/admin/playground/advanced', request: async () => ({ path: '/api/admin/playground/advanced', body: { environments: ['production'], context: { appName: 'web,app' } } }), events: [] },
  {
    route: 'POST /api/admin/features/{featureName}/tags',
    request: async () => ({ path: `/api/admin/features/${(await createFlag(t)).name}/tags`, body: { type: 'team', value: fresh('payments') } }),
    // A tag new to the registry is created with it.
    events: ['feature-tagged', 'tag-created'],
  },
  {
    route: 'PUT /api/admin/features/{featureName}/tags',
    request: async () => ({ path: `/api/admin/features/${(await createFlag(t)).name}/tags`, body: { addedTags: [{ type: 'team', value: fresh('payments') }], removedTags: [] } }),
    events: ['feature-tagged', 'tag-created'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/tags',
    request: async () => ({ path: '/api/admin/projects/default/tags', body: { features: [(await createFlag(t)).name], tags: { addedTags: [{ type: 'team', value: fresh('bulk') }], removedTags: [] } } }),
    events: ['feature-tagged', 'tag-created'],
  },
  { route: 'POST /api/admin/tags', request: async () => ({ path: '/api/admin/tags', body: { type: 'team', value: fresh('registered') } }), events: ['tag-created'] },
  {
    route: 'DELETE /api/admin/tags/{type}/{value}',
    request: async () => {
      const value = fresh('doomed')
      await ok(t, 'POST', '/api/admin/tags', { type: 'team', value })
      return { path: `/api/admin/tags/team/${value}` }
    },
    events: ['tag-deleted'],
  },
  // Unleash records no event for a lifetime change, and the catalogue has none for it (the potentially-stale job records the flags it marks).
  { route: 'PUT /api/admin/feature-types/{id}/lifetime', request: async () => ({ path: '/api/admin/feature-types/kill-switch/lifetime', body: { lifetimeDays: null } }), events: [] },
  { route: 'POST /api/admin/tag-types', request: async () => ({ path: '/api/admin/tag-types', body: { name: fresh('kind') } }), events: ['tag-type-created'] },
  { route: 'POST /api/admin/tag-types/validate', request: async () => ({ path: '/api/admin/tag-types/validate', body: { name: fresh('kind') } }), events: [] },
  {
    route: 'PUT /api/admin/tag-types/{name}',
    request: async () => {
      const name = fresh('kind')
      await ok(t, 'POST', '/api/admin/tag-types', { name })
      return { path: `/api/admin/tag-types/${name}`, body: { description: 'changed' } }
    },
    events: ['tag-type-updated'],
  },
  {
    route: 'DELETE /api/admin/tag-types/{name}',
    request: async () => {
      const name = fresh('kind')
      await ok(t, 'POST', '/api/admin/tag-types', { name })
      return { path: `/api/admin/tag-types/${name}` }
    },
    events: ['tag-type-deleted'],
  },
  {
    route: 'DELETE /api/admin/features/{featureName}/tags/{type}/{value}',
    request: async () => {
      const flag = (await createFlag(t)).name
      await ok(t, 'POST', `/api/admin/features/${flag}/tags`, { type: 'team', value: 'payments' })
      return { path: `/api/admin/features/${flag}/tags/team/payments` }
    },
    events: ['feature-untagged'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/link',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${features(project)}/${flag}/link`, body: { url: 'https://example.com/runbook', title: 'Runbook' } }
    },
    events: ['feature-link-added'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/features/{featureName}/link/{linkId}',
    request: async () => {
      const { project, flag } = await flagInProject()
      await ok(t, 'POST', `${features(project)}/${flag}/link`, { url: 'https://example.com/runbook' })
      const [link] = (await ok(t, 'GET', `${features(project)}/${flag}`)).body.links
      return { path: `${features(project)}/${flag}/link/${link.id}`, body: { url: 'https://example.com/other' } }
    },
    events: ['feature-link-updated'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/features/{featureName}/link/{linkId}',
    request: async () => {
      const { project, flag } = await flagInProject()
      await ok(t, 'POST', `${features(project)}/${flag}/link`, { url: 'https://example.com/runbook' })
      const [link] = (await ok(t, 'GET', `${features(project)}/${flag}`)).body.links
      return { path: `${features(project)}/${flag}/link/${link.id}` }
    },
    events: ['feature-link-removed'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/favorites',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${features(project)}/${flag}/favorites` }
    },
    events: ['feature-favorited'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/features/{featureName}/favorites',
    request: async () => {
      const { project, flag } = await flagInProject()
      await ok(t, 'POST', `${features(project)}/${flag}/favorites`)
      return { path: `${features(project)}/${flag}/favorites` }
    },
    events: ['feature-unfavorited'],
  },
  { route: 'POST /api/admin/projects/{projectId}/favorites', request: async () => ({ path: `/api/admin/projects/${await createProject(t)}/favorites` }), events: ['project-favorited'] },
  {
    route: 'DELETE /api/admin/projects/{projectId}/favorites',
    request: async () => {
      const project = await createProject(t)
      await ok(t, 'POST', `/api/admin/projects/${project}/favorites`)
      return { path: `/api/admin/projects/${project}/favorites` }
    },
    events: ['project-unfavorited'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${features(project)}/${flag}/lifecycle/complete`, body: { status: 'kept' } }
    },
    events: ['feature-completed'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete',
    request: async () => {
      const { project, flag } = await flagInProject()
      await ok(t, 'POST', `${features(project)}/${flag}/lifecycle/complete`, { status: 'kept' })
      return { path: `${features(project)}/${flag}/lifecycle/uncomplete` }
    },
    events: ['feature-uncompleted'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{child}/dependencies',
    request: async () => {
      const { project, flag: parent } = await flagInProject()
      const child = (await createFlag(t, {}, project)).name
      return { path: `${features(project)}/${child}/dependencies`, body: { feature: parent } }
    },
    events: ['feature-dependency-added'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/features/{child}/dependencies/{parent}',
    request: async () => {
      const { project, parent, child } = await childDependingOnParent()
      return { path: `${features(project)}/${child}/dependencies/${parent}` }
    },
    events: ['feature-dependency-removed'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/features/{child}/dependencies',
    request: async () => {
      const { project, child } = await childDependingOnParent()
      return { path: `${features(project)}/${child}/dependencies` }
    },
    events: ['feature-dependencies-removed'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/features/{featureName}',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${features(project)}/${flag}` }
    },
    events: ['feature-archived'],
  },
  {
    route: 'POST /api/admin/archive/revive/{featureName}',
    request: async () => {
      const { project, flag } = await flagInProject()
      await ok(t, 'DELETE', `${features(project)}/${flag}`)
      return { path: `/api/admin/archive/revive/${flag}` }
    },
    events: ['feature-revived'],
  },
  {
    route: 'DELETE /api/admin/archive/{featureName}',
    request: async () => {
      const { project, flag } = await flagInProject()
      await ok(t, 'DELETE', `${features(project)}/${flag}`)
      return { path: `/api/admin/archive/${flag}` }
    },
    events: ['feature-deleted'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/delete',
    request: async () => {
      const { project, flag } = await flagInProject()
      await ok(t, 'DELETE', `${features(project)}/${flag}`)
      return { path: `/api/admin/projects/${project}/delete`, body: { features: [flag] } }
    },
    events: ['feature-deleted'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/archive',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `/api/admin/projects/${project}/archive`, body: { features: [flag] } }
    },
    events: ['feature-archived'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/bulk_features/environments/{environment}/on',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `/api/admin/projects/${project}/bulk_features/environments/development/on`, body: { features: [flag] } }
    },
    events: ['feature-strategy-add', 'feature-environment-enabled'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/bulk_features/environments/{environment}/off',
    request: async () => {
      const { project, flag } = await flagInProject()
      await enableFlag(t, flag, 'development', project)
      return { path: `/api/admin/projects/${project}/bulk_features/environments/development/off`, body: { features: [flag] } }
    },
    events: ['feature-environment-disabled'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/features/{featureName}',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${features(project)}/${flag}`, body: { stale: true } }
    },
    events: ['feature-metadata-updated', 'feature-stale-on'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/stale',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `/api/admin/projects/${project}/stale`, body: { features: [flag], stale: true } }
    },
    events: ['feature-metadata-updated', 'feature-stale-on'],
  },
  {
    route: 'PATCH /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}',
    request: async () => {
      const { project, flag } = await flagInProject()
      const strategy = await addStrategy(t, flag, 'development', { name: 'default' }, project)
      return { path: `${environmentOf(project, flag, 'development')}/strategies/${strategy.id}`, body: [{ op: 'replace', path: '/title', value: 'patched' }] }
    },
    events: ['feature-strategy-update'],
  },
  { route: 'POST /api/admin/segments/validate', request: async () => ({ path: '/api/admin/segments/validate', body: { name: fresh('free') } }), events: [] },
  {
    route: 'POST /api/admin/segments/strategies',
    request: async () => {
      const { project, flag } = await flagInProject()
      const strategy = await addStrategy(t, flag, 'development', { name: 'default' }, project)
      const segment = await createSegment(t)
      return { path: '/api/admin/segments/strategies', body: { projectId: project, strategyId: strategy.id, environmentId: 'development', segmentIds: [segment.id] } }
    },
    events: ['feature-strategy-update'],
  },
  { route: 'POST /api/admin/constraints/validate', request: async () => ({ path: '/api/admin/constraints/validate', body: { contextName: 'userId', operator: 'IN', values: ['a'] } }), events: [] },
  {
    route: 'PUT /api/admin/projects/{projectId}/features/{featureName}/variants-batch',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${features(project)}/${flag}/variants-batch`, body: { variants: [{ name: 'blue', weightType: 'variable', weight: 1000, stickiness: 'default' }], environments: ['development', 'production'] } }
    },
    events: ['feature-environment-variants-updated', 'feature-environment-variants-updated'],
  },
  // Switching it off (it is off): switching it on would refuse the writes of the cases after this one.
  { route: 'POST /api/admin/maintenance', request: async () => ({ path: '/api/admin/maintenance', body: { enabled: false } }), events: ['maintenance-mode-toggled'] },
  { route: 'POST /api/admin/features/validate', request: async () => ({ path: '/api/admin/features/validate', body: { name: fresh('free') } }), events: [] },
  {
    route: 'POST /api/admin/projects/{projectId}/archive/validate',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `/api/admin/projects/${project}/archive/validate`, body: { features: [flag] } }
    },
    events: [],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/revive',
    request: async () => {
      const { project, flag } = await flagInProject()
      await ok(t, 'DELETE', `${features(project)}/${flag}`)
      return { path: `/api/admin/projects/${project}/revive`, body: { features: [flag] } }
    },
    events: ['feature-revived'],
  },
  { route: 'POST /api/admin/features-batch/export', request: async () => ({ path: '/api/admin/features-batch/export', body: { environment: 'development', project: (await flagInProject()).project } }), events: ['features-exported'] },
  {
    route: 'POST /api/admin/features-batch/validate',
    request: async () => ({ path: '/api/admin/features-batch/validate', body: { project: await createProject(t), environment: 'development', data: { features: [{ name: fresh('imported') }], featureStrategies: [], tagTypes: [] } } }),
    events: [],
  },
  {
    route: 'POST /api/admin/features-batch/import',
    request: async () => {
      const { project, flag } = await flagInProject()
      const name = fresh('imported')
      return {
        path: '/api/admin/features-batch/import',
        body: { project, environment: 'development', data: { features: [{ name: flag, description: 'imported' }, { name }], featureStrategies: [{ name: 'default', featureName: flag }], featureEnvironments: [{ featureName: flag, enabled: true }], tagTypes: [] } },
      }
    },
    events: ['feature-metadata-updated', 'feature-created', 'feature-strategy-add', 'feature-environment-enabled', 'features-imported'],
  },
  {
    // The migration from Unleash: a fake Unleash (fetch stubbed while the request runs) with one flag in a new project.
    route: 'POST /api/admin/migrate/unleash',
    request: async () => {
      const flag = fresh('migrated')
      const project = fresh('unleash')
      const answers: Record<string, unknown> = {
        '/api/admin/environments': { environments: [] },
        '/api/admin/projects': { projects: [{ id: project, name: 'From Unleash' }] },
        '/api/admin/context': [],
        '/api/admin/strategies': { strategies: [] },
        '/api/admin/tag-types': { tagTypes: [] },
        '/api/admin/tags': { tags: [] },
        '/api/admin/segments': { segments: [] },
        [`/api/admin/projects/${project}/overview`]: { name: 'From Unleash', environments: [{ environment: 'development' }] },
        [`/api/admin/projects/${project}/features`]: { features: [{ name: flag }] },
        [`/api/admin/projects/${project}/features/${flag}`]: { name: flag, type: 'release', environments: [{ name: 'development', enabled: true, variants: [], strategies: [{ id: crypto.randomUUID(), name: 'default', sortOrder: 0 }] }] },
        [`/api/admin/features/${flag}/tags`]: { tags: [] },
      }
      vi.stubGlobal('fetch', async (url: string) => {
        const answer = answers[new URL(url).pathname]
        return answer === undefined ? new Response('{}', { status: 404 }) : Response.json(answer)
      })
      return { path: '/api/admin/migrate/unleash', body: { url: 'https://unleash.example', token: '*:*.unleash-token' } }
    },
    settle: async () => void vi.unstubAllGlobals(),
    events: ['project-import', 'feature-import'],
  },
  {
    // A flag overwritten (keep=false) with a new tag, and one new object of every other kind the state import writes.
    route: 'POST /api/admin/state/import',
    request: async () => {
      const { project, flag } = await flagInProject()
      return {
        path: '/api/admin/state/import?keep=false',
        body: {
          version: 4,
          environments: [{ name: fresh('restored'), type: 'test' }],
          projects: [{ id: fresh('restored'), name: 'Restored', environments: [{ name: 'development' }] }],
          strategies: [{ name: fresh('restored'), parameters: [] }],
          tagTypes: [{ name: fresh('restored') }],
          segments: [{ id: 1, name: fresh('restored'), constraints: [] }],
          features: [{ name: flag, project, description: 'restored' }],
          featureTags: [{ featureName: flag, tagType: 'team', tagValue: fresh('restored') }],
        },
      }
    },
    events: ['environment-import', 'project-import', 'strategy-import', 'tag-type-import', 'segment-import', 'feature-import', 'tag-import', 'feature-tag-import'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/clone',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${features(project)}/${flag}/clone`, body: { name: fresh('copy') } }
    },
    events: ['feature-created'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/features/{featureName}/changeProject',
    request: async () => {
      const { project, flag } = await flagInProject()
      return { path: `${features(project)}/${flag}/changeProject`, body: { newProjectId: await createProject(t) } }
    },
    events: ['feature-project-change'],
  },
  {
    route: 'POST /api/admin/addons',
    request: async () => ({ path: '/api/admin/addons', body: { provider: 'webhook', enabled: false, parameters: { url: 'https://hooks.example.com/x' }, events: ['feature-created'] } }),
    events: ['addon-config-created'],
  },
  {
    route: 'PUT /api/admin/addons/{id}',
    request: async () => ({
      path: `/api/admin/addons/${(await createAddon()).id}`,
      body: { provider: 'webhook', enabled: false, parameters: { url: 'https://hooks.example.com/y' }, events: ['feature-created'] },
    }),
    events: ['addon-config-updated'],
  },
  { route: 'DELETE /api/admin/addons/{id}', request: async () => ({ path: `/api/admin/addons/${(await createAddon()).id}` }), events: ['addon-config-deleted'] },
  { route: 'POST /api/admin/banners', request: async () => ({ path: '/api/admin/banners', body: { message: fresh('Maintenance'), link: 'https://status.example.com' } }), events: ['banner-created'] },
  { route: 'PUT /api/admin/banners/{id}', request: async () => ({ path: `/api/admin/banners/${(await createBanner()).id}`, body: { message: 'Changed', variant: 'warning' } }), events: ['banner-updated'] },
  { route: 'POST /api/admin/banners/{id}/on', request: async () => ({ path: `/api/admin/banners/${(await createBanner({ enabled: false })).id}/on` }), events: ['banner-updated'] },
  { route: 'POST /api/admin/banners/{id}/off', request: async () => ({ path: `/api/admin/banners/${(await createBanner()).id}/off` }), events: ['banner-updated'] },
  { route: 'DELETE /api/admin/banners/{id}', request: async () => ({ path: `/api/admin/banners/${(await createBanner()).id}` }), events: ['banner-deleted'] },
  { route: 'DELETE /api/admin/segments/{id}', request: async () => ({ path: `/api/admin/segments/${(await createSegment(t)).id}` }), events: ['segment-deleted'] },
  { route: 'POST /api/admin/context', request: async () => ({ path: '/api/admin/context', body: { name: fresh('tier'), legalValues: [{ value: 'gold' }] } }), events: ['context-field-created'] },
  { route: 'PUT /api/admin/context/{contextField}', request: async () => ({ path: `/api/admin/context/${await contextField()}`, body: { description: 'Plan' } }), events: ['context-field-updated'] },
  { route: 'POST /api/admin/context/{contextField}/legal-values', request: async () => ({ path: `/api/admin/context/${await contextField()}/legal-values`, body: { value: 'silver' } }), events: ['context-field-updated'] },
  { route: 'DELETE /api/admin/context/{contextField}/legal-values/{legalValue}', request: async () => ({ path: `/api/admin/context/${await contextField()}/legal-values/gold` }), events: ['context-field-updated'] },
  { route: 'DELETE /api/admin/context/{contextField}', request: async () => ({ path: `/api/admin/context/${await contextField()}` }), events: ['context-field-deleted'] },
  { route: 'POST /api/admin/projects/{projectId}/context', request: async () => ({ path: `/api/admin/projects/${await createProject(t)}/context`, body: { name: fresh('plan') } }), events: ['context-field-created'] },
  {
    route: 'PUT /api/admin/projects/{projectId}/context/{contextField}',
    request: async () => {
      const { project, name } = await projectContextField()
      return { path: `/api/admin/projects/${project}/context/${name}`, body: { description: 'Plan' } }
    },
    events: ['context-field-updated'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/context/{contextField}/legal-values',
    request: async () => {
      const { project, name } = await projectContextField()
      return { path: `/api/admin/projects/${project}/context/${name}/legal-values`, body: { value: 'silver' } }
    },
    events: ['context-field-updated'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/context/{contextField}/legal-values/{legalValue}',
    request: async () => {
      const { project, name } = await projectContextField()
      return { path: `/api/admin/projects/${project}/context/${name}/legal-values/gold` }
    },
    events: ['context-field-updated'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/context/{contextField}',
    request: async () => {
      const { project, name } = await projectContextField()
      return { path: `/api/admin/projects/${project}/context/${name}` }
    },
    events: ['context-field-deleted'],
  },
  { route: 'POST /api/admin/strategies', request: async () => ({ path: '/api/admin/strategies', body: { name: fresh('tenant'), parameters: [{ name: 'ids', type: 'list' }] } }), events: ['strategy-created'] },
  { route: 'PUT /api/admin/strategies/{name}', request: async () => ({ path: `/api/admin/strategies/${await strategyDefinition()}`, body: { parameters: [] } }), events: ['strategy-updated'] },
  { route: 'DELETE /api/admin/strategies/{name}', request: async () => ({ path: `/api/admin/strategies/${await strategyDefinition()}` }), events: ['strategy-deleted'] },
  { route: 'POST /api/admin/strategies/{strategyName}/deprecate', request: async () => ({ path: `/api/admin/strategies/${await strategyDefinition()}/deprecate` }), events: ['strategy-deprecated'] },
  {
    route: 'POST /api/admin/strategies/{strategyName}/reactivate',
    request: async () => {
      const name = await strategyDefinition()
      await ok(t, 'POST', `/api/admin/strategies/${name}/deprecate`)
      return { path: `/api/admin/strategies/${name}/reactivate` }
    },
    events: ['strategy-reactivated'],
  },
  // Checks a name; writes nothing.
  { route: 'POST /api/admin/context/validate', request: async () => ({ path: '/api/admin/context/validate', body: { name: fresh('tier') } }), events: [] },
  { route: 'POST /api/admin/projects/{projectId}/context/validate', request: async () => ({ path: `/api/admin/projects/${await createProject(t)}/context/validate`, body: { name: fresh('tier') } }), events: [] },
  {
    route: 'POST /api/admin/user-admin',
    request: async () => {
      const username = fresh('dana')
      return { path: '/api/admin/user-admin', body: { username, email: `${username}@example.com`, password: 'dana-password', rootRole: 'Editor' } }
    },
    events: ['user-created'],
  },
  { route: 'PUT /api/admin/user-admin/{id}', request: async () => ({ path: `/api/admin/user-admin/${(await userWithEmail()).id}`, body: { name: 'Dana' } }), events: ['user-updated'] },
  {
    route: 'POST /api/admin/user-admin/{id}/change-password',
    request: async () => ({ path: `/api/admin/user-admin/${(await userWithEmail()).id}/change-password`, body: { password: 'dana-password' } }),
    events: ['user-updated'],
  },
  {
    route: 'DELETE /api/admin/user-admin/{id}/sso',
    request: async () => {
      const user = await userWithEmail()
      await t.query(`update users set sso_issuer = 'https://idp.example', sso_subject = 'sub-' || id where id = $1`, [user.id])
      return { path: `/api/admin/user-admin/${user.id}/sso` }
    },
    events: ['user-updated'],
  },
  { route: 'POST /auth/simple/login', request: async () => ({ path: '/auth/simple/login', body: { username: (await userWithEmail()).username, password: PASSWORD } }), events: [] },
  { route: 'POST /logout', request: async () => ({ path: '/logout', as: (await userWithEmail()).as }), events: [] },
  {
    route: 'POST /auth/reset/password',
    request: async () => {
      const email = `${fresh('erin')}@example.com`
      const invited = await ok(t, 'POST', '/api/admin/user-admin', { email, rootRole: 'Viewer' })
      const token = new URL(invited.body.inviteLink).searchParams.get('token')!
      return { path: '/auth/reset/password', body: { token, password: 'erin-password' }, as: { token: null, actor: email } }
    },
    events: ['user-updated'],
  },
  // Password checks and reset links: no event (as Unleash); the e-mail goes out after the response.
  { route: 'POST /auth/reset/validate-password', request: async () => ({ path: '/auth/reset/validate-password', body: { password: 'long enough' }, as: { token: null, actor: 'nobody' } }), events: [] },
  { route: 'POST /auth/reset/password-email', request: async () => ({ path: '/auth/reset/password-email', body: { email: (await userWithEmail()).email }, as: { token: null, actor: 'nobody' } }), events: [] },
  { route: 'POST /api/admin/user-admin/validate-password', request: async () => ({ path: '/api/admin/user-admin/validate-password', body: { password: 'long enough' } }), events: [] },
  { route: 'POST /api/admin/user-admin/reset-password', request: async () => ({ path: '/api/admin/user-admin/reset-password', body: { id: (await userWithEmail()).email } }), events: [] },
  {
    route: 'POST /api/admin/user-admin/inactive/delete',
    request: async () => {
      const user = await userWithEmail()
      await t.query(`update users set seen_at = now() - interval '200 days', created_at = now() - interval '200 days' where id = $1`, [user.id])
      return { path: '/api/admin/user-admin/inactive/delete', body: { ids: [user.id] } }
    },
    events: ['user-deleted'],
  },
  { route: 'DELETE /api/admin/user-admin/scim-users', request: async () => ({ path: '/api/admin/user-admin/scim-users' }), events: [] },
  { route: 'POST /api/admin/ui-config/cors', request: async () => ({ path: '/api/admin/ui-config/cors', body: { frontendApiOrigins: ['*'] } }), events: ['setting-created'] },
  // As Unleash: a user's feedback and splash state go without an event.
  { route: 'POST /api/admin/feedback', request: async () => ({ path: '/api/admin/feedback', body: { feedbackId: 'pnps' }, as: (await userWithEmail()).as }), events: [] },
  { route: 'PUT /api/admin/feedback/{id}', request: async () => ({ path: '/api/admin/feedback/pnps', body: { neverShow: true }, as: (await userWithEmail()).as }), events: [] },
  { route: 'POST /api/admin/splash/{id}', request: async () => ({ path: '/api/admin/splash/new-ui', as: (await userWithEmail()).as }), events: [] },
  // Logged on the server's console only.
  { route: 'POST /api/admin/record-ui-error', request: async () => ({ path: '/api/admin/record-ui-error', body: { errorMessage: 'boom' } }), events: [] },
  { route: 'POST /api/admin/metrics/applications/{appName}', request: async () => ({ path: `/api/admin/metrics/applications/${fresh('app')}`, body: { color: 'red' } }), events: ['application-created'] },
  // As Unleash: an application (what SDKs reported) goes without an event.
  { route: 'DELETE /api/admin/metrics/applications/{appName}', request: async () => ({ path: `/api/admin/metrics/applications/${fresh('app')}` }), events: [] },
  {
    route: 'POST /api/admin/user/change-password',
    request: async () => ({ path: '/api/admin/user/change-password', body: { oldPassword: PASSWORD, password: 'a new passphrase' }, as: (await userWithEmail()).as }),
    events: ['user-updated'],
  },
  { route: 'POST /api/admin/user/tokens', request: async () => ({ path: '/api/admin/user/tokens', body: { description: 'ci', expiresAt: '2099-01-01T00:00:00Z' }, as: (await userWithEmail()).as }), events: ['pat-created'] },
  {
    route: 'DELETE /api/admin/user/tokens/{id}',
    request: async () => {
      const user = await userWithEmail()
      await createPat(user)
      const [pat] = (await ok(user, 'GET', '/api/admin/user/tokens')).body.pats
      return { path: `/api/admin/user/tokens/${pat.id}`, as: user.as }
    },
    events: ['pat-deleted'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/access',
    request: async () => ({ path: `/api/admin/projects/${await createProject(t)}/access`, body: { roles: [5], users: [(await userWithEmail()).id] } }),
    events: ['project-access-added'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/users/{userId}/roles',
    request: async () => {
      const { project, userId } = await projectMember()
      return { path: `/api/admin/projects/${project}/users/${userId}/roles`, body: { roles: [5] } }
    },
    events: ['project-access-user-roles-updated'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/users/{userId}/roles',
    request: async () => {
      const { project, userId } = await projectMember()
      return { path: `/api/admin/projects/${project}/users/${userId}/roles` }
    },
    events: ['project-access-user-roles-deleted'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/access',
    request: async () => {
      const { project, userId } = await projectMember()
      return { path: `/api/admin/projects/${project}/access`, body: { roles: [{ id: 4, users: [userId] }] } }
    },
    events: ['project-access-updated'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/role/{roleId}/access',
    request: async () => ({ path: `/api/admin/projects/${await createProject(t)}/role/5/access`, body: { users: [{ id: (await userWithEmail()).id }], groups: [{ id: await createGroup() }] } }),
    events: ['project-access-added'],
  },
  {
    route: 'PUT /api/admin/projects/{projectId}/groups/{groupId}/roles',
    request: async () => {
      const { project, groupId } = await projectGroup()
      return { path: `/api/admin/projects/${project}/groups/${groupId}/roles`, body: { roles: [4, 5] } }
    },
    events: ['project-access-group-roles-updated'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/groups/{groupId}/roles',
    request: async () => {
      const { project, groupId } = await projectGroup()
      return { path: `/api/admin/projects/${project}/groups/${groupId}/roles` }
    },
    events: ['project-access-group-roles-deleted'],
  },
  { route: 'POST /api/admin/projects/{projectId}/users/{userId}/roles/{roleId}', request: async () => ({ path: `/api/admin/projects/${await createProject(t)}/users/${(await userWithEmail()).id}/roles/5` }), events: ['project-user-added'] },
  {
    route: 'PUT /api/admin/projects/{projectId}/users/{userId}/roles/{roleId}',
    request: async () => {
      const { project, userId } = await projectMember()
      return { path: `/api/admin/projects/${project}/users/${userId}/roles/4` }
    },
    events: ['project-user-role-changed'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/users/{userId}/roles/{roleId}',
    request: async () => {
      const { project, userId } = await projectMember()
      return { path: `/api/admin/projects/${project}/users/${userId}/roles/5` }
    },
    events: ['project-user-removed'],
  },
  { route: 'POST /api/admin/projects/{projectId}/groups/{groupId}/roles/{roleId}', request: async () => ({ path: `/api/admin/projects/${await createProject(t)}/groups/${await createGroup()}/roles/5` }), events: ['project-group-added'] },
  {
    route: 'PUT /api/admin/projects/{projectId}/groups/{groupId}/roles/{roleId}',
    request: async () => {
      const { project, groupId } = await projectGroup()
      return { path: `/api/admin/projects/${project}/groups/${groupId}/roles/4` }
    },
    events: ['project-group-role-changed'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/groups/{groupId}/roles/{roleId}',
    request: async () => {
      const { project, groupId } = await projectGroup()
      return { path: `/api/admin/projects/${project}/groups/${groupId}/roles/5` }
    },
    events: ['project-group-removed'],
  },
  {
    route: 'POST /api/admin/roles',
    request: async () => ({ path: '/api/admin/roles', body: { name: fresh('releaser'), permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }] } }),
    events: ['role-created'],
  },
  // Checks a role; writes nothing.
  { route: 'POST /api/admin/roles/validate', request: async () => ({ path: '/api/admin/roles/validate', body: { name: fresh('releaser') } }), events: [] },
  { route: 'PUT /api/admin/roles/{roleId}', request: async () => ({ path: `/api/admin/roles/${await customRole()}`, body: { name: fresh('renamed'), permissions: [{ name: 'CREATE_FEATURE' }] } }), events: ['role-updated'] },
  { route: 'DELETE /api/admin/roles/{roleId}', request: async () => ({ path: `/api/admin/roles/${await customRole()}` }), events: ['role-deleted'] },
  { route: 'POST /api/admin/groups', request: async () => ({ path: '/api/admin/groups', body: { name: fresh('team'), rootRole: 3, users: [{ user: { id: (await userWithEmail()).id } }] } }), events: ['group-created'] },
  { route: 'PUT /api/admin/groups/{groupId}', request: async () => ({ path: `/api/admin/groups/${await createGroup()}`, body: { name: fresh('renamed'), users: [] } }), events: ['group-updated'] },
  { route: 'DELETE /api/admin/groups/{groupId}', request: async () => ({ path: `/api/admin/groups/${(await projectGroup()).groupId}` }), events: ['group-deleted'] },
  // The first OIDC settings of this app: no other case saves them.
  { route: 'POST /api/admin/auth/oidc/settings', request: async () => ({ path: '/api/admin/auth/oidc/settings', body: { enabled: true, clientId: 'flagpost', secret: 'oidc-secret' } }), events: ['setting-created'] },
  { route: 'POST /api/admin/invite-link/tokens', request: async () => ({ path: '/api/admin/invite-link/tokens', body: { name: fresh('invite'), expiresAt: new Date(Date.now() + 86_400_000).toISOString() } }), events: ['public-signup-token-created'] },
  {
    route: 'PUT /api/admin/invite-link/tokens/{token}',
    request: async () => ({ path: `/api/admin/invite-link/tokens/${(await inviteLink()).secret}`, body: { enabled: false } }),
    events: ['public-signup-token-updated'],
  },
  {
    route: 'POST /invite/{token}/signup',
    request: async () => {
      const email = `${fresh('joiner')}@example.com`
      return { path: `/invite/${(await inviteLink()).secret}/signup`, body: { email, name: 'Joiner', password: 'joiner-password' }, as: { token: null, actor: email } }
    },
    events: ['user-created', 'public-signup-token-user-added'],
  },
  // Switching password sign-in off needs single sign-on enabled; the case leaves it on (other cases sign in with passwords).
  { route: 'POST /api/admin/auth/simple/settings', request: async () => ({ path: '/api/admin/auth/simple/settings', body: { disabled: false } }), events: ['setting-created'] },
  // Resetting needs settings to reset (saving them again first is an update, before the events counted).
  {
    route: 'DELETE /api/admin/auth/oidc/settings',
    request: async () => {
      await ok(t, 'POST', '/api/admin/auth/oidc/settings', { enabled: false, clientId: 'to-reset' })
      return { path: '/api/admin/auth/oidc/settings' }
    },
    events: ['setting-deleted'],
  },
  {
    route: 'DELETE /api/admin/user-admin/{id}',
    request: async () => {
      const { id } = await userWithEmail()
      await ok(t, 'POST', '/api/admin/groups', { name: fresh('team'), users: [{ user: { id } }] })
      return { path: `/api/admin/user-admin/${id}` }
    },
    // The user leaves their group, which Unleash records for a member leaving a group other than through its own change.
    events: ['user-deleted', 'group-user-removed'],
  },
  { route: 'POST /api/admin/signal-endpoints', request: async () => ({ path: '/api/admin/signal-endpoints', body: { name: fresh('alerts') } }), events: ['signal-endpoint-created'] },
  { route: 'PUT /api/admin/signal-endpoints/{id}', request: async () => ({ path: `/api/admin/signal-endpoints/${(await signalEndpoint()).id}`, body: { name: fresh('renamed'), description: 'd' } }), events: ['signal-endpoint-updated'] },
  { route: 'POST /api/admin/signal-endpoints/{id}/off', request: async () => ({ path: `/api/admin/signal-endpoints/${(await signalEndpoint()).id}/off` }), events: ['signal-endpoint-updated'] },
  {
    route: 'POST /api/admin/signal-endpoints/{id}/on',
    request: async () => {
      const { id } = await signalEndpoint()
      await ok(t, 'POST', `/api/admin/signal-endpoints/${id}/off`)
      return { path: `/api/admin/signal-endpoints/${id}/on` }
    },
    events: ['signal-endpoint-updated'],
  },
  { route: 'DELETE /api/admin/signal-endpoints/{id}', request: async () => ({ path: `/api/admin/signal-endpoints/${(await signalEndpoint()).id}` }), events: ['signal-endpoint-deleted'] },
  { route: 'POST /api/admin/signal-endpoints/{id}/tokens', request: async () => ({ path: `/api/admin/signal-endpoints/${(await signalEndpoint()).id}/tokens`, body: { name: 'grafana' } }), events: ['signal-endpoint-token-created'] },
  {
    route: 'PUT /api/admin/signal-endpoints/{id}/tokens/{tokenId}',
    request: async () => {
      const { id, tokenId } = await signalEndpoint()
      return { path: `/api/admin/signal-endpoints/${id}/tokens/${tokenId}`, body: { name: 'renamed' } }
    },
    events: ['signal-endpoint-token-updated'],
  },
  {
    route: 'DELETE /api/admin/signal-endpoints/{id}/tokens/{tokenId}',
    request: async () => {
      const { id, tokenId } = await signalEndpoint()
      return { path: `/api/admin/signal-endpoints/${id}/tokens/${tokenId}` }
    },
    events: ['signal-endpoint-token-deleted'],
  },
  { route: 'POST /api/admin/projects/{projectId}/actions', request: async () => ({ path: `/api/admin/projects/${(await killSwitch()).project}/actions`, body: await actionSetBody() }), events: ['actions-created'] },
  {
    route: 'PUT /api/admin/projects/{projectId}/actions/{actionSetId}',
    request: async () => {
      const { project, id } = await actionSet()
      return { path: `/api/admin/projects/${project}/actions/${id}`, body: { ...(await actionSetBody()), name: fresh('renamed') } }
    },
    events: ['actions-updated'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/actions/{actionSetId}/off',
    request: async () => {
      const { project, id } = await actionSet()
      return { path: `/api/admin/projects/${project}/actions/${id}/off` }
    },
    events: ['actions-updated'],
  },
  {
    route: 'POST /api/admin/projects/{projectId}/actions/{actionSetId}/on',
    request: async () => {
      const { project, id } = await actionSet()
      await ok(t, 'POST', `/api/admin/projects/${project}/actions/${id}/off`)
      return { path: `/api/admin/projects/${project}/actions/${id}/on` }
    },
    events: ['actions-updated'],
  },
  {
    route: 'DELETE /api/admin/projects/{projectId}/actions/{actionSetId}',
    request: async () => {
      const { project, id } = await actionSet()
      return { path: `/api/admin/projects/${project}/actions/${id}` }
    },
    events: ['actions-deleted'],
  },
  // The signal itself is no audit event; the action set it matches switches the flag after the answer, as its service account.
  {
    route: 'POST /api/signal-endpoint/{name}',
    request: async () => {
      const { endpoint, actor } = await actionSet()
      return { path: `/api/signal-endpoint/${endpoint.name}`, body: { alert: 'cpu' }, as: { token: `Bearer ${endpoint.token}`, actor: actor.username } }
    },
    settle: () => t.app.idle(),
    // Switching on a flag with no strategy there adds the default one, as the route does.
    events: ['feature-strategy-add', 'feature-environment-enabled'],
  },
  // A signal is not an audit event; with no action set listening, it changes nothing else.
  {
    route: 'POST /api/signal-endpoint/{name}',
    request: async () => {
      const { name, token } = await signalEndpoint()
      return { path: `/api/signal-endpoint/${name}`, body: { alert: 'cpu' }, as: { token: `Bearer ${token}`, actor: 'nobody' } }
    },
    events: [],
  },
  { route: 'POST /api/admin/service-account', request: async () => ({ path: '/api/admin/service-account', body: { username: fresh('bot'), name: 'Bot', rootRole: 3 } }), events: ['service-account-created'] },
  { route: 'PUT /api/admin/service-account/{id}', request: async () => ({ path: `/api/admin/service-account/${await serviceAccount()}`, body: { name: 'Renamed', rootRole: 2 } }), events: ['service-account-updated'] },
  { route: 'DELETE /api/admin/service-account/{id}', request: async () => ({ path: `/api/admin/service-account/${await serviceAccount()}` }), events: ['service-account-deleted'] },
  {
    route: 'POST /api/admin/service-account/{id}/token',
    request: async () => ({ path: `/api/admin/service-account/${await serviceAccount()}/token`, body: { description: 'ci', expiresAt: '2099-01-01T00:00:00Z' } }),
    events: ['pat-created'],
  },
  {
    route: 'DELETE /api/admin/service-account/{id}/token/{tokenId}',
    request: async () => {
      const id = await serviceAccount()
      const token = await ok(t, 'POST', `/api/admin/service-account/${id}/token`, { description: 'ci', expiresAt: '2099-01-01T00:00:00Z' })
      return { path: `/api/admin/service-account/${id}/token/${token.body.id}` }
    },
    events: ['pat-deleted'],
  },
  {
    route: 'POST /api/client/register',
    request: async () => ({ path: '/api/client/register', body: { appName: fresh('cart-service'), instanceId: 'a', strategies: ['default'], interval: 15000, started: new Date().toISOString() } }),
    settle: reportsFolded,
    events: ['application-created'],
  },
  {
    route: 'POST /api/client/metrics',
    request: async () => {
      const { appName, flag } = await registeredApplication()
      return { path: '/api/client/metrics', body: { appName, bucket: sdkBucket(flag) } }
    },
    settle: reportsFolded,
    events: [],
  },
  {
    route: 'POST /api/frontend',
    request: async () => ({ path: '/api/frontend', as: (await asFrontend()).as, body: { context: { userId: '1' } } }),
    events: [],
  },
  {
    route: 'POST /ofrep/v1/evaluate/flags',
    request: async () => ({ path: '/ofrep/v1/evaluate/flags', as: (await asFrontend()).as, body: { context: { targetingKey: '1' } } }),
    events: [],
  },
  {
    route: 'POST /ofrep/v1/evaluate/flags/{key}',
    request: async () => {
      const token = await createToken(t, { type: 'client', environment: 'development' })
      return { path: `/ofrep/v1/evaluate/flags/${(await createFlag(t)).name}`, as: { token: token.secret as string, actor: token.tokenName as string }, body: { context: { targetingKey: '1' } } }
    },
    events: [],
  },
  {
    route: 'POST /api/frontend/client/metrics',
    request: async () => {
      const { appName, flag, as } = await asFrontend()
      return { path: '/api/frontend/client/metrics', as, body: { appName, bucket: sdkBucket(flag) } }
    },
    settle: reportsFolded,
    events: [],
  },
  {
    route: 'POST /api/frontend/client/register',
    request: async () => {
      const { appName, as } = await asFrontend()
      return { path: '/api/frontend/client/register', as, body: { appName, interval: 30000, started: new Date().toISOString(), strategies: [] } }
    },
    settle: reportsFolded,
    events: [],
  },
  // Unleash Edge's token validation reads; it writes nothing, whatever it is asked.
  { route: 'POST /edge/validate', request: async () => ({ path: '/edge/validate', body: { tokens: [t.adminToken, 'default:development.unknown'] }, as: { token: null, actor: 'nobody' } }), events: [] },
  // Edge's bulk of reports: a new application is announced (attributed to the token), its metrics write no event.
  {
    route: 'POST /api/client/metrics/bulk',
    request: async () => {
      const appName = fresh('behind-edge')
      const flag = (await createFlag(t)).name as string
      return {
        path: '/api/client/metrics/bulk',
        body: { applications: [{ appName, instanceId: 'pod-1', environment: 'development', strategies: ['default'] }], metrics: [{ featureName: flag, appName, environment: 'development', yes: 1, no: 0 }] },
      }
    },
    settle: reportsFolded,
    events: ['application-created'],
  },
  // Last, as it takes what its document does not list (every case makes what it needs, and this one lists all there
  // is but what it makes to drop, so only that goes): one drop event of each kind, and a segment-deleted per segment.
  {
    route: 'POST /api/admin/state/import',
    request: async () => {
      const environment = (await createEnvironment(t)).name as string
      const project = await createProject(t, { environments: ['development'] })
      const dropped = (await createFlag(t, { tags: [{ type: 'team', value: fresh('dropped') }] }, project)).name as string
      const tagType = fresh('dropped')
      await ensureTagType(t, tagType)
      await ok(t, 'POST', '/api/admin/tags', { type: tagType, value: 'unused' })
      const strategy = await strategyDefinition()
      const segment = (await createSegment(t)).name as string
      const kept = (await createFlag(t, { tags: [{ type: 'simple', value: fresh('untagged') }] })).name as string
      const doc = (await ok(t, 'GET', '/api/admin/state/export')).body
      return {
        path: '/api/admin/state/import?drop=true',
        body: {
          ...doc,
          environments: doc.environments.filter((e: { name: string }) => e.name !== environment),
          projects: doc.projects.filter((p: { id: string }) => p.id !== project),
          features: doc.features.filter((f: { name: string }) => f.name !== dropped),
          featureEnvironments: doc.featureEnvironments.filter((e: { featureName: string }) => e.featureName !== dropped),
          featureStrategies: doc.featureStrategies.filter((e: { featureName: string }) => e.featureName !== dropped),
          featureTags: doc.featureTags.filter((e: { featureName: string }) => e.featureName !== dropped && e.featureName !== kept),
          tagTypes: doc.tagTypes.filter((e: { name: string }) => e.name !== tagType),
          tags: doc.tags.filter((e: { type: string; value: string }) => e.type !== tagType && !e.value.startsWith('untagged-') && !e.value.startsWith('dropped-')),
          strategies: doc.strategies.filter((e: { name: string }) => e.name !== strategy),
          segments: doc.segments.filter((e: { name: string }) => e.name !== segment),
        },
      }
    },
    events: ['drop-environments', 'drop-projects', 'drop-features', 'drop-strategies', 'drop-tag-types', 'drop-tags', 'drop-feature-tags', 'segment-deleted'],
  },
]

describe('every change writes its events in the same transaction', () => {
  it('has a case for every route that changes state', async () => {
    const doc = (await t.call('GET', '/docs/openapi.json', { token: null })).body
    const writeRoutes = Object.entries<Record<string, unknown>>(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).filter((m) => m !== 'get').map((m) => `${m.toUpperCase()} ${path}`),
    )
    expect(writeRoutes.filter((r) => !cases.some((c) => c.route === r))).toEqual([])
  })

  for (const c of cases) {
    it(`${c.route} writes ${c.events.join(', ')}`, async () => {
      const { path, body, as: caller } = await c.request()
      const max = (await t.query<{ max: number }>('select coalesce(max(id), 0)::int as max from events'))[0]!.max
      const versions = async () => new Map((await t.query<{ name: string; version: number }>('select name, version from features')).map((f) => [f.name, f.version]))
      const versionsBefore = await versions()
      const method = c.route.split(' ')[0]!
      const actor = caller?.actor ?? 'test-admin'
      const res = await t.call(method, path, { body, token: caller?.token, headers: caller?.headers })
      expect(res.status, res.text).toBeLessThan(300)
      await c.settle?.()
      const written = await t.query<{ type: string; feature_name: string | null; created_by: string; label: string; summary: string }>('select type, feature_name, created_by, label, summary from events where id > $1 order by id', [max])
      expect(written.map((e) => e.type).sort()).toEqual([...c.events].sort())
      // A change to a flag moves its version (src/flags/lock.ts), which optimistic writes rely on; favorites
      // and change-request bookkeeping do not change the flag, a new flag starts at its first version, and a deleted one has none.
      const versionsAfter = await versions()
      for (const e of written.filter((e) => e.feature_name && /^(feature-|strategy-order)/.test(e.type) && !/^feature-(created|favorited|unfavorited|deleted)$/.test(e.type) && versionsBefore.has(e.feature_name!))) {
        expect(versionsAfter.get(e.feature_name!), `${e.type} of ${e.feature_name}`).toBeGreaterThan(versionsBefore.get(e.feature_name!)!)
      }
      for (const e of written) {
        expect(e.created_by).toBe(actor)
        expect(e.label).toBeTruthy()
        expect(e.summary.startsWith(`**${actor}** `)).toBe(true)
      }
    })
  }
})
