import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { payloadMatches } from '../src/actions/filters.js'
import { runPendingActions } from '../src/actions/runs.js'
import type { Filter } from '../src/actions/schemas.js'
import { ensureTagType, fresh, ok } from './helpers/factories.js'
import { createSignedInUser } from './helpers/users.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ signalsPerMinute: 30 })
})
afterAll(() => t.close())

const SE = '/api/admin/signal-endpoints'

/** A fresh signal endpoint (enabled) and one of its tokens. */
async function endpointWithToken(body: Record<string, unknown> = {}) {
  const endpoint = (await ok(t, 'POST', SE, { name: fresh('alerts'), ...body })).body as { id: number; name: string; url: string }
  const token = (await ok(t, 'POST', `${SE}/${endpoint.id}/tokens`, { name: 'grafana' })).body as { id: number; token: string; name: string }
  return { endpoint, token }
}

/** Sends a signal with the token (`Bearer <token>`). */
const send = (name: string, token: string | null, body?: unknown, headers: Record<string, string> = {}) =>
  t.call('POST', `/api/signal-endpoint/${name}`, { token: token === null ? null : `Bearer ${token}`, body, headers })

const lastEvent = async (type: string) =>
  (await t.query<{ data: any; pre_data: any; created_by: string }>('select data, pre_data, created_by from events where type = $1 order by id desc limit 1', [type]))[0]

describe('signal endpoints', () => {
  it('are created, listed with their tokens, updated, switched and deleted, each with its event', async () => {
    const name = fresh('grafana')
    const created = await t.call('POST', SE, { body: { name, description: 'Alerts from Grafana' } })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({ id: expect.any(Number), name, description: 'Alerts from Grafana', enabled: true, tokens: [], url: `http://localhost/api/signal-endpoint/${name}` })
    const id = created.body.id
    expect(await lastEvent('signal-endpoint-created')).toMatchObject({ data: { id, name, enabled: true }, created_by: 'test-admin' })

    const token = await ok(t, 'POST', `${SE}/${id}/tokens`, { name: 'prod' })
    const listed = (await t.call('GET', SE)).body.signalEndpoints.find((e: { id: number }) => e.id === id)
    expect(listed.tokens).toEqual([{ id: token.body.id, name: 'prod', signalEndpointId: id, createdAt: expect.any(String), createdByUserId: -42 }])

    const renamed = fresh('renamed')
    const updated = await t.call('PUT', `${SE}/${id}`, { body: { name: renamed, description: null } })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.body).toMatchObject({ id, name: renamed, description: null, enabled: true, url: `http://localhost/api/signal-endpoint/${renamed}`, tokens: [{ id: token.body.id }] })
    expect(await lastEvent('signal-endpoint-updated')).toMatchObject({ data: { name: renamed }, pre_data: { name } })

    const off = await t.call('POST', `${SE}/${id}/off`)
    expect(off.body.enabled).toBe(false)
    expect(await lastEvent('signal-endpoint-updated')).toMatchObject({ data: { enabled: false }, pre_data: { enabled: true } })
    const events = async () => (await t.query<{ n: number }>("select count(*)::int as n from events where type = 'signal-endpoint-updated' and (data->>'id')::int = $1", [id]))[0]!.n
    const before = await events()
    expect((await t.call('POST', `${SE}/${id}/off`)).status).toBe(200)
    expect(await events()).toBe(before)

    expect((await t.call('DELETE', `${SE}/${id}`)).status).toBe(200)
    expect(await lastEvent('signal-endpoint-deleted')).toMatchObject({ pre_data: { id, name: renamed } })
    expect(await t.query('select id from signal_endpoint_tokens where signal_endpoint_id = $1', [id])).toEqual([])
    expect((await t.call('DELETE', `${SE}/${id}`)).status).toBe(404)
    expect((await t.call('PUT', `${SE}/${id}`, { body: { name: fresh('x') } })).status).toBe(404)
  })

  it('refuse a taken name (409) and a name that is not URL-friendly (400)', async () => {
    const { endpoint } = await endpointWithToken()
    const taken = await t.call('POST', SE, { body: { name: endpoint.name } })
    expect(taken.status).toBe(409)
    expect(taken.body.name).toBe('NameExistsError')
    const other = (await ok(t, 'POST', SE, { name: fresh('other') })).body
    expect((await t.call('PUT', `${SE}/${other.id}`, { body: { name: endpoint.name } })).status).toBe(409)
    for (const name of ['has space', 'slash/y', '', 'ü']) expect((await t.call('POST', SE, { body: { name } })).status, name).toBe(400)
  })

  it('are an admin’s: an Editor may not read or change them', async () => {
    const editor = await createSignedInUser(t, fresh('ed'), 'Editor')
    expect((await editor.call('GET', SE)).status).toBe(403)
    expect((await editor.call('POST', SE, { body: { name: fresh('nope') } })).status).toBe(403)
    expect((await editor.call('GET', '/api/admin/signals')).status).toBe(403)
  })
})

describe('signal endpoint tokens', () => {
  it('show the token once, stored hashed, never in a listing or an event', async () => {
    const { endpoint, token } = await endpointWithToken()
    expect(token.token).toMatch(/^[0-9a-f]{64}$/)
    const listing = await t.call('GET', `${SE}/${endpoint.id}/tokens`)
    expect(listing.body.signalEndpointTokens).toEqual([{ id: token.id, name: 'grafana', signalEndpointId: endpoint.id, createdAt: expect.any(String), createdByUserId: -42 }])
    for (const text of [listing.text, (await t.call('GET', SE)).text, JSON.stringify(await t.query('select * from events')), JSON.stringify(await t.query('select * from signal_endpoint_tokens'))]) {
      expect(text).not.toContain(token.token)
    }
    expect(await lastEvent('signal-endpoint-token-created')).toMatchObject({ data: { id: token.id, name: 'grafana', signalEndpointId: endpoint.id } })
  })

  it('are renamed and deleted (then refused), only through their own endpoint', async () => {
    const { endpoint, token } = await endpointWithToken()
    const other = await endpointWithToken()
    expect((await t.call('PUT', `${SE}/${other.endpoint.id}/tokens/${token.id}`, { body: { name: 'x' } })).status).toBe(404)
    const renamed = await t.call('PUT', `${SE}/${endpoint.id}/tokens/${token.id}`, { body: { name: 'alertmanager' } })
    expect(renamed.status, renamed.text).toBe(200)
    expect(renamed.body).toMatchObject({ id: token.id, name: 'alertmanager' })
    expect(await lastEvent('signal-endpoint-token-updated')).toMatchObject({ data: { name: 'alertmanager' }, pre_data: { name: 'grafana' } })
    expect((await send(endpoint.name, token.token, { a: 1 })).status).toBe(200)
    expect((await t.call('DELETE', `${SE}/${other.endpoint.id}/tokens/${token.id}`)).status).toBe(404)
    expect((await t.call('DELETE', `${SE}/${endpoint.id}/tokens/${token.id}`)).status).toBe(200)
    expect(await lastEvent('signal-endpoint-token-deleted')).toMatchObject({ pre_data: { id: token.id, name: 'alertmanager' } })
    expect((await send(endpoint.name, token.token, { a: 2 })).status).toBe(401)
  })

  it('refuse an unknown endpoint (404) and an empty name (400)', async () => {
    expect((await t.call('POST', `${SE}/999999/tokens`, { body: { name: 'x' } })).status).toBe(404)
    const { endpoint } = await endpointWithToken()
    expect((await t.call('POST', `${SE}/${endpoint.id}/tokens`, { body: { name: ' ' } })).status).toBe(400)
  })
})

describe('POST /api/signal-endpoint/{name}', () => {
  it('stores any JSON payload as a signal of the endpoint, listed newest first with the token’s name', async () => {
    const { endpoint, token } = await endpointWithToken()
    const first = await send(endpoint.name, token.token, { type: 'alert', data: { severity: 'critical', count: 3 } })
    expect(first.status, first.text).toBe(200)
    expect((await send(endpoint.name, token.token)).status).toBe(200)
    expect((await send(endpoint.name, token.token, ['a', 1])).status).toBe(200)
    const res = await t.call('GET', `${SE}/${endpoint.id}/signals`)
    expect(res.status).toBe(200)
    expect(res.body.signalEndpointSignals.map((s: { payload: unknown }) => s.payload)).toEqual([['a', 1], {}, { type: 'alert', data: { severity: 'critical', count: 3 } }])
    expect(res.body.signalEndpointSignals[0]).toMatchObject({ source: 'signal-endpoint', sourceId: endpoint.id, tokenName: 'grafana' })
    const page = await t.call('GET', `${SE}/${endpoint.id}/signals?limit=1&offset=1`)
    expect(page.body.signalEndpointSignals.map((s: { payload: unknown }) => s.payload)).toEqual([{}])
    const query = await t.call('GET', '/api/admin/signals?limit=2')
    expect(query.body.total).toBeGreaterThanOrEqual(3)
    expect(query.body.signals[0]).toMatchObject({ sourceId: endpoint.id, sourceName: endpoint.name, payload: ['a', 1] })
  })

  it('takes only a token of this endpoint: none, another endpoint’s, an admin token or a personal access token is a 401', async () => {
    const { endpoint } = await endpointWithToken()
    const other = await endpointWithToken()
    const user = await createSignedInUser(t, fresh('admin'), 'Admin')
    const pat = (await user.call('POST', '/api/admin/user/tokens', { body: { description: 'x', expiresAt: '2099-01-01T00:00:00Z' } })).body.secret
    for (const token of [null, other.token.token, t.adminToken, pat, 'not-a-token']) {
      const res = await send(endpoint.name, token, { x: 1 })
      expect(res.status, String(token)).toBe(401)
      expect(res.body.name).toBe('AuthenticationRequired')
    }
    const withCookie = await t.call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: null, headers: { cookie: user.cookie }, body: { x: 1 } })
    expect(withCookie.status).toBe(401)
    expect(await t.query('select id from signals where source_id = $1', [endpoint.id])).toEqual([])
  })

  it('cannot call the admin API with a signal endpoint token', async () => {
    const { token } = await endpointWithToken()
    for (const path of ['/api/admin/projects', '/api/admin/signal-endpoints', '/api/admin/user']) {
      expect((await t.call('GET', path, { token: token.token })).status, path).toBe(401)
      expect((await t.call('GET', path, { token: `Bearer ${token.token}` })).status, path).toBe(401)
    }
    expect((await t.call('GET', '/api/client/features', { token: token.token })).status).toBe(401)
  })

  it('answers 404 while the endpoint is switched off, for an unknown name 401, and refuses bad bodies', async () => {
    const { endpoint, token } = await endpointWithToken()
    await ok(t, 'POST', `${SE}/${endpoint.id}/off`)
    const off = await send(endpoint.name, token.token, { x: 1 })
    expect(off.status).toBe(404)
    expect(off.body.name).toBe('NotFoundError')
    await ok(t, 'POST', `${SE}/${endpoint.id}/on`)
    expect((await send(endpoint.name, token.token, { x: 1 })).status).toBe(200)
    expect((await send(fresh('nowhere'), token.token, { x: 1 })).status).toBe(401)
    expect((await send(endpoint.name, token.token, 'not json', { 'content-type': 'text/plain' })).status).toBe(415)
    expect((await send(endpoint.name, token.token, '{"broken": ', { 'content-type': 'application/json' })).status).toBe(400)
    const tooLarge = await send(endpoint.name, token.token, { blob: 'x'.repeat(70 * 1024) })
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.body.name).toBe('PayloadTooLargeError')
    expect(await t.query('select id from signals where source_id = $1', [endpoint.id])).toHaveLength(1)
  })

  it('is rate-limited per endpoint: 429 with Retry-After past the limit, before the token is looked at', async () => {
    const { endpoint, token } = await endpointWithToken()
    const statuses: number[] = []
    for (let i = 0; i < 31; i++) statuses.push((await send(endpoint.name, token.token, { i })).status)
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true)
    const limited = await send(endpoint.name, token.token, { i: 31 })
    expect(limited.status).toBe(429)
    expect(limited.body.name).toBe('TooManyRequestsError')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await send(endpoint.name, null, {})).status).toBe(429)
    // Another endpoint has its own count.
    const other = await endpointWithToken()
    expect((await send(other.endpoint.name, other.token.token, {})).status).toBe(200)
  })
})

const A = (project: string) => `/api/admin/projects/${project}/actions`

/** A fresh service account (Editor unless told), by id and username. */
async function serviceAccount(rootRole: number | string = 'Editor') {
  const body = (await ok(t, 'POST', '/api/admin/service-account', { username: fresh('bot'), name: 'Bot', rootRole })).body
  return { id: body.id as number, username: body.username as string }
}

/** A fresh project (development and production) with a flag, off. */
async function projectWithFlag(body: Record<string, unknown> = {}) {
  const project = (await ok(t, 'POST', '/api/admin/projects', { id: fresh('kill'), name: 'Kill switches', ...body })).body.id as string
  const flag = (await ok(t, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('checkout') })).body.name as string
  return { project, flag }
}

const flagEnabled = async (flag: string, environment: string) =>
  (await t.query<{ enabled: boolean }>('select enabled from feature_environments where feature_name = $1 and environment = $2', [flag, environment]))[0]?.enabled

/** An action set body switching `flag` on (or off) in `environment` when a signal of the endpoint passes `filters`. */
const actionSetBody = (o: { actorId: number; sourceId: number; flag: string; environment?: string; on?: boolean; filters?: Record<string, unknown>; name?: string }) => ({
  name: o.name ?? fresh('on-alert'),
  description: 'Kill switch',
  actorId: o.actorId,
  match: { source: 'signal-endpoint', sourceId: o.sourceId, payload: o.filters ?? {} },
  actions: [{ action: o.on === false ? 'TOGGLE_FEATURE_OFF' : 'TOGGLE_FEATURE_ON', sortOrder: 1, executionParams: { environment: o.environment ?? 'development', featureName: o.flag } }],
})

/** Sends a signal and waits for the runs it queued. */
async function signal(name: string, token: string, body: unknown) {
  const res = await send(name, token, body)
  expect(res.status, res.text).toBe(200)
  await t.app.idle()
}

const runsOf = async (project: string, id: number) => (await ok(t, 'GET', `${A(project)}/${id}/events`)).body.actionSetEvents as any[]

describe('action sets', () => {
  it('are created, listed, updated, switched and deleted, each with its event in the project', async () => {
    const { project, flag } = await projectWithFlag()
    const { endpoint } = await endpointWithToken()
    const actor = await serviceAccount()
    const body = actionSetBody({ actorId: actor.id, sourceId: endpoint.id, flag, filters: { 'data.severity': { operator: 'IN', values: ['critical'] } } })
    const created = await t.call('POST', A(project), { body })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({
      id: expect.any(Number),
      project,
      name: body.name,
      enabled: true,
      actorId: actor.id,
      match: { source: 'signal-endpoint', sourceId: endpoint.id, payload: { 'data.severity': { operator: 'IN', values: ['critical'] } } },
      actions: [{ id: expect.any(Number), action: 'TOGGLE_FEATURE_ON', sortOrder: 1, executionParams: { project, environment: 'development', featureName: flag }, createdByUserId: -42 }],
    })
    const id = created.body.id
    const [event] = await t.query<{ project: string; data: any }>("select project, data from events where type = 'actions-created' and (data->>'id')::int = $1", [id])
    expect(event).toMatchObject({ project, data: { id, name: body.name } })
    expect((await t.call('GET', A(project))).body.actions.map((a: { id: number }) => a.id)).toEqual([id])

    const updated = await t.call('PUT', `${A(project)}/${id}`, { body: { ...body, name: 'renamed', actions: [{ ...body.actions[0], action: 'TOGGLE_FEATURE_OFF' }] } })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.body).toMatchObject({ id, name: 'renamed', enabled: true, actions: [{ action: 'TOGGLE_FEATURE_OFF' }] })
    expect((await t.call('POST', `${A(project)}/${id}/off`)).body.enabled).toBe(false)
    expect((await t.call('POST', `${A(project)}/${id}/on`)).body.enabled).toBe(true)
    const types = await t.query<{ type: string; pre_data: any }>("select type, pre_data from events where type like 'actions-%' and project = $1 order by id", [project])
    expect(types.map((e) => e.type)).toEqual(['actions-created', 'actions-updated', 'actions-updated', 'actions-updated'])
    expect(types[1]!.pre_data).toMatchObject({ name: body.name })

    expect((await t.call('DELETE', `${A(project)}/${id}`)).status).toBe(200)
    expect((await t.query("select type from events where type = 'actions-deleted' and project = $1", [project])).length).toBe(1)
    expect((await t.call('DELETE', `${A(project)}/${id}`)).status).toBe(404)
    expect((await t.call('GET', A(project))).body.actions).toEqual([])
  })

  it('describe the actions they may take, with the project’s environments and flags', async () => {
    const { project, flag } = await projectWithFlag()
    const res = await t.call('GET', `${A(project)}/config`)
    expect(res.status, res.text).toBe(200)
    expect(Object.keys(res.body)).toEqual(['TOGGLE_FEATURE_ON', 'TOGGLE_FEATURE_OFF', 'TOGGLE_FEATURES_ON_BY_TAG', 'TOGGLE_FEATURES_OFF_BY_TAG'])
    expect(res.body.TOGGLE_FEATURE_ON).toMatchObject({ permissions: ['UPDATE_FEATURE_ENVIRONMENT'], parameters: [{ name: 'project', type: 'hidden' }, { name: 'environment', options: ['development', 'production'] }, { name: 'featureName', options: [flag] }] })
    await ensureTagType(t, 'team')
    await ok(t, 'POST', `/api/admin/features/${flag}/tags`, { type: 'team', value: 'described' })
    const byTag = (await ok(t, 'GET', `${A(project)}/config`)).body.TOGGLE_FEATURES_OFF_BY_TAG
    expect(byTag).toMatchObject({ label: 'Disable flags by tag', permissions: ['UPDATE_FEATURE_ENVIRONMENT'], parameters: [{ name: 'project', type: 'hidden' }, { name: 'environment' }, { name: 'tag', type: 'select' }] })
    expect(byTag.parameters[2].options).toContain('team:described')
    expect((await t.call('GET', `/api/admin/projects/${fresh('nope')}/actions/config`)).status).toBe(404)
  })

  it('refuse what they cannot name with 4xx, writing nothing', async () => {
    const { project, flag } = await projectWithFlag()
    const { endpoint } = await endpointWithToken()
    const actor = await serviceAccount()
    const person = await createSignedInUser(t, fresh('person'), 'Admin')
    const good = actionSetBody({ actorId: actor.id, sourceId: endpoint.id, flag })
    const before = (await t.query<{ n: number }>('select count(*)::int as n from action_sets'))[0]!.n
    const cases: [string, unknown, number][] = [
      ['an unknown endpoint', { ...good, match: { ...good.match, sourceId: 999999 } }, 400],
      ['a user as the actor', { ...good, actorId: person.id }, 400],
      ['an unknown flag', actionSetBody({ actorId: actor.id, sourceId: endpoint.id, flag: 'no-such-flag' }), 400],
      ['an unknown environment', actionSetBody({ actorId: actor.id, sourceId: endpoint.id, flag, environment: 'staging' }), 400],
      ['another project in the action', { ...good, actions: [{ ...good.actions[0], executionParams: { ...good.actions[0]!.executionParams, project: 'default' } }] }, 400],
      ['an action Flagpost does not take', { ...good, actions: [{ ...good.actions[0], action: 'ENABLE_FEATURE_STRATEGY' }] }, 400],
      ['a by-tag action naming a flag', { ...good, actions: [{ ...good.actions[0], action: 'TOGGLE_FEATURES_ON_BY_TAG' }] }, 400],
      ['a by-tag action with a malformed tag', { ...good, actions: [{ action: 'TOGGLE_FEATURES_ON_BY_TAG', sortOrder: 1, executionParams: { environment: 'development', tag: 'no-colon' } }] }, 400],
      ['a by-tag action with an unknown tag', { ...good, actions: [{ action: 'TOGGLE_FEATURES_ON_BY_TAG', sortOrder: 1, executionParams: { environment: 'development', tag: 'team:no-such-value' } }] }, 400],
      ['a flag action naming a tag too', { ...good, actions: [{ ...good.actions[0], executionParams: { ...good.actions[0]!.executionParams, tag: 'team:x' } }] }, 400],
      ['no action', { ...good, actions: [] }, 400],
      ['a number filter without a number', { ...good, match: { ...good.match, payload: { count: { operator: 'NUM_GT', value: 'many' } } } }, 400],
      ['a list filter without values', { ...good, match: { ...good.match, payload: { kind: { operator: 'IN', values: [] } } } }, 400],
      ['an unknown operator', { ...good, match: { ...good.match, payload: { kind: { operator: 'REGEX', value: '.*' } } } }, 400],
      ['another source', { ...good, match: { ...good.match, source: 'webhook' } }, 400],
    ]
    for (const [what, body, status] of cases) {
      const res = await t.call('POST', A(project), { body })
      expect(res.status, `${what}: ${res.text}`).toBe(status)
    }
    expect((await t.call('POST', A(fresh('nowhere')), { body: good })).status).toBe(404)
    expect((await t.query<{ n: number }>('select count(*)::int as n from action_sets'))[0]!.n).toBe(before)
    expect((await t.call('POST', A(project), { body: good })).status).toBe(201)
    expect((await t.call('POST', A(project), { body: good })).status).toBe(409)
  })

  it('keep what they use: their service account and their endpoint cannot be deleted (409); deleting the project deletes them with their events', async () => {
    const { project, flag } = await projectWithFlag()
    const { endpoint } = await endpointWithToken()
    const actor = await serviceAccount()
    const id = (await ok(t, 'POST', A(project), actionSetBody({ actorId: actor.id, sourceId: endpoint.id, flag }))).body.id
    const account = await t.call('DELETE', `/api/admin/service-account/${actor.id}`)
    expect(account.status).toBe(409)
    expect(account.body.message).toContain(project)
    const endpointDeleted = await t.call('DELETE', `${SE}/${endpoint.id}`)
    expect(endpointDeleted.status).toBe(409)
    expect(endpointDeleted.body.name).toBe('ConflictError')
    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${flag}`)
    const deleted = await t.call('DELETE', `/api/admin/projects/${project}`)
    expect(deleted.status, deleted.text).toBe(200)
    expect(await t.query("select pre_data->>'id' as id from events where type = 'actions-deleted' and project = $1", [project])).toEqual([{ id: String(id) }])
    expect(await t.query('select id from action_sets where id = $1', [id])).toEqual([])
    expect((await t.call('DELETE', `/api/admin/service-account/${actor.id}`)).status).toBe(200)
    expect((await t.call('DELETE', `${SE}/${endpoint.id}`)).status).toBe(200)
  })
})

describe('a signal matching an action set', () => {
  it('switches the flag as the service account, logs the run with the signal, and leaves others alone', async () => {
    const { project, flag } = await projectWithFlag()
    const { endpoint, token } = await endpointWithToken()
    const actor = await serviceAccount('Editor')
    const id = (await ok(t, 'POST', A(project), actionSetBody({ actorId: actor.id, sourceId: endpoint.id, flag, filters: { 'data.severity': { operator: 'IN', values: ['critical'] } } }))).body.id
    await signal(endpoint.name, token.token, { data: { severity: 'warning' } })
    expect(await flagEnabled(flag, 'development')).toBe(false)
    expect(await runsOf(project, id)).toEqual([])

    await signal(endpoint.name, token.token, { data: { severity: 'critical' }, alert: 'checkout errors' })
    expect(await flagEnabled(flag, 'development')).toBe(true)
    const [event] = await t.query<{ created_by: string; created_by_user_id: number; environment: string }>("select created_by, created_by_user_id, environment from events where type = 'feature-environment-enabled' and feature_name = $1", [flag])
    expect(event).toEqual({ created_by: actor.username, created_by_user_id: actor.id, environment: 'development' })
    const [run] = await runsOf(project, id)
    expect(run).toMatchObject({
      actionSetId: id,
      state: 'success',
      signal: { source: 'signal-endpoint', sourceId: endpoint.id, payload: { data: { severity: 'critical' }, alert: 'checkout errors' }, createdBySourceTokenId: token.id },
      actionSet: { id, project, actorId: actor.id, actions: [{ action: 'TOGGLE_FEATURE_ON', state: 'success' }] },
    })
    expect(run.signalId).toBe(run.signal.id)
    // An SDK of the environment sees it.
    const sdk = (await ok(t, 'POST', '/api/admin/api-tokens', { tokenName: fresh('sdk'), type: 'client', environment: 'development', projects: [project] })).body.secret
    expect((await t.call('GET', '/api/client/features', { token: sdk })).body.features.find((f: { name: string }) => f.name === flag).enabled).toBe(true)
  })

  it('starts no run of a switched-off action set, nor of one listening to another endpoint', async () => {
    const { project, flag } = await projectWithFlag()
    const { endpoint, token } = await endpointWithToken()
    const other = await endpointWithToken()
    const actor = await serviceAccount()
    const off = (await ok(t, 'POST', A(project), { ...actionSetBody({ actorId: actor.id, sourceId: endpoint.id, flag }), enabled: false })).body.id
    const elsewhere = (await ok(t, 'POST', A(project), actionSetBody({ actorId: actor.id, sourceId: other.endpoint.id, flag }))).body.id
    await signal(endpoint.name, token.token, {})
    expect(await runsOf(project, off)).toEqual([])
    expect(await runsOf(project, elsewhere)).toEqual([])
    expect(await flagEnabled(flag, 'development')).toBe(false)
  })

  it('records an action its service account may not make as failed, and starts none after it', async () => {
    const { project, flag } = await projectWithFlag()
    const second = (await ok(t, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('second') })).body.name
    const { endpoint, token } = await endpointWithToken()
    const viewer = await serviceAccount('Viewer')
    const body = actionSetBody({ actorId: viewer.id, sourceId: endpoint.id, flag })
    const id = (await ok(t, 'POST', A(project), { ...body, actions: [...body.actions, { action: 'TOGGLE_FEATURE_ON', sortOrder: 2, executionParams: { environment: 'development', featureName: second } }] })).body.id
    await signal(endpoint.name, token.token, { alert: 1 })
    const [run] = await runsOf(project, id)
    expect(run.state).toBe('failed')
    expect(run.actionSet.actions).toMatchObject([
      { sortOrder: 1, state: 'failed', details: expect.stringContaining('permission=UPDATE_FEATURE_ENVIRONMENT') },
      { sortOrder: 2, state: 'not started' },
    ])
    expect(await flagEnabled(flag, 'development')).toBe(false)
    expect(await flagEnabled(second, 'development')).toBe(false)
    // Given a role in the project, it may.
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [viewer.id] })
    await signal(endpoint.name, token.token, { alert: 2 })
    expect((await runsOf(project, id))[0]).toMatchObject({ state: 'success', actionSet: { actions: [{ state: 'success' }, { state: 'success' }] } })
    expect(await flagEnabled(second, 'development')).toBe(true)
  })

  it('respects change-request protection: refused for an account that may not skip change requests, made for an admin account', async () => {
    const { project, flag } = await projectWithFlag({ changeRequestEnvironments: [{ name: 'production' }] })
    await ok(t, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/production/strategies`, { name: 'default' })
    const { endpoint, token } = await endpointWithToken()
    const editor = await serviceAccount('Editor')
    const admin = await serviceAccount('Admin')
    const refused = (await ok(t, 'POST', A(project), actionSetBody({ actorId: editor.id, sourceId: endpoint.id, flag, environment: 'production', name: 'as-editor' }))).body.id
    await signal(endpoint.name, token.token, {})
    expect((await runsOf(project, refused))[0]).toMatchObject({ state: 'failed', actionSet: { actions: [{ state: 'failed', details: expect.stringContaining('SKIP_CHANGE_REQUEST') }] } })
    expect(await flagEnabled(flag, 'production')).toBe(false)
    await ok(t, 'DELETE', `${A(project)}/${refused}`)
    const made = (await ok(t, 'POST', A(project), actionSetBody({ actorId: admin.id, sourceId: endpoint.id, flag, environment: 'production', name: 'as-admin' }))).body.id
    await signal(endpoint.name, token.token, {})
    expect((await runsOf(project, made))[0]).toMatchObject({ state: 'success' })
    expect(await flagEnabled(flag, 'production')).toBe(true)
  })

  it('switches off too, and records a flag archived since as a failed action', async () => {
    const { project, flag } = await projectWithFlag()
    await ok(t, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/on`)
    const { endpoint, token } = await endpointWithToken()
    const actor = await serviceAccount()
    const id = (await ok(t, 'POST', A(project), actionSetBody({ actorId: actor.id, sourceId: endpoint.id, flag, on: false }))).body.id
    await signal(endpoint.name, token.token, {})
    expect(await flagEnabled(flag, 'development')).toBe(false)
    expect((await runsOf(project, id))[0].state).toBe('success')
    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${flag}`)
    await signal(endpoint.name, token.token, {})
    expect((await runsOf(project, id))[0]).toMatchObject({ state: 'failed', actionSet: { actions: [{ state: 'failed', details: expect.stringContaining(flag) }] } })
  })
})

describe('a signal matching an action set that switches flags by tag', () => {
  /** A by-tag action set body: every live flag of the project tagged `tag` switched on (or off) in development. */
  const byTagBody = (o: { actorId: number; sourceId: number; tag: string; on?: boolean }) => ({
    name: fresh('by-tag'),
    actorId: o.actorId,
    match: { source: 'signal-endpoint', sourceId: o.sourceId, payload: {} },
    actions: [{ action: o.on === false ? 'TOGGLE_FEATURES_OFF_BY_TAG' : 'TOGGLE_FEATURES_ON_BY_TAG', sortOrder: 1, executionParams: { environment: 'development', tag: o.tag } }],
  })
  const tagged = async (flag: string, value: string) => ok(t, 'POST', `/api/admin/features/${flag}/tags`, { type: 'team', value })

  it('switches on, then off, every live flag of the project carrying the tag, as the service account, and no other', async () => {
    await ensureTagType(t, 'team')
    const value = fresh('payments')
    const { project, flag: first } = await projectWithFlag()
    const second = (await ok(t, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('second') })).body.name as string
    const untagged = (await ok(t, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('untagged') })).body.name as string
    const archived = (await ok(t, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('archived') })).body.name as string
    const { flag: elsewhere } = await projectWithFlag()
    for (const flag of [first, second, archived, elsewhere]) await tagged(flag, value)
    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${archived}`)
    const { endpoint, token } = await endpointWithToken()
    const actor = await serviceAccount('Editor')
    const created = await ok(t, 'POST', A(project), byTagBody({ actorId: actor.id, sourceId: endpoint.id, tag: `team:${value}` }))
    expect(created.body.actions).toMatchObject([{ action: 'TOGGLE_FEATURES_ON_BY_TAG', executionParams: { project, environment: 'development', tag: `team:${value}` } }])

    await signal(endpoint.name, token.token, { alert: 'on' })
    expect([await flagEnabled(first, 'development'), await flagEnabled(second, 'development')]).toEqual([true, true])
    expect([await flagEnabled(untagged, 'development'), await flagEnabled(elsewhere, 'development')]).toEqual([false, false])
    const events = await t.query<{ feature_name: string; created_by: string }>("select feature_name, created_by from events where type = 'feature-environment-enabled' and project = $1 order by feature_name", [project])
    expect(events).toEqual([first, second].sort().map((feature_name) => ({ feature_name, created_by: actor.username })))
    expect((await runsOf(project, created.body.id))[0]).toMatchObject({ state: 'success', actionSet: { actions: [{ action: 'TOGGLE_FEATURES_ON_BY_TAG', state: 'success' }] } })

    const off = await ok(t, 'POST', A(project), byTagBody({ actorId: actor.id, sourceId: (await endpointWithToken()).endpoint.id, tag: `team:${value}`, on: false }))
    const offEndpoint = (await ok(t, 'GET', SE)).body.signalEndpoints.find((e: { id: number }) => e.id === off.body.match.sourceId)
    const offToken = (await ok(t, 'POST', `${SE}/${offEndpoint.id}/tokens`, { name: 'off' })).body.token
    await signal(offEndpoint.name, offToken, { alert: 'off' })
    expect([await flagEnabled(first, 'development'), await flagEnabled(second, 'development')]).toEqual([false, false])
    expect((await runsOf(project, off.body.id))[0]).toMatchObject({ state: 'success' })
  })

  it('does nothing, successfully, when no flag carries the tag; fails once the tag is deleted; fails for an account that may not switch', async () => {
    await ensureTagType(t, 'team')
    const value = fresh('unused')
    const { project, flag } = await projectWithFlag()
    await ok(t, 'POST', '/api/admin/tags', { type: 'team', value })
    const { endpoint, token } = await endpointWithToken()
    const actor = await serviceAccount('Editor')
    const id = (await ok(t, 'POST', A(project), byTagBody({ actorId: actor.id, sourceId: endpoint.id, tag: `team:${value}` }))).body.id
    await signal(endpoint.name, token.token, { n: 1 })
    expect((await runsOf(project, id))[0]).toMatchObject({ state: 'success' })
    expect(await flagEnabled(flag, 'development')).toBe(false)

    await ok(t, 'DELETE', `/api/admin/tags/team/${value}`)
    await signal(endpoint.name, token.token, { n: 2 })
    expect((await runsOf(project, id))[0]).toMatchObject({ state: 'failed', actionSet: { actions: [{ state: 'failed', details: expect.stringContaining(`team:${value}`) }] } })

    const viewer = await serviceAccount('Viewer')
    const shared = fresh('shared')
    await tagged(flag, shared)
    const refused = (await ok(t, 'POST', A(project), byTagBody({ actorId: viewer.id, sourceId: endpoint.id, tag: `team:${shared}` }))).body.id
    await signal(endpoint.name, token.token, { n: 3 })
    expect((await runsOf(project, refused))[0]).toMatchObject({ state: 'failed', actionSet: { actions: [{ state: 'failed', details: expect.stringContaining('permission=UPDATE_FEATURE_ENVIRONMENT') }] } })
    expect(await flagEnabled(flag, 'development')).toBe(false)
  })
})

describe('filters on the payload', () => {
  const payload = { type: 'alert', data: { severity: 'Critical', count: 12, version: '2.3.1', ok: false, missing: null }, tags: ['web', { team: 'payments' }] }
  const cases: [string, Record<string, Filter>, boolean][] = [
    ['no filter', {}, true],
    ['IN on a top-level key', { type: { operator: 'IN', values: ['alert', 'page'] } }, true],
    ['IN on a nested key, dotted', { 'data.severity': { operator: 'IN', values: ['Critical'] } }, true],
    ['IN is case sensitive', { 'data.severity': { operator: 'IN', values: ['critical'] } }, false],
    ['NOT_IN', { type: { operator: 'NOT_IN', values: ['page'] } }, true],
    ['NOT_IN holds for a missing parameter', { absent: { operator: 'NOT_IN', values: ['x'] } }, true],
    ['IN fails for a missing parameter', { absent: { operator: 'IN', values: ['x'] } }, false],
    ['null counts as missing', { 'data.missing': { operator: 'IN', values: ['null'] } }, false],
    ['STR_CONTAINS, case insensitive', { 'data.severity': { operator: 'STR_CONTAINS', values: ['crit'], caseInsensitive: true } }, true],
    ['STR_STARTS_WITH, case sensitive', { 'data.severity': { operator: 'STR_STARTS_WITH', values: ['crit'] } }, false],
    ['STR_ENDS_WITH', { type: { operator: 'STR_ENDS_WITH', values: ['ert'] } }, true],
    ['NUM_GT on a number', { 'data.count': { operator: 'NUM_GT', value: '10' } }, true],
    ['NUM_LTE', { 'data.count': { operator: 'NUM_LTE', value: '11' } }, false],
    ['NUM_EQ', { 'data.count': { operator: 'NUM_EQ', value: '12' } }, true],
    ['a boolean compares as text', { 'data.ok': { operator: 'IN', values: ['false'] } }, true],
    ['SEMVER_GTE', { 'data.version': { operator: 'SEMVER_GTE', value: '2.3.0' } }, true],
    ['SEMVER_LT', { 'data.version': { operator: 'SEMVER_LT', value: '2.3.0' } }, false],
    ['an array item by index', { 'tags[0]': { operator: 'IN', values: ['web'] } }, true],
    ['an object in an array', { 'tags[1].team': { operator: 'IN', values: ['payments'] } }, true],
    ['inverted', { type: { operator: 'IN', values: ['alert'], inverted: true } }, false],
    ['inverted on a missing parameter', { absent: { operator: 'IN', values: ['x'], inverted: true } }, true],
    ['every filter must hold', { type: { operator: 'IN', values: ['alert'] }, 'data.count': { operator: 'NUM_LT', value: '5' } }, false],
  ]
  it.each(cases)('%s', (_, filters, expected) => {
    expect(payloadMatches(filters, payload)).toBe(expected)
  })

  it('finds no parameter in a payload that is not an object', () => {
    expect(payloadMatches({ '0': { operator: 'IN', values: ['a'] } }, ['a'])).toBe(false)
    expect(payloadMatches({}, 'text')).toBe(true)
  })
})

describe('runs a stopped process left', () => {
  it('are finished by the next sweep from the first action not done, never left half-made; a live claim is left alone', async () => {
    // An app whose background work never runs: as a process that stopped right after answering.
    const stopped = await createTestApp({ background: () => undefined })
    try {
      const call = stopped.call
      const project = (await ok(stopped, 'POST', '/api/admin/projects', { id: fresh('halted'), name: 'Halted' })).body.id
      const [first, second] = await Promise.all([1, 2].map(async () => (await ok(stopped, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('flag') })).body.name as string))
      const endpoint = (await ok(stopped, 'POST', SE, { name: fresh('alerts') })).body
      const token = (await ok(stopped, 'POST', `${SE}/${endpoint.id}/tokens`, { name: 'x' })).body.token
      const actor = (await ok(stopped, 'POST', '/api/admin/service-account', { username: fresh('bot'), name: 'Bot', rootRole: 'Editor' })).body
      const step = (featureName: string, sortOrder: number) => ({ action: 'TOGGLE_FEATURE_ON', sortOrder, executionParams: { environment: 'development', featureName } })
      const id = (await ok(stopped, 'POST', A(project), { name: 'two', actorId: actor.id, match: { source: 'signal-endpoint', sourceId: endpoint.id, payload: {} }, actions: [step(first!, 1), step(second!, 2)] })).body.id
      expect((await call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: `Bearer ${token}`, body: {} })).status).toBe(200)
      expect((await call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: `Bearer ${token}`, body: {} })).status).toBe(200)
      const runs = await stopped.query<{ id: number }>('select id from action_set_events where action_set_id = $1 order by id', [id])
      expect(runs).toHaveLength(2)
      // SQL stands in for what no route can make: the first run was made up to its first action (the flag switched, the
      // action recorded) when its process stopped; the second is being made by a process still at work.
      await ok(stopped, 'POST', `/api/admin/projects/${project}/features/${first}/environments/development/on`)
      await stopped.query(
        `update action_set_events set claimed_at = now() - interval '10 minutes', action_set = jsonb_set(action_set, '{actions,0,state}', '"success"') where id = $1`,
        [runs[0]!.id],
      )
      await stopped.query('update action_set_events set claimed_at = now() where id = $1', [runs[1]!.id])

      const made = await runPendingActions(stopped.db, () => new Date())
      expect(made).toEqual({ runs: 1, changed: true })
      const [finished, live] = await stopped.query<{ state: string; action_set: any; claimed_at: Date | null }>('select state, action_set, claimed_at from action_set_events where action_set_id = $1 order by id', [id])
      expect(finished).toMatchObject({ state: 'success', claimed_at: null, action_set: { actions: [{ state: 'success' }, { state: 'success' }] } })
      expect(live).toMatchObject({ state: 'started', action_set: { actions: [{ state: 'not started' }, { state: 'not started' }] } })
      const enabled = await stopped.query<{ feature_name: string; created_by: string }>("select feature_name, created_by from events where type = 'feature-environment-enabled' and project = $1 order by id", [project])
      expect(enabled).toEqual([
        { feature_name: first, created_by: 'test-admin' },
        { feature_name: second, created_by: actor.username },
      ])
    } finally {
      await stopped.close()
    }
  })
})

describe('a state import that drops projects', () => {
  it('keeps a project action sets act in, as one API tokens are scoped to', async () => {
    const fresh_ = await createTestApp()
    try {
      const project = async (id: string) => {
        await ok(fresh_, 'POST', '/api/admin/projects', { id, name: id })
        return (await ok(fresh_, 'POST', `/api/admin/projects/${id}/features`, { name: `${id}-flag` })).body.name as string
      }
      const flag = await project('acted-in')
      await project('plain')
      const endpoint = (await ok(fresh_, 'POST', SE, { name: 'alerts' })).body
      const actor = (await ok(fresh_, 'POST', '/api/admin/service-account', { username: 'bot', name: 'Bot', rootRole: 'Editor' })).body
      await ok(fresh_, 'POST', A('acted-in'), actionSetBody({ actorId: actor.id, sourceId: endpoint.id, flag }))
      const document = { version: 4, features: [], projects: [{ id: 'default', name: 'Default', environments: [{ name: 'development' }, { name: 'production' }] }] }
      const res = await ok(fresh_, 'POST', '/api/admin/state/import?drop=true', document)
      expect(res.body.dropped.projects).toBe(1)
      expect((await fresh_.query<{ id: string }>('select id from projects order by id')).map((p) => p.id)).toEqual(['acted-in', 'default'])
      expect(await fresh_.query("select id from action_sets where project = 'acted-in'")).toHaveLength(1)
    } finally {
      await fresh_.close()
    }
  })
})
