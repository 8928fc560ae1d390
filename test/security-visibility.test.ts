import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/*
 * A private project ("vault", flag "vault-flag", a segment, a change request) next to an open one ("lobby",
 * flag "lobby-flag"). Its members (an Owner and a Member, both Viewers as root role), admins and Editors read
 * it everywhere; a Viewer who is not a member finds it nowhere: lists leave it out, routes naming it answer 404.
 */

let t: TestApp
let owner: TestUser
let member: TestUser
let outsider: TestUser
let admin: TestUser
let editor: TestUser
let segmentId: number
let changeRequestId: number

const V = '/api/admin/projects/vault'

beforeAll(async () => {
  t = await createTestApp()
  const ok = async (res: Promise<{ status: number; text: string }>, status = 200) => {
    const r = await res
    expect(r.status, r.text).toBe(status)
    return r
  }
  await ok(t.call('POST', '/api/admin/projects', { body: { id: 'vault', name: 'Vault', mode: 'private', environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] } }), 201)
  await ok(t.call('POST', '/api/admin/projects', { body: { id: 'lobby', name: 'Lobby' } }), 201)
  await ok(t.call('POST', `${V}/features`, { body: { name: 'vault-flag' } }), 201)
  await ok(t.call('POST', '/api/admin/projects/lobby/features', { body: { name: 'lobby-flag' } }), 201)
  await ok(t.call('POST', `${V}/features/vault-flag/environments/development/on`))
  segmentId = (await ok(t.call('POST', '/api/admin/segments', { body: { name: 'vault-customers', project: 'vault', constraints: [] } }), 201) as any).body.id
  changeRequestId = (await ok(t.call('POST', `${V}/environments/production/change-requests`, { body: { feature: 'vault-flag', action: 'updateEnabled', payload: { enabled: true } } })) as any).body.id

  owner = await createSignedInUser(t, 'olga', 'Viewer')
  member = await createSignedInUser(t, 'mia', 'Viewer')
  outsider = await createSignedInUser(t, 'victor', 'Viewer')
  admin = await createSignedInUser(t, 'ada', 'Admin')
  editor = await createSignedInUser(t, 'ed', 'Editor')
  await ok(t.call('POST', `${V}/access`, { body: { roles: [4], users: [owner.id] } }))
  await ok(t.call('POST', `${V}/access`, { body: { roles: [5], users: [member.id] } }))
})
afterAll(() => t.close())

const readers = () => [
  ['a member', member],
  ['the owner', owner],
  ['an admin', admin],
  ['an Editor', editor],
] as const

const scopedReads = [
  `${V}`,
  `${V}/overview`,
  `${V}/features`,
  `${V}/features/vault-flag`,
  `${V}/access`,
  `${V}/change-requests`,
  `${V}/change-requests/{cr}`,
  `${V}/change-requests/config`,
  `${V}/features/vault-flag/lifecycle`,
  `${V}/features/vault-flag/environments/development/variants`,
  `${V}/features/vault-flag/environments/development/strategies`,
  '/api/admin/features/vault-flag/tags',
  '/api/admin/client-metrics/features/vault-flag',
  '/api/admin/client-metrics/features/vault-flag/raw',
  '/api/admin/client-metrics/features/vault-flag/raw?hoursBack=720',
  '/api/admin/segments/{segment}',
]
const pathOf = (template: string) => template.replace('{cr}', String(changeRequestId)).replace('{segment}', String(segmentId))

describe('a private project for a Viewer who is not a member', () => {
  it('is left out of GET /api/admin/projects, which still lists it for members, admins and Editors', async () => {
    const ids = (res: { body: any }) => res.body.projects.map((p: any) => p.id)
    const seen = await outsider.call('GET', '/api/admin/projects')
    expect(seen.status).toBe(200)
    expect(ids(seen)).toContain('lobby')
    expect(ids(seen)).not.toContain('vault')
    for (const [, user] of readers()) expect(ids(await user.call('GET', '/api/admin/projects'))).toContain('vault')
  })

  it.each(scopedReads)('answers 404 NotFoundError on GET %s, which its members, admins and Editors read', async (template) => {
    const path = pathOf(template)
    const res = await outsider.call('GET', path)
    expect(res.status, res.text).toBe(404)
    expect(res.body).toMatchObject({ name: 'NotFoundError' })
    expect(res.text).not.toContain('olga')
    for (const [who, user] of readers()) {
      const allowed = await user.call('GET', path)
      expect(allowed.status, `${who}: ${allowed.text}`).toBe(200)
    }
  })

  it('answers 404 on writes too (PUT the project, favorite its flag), where a member gets no further than its permissions', async () => {
    const update = await outsider.call('PUT', V, { body: { name: 'Mine now' } })
    expect(update.status).toBe(404)
    const favorite = await outsider.call('POST', `${V}/features/vault-flag/favorites`)
    expect(favorite.status).toBe(404)
    expect(await t.query("select * from favorite_features where feature_name = 'vault-flag'")).toEqual([])
    expect((await member.call('PUT', V, { body: { name: 'Mine now' } })).status).toBe(403)
    expect((await t.query<{ name: string }>("select name from projects where id = 'vault'"))[0]!.name).toBe('Vault')
  })

  it('answers a write naming it exactly as one naming an unknown project or flag, so writes cannot probe its ids', async () => {
    const probes = [
      ['PUT', (project: string) => `/api/admin/projects/${project}`, { name: 'Probe' }],
      ['POST', (project: string) => `/api/admin/projects/${project}/features`, { name: 'probe-flag' }],
      ['POST', (project: string) => `/api/admin/projects/${project}/features/${project}-flag/environments/development/on`, undefined],
    ] as const
    for (const [method, path, body] of probes) {
      const hidden = await outsider.call(method, path('vault'), { body })
      const unknown = await outsider.call(method, path('no-such-project'), { body })
      expect(hidden.status, hidden.text).toBe(404)
      expect(unknown.status, unknown.text).toBe(404)
      expect(unknown.body.name).toBe(hidden.body.name)
      // An open project the caller may read still answers with its permissions.
      expect((await outsider.call(method, path('lobby'), { body })).status).toBe(403)
    }
    for (const flag of ['vault-flag', 'no-such-flag']) {
      const res = await outsider.call('POST', `/api/admin/features/${flag}/tags`, { body: { type: 'simple', value: 'probe' } })
      expect(res.status, `${flag}: ${res.text}`).toBe(404)
      expect(res.body).toMatchObject({ name: 'NotFoundError' })
    }
    expect((await outsider.call('POST', '/api/admin/features/lobby-flag/tags', { body: { type: 'simple', value: 'probe' } })).status).toBe(403)
  })

  it('is not in the event search: neither its events nor their count (GET /api/admin/search/events)', async () => {
    const hidden = await outsider.call('GET', '/api/admin/search/events?project=IS:vault')
    expect(hidden.status).toBe(200)
    expect(hidden.body).toEqual({ events: [], total: 0 })
    const all = await outsider.call('GET', '/api/admin/search/events?limit=1000')
    expect(all.body.events.some((e: any) => e.project === 'vault')).toBe(false)
    expect(all.body.total).toBe(all.body.events.length)
    expect(JSON.stringify(all.body)).not.toContain('vault-flag')
    const free = await outsider.call('GET', '/api/admin/search/events?query=vault-flag')
    expect(free.body).toEqual({ events: [], total: 0 })
    for (const [who, user] of readers()) {
      const seen = await user.call('GET', '/api/admin/search/events?project=IS:vault')
      expect(seen.body.total, who).toBeGreaterThan(0)
      expect(seen.body.events.length, who).toBe(seen.body.total)
    }
  })

  it('is not in the event searches by one flag, project or type and by days, each a prepared statement of its own', async () => {
    const day = ((await member.call('GET', '/api/admin/search/events?project=IS:vault')).body.events[0].createdAt as string).slice(0, 10)
    const searches = [
      'type=IS:feature-created',
      `type=IS:feature-created&from=IS:${day}&to=IS:${day}`,
      `from=IS:${day}`,
      `from=IS:${day}&to=IS:${day}`,
      `project=IS:vault&from=IS:${day}`,
      'feature=IS:vault-flag',
      `feature=IS:vault-flag&to=IS:${day}`,
    ]
    for (const search of searches) {
      const seen = await outsider.call('GET', `/api/admin/search/events?${search}&limit=1000`)
      expect(seen.status, search).toBe(200)
      expect(JSON.stringify(seen.body), search).not.toContain('vault')
      expect(seen.body.total, search).toBe(seen.body.events.length)
      // A member finds the vault's events in the same search, and counts exactly those more.
      const asMember = (await member.call('GET', `/api/admin/search/events?${search}&limit=1000`)).body
      const vaultEvents = asMember.events.filter((e: any) => e.project === 'vault').length
      expect(vaultEvents, search).toBeGreaterThan(0)
      expect(seen.body.total, search).toBe(asMember.total - vaultEvents)
    }
  })

  it("has no events for its flags (GET /api/admin/events/{featureName}), as an unknown flag", async () => {
    const res = await outsider.call('GET', '/api/admin/events/vault-flag')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ toggleName: 'vault-flag', events: [], totalEvents: 0 })
    for (const [who, user] of readers()) expect((await user.call('GET', '/api/admin/events/vault-flag')).body.totalEvents, who).toBeGreaterThan(0)
  })

  it('is left out of the playground, basic and advanced, and naming it is naming an unknown project', async () => {
    const basic = (user: TestUser, projects?: string[]) => user.call('POST', '/api/admin/playground', { body: { environment: 'development', ...(projects ? { projects } : {}), context: { appName: 'web' } } })
    const names = (res: { body: any }) => res.body.features.map((f: any) => f.name)
    const seen = await basic(outsider)
    expect(seen.status, seen.text).toBe(200)
    expect(names(seen)).toEqual(['lobby-flag'])
    expect((await basic(outsider, ['vault'])).status).toBe(400)
    const advanced = await outsider.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], context: { appName: 'web' } } })
    expect(advanced.status, advanced.text).toBe(200)
    expect(names(advanced)).toEqual(['lobby-flag'])
    expect((await outsider.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], projects: ['vault'], context: { appName: 'web' } } })).status).toBe(400)
    for (const [who, user] of readers()) {
      expect(names(await basic(user)), who).toEqual(['lobby-flag', 'vault-flag'])
      expect((await basic(user, ['vault'])).status, who).toBe(200)
    }
  })

  it('has no change request preview (POST /api/admin/playground/change-request/{id}): 404', async () => {
    const path = `/api/admin/playground/change-request/${changeRequestId}`
    const res = await outsider.call('POST', path, { body: { context: { appName: 'web' } } })
    expect(res.status, res.text).toBe(404)
    expect(res.body).toMatchObject({ name: 'NotFoundError' })
    for (const [who, user] of readers()) expect((await user.call('POST', path, { body: { context: { appName: 'web' } } })).status, who).toBe(200)
  })

  it("has no segments in the segment picker's search (query, project, id)", async () => {
    const names = (res: { body: any }) => res.body.segments.map((s: any) => s.name)
    for (const query of ['?query=vault', '?project=vault', `?id=${segmentId}`, `?project=vault&query=customers&limit=5`]) {
      expect(names(await outsider.call('GET', `/api/admin/segments${query}`)), query).not.toContain('vault-customers')
      for (const [who, user] of readers()) expect(names(await user.call('GET', `/api/admin/segments${query}`)), `${who} ${query}`).toContain('vault-customers')
    }
  })

  it('has no segments in GET /api/admin/segments', async () => {
    const names = (res: { body: any }) => res.body.segments.map((s: any) => s.name)
    expect(names(await outsider.call('GET', '/api/admin/segments'))).not.toContain('vault-customers')
    for (const [who, user] of readers()) expect(names(await user.call('GET', '/api/admin/segments')), who).toContain('vault-customers')
  })

  it('has no owners on the personal dashboard', async () => {
    const owners = (res: { body: any }) => res.body.projectOwners.map((o: any) => o.name)
    expect(owners(await outsider.call('GET', '/api/admin/personal-dashboard'))).not.toContain('olga')
    for (const [who, user] of readers()) expect(owners(await user.call('GET', '/api/admin/personal-dashboard')), who).toContain('olga')
  })

  it("is left out of an application's usage (GET /api/admin/metrics/applications)", async () => {
    const secret = (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'sdk', type: 'client', environment: 'development', projects: ['*'] } })).body.secret
    const now = new Date()
    const bucket = { start: new Date(now.getTime() - 60_000).toISOString(), stop: now.toISOString(), toggles: { 'vault-flag': { yes: 1, no: 0 }, 'lobby-flag': { yes: 1, no: 0 } } }
    expect((await t.call('POST', '/api/client/metrics', { token: secret, body: { appName: 'shop-web', instanceId: 'pod-1', bucket } })).status).toBe(202)
    await t.app.idle()
    const usage = async (user: TestUser) => (await user.call('GET', '/api/admin/metrics/applications')).body.applications.find((a: any) => a.appName === 'shop-web').usage.map((u: any) => u.project)
    expect(await usage(outsider)).toEqual(['lobby'])
    for (const [who, user] of readers()) expect(await usage(user), who).toEqual(['lobby', 'vault'])
  })

  it("leaves impact metrics labelled with its flags out of an application's impact metrics", async () => {
    const secret = (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'impact-sdk', type: 'client', environment: 'development', projects: ['*'] } })).body.secret
    const samples = [{ value: 1, labels: { featureName: 'vault-flag' } }, { value: 2, labels: { featureName: 'lobby-flag' } }, { value: 3 }]
    const res = await t.call('POST', '/api/client/metrics', { token: secret, body: { appName: 'impact-web', instanceId: 'pod-1', impactMetrics: [{ name: 'clicks', help: 'Clicks', type: 'counter', samples }] } })
    expect(res.status, res.text).toBe(202)
    await t.app.idle()
    const labelled = async (user: TestUser) =>
      (await user.call('GET', '/api/admin/metrics/applications/impact-web/impact-metrics')).body.impactMetrics.map((m: any) => m.labels.featureName ?? '(none)').sort()
    expect(await labelled(outsider)).toEqual(['(none)', 'lobby-flag'])
    for (const [who, user] of readers()) expect(await labelled(user), who).toEqual(['(none)', 'lobby-flag', 'vault-flag'])
  })

  it('leaves its API tokens out of the token lists of those who may read tokens but not the project', async () => {
    const make = async (tokenName: string, projects: string[]) =>
      expect((await t.call('POST', '/api/admin/api-tokens', { body: { tokenName, type: 'client', environment: 'development', projects } })).status).toBe(201)
    await make('vault-sdk', ['vault'])
    await make('vault-and-lobby-sdk', ['vault', 'lobby'])
    await make('lobby-sdk', ['lobby'])
    const role = (await t.call('POST', '/api/admin/roles', { body: { name: 'Token reader', type: 'root-custom', permissions: [{ name: 'READ_CLIENT_API_TOKEN' }] } })).body.roles.id
    const reader = await createSignedInUser(t, 'rita', role)
    const names = async (user: TestUser, path = '/api/admin/api-tokens') => (await user.call('GET', path)).body.tokens.map((x: any) => x.tokenName)
    const listed = await names(reader)
    expect(listed).toContain('lobby-sdk')
    expect(listed).not.toContain('vault-sdk')
    expect(listed).not.toContain('vault-and-lobby-sdk')
    expect(await names(reader, '/api/admin/api-tokens/vault-sdk')).toEqual([])
    expect(await names(reader, '/api/admin/api-tokens/lobby-sdk')).toEqual(['lobby-sdk'])
    expect((await reader.call('GET', `${V}/api-tokens`)).status).toBe(404)
    // Admins see every token.
    expect(await names(admin)).toEqual(expect.arrayContaining(['vault-sdk', 'vault-and-lobby-sdk', 'lobby-sdk']))
  })
})
